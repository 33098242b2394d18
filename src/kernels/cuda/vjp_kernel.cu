// The CUDA VJP's own kernels (the winner mask of a scatter with reduction none): one call of
// the host+device body of vjp_rows.hpp per thread, over elementwise_blocks' grid.
#include <cuda_runtime.h>

#include "kernels/cuda/vjp_kernel.hpp"
#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/cuda/vjp_rows.hpp"
#include "kernels/prod_gradient.hpp"

namespace multigather::detail {
namespace {

__global__ void __launch_bounds__(kThreadsPerBlock)
positions_kernel(std::int64_t* positions, std::int64_t count) {
  positions_thread(positions, count, static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x,
                   static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock);
}

template <int Bytes>
__global__ void __launch_bounds__(kThreadsPerBlock)
keep_winners_kernel(void* grad, const std::int64_t* won, std::int64_t count) {
  keep_winners_thread<Bytes>(grad, won, count,
                             static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x,
                             static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock);
}

#define MULTIGATHER_THREAD static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x, \
                           static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock)
ties_kernel(const void* data, const void* picked, std::int64_t* tie, std::int64_t count) {
  ties_thread<E>(data, picked, tie, count, MULTIGATHER_THREAD);
}

__global__ void __launch_bounds__(kThreadsPerBlock)
positions_where_kernel(const std::int64_t* flag, std::int64_t none, std::int64_t* out, std::int64_t count) {
  positions_where_thread(flag, none, out, count, MULTIGATHER_THREAD);
}

__global__ void __launch_bounds__(kThreadsPerBlock)
at_itself_kernel(const std::int64_t* at, std::int64_t* flag, std::int64_t count) {
  at_itself_thread(at, flag, count, MULTIGATHER_THREAD);
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) prod_zeros_kernel(const __grid_constant__ ProdGradientParams p) {
  prod_zeros_thread<E>(p, MULTIGATHER_THREAD);
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) prod_derivative_kernel(const __grid_constant__ ProdGradientParams p) {
  prod_derivative_thread<E>(p, MULTIGATHER_THREAD);
}

#undef MULTIGATHER_THREAD

// Launches `kernel` (args: `args`) over elementwise_blocks' grid: cudaLaunchKernel returns the
// launch's own status (a <<<>>> launch would need cudaGetLastError, which may report an older
// error of the caller's).
cudaError_t launch(const void* kernel, void** args, std::int64_t count, int multiprocessors, cudaStream_t stream) {
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(count, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace

cudaError_t launch_positions(std::int64_t* positions, std::int64_t count, int multiprocessors,
                             cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  void* args[] = {&positions, &count};
  return launch(reinterpret_cast<const void*>(positions_kernel), args, count, multiprocessors, stream);
}

cudaError_t launch_keep_winners(void* grad, int element_bytes, const std::int64_t* won, std::int64_t count,
                                int multiprocessors, cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  const void* kernel = nullptr;
  switch (element_bytes) {
    case 1: kernel = reinterpret_cast<const void*>(keep_winners_kernel<1>); break;
    case 2: kernel = reinterpret_cast<const void*>(keep_winners_kernel<2>); break;
    case 4: kernel = reinterpret_cast<const void*>(keep_winners_kernel<4>); break;
    case 8: kernel = reinterpret_cast<const void*>(keep_winners_kernel<8>); break;
    case 16: kernel = reinterpret_cast<const void*>(keep_winners_kernel<16>); break;
    default: return cudaErrorInvalidValue;
  }
  void* args[] = {&grad, &won, &count};
  return launch(kernel, args, count, multiprocessors, stream);
}

cudaError_t launch_ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count,
                        int multiprocessors, cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  const void* kernel = nullptr;
  if (!visit_floating(dtype, [&]<class E>() { kernel = reinterpret_cast<const void*>(ties_kernel<E>); })) {
    return cudaErrorInvalidValue;
  }
  void* args[] = {&data, &picked, &tie, &count};
  return launch(kernel, args, count, multiprocessors, stream);
}

cudaError_t launch_positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out, std::int64_t count,
                                   int multiprocessors, cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  void* args[] = {&flag, &none, &out, &count};
  return launch(reinterpret_cast<const void*>(positions_where_kernel), args, count, multiprocessors, stream);
}

cudaError_t launch_at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count, int multiprocessors,
                             cudaStream_t stream) noexcept {
  if (count <= 0) return cudaSuccess;
  void* args[] = {&at, &flag, &count};
  return launch(reinterpret_cast<const void*>(at_itself_kernel), args, count, multiprocessors, stream);
}

cudaError_t launch_prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step, int multiprocessors,
                                 cudaStream_t stream) noexcept {
  const void* kernel = nullptr;
  if (!visit_floating(dtype, [&]<class E>() {
        kernel = zeros_step ? reinterpret_cast<const void*>(prod_zeros_kernel<E>)
                            : reinterpret_cast<const void*>(prod_derivative_kernel<E>);
      })) {
    return cudaErrorInvalidValue;
  }
  return launch_elementwise(kernel, p, p.n, multiprocessors, stream);
}

}  // namespace multigather::detail
