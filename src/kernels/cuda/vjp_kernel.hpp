// Internal: the launchers of the CUDA VJP's kernels (vjp_kernel.cu; bodies in vjp_rows.hpp).
// Neither synchronizes; the current device must own the pointers and `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/prod_gradient.hpp"
#include "multigather/dtype.hpp"

namespace multigather::detail {

/// positions[p] = p for p < count.
cudaError_t launch_positions(std::int64_t* positions, std::int64_t count, int multiprocessors,
                             cudaStream_t stream) noexcept;

/// Zeroes element p of `grad` (C-contiguous, `element_bytes` = 1, 2, 4, 8 or 16 bytes each,
/// aligned to min(element_bytes, 8)) unless won[p] == p, for p < count; cudaErrorInvalidValue
/// for another element size.
cudaError_t launch_keep_winners(void* grad, int element_bytes, const std::int64_t* won, std::int64_t count,
                                int multiprocessors, cudaStream_t stream) noexcept;

/// tie[p] = data[p] == picked[p] ? 1 : 0 for p < count (floating `dtype`, C-contiguous);
/// cudaErrorInvalidValue for another dtype.
cudaError_t launch_ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count,
                        int multiprocessors, cudaStream_t stream) noexcept;

/// out[p] = flag[p] != 0 ? p : none for p < count.
cudaError_t launch_positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out, std::int64_t count,
                                   int multiprocessors, cudaStream_t stream) noexcept;

/// A segment product's gradient step (kernels/prod_gradient.hpp) over p's elements of `dtype`:
/// the zeros step, else the derivative step; cudaErrorInvalidValue for a dtype without one.
cudaError_t launch_prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step, int multiprocessors,
                                 cudaStream_t stream) noexcept;

/// flag[p] = at[p] == p ? 1 : 0 for p < count.
cudaError_t launch_at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count, int multiprocessors,
                             cudaStream_t stream) noexcept;

}  // namespace multigather::detail
