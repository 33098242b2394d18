// Internal (included by .cu files only): the elementwise kernels whose one argument is a params
// struct (__grid_constant__), over elementwise_blocks' grid: each thread's index and the grid's
// thread count inside the kernel, and the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks, kThreadsPerBlock

namespace multigather::detail {

/// This thread's index in the grid, and the grid's threads (a grid-stride loop's start and step).
__device__ inline std::int64_t grid_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x;
}
__device__ inline std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock; }

/// `kernel(p)` over elementwise_blocks' grid for `count` elements (nothing for none): the
/// launch's own status (cudaLaunchKernel; a <<<>>> launch would need cudaGetLastError, which
/// may report an older error of the caller's).
template <class Params>
cudaError_t launch_elementwise(const void* kernel, const Params& p, std::int64_t count, int multiprocessors,
                               cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  void* args[] = {const_cast<Params*>(&p)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(count, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace multigather::detail
