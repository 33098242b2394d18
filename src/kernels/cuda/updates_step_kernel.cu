// The CUDA engine's updates step (Lowering::updates_step: alpha, negation): one call of
// kernels/updates_step.hpp's host+device body per thread, over elementwise_blocks' grid.
#include <cuda_runtime.h>

#include "kernels/cuda/updates_step_kernel.hpp"
#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/updates_step.hpp"

namespace multigather::detail {
namespace {

template <class Op>
__global__ void __launch_bounds__(kThreadsPerBlock) updates_step_kernel(const __grid_constant__ UpdatesStepParams p) {
  updates_step_thread<Op>(p, grid_thread(), grid_threads());
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
  return launch_elementwise(kernel, p, p.numel, multiprocessors, stream);
}

}  // namespace multigather::detail
