// The CUDA engine's segment ids (Lowering::segment_ids: ids from lengths, offsets or indptr): the
// two passes of kernels/segment_ids.hpp's host+device body, one call per thread over
// elementwise_blocks' grids.
#include <cuda_runtime.h>

#include "kernels/cuda/segment_ids_kernel.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks
#include "kernels/segment_ids.hpp"

namespace multigather::detail {
namespace {

__device__ std::int64_t grid_thread() { return static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x; }
__device__ std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock; }

__global__ void __launch_bounds__(kThreadsPerBlock) check_offsets_kernel(const __grid_constant__ SegmentIdsParams p) {
  check_offsets_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) lengths_starts_kernel(const __grid_constant__ SegmentIdsParams p) {
  lengths_starts_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) segment_ids_kernel(const __grid_constant__ SegmentIdsParams p) {
  segment_ids_thread(p, grid_thread(), grid_threads());
}

cudaError_t launch(const void* kernel, const SegmentIdsParams& p, std::int64_t threads, int multiprocessors,
                   cudaStream_t stream) {
  if (threads <= 0) return cudaSuccess;
  void* args[] = {const_cast<SegmentIdsParams*>(&p)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(threads, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace

cudaError_t launch_segment_ids_check(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  if (p.offsets) return launch(reinterpret_cast<const void*>(check_offsets_kernel), p, p.bound_rows * p.k, multiprocessors, stream);
  return launch(reinterpret_cast<const void*>(lengths_starts_kernel), p, p.bound_rows, multiprocessors, stream);
}

cudaError_t launch_segment_ids(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  return launch(reinterpret_cast<const void*>(segment_ids_kernel), p, p.rows * p.n, multiprocessors, stream);
}

}  // namespace multigather::detail
