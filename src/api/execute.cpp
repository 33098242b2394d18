// Step 2 of the one pipeline (multigather/execute.hpp): execute(Lowering, output, context).
// Every surface (C++ API, C API, CLI, Python) runs every op here: the engine is chosen from the
// context or from where the operands live, the framework output is viewed as the core output
// (a reshape by strides; a staging buffer when strides cannot express it), the checks that need
// the output or the data run once, and an out-of-range index is named in the framework's terms.
#include "multigather/execute.hpp"
#include "core/text.hpp"
#include "multigather/output_memory.hpp"

#include <new>
#include <cstring>
#include <string>
#include <vector>

#include "api/engine.hpp"
#include "api/guarded.hpp"
#include "kernels/cpu/run_validated.hpp"
#include "core/task_pool.hpp"
#include "core/device_memory.hpp"
#include "plan/index_errors.hpp"
#include "plan/plan.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "kernels/updates_step.hpp"
#include "plan/scatter_plan.hpp"

#include "kernels/cuda/cuda_hooks.hpp"

namespace multigather::detail {

Status cuda_engine_available(const Lowering& l) {
  if (!cuda_engine_built()) {
    return InvalidArgument(l.op + ": the operands are on a CUDA device, but this build has no "
                           "CUDA engine (build with MULTIGATHER_CUDA=ON)");
  }
  if (cuda_device_available()) return Status::Ok();
  return InvalidArgument(l.op + ": the CUDA engine was asked for, but no CUDA device is "
                         "available (no driver or no GPU)");
}

namespace {

/// The shape of update_count's storage: the core output's, 1 along the dimensions where the
/// count does not change.
Dims count_shape(const Lowering& l) {
  const Dims& shape = l.core_output_shape;
  Dims kept = shape;
  for (int d = 0; d < shape.size(); ++d) {
    bool axis = false;
    for (std::int64_t a : l.axes) axis = axis || a == d;
    if (!axis && l.shape.logical_indices_shape[d] == 1) kept[d] = 1;
  }
  return kept;
}

/// update_count's view of `data` (int64, C-contiguous of count_shape(l)): the core output's
/// shape, stride 0 along the dimensions count_shape keeps once.
TensorView count_view(const Lowering& l, const void* data) {
  const Dims& shape = l.core_output_shape;
  const Dims kept = count_shape(l);
  Dims strides = contiguous_strides(kept);
  for (int d = 0; d < shape.size(); ++d) {
    if (kept[d] == 1) strides[d] = 0;
  }
  return TensorView(data, DType::kInt64, shape, strides);
}

}  // namespace

Status update_count(const Lowering& l, const ScatterOptions& options, Tensor* storage, TensorView* count) {
  // A scatter-add of broadcast ones through the same indices and policy.
  const Dims& shape = l.core_output_shape;
  const int r = shape.size();
  std::int64_t elements = 0;
  if (element_count(shape, &elements) && elements == 0) {
    // Nothing to divide (and kept below could be a huge [S, 1, ..] beside an empty dimension).
    *count = TensorView(nullptr, DType::kInt64, shape, Dims::filled(r, 0));
    return Status::Ok();
  }
  *storage = Tensor(DType::kInt64, count_shape(l));
  if (storage->numel() > 0) std::memset(storage->data(), 0, static_cast<std::size_t>(storage->numel()) * 8);
  static const std::int64_t one = 1;
  const TensorView ones(&one, DType::kInt64, Dims::filled(r, 1), Dims::filled(r, 0));
  ScatterOptions add = options;
  add.reduction = Reduction::kAdd;
  add.include_input = true;
  MULTIGATHER_RETURN_IF_ERROR(
      scatter_multiaxis_into(storage->view(), l.indices, ones, l.axes, storage->mutable_view(), add));
  *count = count_view(l, storage->data());
  return Status::Ok();
}

Status update_count_cuda(const Lowering& l, const ScatterOptions& options, const void* near, const char* near_name,
                         void* stream, CudaStreamMemory* storage, TensorView* count) {
  const Dims kept = count_shape(l);
  std::int64_t counts = 0;
  if (!element_count(kept, &counts)) return InvalidArgument(l.op + ": the update counts overflow 64 bits");
  MULTIGATHER_RETURN_IF_ERROR(storage->allocate(static_cast<std::size_t>(counts) * 8, near, near_name, stream));
  MULTIGATHER_RETURN_IF_ERROR(
      cuda_count_updates(MutableTensorView(storage->data(), DType::kInt64, kept), l.indices, l.axes, options, stream));
  *count = count_view(l, storage->data());
  return Status::Ok();
}

Status run_updates_step(const Lowering& l, const TensorView& from, const MutableTensorView& to, bool cuda,
                        void* stream) {
  const Scalar& a = l.updates_step.factor;
  const double factor = a.kind == Scalar::Kind::kFloat ? a.f
                        : a.kind == Scalar::Kind::kInt ? static_cast<double>(a.i) : static_cast<double>(a.u);
  const std::int64_t integer_factor = a.kind == Scalar::Kind::kFloat ? static_cast<std::int64_t>(a.f)
                                      : a.kind == Scalar::Kind::kInt ? a.i : static_cast<std::int64_t>(a.u);
  const bool negate = l.updates_step.kind == UpdatesStep::Kind::kNegate;
  if (cuda) return cuda_updates_step(from, to, negate, factor, integer_factor, stream);
  const UpdatesStepParams p = updates_step_params(from, to, factor, integer_factor);
  if (!visit_updates_step(from.dtype, negate, [&]<class Op>() { updates_step_thread<Op>(p, 0, 1); })) {
    return TypeError(l.op + ": " + (negate ? "the negation" : "the scale") + " of the updates has no exact form for "
                     "dtype " + std::string(dtype_name(from.dtype)));
  }
  return Status::Ok();
}

Status stepped_updates(const Lowering& l, const TensorView& updates, bool cuda, void* stream, const void* near,
                       Tensor* host, CudaStreamMemory* device, TensorView* stepped) {
  *stepped = updates;
  if (l.updates_step.kind == UpdatesStep::Kind::kNone) return Status::Ok();
  // One element per distinct update: size 1 where the view broadcasts (stride 0).
  Dims distinct = updates.shape;
  for (int d = 0; d < distinct.size(); ++d) {
    if (updates.strides[d] == 0) distinct[d] = 1;
  }
  std::int64_t n = 0;
  if (!element_count(distinct, &n)) return InvalidArgument(l.op + ": the updates overflow 64 bits");
  void* data = nullptr;
  if (cuda) {
    MULTIGATHER_RETURN_IF_ERROR(device->allocate(static_cast<std::size_t>(n) * element_size(updates.dtype), near,
                                                 "output", stream));
    data = device->data();
  } else {
    *host = Tensor(updates.dtype, distinct);
    data = host->data();
  }
  Dims strides = contiguous_strides(distinct);
  for (int d = 0; d < distinct.size(); ++d) {
    if (updates.strides[d] == 0) strides[d] = 0;
  }
  const TensorView from(updates.data, updates.dtype, distinct, updates.strides);
  MULTIGATHER_RETURN_IF_ERROR(
      run_updates_step(l, from, MutableTensorView(data, updates.dtype, distinct, contiguous_strides(distinct)), cuda,
                       stream));
  *stepped = TensorView(data, updates.dtype, updates.shape, strides);
  return Status::Ok();
}

GatheredSegmentsCall gathered_call(const Lowering& l) {
  const GatheredRows& g = *l.gathered;
  GatheredSegmentsCall call;
  call.table = g.table;
  call.rows = g.rows;
  call.bag_starts = g.bag_starts.data();
  call.scale = g.scale;
  call.skip_row = g.skip_row;
  call.mean = l.mean_by_count;
  call.max = l.reduction == Reduction::kMax;
  return call;
}

}  // namespace multigather::detail

namespace multigather {
namespace {

using detail::str;

using detail::cuda_engine_available;

// describe_out_of_range for the CUDA engine: the framework's indices live on the device, so
// the bytes they reach are read back to the host first.
Status describe_device_out_of_range(const Lowering& l, const Status& core) {
  std::vector<std::byte> storage;
  TensorView host;
  MULTIGATHER_RETURN_IF_ERROR(detail::copy_view_to_host(l.index_errors.indices, &storage, &host));
  return detail::describe_out_of_range(l, host, core);
}

// Strides that view `output` (any strides) as `shape` with the same C-order element sequence,
// without a copy (numpy's no-copy reshape); false when the strides cannot express it.
bool reshape_strides(const MutableTensorView& output, const Dims& shape, Dims* strides) {
  std::int64_t n = 0;
  element_count(shape, &n);
  *strides = contiguous_strides(shape);
  if (n <= 1) return true;
  // Old dimensions of size > 1.
  std::vector<std::int64_t> os, ost;
  for (int d = 0; d < output.rank(); ++d) {
    if (output.shape[d] != 1) {
      os.push_back(output.shape[d]);
      ost.push_back(output.strides[d]);
    }
  }
  const int nold = static_cast<int>(os.size()), nnew = shape.size();
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nnew && oi < nold) {
    std::int64_t np = shape[ni], op = os[static_cast<std::size_t>(oi)];
    while (np != op) {
      if (np < op) {
        np *= shape[nj++];
      } else {
        op *= os[static_cast<std::size_t>(oj++)];
      }
    }
    // The old dimensions [oi, oj) must be contiguous relative to each other.
    for (int k = oi; k < oj - 1; ++k) {
      if (ost[static_cast<std::size_t>(k)] != os[static_cast<std::size_t>(k + 1)] * ost[static_cast<std::size_t>(k + 1)]) {
        return false;
      }
    }
    (*strides)[nj - 1] = ost[static_cast<std::size_t>(oj - 1)];
    for (int k = nj - 1; k > ni; --k) (*strides)[k - 1] = (*strides)[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  // Trailing size-1 dimensions keep the contiguous strides (never stepped).
  return true;
}

Device resolve_device(const Lowering& l, const ExecutionContext& context) {
  if (context.device != Device::kAuto) return context.device;
  if (l.device == Device::kCUDA) return Device::kCUDA;
  const TensorView* indices = l.axes.empty() ? nullptr : &l.indices;
  return detail::any_cuda_memory({&l.input, indices}) ? Device::kCUDA : Device::kCPU;
}

// The indices a lowered gather reads: none when it has no axes. (A lowering with an empty index
// vector, such as stablehlo.gather with no start_index_map, may view a 0-byte index tensor with
// a broadcast shape; that view's byte range says nothing about memory.)
const TensorView& read_indices(const Lowering& l) {
  static const TensorView kNone;
  return l.axes.empty() ? kNone : l.indices;
}

// Runs the validated core call into `core` (the core-shaped view of the caller's output).
// `checked`: the operands' checks already made by execute_alloc (they depend on the lowering
// alone: context.num_threads, the only option the context changes, is valid when set), or
// null.
// `keep_output`: the caller's output, left unchanged by a bad index (run_validated).
Status run_core(const Lowering& l, const MutableTensorView& core, const GatherOptions& options,
                Device device, const ExecutionContext& context, std::string_view output_name,
                const detail::ValidatedCall* checked, bool keep_output) {
  if (device == Device::kCUDA) {
    MULTIGATHER_RETURN_IF_ERROR(cuda_engine_available(l));
    MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(core, l.input, read_indices(l), output_name));
    Status s = gather_multiaxis_cuda_into(l.input, l.indices, l.axes, core, options, context.stream);
    return s.code() == StatusCode::kOutOfRange ? describe_device_out_of_range(l, s) : s;
  }
  if (checked == nullptr) {
    detail::ValidatedCall own{.shape = l.shape};
    MULTIGATHER_RETURN_IF_ERROR(detail::check_operands(l.input, l.indices, !l.axes.empty(), options, &own));
    return run_core(l, core, options, device, context, output_name, &own, keep_output);
  }
  const detail::ValidatedCall& call = *checked;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_output(core, call));
  MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(core, l.input, read_indices(l), output_name));
  Status s = detail::run_validated(l.input, l.indices, core, call, options, keep_output);
  if (s.code() == StatusCode::kOutOfRange) return detail::describe_out_of_range(l, l.index_errors.indices, s);
  return s;
}

// A mean scatter's second step (Lowering::mean_by_count): the count of updates per element
// (detail::update_count), then the division. A segment op's identity input is not an update:
// it does not count.
Status mean_needs_division(const Lowering& l, DType dtype) {
  return TypeError(l.op + ": " + (l.sqrt_count ? "sqrt_n" : "a mean") + " needs a dtype with division (got " +
                   std::string(dtype_name(dtype)) + ")");
}

bool input_is_counted(const Lowering& l) {
  return l.include_input && !(l.spec != nullptr && l.spec->kind == OpKind::kSegment);
}

Status divide_by_update_count(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options) {
  Tensor storage;
  TensorView per_element;
  MULTIGATHER_RETURN_IF_ERROR(detail::update_count(l, options, &storage, &per_element));
  if (!detail::divide_by_count(core, per_element, input_is_counted(l), l.sqrt_count)) {
    return mean_needs_division(l, core.dtype);
  }
  return Status::Ok();
}

// divide_by_update_count on the CUDA engine: the counts in stream-ordered device memory, then
// the division kernel, on context.stream.
Status divide_by_update_count_cuda(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                                   const ExecutionContext& context) {
  if (core.numel() == 0) return Status::Ok();
  detail::CudaStreamMemory storage;
  TensorView count;
  MULTIGATHER_RETURN_IF_ERROR(detail::update_count_cuda(l, options, core.data, "output", context.stream, &storage, &count));
  return detail::cuda_divide_by_count(core, count, input_is_counted(l), l.sqrt_count, context.stream);
}

// A segment op whose updates are gathered rows (Lowering::gathered: embedding_bag): one fused
// pass per bag (kernels/cpu/gathered_segments.cpp). The lowering checked the row ids; the output
// is checked here, so a failed call writes nothing.
Status run_gathered(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                    std::string_view output_name) {
  const GatheredRows& g = *l.gathered;
  // The core output is [B, 1.., D] (the block recipe's unit dimensions): the kernel's [B, D].
  const int r = core.rank();
  if (r < 2 || core.dtype != g.table.dtype || core.numel() != core.shape[0] * core.shape[r - 1] ||
      g.bag_starts.size() != static_cast<std::size_t>(core.shape[0]) + 1) {
    return Status(StatusCode::kInternal, l.op + ": the gathered rows' output " + to_string(core.shape) +
                                             " is not [B, D] of the table's dtype");
  }
  const MutableTensorView bags(core.data, core.dtype, Dims{core.shape[0], core.shape[r - 1]},
                               Dims{core.strides[0], core.strides[r - 1]});
  if (views_overlap(bags, g.table) || (g.scale.data != nullptr && views_overlap(bags, g.scale))) {
    return InvalidArgument(std::string(output_name) + " overlaps weight or per_sample_weights (the output cannot "
                           "be memory the op reads)");
  }
  if (bags.numel() == 0) return Status::Ok();
  if (!detail::run_gathered_segments(detail::gathered_call(l), bags, options.num_threads)) {
    return Status(StatusCode::kInternal, l.op + ": no fused kernel for " + std::string(dtype_name(g.table.dtype)) +
                                             " (or out of memory for its accumulators)");
  }
  return Status::Ok();
}

// The scatter form of run_core: validates the scatter (operands, then the core output view:
// input itself for in place, else no overlap), then runs it on the CPU engine or, for CUDA
// operands, the CUDA engine (context.stream, context.deterministic). keep_output: a CPU
// scatter checks its index values before the first write (false: an output new to the call).
Status run_scatter_core(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                        Device device, [[maybe_unused]] const ExecutionContext& context, std::string_view output_name,
                        const MutableTensorView& full, const detail::ValidatedScatter* checked, bool keep_output) {
  const bool cuda = device == Device::kCUDA;
  if (cuda) MULTIGATHER_RETURN_IF_ERROR(cuda_engine_available(l));
  if (cuda && l.mean_by_count && !detail::cuda_has_division(l.updates.dtype, l.sqrt_count)) {  // before any write
    return mean_needs_division(l, l.updates.dtype);
  }
  if (l.gathered != nullptr) return run_gathered(l, core, options, output_name);
  // The operands once: G is the lowering's (inferred when it was made); execute_alloc passes the
  // check it made before allocating (`checked`).
  detail::ValidatedScatter call;
  if (checked != nullptr) {
    call = *checked;
  } else {
    call.gather.shape = l.shape;
    MULTIGATHER_RETURN_IF_ERROR(detail::check_scatter_options(options));
    MULTIGATHER_RETURN_IF_ERROR(detail::check_scatter_operands(l.input, l.indices, l.updates, options, &call));
  }
  const TensorView* base = nullptr;
  const MutableTensorView* base_output = nullptr;
  TensorView input = l.input;
  if (l.has_scatter_base) {
    // A partial write: the whole output starts as the framework's input; it may be that input
    // (in place), else not overlap it; it never overlaps indices or updates.
    const bool same = detail::scatters_in_place(full, l.scatter_base);
    if (!same && views_overlap(full, l.scatter_base)) {
      return InvalidArgument(std::string(output_name) + " overlaps input but is not input itself (a "
                             "scatter writes in place only into the same view: same data and strides)");
    }
    if (views_overlap(full, l.indices) || views_overlap(full, l.updates)) {
      return InvalidArgument(std::string(output_name) + " overlaps indices or updates (a scatter "
                             "cannot write into memory it reads)");
    }
    // Unless in place, the core input (a part of the framework's input) is read after the
    // copy: read it from the output's part instead, which holds the same values by then.
    const TensorView in_place_input(core.data, core.dtype, core.shape, core.strides);
    MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_output(
        core, same ? l.input : in_place_input, l.indices, l.updates, call, output_name));
    input = in_place_input;
    base = &l.scatter_base;
    base_output = &full;
  } else {
    MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_output(core, l.input, l.indices, l.updates, call, output_name));
  }
  // The lowering's step on the updates (alpha, a negation), into a temporary after every check
  // that needs no index value: a failed call still writes nothing.
  Tensor stepped_host;
  detail::CudaStreamMemory stepped_device;
  MULTIGATHER_RETURN_IF_ERROR(detail::stepped_updates(l, call.updates, cuda, context.stream, core.data, &stepped_host,
                                                      &stepped_device, &call.updates));
  Status s;
  if (cuda) {
    s = detail::run_scatter_validated_cuda(input, l.indices, core, call, options, context.stream,
                                           context.deterministic, base, base_output);
    if (s.code() == StatusCode::kOutOfRange) return describe_device_out_of_range(l, s);
    if (s.ok() && l.mean_by_count) return divide_by_update_count_cuda(l, core, options, context);
    return s;
  }
  s = detail::run_scatter_validated(input, l.indices, core, call, options, base, base_output, keep_output);
  if (s.code() == StatusCode::kOutOfRange) return detail::describe_out_of_range(l, l.index_errors.indices, s);
  if (s.ok() && l.mean_by_count) return divide_by_update_count(l, core, options);
  return s;
}

Status execute_impl(const Lowering& l, const MutableTensorView& output,
                    const ExecutionContext& context, std::string_view output_name,
                    const detail::ValidatedCall* checked = nullptr, bool output_is_new = false,
                    const detail::ValidatedScatter* checked_scatter = nullptr) {
  if (!(output.shape == l.output_shape)) {
    return InvalidArgument(l.op + ": " + std::string(output_name) + " shape " +
                           to_string(output.shape) + " does not match the output shape " +
                           to_string(l.output_shape));
  }
  if (output.strides.size() != output.shape.size()) {
    return InvalidArgument(l.op + ": " + std::string(output_name) + " has " +
                           str(output.strides.size()) + " strides for rank " + str(output.rank()));
  }
  // A C-contiguous output (every one-shot output; size-1 dimensions' strides never move it)
  // cannot address an element twice.
  const bool contiguous_output = output.is_contiguous();
  if (!contiguous_output && has_self_overlap(output.shape, output.strides)) {
    return InvalidArgument(std::string(output_name) + " strides " + to_string(output.strides) +
                           " with shape " + to_string(output.shape) + " address one element from "
                           "several positions (a stride 0 or interleaved strides): writes through "
                           "it would race and lose data");
  }
  GatherOptions options = l.options;
  if (context.num_threads >= 0) options.num_threads = context.num_threads;
  const Device device = resolve_device(l, context);
  ScatterOptions scatter = l.scatter_options();
  scatter.num_threads = options.num_threads;
  const bool is_scatter = l.kind == OpKind::kScatter;

  // The core output as a view of the caller's buffer.
  // (A partial write's core output is a part of the output, not a reshape of it.)
  // A strided output: the core output is a pure reshape of it when the lowering has no partial
  // write and its core strides are C-contiguous.
  Dims core_strides;
  if (contiguous_output) {
    core_strides = l.core_output_strides;
  } else if (!l.has_scatter_base && l.core_output_strides == contiguous_strides(l.core_output_shape) &&
             reshape_strides(output, l.core_output_shape, &core_strides)) {
    // a strided output that the reshape can still address
  } else {
    if (device == Device::kCUDA) {
      return InvalidArgument(l.op + ": " + std::string(output_name) + " strides " +
                             to_string(output.strides) + " cannot hold the core output " +
                             to_string(l.core_output_shape) + " as a view; on a CUDA device pass "
                             "a C-contiguous " + std::string(output_name));
    }
    // Staging: a contiguous buffer, then one copy into the caller's strides. The caller's view
    // is validated first, so nothing is written to a bad output.
    detail::ValidatedCall target;
    target.shape.output_shape = output.shape;
    target.shape.output_numel = output.numel();
    target.element_size = element_size(l.input.dtype);
    target.input_dtype = l.input.dtype;
    MULTIGATHER_RETURN_IF_ERROR(detail::validate_output(output, target));
    if (is_scatter) {
      // The staging buffer is a new output (never in place), so the output may overlap input:
      // input is read whole into the staging buffer before the output is written. It must not
      // overlap what is read afterwards: nothing (the copy reads the staging buffer only).
      if (views_overlap(output, l.indices) || views_overlap(output, l.updates)) {
        return InvalidArgument(std::string(output_name) + " overlaps indices or updates (a "
                               "scatter cannot write into memory it reads)");
      }
    } else {
      MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(output, l.input, read_indices(l), output_name));
    }
    Tensor staging(l.input.dtype, l.output_shape);
    MutableTensorView core(staging.data(), output.dtype, l.core_output_shape, l.core_output_strides);
    MULTIGATHER_RETURN_IF_ERROR(is_scatter ? run_scatter_core(l, core, scatter, device, context, output_name,
                                                              staging.mutable_view(), checked_scatter,
                                                              /*keep_output=*/false)
                                           : run_core(l, core, options, device, context, output_name, checked,
                                                      /*keep_output=*/false));  // written only on success
    return detail::copy_view(TensorView(staging.data(), output.dtype, output.shape), output, options.num_threads);
  }
  const MutableTensorView core(output.data, output.dtype, l.core_output_shape, core_strides);
  const bool keep_output = !(output_is_new || context.output_is_new);
  if (is_scatter) {
    return run_scatter_core(l, core, scatter, device, context, output_name, output, checked_scatter, keep_output);
  }
  return run_core(l, core, options, device, context, output_name, checked, keep_output);
}

using detail::guarded;

}  // namespace

Status execute(const Lowering& lowering, const MutableTensorView& output,
               const ExecutionContext& context) noexcept {
  return guarded(lowering.op, [&] {
    const detail::TaskPoolScope pool(context.task_pool);
    return execute_impl(lowering, output, context, context.output_name);
  });
}

Status execute_alloc(const Lowering& lowering, const ExecutionContext& context,
                     MutableTensorView* output, Tensor* owned) noexcept {
  return guarded(lowering.op, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    // Everything that needs no output is checked before anything is allocated.
    detail::ValidatedCall call;
    call.shape = lowering.shape;
    detail::ValidatedScatter scatter;
    if (lowering.kind == OpKind::kScatter) {
      ScatterOptions options = lowering.scatter_options();
      if (context.num_threads >= 0) options.num_threads = context.num_threads;
      scatter.gather.shape = lowering.shape;
      MULTIGATHER_RETURN_IF_ERROR(detail::check_scatter_options(options));
      if (lowering.gathered == nullptr) {  // gathered rows: the lowering checked them (run_gathered)
        MULTIGATHER_RETURN_IF_ERROR(
            detail::check_scatter_operands(lowering.input, lowering.indices, lowering.updates, options, &scatter));
      }
    } else {
      MULTIGATHER_RETURN_IF_ERROR(detail::check_operands(lowering.input, lowering.indices,
                                                         !lowering.axes.empty(), lowering.options, &call));
    }
    MutableTensorView target;
    if (context.allocate != nullptr) {
      if (!context.allocate(context.allocator_context, lowering.input.dtype, lowering.output_shape,
                            &target)) {
        return Status(StatusCode::kInternal, lowering.op + ": the output allocator failed");
      }
    } else {
      if (resolve_device(lowering, context) == Device::kCUDA) {
        return InvalidArgument(lowering.op + ": a one-shot call on CUDA operands needs an "
                               "allocator in the ExecutionContext (Tensor storage is host memory)");
      }
      try {
        *owned = Tensor(lowering.input.dtype, lowering.output_shape);
      } catch (const std::bad_alloc&) {
        return Status(StatusCode::kInternal, unable_to_allocate(lowering.input.dtype, lowering.output_shape),
                      StatusReason::kOutOfMemory);
      }
      target = owned->mutable_view();
    }
    const bool is_scatter = lowering.kind == OpKind::kScatter;
    MULTIGATHER_RETURN_IF_ERROR(execute_impl(lowering, target, context, context.output_name,
                                             is_scatter ? nullptr : &call, /*output_is_new=*/true,
                                             is_scatter ? &scatter : nullptr));
    *output = target;
    return Status::Ok();
  });
}

Tensor execute(const Lowering& lowering, const ExecutionContext& context) {
  Tensor out;
  MutableTensorView view;
  ExecutionContext host = context;
  host.allocate = nullptr;
  throw_if_error(execute_alloc(lowering, host, &view, &out));
  return out;
}

Status execute_lowering(const Lowering& lowering, const MutableTensorView& output) noexcept {
  return execute(lowering, output, ExecutionContext{});
}

Status run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs, Tensor* output, const ExecutionContext& context) noexcept {
  return guarded(name, [&]() -> Status {
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, input, indices, attrs, &l, context.device));
    Tensor out;
    MutableTensorView view;
    ExecutionContext host = context;
    host.allocate = nullptr;
    MULTIGATHER_RETURN_IF_ERROR(execute_alloc(l, host, &view, &out));
    *output = std::move(out);
    return Status::Ok();
  });
}

Status run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const TensorView& updates, const Attributes& attrs, Tensor* output,
              const ExecutionContext& context) noexcept {
  return guarded(name, [&]() -> Status {
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, input, indices, updates, attrs, &l, context.device));
    Tensor out;
    MutableTensorView view;
    ExecutionContext host = context;
    host.allocate = nullptr;
    MULTIGATHER_RETURN_IF_ERROR(execute_alloc(l, host, &view, &out));
    *output = std::move(out);
    return Status::Ok();
  });
}

Tensor run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const TensorView& updates, const Attributes& attrs, const ExecutionContext& context) {
  Tensor out;
  throw_if_error(run_op(name, input, indices, updates, attrs, &out, context));
  return out;
}

Tensor run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs, const ExecutionContext& context) {
  Tensor out;
  throw_if_error(run_op(name, input, indices, attrs, &out, context));
  return out;
}

}  // namespace multigather
