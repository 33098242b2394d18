// The CPU engine behind every entry point (run_validated.hpp).
#include "kernels/cpu/run_validated.hpp"

#include <algorithm>
#include <cstring>

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

namespace {

/// A view that repeats one element (every stride 0 where the size is above 1).
bool is_broadcast(const TensorView& v) {
  for (int d = 0; d < v.rank(); ++d) {
    if (v.strides[d] != 0 && v.shape[d] != 1) return false;
  }
  return true;
}

/// A view that repeats one element whose bytes are all zero (every stride 0): a zero fill.
bool is_broadcast_zero(const TensorView& v) {
  if (!is_broadcast(v)) return false;
  const auto* bytes = static_cast<const std::byte*>(v.data);
  for (std::size_t i = 0; i < element_size(v.dtype); ++i) {
    if (bytes[i] != std::byte{0}) return false;
  }
  return true;
}

}  // namespace

Status copy_view(const TensorView& input, const MutableTensorView& output, int num_threads) {
  if (input.dtype == output.dtype && input.shape == output.shape && TensorView(output).is_contiguous() &&
      input.numel() > 0 && is_broadcast_zero(input)) {
    parallel_zero(static_cast<std::byte*>(output.data),
                  output.numel() * static_cast<std::int64_t>(element_size(output.dtype)), num_threads);
    return Status::Ok();
  }
  if (input.dtype == output.dtype && input.shape == output.shape && TensorView(output).is_contiguous() &&
      input.numel() > 1 && is_broadcast(input)) {
    // One element repeated (the expanded scalar of a sum's gradient): its bytes, then doubling
    // copies of what is written.
    const std::size_t size = element_size(input.dtype);
    const std::size_t bytes = static_cast<std::size_t>(output.numel()) * size;
    auto* out = static_cast<std::byte*>(output.data);
    std::memcpy(out, input.data, size);
    for (std::size_t done = size; done < bytes; done *= 2) std::memcpy(out + done, out, std::min(done, bytes - done));
    return Status::Ok();
  }
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
