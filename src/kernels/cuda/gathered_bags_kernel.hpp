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

/// Passes V1 to V4 (the table's gradient) for a table of `dtype`, the sort between them (the
/// deterministic scatter's, launch_stable_sort_pairs) on p.keys / p.values (device scratch of
/// keys_count() each; p.bag_of and p.counts too for sum / mean); stream-ordered scratch of the
/// sort. cudaErrorInvalidValue for a dtype without it, or more than INT32_MAX keys.
cudaError_t launch_gathered_bags_vjp(GatheredBagsVjpParams p, DType dtype, int multiprocessors,
                                     cudaStream_t stream) noexcept;

}  // namespace multigather::detail
