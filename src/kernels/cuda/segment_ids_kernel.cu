// The CUDA engine's segment ids (Lowering::segment_ids: ids from lengths, offsets or indptr): the
// two passes of kernels/segment_ids.hpp's host+device body, one call per thread over
// elementwise_blocks' grids.
#include <cuda_runtime.h>

#include "kernels/cuda/segment_ids_kernel.hpp"
#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/segment_ids.hpp"

namespace multigather::detail {
namespace {

__global__ void __launch_bounds__(kThreadsPerBlock) check_offsets_kernel(const __grid_constant__ SegmentIdsParams p) {
  check_offsets_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) lengths_starts_kernel(const __grid_constant__ SegmentIdsParams p) {
  lengths_starts_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) segment_ids_kernel(const __grid_constant__ SegmentIdsParams p) {
  segment_ids_thread(p, grid_thread(), grid_threads());
}

}  // namespace

cudaError_t launch_segment_ids_check(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  if (p.offsets) return launch_elementwise(reinterpret_cast<const void*>(check_offsets_kernel), p, p.bound_rows * p.k, multiprocessors, stream);
  return launch_elementwise(reinterpret_cast<const void*>(lengths_starts_kernel), p, p.bound_rows, multiprocessors, stream);
}

cudaError_t launch_segment_ids(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  return launch_elementwise(reinterpret_cast<const void*>(segment_ids_kernel), p, p.rows * p.n, multiprocessors, stream);
}

}  // namespace multigather::detail
