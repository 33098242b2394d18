// The core operator's entry points (multigather/gather.hpp): validate once, then run_validated
// (kernels/cpu/run_validated.hpp: plan, run a kernel; on a bad index, the reference kernel's
// exact message). execute.cpp runs every registry op through run_validated too.
#include "core/task_pool.hpp"
#include "kernels/cpu/run_validated.hpp"
#include "kernels/reference/reference.hpp"
#include "plan/plan.hpp"

namespace multigather {

namespace {
using detail::run_validated;
}  // namespace

Status gather_multiaxis_into(const TensorView& input, const TensorView& indices,
                             std::span<const std::int64_t> axes, const MutableTensorView& output,
                             const GatherOptions& options) noexcept {
  detail::ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_call(input, indices, axes, output, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(output, input, indices, "output"));
  const detail::TaskPoolScope pool(options.task_pool ? options.task_pool : detail::current_task_pool());
  return run_validated(input, indices, output, call, options, /*keep_output_on_error=*/true);
}

Status gather_multiaxis_alloc(const TensorView& input, const TensorView& indices,
                              std::span<const std::int64_t> axes, const GatherOptions& options,
                              OutputAllocator allocate, void* context) noexcept {
  detail::ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_operands(input, indices, axes, options, &call));
  MutableTensorView output;
  if (allocate == nullptr || !allocate(context, input.dtype, call.shape.output_shape, &output)) {
    return Status(StatusCode::kInternal, "the output allocator failed");
  }
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_output(output, call));
  MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(output, input, indices, "output"));
  const detail::TaskPoolScope pool(options.task_pool ? options.task_pool : detail::current_task_pool());
  return run_validated(input, indices, output, call, options, /*keep_output_on_error=*/false);
}

Status gather_multiaxis_reference(const TensorView& input, const TensorView& indices,
                                  std::span<const std::int64_t> axes,
                                  const MutableTensorView& output,
                                  const GatherOptions& options) noexcept {
  detail::ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_call(input, indices, axes, output, options, &call));
  return detail::reference_gather(input, indices, call, options, output);
}

Tensor gather_multiaxis(const TensorView& input, const TensorView& indices,
                        std::span<const std::int64_t> axes, const GatherOptions& options) {
  // Validated once: the output is allocated from the validated shape, then written.
  detail::ValidatedCall call;
  throw_if_error(detail::validate_operands(input, indices, axes, options, &call));
  Tensor out(input.dtype, call.shape.output_shape);
  throw_if_error(run_validated(input, indices, out.mutable_view(), call, options, /*keep_output_on_error=*/false));
  return out;
}

Tensor gather_multiaxis(const TensorView& input, const TensorView& indices,
                        std::initializer_list<std::int64_t> axes, const GatherOptions& options) {
  return gather_multiaxis(input, indices, std::span<const std::int64_t>(axes.begin(), axes.size()),
                          options);
}

GatherShape output_shape(const Dims& input_shape, const Dims& indices_shape,
                         std::span<const std::int64_t> axes) {
  GatherShape shape;
  throw_if_error(infer_shape(input_shape, indices_shape, axes, &shape));
  return shape;
}

}  // namespace multigather
