// The CUDA engine's embedding_bag (Lowering::gathered): the three passes of
// kernels/gathered_bags.hpp's host+device bodies, one call per thread over elementwise_blocks'
// grids.
#include <cuda_runtime.h>

#include "kernels/cuda/gathered_bags_kernel.hpp"
#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/gathered_bags.hpp"

namespace multigather::detail {
namespace {

__global__ void __launch_bounds__(kThreadsPerBlock) bag_starts_kernel(const __grid_constant__ BagIndexParams p) {
  bag_starts_thread(p, grid_thread(), grid_threads());
}

__global__ void __launch_bounds__(kThreadsPerBlock) bag_rows_kernel(const __grid_constant__ BagIndexParams p) {
  bag_rows_thread(p, grid_thread(), grid_threads());
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) gathered_bags_kernel(const __grid_constant__ GatheredBagsParams p) {
  gathered_bags_thread<E>(p, grid_thread(), grid_threads());
}

}  // namespace

cudaError_t launch_bag_index(const BagIndexParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  cudaError_t error = launch_elementwise(reinterpret_cast<const void*>(bag_starts_kernel), p, p.bags + 1, multiprocessors, stream);
  if (error == cudaSuccess) error = launch_elementwise(reinterpret_cast<const void*>(bag_rows_kernel), p, p.n, multiprocessors, stream);
  return error;
}

cudaError_t launch_gathered_bags(const GatheredBagsParams& p, DType dtype, int multiprocessors,
                                 cudaStream_t stream) noexcept {
  const void* kernel = nullptr;
  if (!visit_floating(dtype, [&]<class E>() { kernel = reinterpret_cast<const void*>(gathered_bags_kernel<E>); })) {
    return cudaErrorInvalidValue;
  }
  return launch_elementwise(kernel, p, p.bags * p.d, multiprocessors, stream);
}

}  // namespace multigather::detail
