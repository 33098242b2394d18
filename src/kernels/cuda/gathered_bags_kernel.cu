// The CUDA engine's embedding_bag (Lowering::gathered): the three passes of
// kernels/gathered_bags.hpp's host+device bodies, one call per thread over elementwise_blocks'
// grids.
#include <cuda_runtime.h>

#include "kernels/cuda/gathered_bags_kernel.hpp"
#include "kernels/cuda/elementwise_launch.hpp"
#include "kernels/cuda/scatter_kernel.hpp"  // launch_stable_sort_pairs
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

__global__ void __launch_bounds__(kThreadsPerBlock) vjp_bags_kernel(const __grid_constant__ GatheredBagsVjpParams p) {
  vjp_bags_thread(p, grid_thread(), grid_threads());
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) vjp_keys_kernel(const __grid_constant__ GatheredBagsVjpParams p) {
  vjp_keys_thread<E>(p, grid_thread(), grid_threads());
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) vjp_zero_kernel(const __grid_constant__ GatheredBagsVjpParams p) {
  vjp_zero_thread<E>(p, grid_thread(), grid_threads());
}

template <class E>
__global__ void __launch_bounds__(kThreadsPerBlock) vjp_runs_kernel(const __grid_constant__ GatheredBagsVjpParams p) {
  vjp_runs_thread<E>(p, grid_thread(), grid_threads());
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
  return launch_elementwise(kernel, p, p.terms.bags * p.terms.d, multiprocessors, stream);
}

cudaError_t launch_gathered_bags_vjp(GatheredBagsVjpParams p, DType dtype, int multiprocessors,
                                     cudaStream_t stream) noexcept {
  const void *keys = nullptr, *zero = nullptr, *runs = nullptr;
  if (!visit_floating(dtype, [&]<class E>() {
        keys = reinterpret_cast<const void*>(vjp_keys_kernel<E>);
        zero = reinterpret_cast<const void*>(vjp_zero_kernel<E>);
        runs = reinterpret_cast<const void*>(vjp_runs_kernel<E>);
      })) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t count = p.keys_count();
  if (count > INT32_MAX) return cudaErrorInvalidValue;
  cudaError_t error = cudaSuccess;
  const BagTerms& t = p.terms;
  if (!t.max) error = launch_elementwise(reinterpret_cast<const void*>(vjp_bags_kernel), p, t.bags, multiprocessors, stream);
  if (error == cudaSuccess) error = launch_elementwise(keys, p, count, multiprocessors, stream);
  if (error == cudaSuccess) error = launch_elementwise(zero, p, p.v_size * t.d, multiprocessors, stream);
  void* memory = nullptr;
  if (error == cudaSuccess) error = launch_stable_sort_pairs(&p.keys, &p.values, count, p.key_bits, &memory, stream);
  if (error == cudaSuccess) error = launch_elementwise(runs, p, t.max ? count : count * t.d, multiprocessors, stream);
  if (memory != nullptr) {
    const cudaError_t freed = cudaFreeAsync(memory, stream);
    if (error == cudaSuccess) error = freed;
  }
  return error;
}

}  // namespace multigather::detail
