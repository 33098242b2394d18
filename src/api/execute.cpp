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
#include "plan/scatter_plan.hpp"

#include "kernels/cuda/cuda_hooks.hpp"

namespace multigather {
namespace {

using detail::str;

using detail::cuda_engine_available;
using detail::Engine;

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
// On the CUDA engine the core call validates its operands itself (gather_multiaxis_cuda_into).
Status run_core(const Lowering& l, const MutableTensorView& core, const GatherOptions& options,
                const Engine& engine, std::string_view output_name, const detail::ValidatedCall* checked,
                bool keep_output) {
  Status s;
  if (engine.cuda()) {
    MULTIGATHER_RETURN_IF_ERROR(cuda_engine_available(l));
    MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(core, l.input, read_indices(l), output_name));
    s = engine.gather(l.input, l.indices, l.axes, core, options);
  } else if (checked == nullptr) {
    detail::ValidatedCall own{.shape = l.shape};
    MULTIGATHER_RETURN_IF_ERROR(detail::check_operands(l.input, l.indices, !l.axes.empty(), options, &own));
    return run_core(l, core, options, engine, output_name, &own, keep_output);
  } else {
    MULTIGATHER_RETURN_IF_ERROR(detail::validate_output(core, *checked));
    MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(core, l.input, read_indices(l), output_name));
    s = detail::run_validated(l.input, l.indices, core, *checked, options, keep_output);
  }
  return s.code() == StatusCode::kOutOfRange ? engine.describe_out_of_range(l, s) : s;
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

Status divide_by_update_count(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                              const Engine& engine) {
  detail::Temporary storage;
  TensorView per_element;
  MULTIGATHER_RETURN_IF_ERROR(engine.update_count(l, options, core.data, &storage, &per_element));
  bool divided = false;
  MULTIGATHER_RETURN_IF_ERROR(engine.divide_by_count(core, per_element, input_is_counted(l), l.sqrt_count, &divided));
  return divided ? Status::Ok() : mean_needs_division(l, core.dtype);
}

// A segment op whose updates are gathered rows (Lowering::gathered: embedding_bag): one fused
// pass per bag (kernels/cpu/gathered_segments.cpp). The lowering checked the row ids; the output
// is checked here, so a failed call writes nothing.
Status run_gathered(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                    std::string_view output_name, const Engine& engine) {
  const GatheredRows& g = *l.gathered;
  // The core output is [B, 1.., D] (the block recipe's unit dimensions): the kernel's [B, D].
  const int r = core.rank();
  const std::int64_t bags = g.check_values ? g.bags : static_cast<std::int64_t>(g.bag_starts.size()) - 1;
  if (r < 2 || core.dtype != g.table.dtype || core.numel() != core.shape[0] * core.shape[r - 1] ||
      bags != core.shape[0]) {
    return Status(StatusCode::kInternal, l.op + ": the gathered rows' output " + to_string(core.shape) +
                                             " is not [B, D] of the table's dtype");
  }
  const MutableTensorView bags_view(core.data, core.dtype, Dims{core.shape[0], core.shape[r - 1]},
                                    Dims{core.strides[0], core.strides[r - 1]});
  if (views_overlap(bags_view, g.table) || (g.scale.data != nullptr && views_overlap(bags_view, g.scale))) {
    return InvalidArgument(std::string(output_name) + " overlaps weight or per_sample_weights (the output cannot "
                           "be memory the op reads)");
  }
  if (bags_view.numel() == 0) return Status::Ok();
  return engine.gathered(l, bags_view, options.num_threads);
}

// The validated scatter's combine on the engine (then a mean's division), with the framework's
// out-of-range message.
Status combine(const Lowering& l, const TensorView& input, const MutableTensorView& core,
               const detail::ValidatedScatter& call, const ScatterOptions& options, const Engine& engine,
               const TensorView* base, const MutableTensorView* base_output, bool keep_output) {
  Status s = engine.scatter_validated(input, l.indices, core, call, options, base, base_output, keep_output);
  if (s.code() == StatusCode::kOutOfRange) return engine.describe_out_of_range(l, s);
  if (s.ok() && l.mean_by_count) return divide_by_update_count(l, core, options, engine);
  return s;
}

// combine with Lowering::updates_step's updates, made first in a temporary (a function of its
// own: the temporary's room stays off the common path's stack).
[[gnu::noinline]] Status combine_stepped(const Lowering& l, const TensorView& input, const MutableTensorView& core,
                                         detail::ValidatedScatter call, const ScatterOptions& options,
                                         const Engine& engine, const TensorView* base,
                                         const MutableTensorView* base_output, bool keep_output) {
  detail::Temporary stepped;
  MULTIGATHER_RETURN_IF_ERROR(detail::stepped_updates(l, call.updates, engine, core.data, &stepped, &call.updates));
  return combine(l, input, core, call, options, engine, base, base_output, keep_output);
}

// The scatter form of run_core: validates the scatter (operands, then the core output view:
// input itself for in place, else no overlap), then runs it on the CPU engine or, for CUDA
// operands, the CUDA engine (context.stream, context.deterministic). keep_output: a CPU
// scatter checks its index values before the first write (false: an output new to the call).
Status run_scatter_core(const Lowering& l, const MutableTensorView& core, const ScatterOptions& options,
                        const Engine& engine, std::string_view output_name, const MutableTensorView& full,
                        const detail::ValidatedScatter* checked, bool keep_output) {
  const bool cuda = engine.cuda();
  if (cuda) MULTIGATHER_RETURN_IF_ERROR(cuda_engine_available(l));
  if (cuda && l.mean_by_count && !detail::cuda_has_division(l.updates.dtype, l.sqrt_count)) {  // before any write
    return mean_needs_division(l, l.updates.dtype);
  }
  if (l.gathered != nullptr) return run_gathered(l, core, options, output_name, engine);
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
  if (l.updates_step.kind != UpdatesStep::Kind::kNone) {
    return combine_stepped(l, input, core, call, options, engine, base, base_output, keep_output);
  }
  return combine(l, input, core, call, options, engine, base, base_output, keep_output);
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
  const detail::EngineOf engine_of(device, context);
  const Engine& engine = engine_of.get();
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
    MULTIGATHER_RETURN_IF_ERROR(is_scatter ? run_scatter_core(l, core, scatter, engine, output_name,
                                                              staging.mutable_view(), checked_scatter,
                                                              /*keep_output=*/false)
                                           : run_core(l, core, options, engine, output_name, checked,
                                                      /*keep_output=*/false));  // written only on success
    return detail::copy_view(TensorView(staging.data(), output.dtype, output.shape), output, options.num_threads);
  }
  const MutableTensorView core(output.data, output.dtype, l.core_output_shape, core_strides);
  const bool keep_output = !(output_is_new || context.output_is_new);
  if (is_scatter) {
    return run_scatter_core(l, core, scatter, engine, output_name, output, checked_scatter, keep_output);
  }
  return run_core(l, core, options, engine, output_name, checked, keep_output);
}

using detail::guarded;

// run(l), or, for a lowering whose segment ids the engine computes (Lowering::segment_ids),
// run(a copy of l whose indices view them), computed first on the operands' engine.
template <class Run>
Status with_indices(const Lowering& l, const ExecutionContext& context, Run&& run) {
  if (l.segment_ids == nullptr) return run(l);
  const detail::EngineOf engine(resolve_device(l, context), context);
  if (engine.get().cuda()) MULTIGATHER_RETURN_IF_ERROR(cuda_engine_available(l));
  detail::Temporary ids;
  Lowering ready;
  MULTIGATHER_RETURN_IF_ERROR(engine.get().segment_ids(l, &ids, &ready));
  return run(ready);
}

// execute_alloc for a lowering whose indices are in place.
Status execute_alloc_impl(const Lowering& lowering, const ExecutionContext& context, MutableTensorView* output,
                          Tensor* owned) {
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
}

}  // namespace

Status execute(const Lowering& lowering, const MutableTensorView& output,
               const ExecutionContext& context) noexcept {
  return guarded(lowering.op, [&] {
    const detail::TaskPoolScope pool(context.task_pool);
    return with_indices(lowering, context, [&](const Lowering& l) {
      return execute_impl(l, output, context, context.output_name);
    });
  });
}

Status execute_alloc(const Lowering& lowering, const ExecutionContext& context,
                     MutableTensorView* output, Tensor* owned) noexcept {
  return guarded(lowering.op, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    return with_indices(lowering, context,
                        [&](const Lowering& ready) { return execute_alloc_impl(ready, context, output, owned); });
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
