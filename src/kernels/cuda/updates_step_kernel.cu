// The CUDA engine's updates step (Lowering::updates_step: alpha, negation): one call of
// kernels/updates_step.hpp's host+device body per thread, over elementwise_blocks' grid.
#include <cuda_runtime.h>

#include "kernels/cuda/updates_step_kernel.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks
#include "kernels/updates_step.hpp"

namespace multigather::detail {
namespace {

template <class Op>
__global__ void __launch_bounds__(kThreadsPerBlock) updates_step_kernel(const __grid_constant__ UpdatesStepParams p) {
  updates_step_thread<Op>(p, static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x,
                          static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock);
}

}  // namespace

cudaError_t launch_updates_step(const UpdatesStepParams& p, DType dtype, bool negate, int multiprocessors,
                                cudaStream_t stream) noexcept {
  if (p.numel <= 0) return cudaSuccess;
  const void* kernel = nullptr;
  if (!visit_updates_step(dtype, negate,
                          [&]<class Op>() { kernel = reinterpret_cast<const void*>(updates_step_kernel<Op>); })) {
    return cudaErrorInvalidValue;
  }
  void* args[] = {const_cast<UpdatesStepParams*>(&p)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(p.numel, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace multigather::detail
