// The CUDA engine's embedding_bag (Lowering::gathered): the three passes of
// kernels/gathered_bags.hpp's host+device bodies, one call per thread over elementwise_blocks'
// grids.
#include <cuda_runtime.h>

#include "kernels/cuda/gathered_bags_kernel.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks
#include "kernels/gathered_bags.hpp"

namespace multigather::detail {
namespace {

#define MULTIGATHER_THREAD static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x, \
                           static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock

__global__ void __launch_bounds__(kThreadsPerBlock) bag_starts_kernel(const __grid_constant__ BagIndexParams p) {
  bag_starts_thread(p, MULTIGATHER_THREAD);
}

__global__ void __launch_bounds__(kThreadsPerBlock) bag_rows_kernel(const __grid_constant__ BagIndexParams p) {
  bag_rows_thread(p, MULTIGATHER_THREAD);
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) gathered_bags_kernel(const __grid_constant__ GatheredBagsParams p) {
  gathered_bags_thread<E>(p, MULTIGATHER_THREAD);
}

#undef MULTIGATHER_THREAD

template <class Params>
cudaError_t launch(const void* kernel, const Params& p, std::int64_t threads, int multiprocessors, cudaStream_t stream) {
  if (threads <= 0) return cudaSuccess;
  void* args[] = {const_cast<Params*>(&p)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(threads, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace

cudaError_t launch_bag_index(const BagIndexParams& p, int multiprocessors, cudaStream_t stream) noexcept {
  cudaError_t error = launch(reinterpret_cast<const void*>(bag_starts_kernel), p, p.bags + 1, multiprocessors, stream);
  if (error == cudaSuccess) error = launch(reinterpret_cast<const void*>(bag_rows_kernel), p, p.n, multiprocessors, stream);
  return error;
}

cudaError_t launch_gathered_bags(const GatheredBagsParams& p, DType dtype, int multiprocessors,
                                 cudaStream_t stream) noexcept {
  const void* kernel = nullptr;
  if (!visit_gathered_bags(dtype, [&]<class E>() { kernel = reinterpret_cast<const void*>(gathered_bags_kernel<E>); })) {
    return cudaErrorInvalidValue;
  }
  return launch(kernel, p, p.bags * p.d, multiprocessors, stream);
}

}  // namespace multigather::detail
