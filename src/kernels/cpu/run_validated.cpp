// The CPU engine behind every entry point (run_validated.hpp).
#include "kernels/cpu/run_validated.hpp"

#include "core/interrupt_poll.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/reference/reference.hpp"

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
  const TensorView indices = no_axes_indices(input.rank());
  ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(validate_call(input, indices, {}, output, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(check_no_overlap(output, input, indices, "output"));
  return run_validated(input, indices, output, call, options, /*keep_output_on_error=*/true);
}

TensorView no_axes_indices(int rank) {
  static const std::int64_t zero = 0;
  return TensorView(&zero, DType::kInt64, Dims::filled(rank, 1), Dims::filled(rank, 0));
}

}  // namespace detail

}  // namespace multigather
