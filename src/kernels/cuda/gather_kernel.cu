// The CUDA gather kernel family: one template over (unit width, index type, offset width) runs
// every normalized plan as rows of units (launch_params.hpp); the work per item is
// gather_item (gather_rows.hpp). Index values are resolved there, under every index mode, and a
// bad value is never dereferenced.
#include <cuda_runtime.h>

#include "kernels/cuda/gather_kernel.hpp"
#include "kernels/cuda/gather_rows.hpp"

namespace multigather::detail {
namespace {

template <int UnitBytes, class Index, class Off>
__global__ void __launch_bounds__(kThreadsPerBlock)
gather_rows(const __grid_constant__ CudaGatherParams p) {
  // The whole per-thread body (mapping and grid-stride loop) is host+device code, run on the
  // host by the tests over the exact grid launch_blocks() gives (gather_rows.hpp).
  gather_thread<UnitBytes, Index, Off>(p, static_cast<Off>(blockIdx.x) * kThreadsPerBlock +
                                              static_cast<Off>(threadIdx.x),
                                       static_cast<Off>(gridDim.x) * kThreadsPerBlock);
}

struct PickKernel {
  const void* kernel = nullptr;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    kernel = reinterpret_cast<const void*>(gather_rows<UnitBytes, Index, Off>);
  }
};

}  // namespace

cudaError_t launch_gather(const CudaGatherParams& params, int multiprocessors,
                          cudaStream_t stream) noexcept {
  PickKernel pick;
  if (!visit_kernel_variant(params, pick)) return cudaErrorInvalidValue;
  const std::int64_t blocks = launch_blocks(params, multiprocessors);
  void* args[] = {const_cast<CudaGatherParams*>(&params)};
  return cudaLaunchKernel(pick.kernel, dim3(static_cast<unsigned>(blocks)),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace multigather::detail
