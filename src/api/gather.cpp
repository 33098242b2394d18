// The core operator's entry points (multigather/gather.hpp): validate once, plan, run a kernel;
// on a bad index, ask the reference kernel for the exact message. execute.cpp runs every
// registry op through run_validated below.
#include "api/run_validated.hpp"
#include "core/interrupt_poll.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/reference/reference.hpp"
#include "plan/plan.hpp"

namespace multigather {
namespace detail {

Status run_validated(const TensorView& input, const TensorView& indices,
                     const MutableTensorView& output, const ValidatedCall& call,
                     const GatherOptions& options, bool keep_output_on_error) noexcept {
  if (call.shape.output_numel == 0) return Status::Ok();
  detail::GatherPlan plan;
  detail::make_plan(input, indices, output, call, options, &plan);
  const bool checked_first = keep_output_on_error && plan.index_mode == IndexMode::kError;
  if ((!checked_first || detail::indices_in_range(indices, plan)) && detail::run_cpu(plan)) return Status::Ok();
  if (detail::interrupted()) return detail::cancelled();  // not a bad index: the engine stopped
  Status error = detail::reference_gather(input, indices, call, options, MutableTensorView{});
  if (error.ok()) {
    return Status(StatusCode::kInternal, "the CPU kernel reported a bad index that the reference "
                                         "kernel does not find (please report this bug)");
  }
  return error;
}

Status copy_view(const TensorView& input, const MutableTensorView& output, int num_threads) {
  if (input.is_contiguous() && TensorView(output).is_contiguous() && input.shape == output.shape &&
      input.dtype == output.dtype) {
    parallel_copy(static_cast<std::byte*>(output.data), static_cast<const std::byte*>(input.data),
                  input.numel() * static_cast<std::int64_t>(element_size(input.dtype)), num_threads);
    return Status::Ok();
  }
  GatherOptions options;
  options.num_threads = num_threads;
  return gather_multiaxis_into(input, no_axes_indices(input.rank()), {}, output, options);
}

TensorView no_axes_indices(int rank) {
  static const std::int64_t zero = 0;
  return TensorView(&zero, DType::kInt64, Dims::filled(rank, 1), Dims::filled(rank, 0));
}

}  // namespace detail

namespace {
using detail::run_validated;
}  // namespace

Status gather_multiaxis_into(const TensorView& input, const TensorView& indices,
                             std::span<const std::int64_t> axes, const MutableTensorView& output,
                             const GatherOptions& options) noexcept {
  detail::ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_call(input, indices, axes, output, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(output, input, indices, "output"));
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
