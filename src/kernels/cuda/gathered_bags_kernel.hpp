// Internal: the launchers of the CUDA engine's embedding_bag (gathered_bags_kernel.cu; bodies in
// kernels/gathered_bags.hpp). They do not synchronize; the current device must own the pointers
// and `stream`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/gathered_bags.hpp"

namespace multigather::detail {

/// Passes 1 and 2: bag starts and table rows, checked into *p.failed (device memory, zeroed by
/// the caller).
cudaError_t launch_bag_index(const BagIndexParams& p, int multiprocessors, cudaStream_t stream) noexcept;
/// Pass 3 for a table of `dtype`; cudaErrorInvalidValue for a dtype without it.
cudaError_t launch_gathered_bags(const GatheredBagsParams& p, DType dtype, int multiprocessors,
                                 cudaStream_t stream) noexcept;

}  // namespace multigather::detail
