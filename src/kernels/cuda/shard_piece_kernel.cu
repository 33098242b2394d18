// A split call's piece on the CUDA engine: kernels/shard_piece.hpp's host+device bodies, one
// call per thread over elementwise_blocks' grids.
#include <cuda_runtime.h>

#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/cuda/shard_piece_kernel.hpp"
#include "kernels/shard_piece.hpp"

namespace multigather::detail {
namespace {

__global__ void __launch_bounds__(kThreadsPerBlock) shard_piece_kernel(const __grid_constant__ ShardPieceParams p) {
  shard_piece_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) shard_fill_kernel(const __grid_constant__ ShardFillParams p) {
  shard_fill_thread(p, grid_thread(), grid_threads());
}

}  // namespace

cudaError_t launch_shard_piece(const ShardPieceParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  return launch_elementwise(reinterpret_cast<const void*>(shard_piece_kernel), p, p.n, multiprocessors, stream);
}

cudaError_t launch_shard_fill(const ShardFillParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  return launch_elementwise(reinterpret_cast<const void*>(shard_fill_kernel), p, p.n, multiprocessors, stream);
}

}  // namespace multigather::detail
