// The scatter operator's entry points (multigather/scatter.hpp): validate everything once,
// check the index values (the gather's min / max pre-check), copy input into output, combine
// (CPU engine; between C-contiguous views it copies slab by slab as it combines). Every check
// happens before the first write, so a failed call leaves the output unchanged; an output new to
// the call (one-shot) skips the index pass, and is dropped on error.
#include "kernels/cpu/run_validated.hpp"
#include "core/interrupt_poll.hpp"
#include "core/task_pool.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "kernels/cpu/widen.hpp"
#include "kernels/reference/reference.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather {
namespace detail {
namespace {

/// run_scatter_validated with ScatterOptions::wide_accumulator on float16 / bfloat16 (add, mul):
/// the same scatter, in place, on a float32 twin of the output that starts as the input (a
/// partial write: the whole base, the output a part of it at the same element offset), with
/// float32 updates (broadcast ones stay broadcast); then each element rounded once into the
/// output (a partial write: the whole base_output, C-contiguous here), which is written only on
/// success. The input may be the output itself, or (a partial write) its part of base_output,
/// read from the twin.
Status run_scatter_widened(const TensorView& input, const TensorView& indices, const MutableTensorView& output,
                           const ValidatedScatter& call, const ScatterOptions& options, const TensorView* base,
                           const MutableTensorView* base_output) noexcept {
  const bool partial = base != nullptr && base_output != nullptr;
  const int threads = options.num_threads;
  try {
    Tensor updates32;
    ValidatedScatter call32 = call;
    call32.updates = cpu::widened_broadcast(call.updates, &updates32, threads);
    call32.gather.input_dtype = DType::kFloat32;
    call32.gather.element_size = 4;
    Tensor output32 = cpu::widened(partial ? *base : input, threads);
    const MutableTensorView& whole = partial ? *base_output : output;
    const std::ptrdiff_t offset =
        (static_cast<const std::byte*>(output.data) - static_cast<const std::byte*>(whole.data)) /
        static_cast<std::ptrdiff_t>(element_size(output.dtype));
    const MutableTensorView twin(output32.data_as<float>() + offset, DType::kFloat32, output.shape,
                                 partial ? output.strides : contiguous_strides(output.shape));
    ScatterOptions narrow = options;
    narrow.wide_accumulator = false;
    MULTIGATHER_RETURN_IF_ERROR(run_scatter_validated(TensorView(twin.data, twin.dtype, twin.shape, twin.strides),
                                                      indices, twin, call32, narrow, nullptr, nullptr,
                                                      /*keep_output_on_error=*/false));
    cpu::narrow_into(output32.view(), whole, threads);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory: the float32 accumulator of a float16 / bfloat16 "
                                         "scatter (wide_accumulator) needs 4 bytes per element");
  }
  return Status::Ok();
}

}  // namespace

Status run_scatter_validated(const TensorView& input, const TensorView& indices,
                             const MutableTensorView& output, const ValidatedScatter& call,
                             const ScatterOptions& options, const TensorView* base,
                             const MutableTensorView* base_output, bool keep_output_on_error) noexcept {
  const bool partial = base != nullptr && base_output != nullptr;
  if (accumulates_wide(options, output.dtype) && (!partial || base_output->is_contiguous())) {
    return run_scatter_widened(input, indices, output, call, options, base, base_output);
  }
  const bool in_place = partial ? scatters_in_place(*base_output, *base) : scatters_in_place(output, input);
  auto copy_input = [&]() -> Status {
    if (in_place) return Status::Ok();
    return partial ? copy_view(*base, *base_output, options.num_threads)
                   : copy_view(input, output, options.num_threads);
  };
  if (call.gather.shape.output_numel == 0) return copy_input();
  const GatherOptions gather = gather_options_of(options);
  const TensorView targets(output.data, output.dtype, output.shape, output.strides);
  const MutableTensorView updates(const_cast<void*>(call.updates.data), call.updates.dtype,
                                  call.updates.shape, call.updates.strides);  // read only
  GatherPlan plan;
  make_plan(targets, indices, updates, call.gather, gather, &plan);
  auto bad_index = [&]() -> Status {
    if (interrupted()) return cancelled();  // not a bad index: the engine stopped
    Status error = reference_gather(targets, indices, call.gather, gather, MutableTensorView{});
    if (!error.ok()) return error;
    return Status(StatusCode::kInternal, "the CPU scatter engine reported a bad index that the "
                                         "reference kernel does not find (please report this bug)");
  };
  // The scatter engine's phases need their whole team at once (a barrier): OpenMP's, even on a
  // host pool (core/task_pool.hpp), with OpenMP's thread count (which leaves busy cores alone).
  const int threads = [&] {
    const TaskPoolScope openmp(nullptr);
    return cpu_thread_count(plan);
  }();
  // 1. The index values, before anything is written. An output new to this call skips the
  //    pass (the output bytes are dropped on error): the engine checks every index before it
  //    uses it and reports the first bad one (S2 one-shot, 1 thread: the pass was 19% of the
  //    call, `perf record`).
  if (keep_output_on_error && !scatter_indices_ok(plan, indices)) return bad_index();
  ScatterRun run;
  run.dtype = input.dtype;
  run.reduction = call.reduction;
  run.include_input = call.include_input;
  for (int d = 0; d < output.rank(); ++d) {
    const std::int64_t reach = (output.shape[d] - 1) * output.strides[d];
    (reach < 0 ? run.output_lo : run.output_hi) += reach;
  }
  // 2. output = input (a partial write: the whole base); between two C-contiguous views, the
  //    engine copies it slab by slab as it combines where it can (ScatterRun::copy_from).
  if (!partial && !in_place && input.is_contiguous() && targets.is_contiguous()) {
    run.copy_from = static_cast<const std::byte*>(input.data);
    if (!scatter_copies_input(plan, run)) run.copy_from = nullptr;
  }
  if (run.copy_from == nullptr) MULTIGATHER_RETURN_IF_ERROR(copy_input());
  // 3. The combine.
  switch (run_scatter_cpu(plan, run, threads)) {
    case ScatterResult::kOk: return Status::Ok();
    case ScatterResult::kBadIndex: return bad_index();
    case ScatterResult::kOutOfMemory:
      return Status(StatusCode::kInternal, "out of memory: include_input = false needs one byte "
                                           "per output element");
    default: break;
  }
  return Status(StatusCode::kInternal, "the CPU scatter engine has no kernel for " +
                                           std::string(dtype_name(input.dtype)) + " with reduction " +
                                           std::string(reduction_name(call.reduction)));
}

}  // namespace detail

Status scatter_multiaxis_into(const TensorView& input, const TensorView& indices,
                              const TensorView& updates, std::span<const std::int64_t> axes,
                              const MutableTensorView& output, const ScatterOptions& options) noexcept {
  detail::ValidatedScatter call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_operands(input, indices, updates, axes, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_output(output, input, indices, updates, call, "output"));
  return detail::run_scatter_validated(input, indices, output, call, options);
}

Status scatter_multiaxis_reference(const TensorView& input, const TensorView& indices,
                                   const TensorView& updates, std::span<const std::int64_t> axes,
                                   const MutableTensorView& output,
                                   const ScatterOptions& options) noexcept {
  detail::ValidatedScatter call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_operands(input, indices, updates, axes, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_output(output, input, indices, updates, call, "output"));
  return detail::reference_scatter(input, indices, output, call, options);
}

Tensor scatter_multiaxis(const TensorView& input, const TensorView& indices,
                         const TensorView& updates, std::span<const std::int64_t> axes,
                         const ScatterOptions& options) {
  detail::ValidatedScatter call;
  throw_if_error(detail::validate_scatter_operands(input, indices, updates, axes, options, &call));
  Tensor out(input.dtype, input.shape);
  throw_if_error(detail::run_scatter_validated(input, indices, out.mutable_view(), call, options, nullptr, nullptr,
                                               /*keep_output_on_error=*/false));
  return out;
}

Tensor scatter_multiaxis(const TensorView& input, const TensorView& indices,
                         const TensorView& updates, std::initializer_list<std::int64_t> axes,
                         const ScatterOptions& options) {
  return scatter_multiaxis(input, indices, updates,
                           std::span<const std::int64_t>(axes.begin(), axes.size()), options);
}

}  // namespace multigather
