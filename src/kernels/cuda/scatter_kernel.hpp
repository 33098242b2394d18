// Internal: the launchers of the CUDA scatter kernels (scatter_kernel.cu). Neither synchronizes.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/launch_params.hpp"
#include "multigather/scatter.hpp"

namespace multigather::detail {

/// Step 1 (scatter_rows.hpp): fills s.keys and s.values for every row and raises
/// s.rows.error_flag on a bad index in error mode. Writes nothing else.
cudaError_t launch_scatter_keys(const CudaScatterParams& s, int multiprocessors, cudaStream_t stream) noexcept;

/// `count` elements of `element_bytes` at `data` set to the host `element` (make_cuda_fill_params'
/// plan, over elementwise_blocks' grid): a host constant broadcast to a scatter's output, written
/// before the combine.
cudaError_t launch_fill(void* data, std::int64_t count, std::size_t element_bytes, const void* element,
                        int multiprocessors, cudaStream_t stream) noexcept;

/// (keys, values) of `n` rows sorted by the low `key_bits` bits of the key, stably (the sort
/// between a deterministic scatter's steps; every key below 2^key_bits - 1, a dropped one all
/// ones). The sorted rows may land in a second buffer: *keys / *values then point at them, and
/// *memory (stream-ordered, null when none) must be freed with cudaFreeAsync after their last
/// use. At most INT32_MAX rows (cudaErrorInvalidValue beyond).
cudaError_t launch_stable_sort_pairs(std::uint64_t** keys, std::int64_t** values, std::int64_t n, int key_bits,
                                     void** memory, cudaStream_t stream) noexcept;

/// The combine into s.rows.input (the scatter's output, already holding its starting values):
/// deterministic (stable sort by target, then one owner per target) or, when `deterministic` is
/// false and (dtype, reduction) has an atomic form, atomic. Scratch memory is stream-ordered
/// (cudaMallocAsync / cudaFreeAsync). Overwrites s.keys and s.values. At most INT32_MAX rows
/// (cudaErrorInvalidValue beyond).
cudaError_t launch_scatter_combine(const CudaScatterParams& s, DType dtype, Reduction reduction,
                                   bool deterministic, int multiprocessors, cudaStream_t stream) noexcept;

}  // namespace multigather::detail
