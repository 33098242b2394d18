// Internal: the launchers of the CUDA VJP's kernels (vjp_kernel.cu; bodies in vjp_rows.hpp).
// Neither synchronizes; the current device must own the pointers and `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace multigather::detail {

/// positions[p] = p for p < count.
cudaError_t launch_positions(std::int64_t* positions, std::int64_t count, int multiprocessors,
                             cudaStream_t stream) noexcept;

/// Zeroes element p of `grad` (C-contiguous, `element_bytes` = 1, 2, 4, 8 or 16 bytes each,
/// aligned to min(element_bytes, 8)) unless won[p] == p, for p < count; cudaErrorInvalidValue
/// for another element size.
cudaError_t launch_keep_winners(void* grad, int element_bytes, const std::int64_t* won, std::int64_t count,
                                int multiprocessors, cudaStream_t stream) noexcept;

}  // namespace multigather::detail
