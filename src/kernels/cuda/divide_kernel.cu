// The CUDA engine's division step of a mean scatter: one call of divide_rows.hpp's host+device
// body per thread, over elementwise_blocks' grid.
#include <cuda_runtime.h>

#include "kernels/cuda/divide_kernel.hpp"
#include "kernels/cuda/divide_rows.hpp"
#include "kernels/cuda/elementwise_launch.hpp"

namespace multigather::detail {
namespace {

template <class Op>
__global__ void __launch_bounds__(kThreadsPerBlock) divide_kernel(const __grid_constant__ CudaDivideParams p) {
  divide_thread<Op>(p, grid_thread(), grid_threads());
}

}  // namespace

cudaError_t launch_divide(const CudaDivideParams& p, DType dtype, int multiprocessors, cudaStream_t stream) noexcept {
  if (p.numel <= 0) return cudaSuccess;
  const void* kernel = nullptr;
  if (!visit_divide(dtype, p.sqrt_count, [&]<class Op>() { kernel = reinterpret_cast<const void*>(divide_kernel<Op>); })) {
    return cudaErrorInvalidValue;
  }
  return launch_elementwise(kernel, p, p.numel, multiprocessors, stream);
}

}  // namespace multigather::detail
