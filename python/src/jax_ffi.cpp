// The XLA FFI handlers behind multigather.jax's transformable ops (python/multigather/_jax_ffi.py):
// jax.ffi.ffi_call("multigather_op" | "multigather_vjp", ...) inside jit, grad, vmap and
// shard_map reaches the one pipeline here, on XLA's buffers, without a copy.
//
//   multigather_op   args (input, indices[, updates])              rets (output)
//   multigather_vjp  args (input, indices[, updates], grad_output) rets (grad_input[, grad_updates])
//
// Attributes: `mg_op` (the registry op's name), `mg_rank` (the example rank of input: operands
// with more dimensions carry jax.vmap's leading batch dimensions, vmap_method="expand_dims"),
// `mg_none` (the names of the attributes given as None, comma-separated), and the op's own
// attributes, typed: int64 scalars, float64 scalars, bool scalars, int64 arrays (int lists),
// strings (enum choices). No text round trip. Both handlers run execute_batched / execute_vjp (multigather/transforms.hpp).
//
// Stages: `instantiate` decodes a call site's attributes once into its State (with the call
// site's CallSiteCache: lowered at the first execution, moved to new buffers afterwards);
// `execute` runs a call. The CPU handlers run the engine on XLA's intra-op thread pool
// (ExecutionContext::task_pool) and ask for huge pages on large results (docs/jax.md, "Per call").
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrays.hpp"
#include "multigather/sharding.hpp"
#include "multigather/transforms.hpp"

#if defined(MULTIGATHER_PYTHON_JAX_FFI)
#include "xla/ffi/api/ffi.h"
#endif

namespace nb = nanobind;

namespace multigather::python {

#if defined(MULTIGATHER_PYTHON_JAX_FFI)
namespace {

namespace ffi = xla::ffi;

bool dtype_of(ffi::DataType t, DType* out) {
  switch (t) {
    case ffi::DataType::PRED: *out = DType::kBool; return true;
    case ffi::DataType::S8: *out = DType::kInt8; return true;
    case ffi::DataType::S16: *out = DType::kInt16; return true;
    case ffi::DataType::S32: *out = DType::kInt32; return true;
    case ffi::DataType::S64: *out = DType::kInt64; return true;
    case ffi::DataType::U8: *out = DType::kUInt8; return true;
    case ffi::DataType::U16: *out = DType::kUInt16; return true;
    case ffi::DataType::U32: *out = DType::kUInt32; return true;
    case ffi::DataType::U64: *out = DType::kUInt64; return true;
    case ffi::DataType::F16: *out = DType::kFloat16; return true;
    case ffi::DataType::BF16: *out = DType::kBFloat16; return true;
    case ffi::DataType::F32: *out = DType::kFloat32; return true;
    case ffi::DataType::F64: *out = DType::kFloat64; return true;
    case ffi::DataType::C64: *out = DType::kComplex64; return true;
    case ffi::DataType::C128: *out = DType::kComplex128; return true;
    case ffi::DataType::F8E4M3FN: *out = DType::kFloat8E4M3FN; return true;
    case ffi::DataType::F8E5M2: *out = DType::kFloat8E5M2; return true;
    default: return false;
  }
}

/// An XLA buffer (row-major: XLA's default layout, which ffi_call requests) as a view.
Status view_of(const ffi::AnyBuffer& b, const char* name, MutableTensorView* out) {
  DType dtype;
  if (!dtype_of(b.element_type(), &dtype)) {
    return TypeError(std::string(name) + ": XLA element type " + std::to_string(static_cast<int>(b.element_type())) +
                     " is not supported by multigather");
  }
  const auto dims = b.dimensions();
  Dims shape;
  for (std::int64_t d : dims) shape.push_back(d);
  *out = MutableTensorView(b.untyped_data(), dtype, shape);
  return Status::Ok();
}

ffi::Error to_ffi(const Status& s) {
  if (s.ok()) return ffi::Error::Success();
  ffi::ErrorCode code = ffi::ErrorCode::kInvalidArgument;
  if (s.code() == StatusCode::kOutOfRange) code = ffi::ErrorCode::kOutOfRange;
  if (s.code() == StatusCode::kInternal) code = ffi::ErrorCode::kInternal;
  // TypeError has no FFI code: the message starts with its kind so that it stays recognizable.
  return ffi::Error(code, (s.code() == StatusCode::kTypeError ? "TypeError: " : "") + s.message());
}

struct Call {
  std::string op;
  int example_rank = 0;
  Attributes attrs;
  /// A piece of a call split along its gathered axes (custom_partitioning's partition, in
  /// _jax_ffi.py): `mg_shard`, the whole size of each axis; the last operand holds the piece's
  /// offset along each (int32 or int64). Empty: an ordinary call.
  bool shard = false;
  std::vector<std::int64_t> shard_sizes;
};

/// The call's op, example rank and typed attributes from the FFI dictionary. The scalar and
/// string types are told apart by their tags (no decoding attempt that fails: a failed decode
/// formats a diagnostic, which costs microseconds); what remains must be an int64 array.
Status call_of(const ffi::Dictionary& dict, Call* call) {
  for (auto it = dict.begin(); it != dict.end(); ++it) {
    const std::string_view name = *it;
    if (dict.contains<std::string_view>(name)) {
      const std::string_view text = *dict.get<std::string_view>(name);
      if (name == "mg_op") {
        call->op = std::string(text);
      } else if (name == "mg_none") {
        // The attributes given as None, comma-separated.
        for (std::size_t pos = 0; pos < text.size();) {
          const std::size_t comma = std::min(text.find(',', pos), text.size());
          call->attrs.set_none(std::string(text.substr(pos, comma - pos)));
          pos = comma + 1;
        }
      } else {
        call->attrs.set_string(std::string(name), std::string(text));
      }
    } else if (dict.contains<bool>(name)) {
      call->attrs.set_bool(std::string(name), *dict.get<bool>(name));
    } else if (dict.contains<std::int64_t>(name)) {
      const std::int64_t value = *dict.get<std::int64_t>(name);
      if (name == "mg_rank") {
        call->example_rank = static_cast<int>(value);
      } else {
        call->attrs.set_int(std::string(name), value);
      }
    } else if (dict.contains<double>(name)) {
      call->attrs.set_float(std::string(name), *dict.get<double>(name));
    } else if (auto list = dict.get<ffi::Span<const std::int64_t>>(name); list.has_value()) {
      if (name == "mg_shard") {
        call->shard = true;
        call->shard_sizes.assign(list->begin(), list->end());
        continue;
      }
      call->attrs.set_ints(std::string(name), std::vector<std::int64_t>(list->begin(), list->end()));
    } else {
      return TypeError("attribute " + std::string(name) + ": an FFI attribute of a type multigather "
                       "does not take (int64, float64, bool, int64 array, string)");
    }
  }
  if (call->op.empty()) return InvalidArgument("the FFI call has no mg_op attribute");
  return Status::Ok();
}

/// The batch rank: how many leading dimensions input has beyond its example rank.
Status batch_rank_of(const Call& call, const MutableTensorView& input, int* n) {
  *n = input.rank() - call.example_rank;
  if (*n < 0) {
    return InvalidArgument(call.op + ": input has rank " + std::to_string(input.rank()) +
                           ", less than its example rank " + std::to_string(call.example_rank));
  }
  return Status::Ok();
}

/// One call site's handler state, made once per compiled executable by the instantiate stage:
/// the decoded attributes and the call site's lowering (CallSiteCache), so that an execution
/// neither decodes attributes nor lowers again.
struct State {
  Call call;
  CallSiteCache cache;
};

/// The state type as one platform's XLA registers it. Each platform's runtime (jaxlib's CPU
/// client, the CUDA plugin: two XLA instances in one process) keeps its own type registry and
/// writes the id it assigns into the registered TypeId; registering one TypeId with both would
/// hand the second registry the first one's id, which it only accepts if no type of its own has
/// it. So each platform has its own TypeId, unassigned (0) until its registry assigns one.
template <int kPlatform>
struct StateOn : State {
  static ffi::TypeId id;
};
template <int kPlatform>
ffi::TypeId StateOn<kPlatform>::id = {};
template <class PlatformState>
constexpr XLA_FFI_TypeInfo kStateInfo = ffi::MakeTypeInfo<PlatformState>();
using CpuState = StateOn<0>;
using CudaState = StateOn<1>;

/// Every handler state's lowerings, summed (a test hook: multigather._multigather.jax_ffi_lowerings).
std::atomic<std::int64_t> g_lowerings{0};

/// Counts the lowerings one execution made through its state.
struct CountLowerings {
  const CallSiteCache& cache;
  std::int64_t before = cache.lowerings();
  ~CountLowerings() { g_lowerings.fetch_add(cache.lowerings() - before, std::memory_order_relaxed); }
};

template <class PlatformState>
ffi::ErrorOr<std::unique_ptr<PlatformState>> instantiate(ffi::Dictionary dict) {
  auto state = std::make_unique<PlatformState>();
  const Status s = call_of(dict, &state->call);
  if (!s.ok()) return ffi::Unexpected<ffi::Error>(to_ffi(s));
  return state;
}

/// Asks for transparent huge pages on the 2 MiB-aligned interior of a result buffer of 4 MiB or
/// more, before the engine writes it, as numpy does for its own arrays. XLA's CPU buffers come
/// from malloc: a large one is a fresh mapping (or fresh heap pages after glibc trimmed the heap),
/// so writing it first-touches every 4 KiB page, one page fault each (25,000 for a 100 MB
/// embedding gradient, most of the step's time); with huge pages, one fault per 2 MiB.
/// Advisory: the kernel's THP mode decides ("madvise" or "always" use it, "never" ignores it).
void advise_huge_pages(const MutableTensorView& view, const ExecutionContext& context) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (context.device != Device::kCPU) return;  // device memory: nothing to advise
  const void* data = view.data;
  const std::size_t bytes = static_cast<std::size_t>(view.numel()) * element_size(view.dtype);
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < (std::size_t{4} << 20)) return;
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (first + kHuge - 1) & ~(kHuge - 1), end = (first + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advisory
#else
  (void)view;
  (void)context;
#endif
}

/// A split call's pieces: the whole sizes (mg_shard) and the offsets operand, args[count].
Status shards_of(const Call& call, ffi::RemainingArgs args, std::size_t count, std::vector<AxisShard>* shards) {
  if (args.size() != count + 1) return InvalidArgument(call.op + ": a split call ends with its offsets operand");
  MutableTensorView offsets;
  MULTIGATHER_RETURN_IF_ERROR(view_of(*args.get<ffi::AnyBuffer>(count), "offsets", &offsets));
  // Under jax.vmap the offsets (the same for every example) carry leading batch dimensions.
  if (offsets.rank() < 1 || offsets.shape[offsets.rank() - 1] != static_cast<std::int64_t>(call.shard_sizes.size()) ||
      offsets.numel() < static_cast<std::int64_t>(call.shard_sizes.size()) ||
      (offsets.dtype != DType::kInt32 && offsets.dtype != DType::kInt64)) {
    return InvalidArgument(call.op + ": the offsets operand must be int32 or int64 of shape [..., " +
                           std::to_string(call.shard_sizes.size()) + "]");
  }
  shards->clear();
  for (std::size_t j = 0; j < call.shard_sizes.size(); ++j) {
    const std::int64_t offset = offsets.dtype == DType::kInt32 ? static_cast<const std::int32_t*>(offsets.data)[j]
                                                               : static_cast<const std::int64_t*>(offsets.data)[j];
    shards->push_back(AxisShard{call.shard_sizes[j], offset});
  }
  return Status::Ok();
}

Status run_op_handler(State& state, ffi::RemainingArgs args, ffi::RemainingRets rets,
                      const ExecutionContext& context) {
  const Call& call = state.call;
  const std::size_t count = args.size() - (call.shard ? 1 : 0);
  if (count != 2 && count != 3) return InvalidArgument(call.op + ": expected 2 or 3 operands");
  std::vector<AxisShard> shards;
  if (call.shard) MULTIGATHER_RETURN_IF_ERROR(shards_of(call, args, count, &shards));
  MutableTensorView v[3], out;
  const char* names[3] = {"input", "indices", "updates"};
  for (std::size_t k = 0; k < count; ++k) {
    MULTIGATHER_RETURN_IF_ERROR(view_of(*args.get<ffi::AnyBuffer>(k), names[k], &v[k]));
  }
  MULTIGATHER_RETURN_IF_ERROR(view_of(**rets.get<ffi::AnyBuffer>(0), "output", &out));
  advise_huge_pages(out, context);
  int n = 0;
  MULTIGATHER_RETURN_IF_ERROR(batch_rank_of(call, v[0], &n));
  const TensorView updates = v[2];
  if (call.shard) {
    return execute_shard(call.op, v[0], v[1], count == 3 ? &updates : nullptr, call.attrs, n, shards, out, context);
  }
  const CountLowerings counted{state.cache};
  // The result is XLA's buffer, which a failed computation never returns (a scatter's may be
  // its aliased operand: XLA copied the operand into it, or the caller donated that operand):
  // an index error may leave partial data there, so no separate pass over the indices first
  // (faster for scatters under jit; measured: bench/README.md, "Measurements behind the CPU
  // engine's choices").
  ExecutionContext c = context;
  c.output_is_new = true;
  return execute_batched(call.op, v[0], v[1], count == 3 ? &updates : nullptr, call.attrs, n, out, c,
                         &state.cache);
}

Status run_vjp_handler(State& state, ffi::RemainingArgs args, ffi::RemainingRets rets,
                       const ExecutionContext& context) {
  const Call& call = state.call;
  const std::size_t count = args.size() - (call.shard ? 1 : 0);
  const bool scatter = count == 4;
  if (count != 3 && !scatter) return InvalidArgument(call.op + ": expected 3 or 4 operands");
  std::vector<AxisShard> shards;
  if (call.shard) MULTIGATHER_RETURN_IF_ERROR(shards_of(call, args, count, &shards));
  MutableTensorView v[4], grad_input, grad_updates;
  const char* names[4] = {"input", "indices", scatter ? "updates" : "grad_output", "grad_output"};
  for (std::size_t k = 0; k < count; ++k) {
    MULTIGATHER_RETURN_IF_ERROR(view_of(*args.get<ffi::AnyBuffer>(k), names[k], &v[k]));
  }
  MULTIGATHER_RETURN_IF_ERROR(view_of(**rets.get<ffi::AnyBuffer>(0), "grad_input", &grad_input));
  if (scatter) MULTIGATHER_RETURN_IF_ERROR(view_of(**rets.get<ffi::AnyBuffer>(1), "grad_updates", &grad_updates));
  advise_huge_pages(grad_input, context);
  if (scatter) advise_huge_pages(grad_updates, context);
  int n = 0;
  MULTIGATHER_RETURN_IF_ERROR(batch_rank_of(call, v[0], &n));
  if (call.shard) {
    const TensorView updates = v[2];
    return execute_vjp_shard(call.op, v[0], v[1], scatter ? &updates : nullptr, call.attrs, n, shards,
                             scatter ? v[3] : v[2], grad_input, scatter ? &grad_updates : nullptr, context);
  }
  const TensorView updates = v[2];
  const CountLowerings counted{state.cache};
  return execute_vjp(call.op, v[0], v[1], scatter ? &updates : nullptr, call.attrs, n,
                     scatter ? v[3] : v[2], grad_input, scatter ? &grad_updates : nullptr, context, &state.cache);
}

/// XLA's intra-op thread pool as the engine's TaskPool (ExecutionContext::task_pool): the engine's
/// parallel loops run on XLA's threads instead of a second pool (OpenMP's) competing with them.
void schedule_on_xla(void* pool, void (*task)(void*) noexcept, void* arg) {
  static_cast<ffi::ThreadPool*>(pool)->Schedule([task, arg] { task(arg); });
}

bool use_xla_pool() {
  static const bool use = [] {
    const char* v = std::getenv("MULTIGATHER_XLA_POOL");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return use;
}

/// The CPU handlers' context: multigather.set_num_threads applies (0: automatic), on XLA's pool.
template <class Run>
ffi::Error run_cpu(ffi::ThreadPool& xla_pool, const Run& run) {
  ExecutionContext context;
  context.num_threads = get_num_threads();
  context.device = Device::kCPU;
  TaskPool pool;
  pool.context = &xla_pool;
  pool.schedule = schedule_on_xla;
  pool.num_threads = static_cast<int>(xla_pool.num_threads());
  if (pool.num_threads > 0 && use_xla_pool()) context.task_pool = &pool;
  return to_ffi(run(context));
}

ffi::Error op_cpu(ffi::ThreadPool xla_pool, CpuState* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return run_cpu(xla_pool, [&](const ExecutionContext& c) { return run_op_handler(*state, args, rets, c); });
}

ffi::Error vjp_cpu(ffi::ThreadPool xla_pool, CpuState* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return run_cpu(xla_pool, [&](const ExecutionContext& c) { return run_vjp_handler(*state, args, rets, c); });
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(kInstantiateCpu, instantiate<CpuState>,
                              ffi::Ffi::BindInstantiate().Attrs<ffi::Dictionary>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(kOpCpu, op_cpu,
                              ffi::Ffi::Bind().Ctx<ffi::ThreadPool>().Ctx<ffi::State<CpuState>>().RemainingArgs()
                                  .RemainingRets());
XLA_FFI_DEFINE_HANDLER_SYMBOL(kVjpCpu, vjp_cpu,
                              ffi::Ffi::Bind().Ctx<ffi::ThreadPool>().Ctx<ffi::State<CpuState>>().RemainingArgs()
                                  .RemainingRets());

#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
// On a GPU: the same pipeline on XLA's stream (gather and scatter ops and their gradients, on
// the CUDA engine; reduce 'mean' is refused by execute with a message naming the op).
ExecutionContext cuda_context(void* stream) {
  ExecutionContext context;
  context.num_threads = get_num_threads();
  context.device = Device::kCUDA;
  context.stream = stream;
  return context;
}

ffi::Error op_cuda(void* stream, CudaState* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return to_ffi(run_op_handler(*state, args, rets, cuda_context(stream)));
}

ffi::Error vjp_cuda(void* stream, CudaState* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return to_ffi(run_vjp_handler(*state, args, rets, cuda_context(stream)));
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(kInstantiateCuda, instantiate<CudaState>,
                              ffi::Ffi::BindInstantiate().Attrs<ffi::Dictionary>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(kOpCuda, op_cuda,
                              ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().Ctx<ffi::State<CudaState>>()
                                  .RemainingArgs().RemainingRets());
XLA_FFI_DEFINE_HANDLER_SYMBOL(kVjpCuda, vjp_cuda,
                              ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().Ctx<ffi::State<CudaState>>()
                                  .RemainingArgs().RemainingRets());
#endif

nb::dict stages(void* instantiate, void* execute) {
  nb::dict d;
  d["instantiate"] = nb::capsule(instantiate);
  d["execute"] = nb::capsule(execute);
  return d;
}

}  // namespace
#endif

void bind_jax_ffi(nb::module_& m) {
  m.def("jax_ffi_handlers", []() {
    nb::dict handlers;
#if defined(MULTIGATHER_PYTHON_JAX_FFI)
    nb::dict cpu;
    cpu["multigather_op"] = stages(reinterpret_cast<void*>(kInstantiateCpu), reinterpret_cast<void*>(kOpCpu));
    cpu["multigather_vjp"] = stages(reinterpret_cast<void*>(kInstantiateCpu), reinterpret_cast<void*>(kVjpCpu));
    handlers["cpu"] = cpu;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
    nb::dict cuda;
    cuda["multigather_op"] = stages(reinterpret_cast<void*>(kInstantiateCuda), reinterpret_cast<void*>(kOpCuda));
    cuda["multigather_vjp"] = stages(reinterpret_cast<void*>(kInstantiateCuda), reinterpret_cast<void*>(kVjpCuda));
    handlers["CUDA"] = cuda;
#endif
#endif
    return handlers;
  }, "The XLA FFI handlers of this build, by platform: {'cpu': {'multigather_op': {'instantiate': "
     "capsule, 'execute': capsule}, 'multigather_vjp': {...}}, 'CUDA': {...} in a CUDA build}; {} "
     "when built without the XLA FFI headers (jax.ffi.register_ffi_target takes the stage "
     "dictionaries; register jax_ffi_state_type(platform) first).");
  m.def("jax_ffi_state_type", [](const std::string& platform) {
    nb::dict type;
#if defined(MULTIGATHER_PYTHON_JAX_FFI)
    auto set = [&type](ffi::TypeId* id, const XLA_FFI_TypeInfo* info) {
      type["type_id"] = nb::capsule(static_cast<void*>(id));
      type["type_info"] = nb::capsule(const_cast<void*>(static_cast<const void*>(info)));
    };
    if (platform == "cpu") set(&CpuState::id, &kStateInfo<CpuState>);
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
    if (platform == "CUDA") set(&CudaState::id, &kStateInfo<CudaState>);
#endif
    if (type.size() == 0) {
      throw nb::value_error(("jax_ffi_state_type: platform '" + platform +
                             "' has no handlers in this build (see jax_ffi_handlers())").c_str());
    }
#else
    (void)platform;
#endif
    return type;
  }, nb::arg("platform"),
     "The handlers' state type on `platform` (a key of jax_ffi_handlers()) for "
     "jax.ffi.register_ffi_type ({'type_id': capsule, 'type_info': capsule}; {} without the XLA "
     "FFI headers): one state per call site of a compiled executable, holding its decoded "
     "attributes and its lowering. Each platform has its own type id, since each platform's XLA "
     "keeps its own type registry. Raises ValueError for a platform without handlers.");
  m.def("jax_ffi_lowerings", []() {
#if defined(MULTIGATHER_PYTHON_JAX_FFI)
    return g_lowerings.load(std::memory_order_relaxed);
#else
    return std::int64_t{0};
#endif
  }, "How many times the XLA FFI handlers ran lower_op since the module loaded (a test hook: "
     "a compiled executable lowers each call site once, at its first execution).");
}

}  // namespace multigather::python
