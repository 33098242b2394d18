// The CUDA gather kernel family: one template over (unit width, index type, offset width) runs
// every normalized plan as rows of units (launch_params.hpp); the work per item is
// gather_item (gather_rows.hpp). Index values are resolved there, under every index mode, and a
// bad value is never dereferenced.
#include <cuda_runtime.h>

#include <algorithm>

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
  int blocks_per_multiprocessor = kMaxBlocksPerMultiprocessor;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    kernel = reinterpret_cast<const void*>(gather_rows<UnitBytes, Index, Off>);
    // The grid cap from this variant's occupancy (its registers decide how many blocks an SM
    // holds at once): kWavesPerLaunch waves of resident blocks, then the kernel's grid-stride
    // loops cover the rest. Asked once per variant (on the first device that runs it).
    static const int cap = [] {
      int resident = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, gather_rows<UnitBytes, Index, Off>,
                                                        kThreadsPerBlock, 0) != cudaSuccess ||
          resident <= 0) {
        cudaGetLastError();
        return kMaxBlocksPerMultiprocessor;
      }
      return std::min(kMaxBlocksPerMultiprocessor, resident * kWavesPerLaunch);
    }();
    blocks_per_multiprocessor = cap;
  }
};

}  // namespace

cudaError_t launch_gather(const CudaGatherParams& params, int multiprocessors,
                          cudaStream_t stream) noexcept {
  PickKernel pick;
  if (!visit_kernel_variant(params, pick)) return cudaErrorInvalidValue;
  const std::int64_t blocks = launch_blocks(params, multiprocessors, pick.blocks_per_multiprocessor);
  void* args[] = {const_cast<CudaGatherParams*>(&params)};
  return cudaLaunchKernel(pick.kernel, dim3(static_cast<unsigned>(blocks)),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace multigather::detail
