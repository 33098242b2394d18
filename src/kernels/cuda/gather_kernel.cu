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
  const Off items = static_cast<Off>(p.items);
  const Off thread = static_cast<Off>(blockIdx.x) * kThreadsPerBlock + threadIdx.x;
  const Off threads = static_cast<Off>(gridDim.x) * kThreadsPerBlock;
  if (p.rows_per_thread > 1) {  // single-unit rows: several per thread, strided by the grid
    for (Off first = thread; first < items; first += threads * kUnitsPerThread) {
      gather_elements<UnitBytes, Index, Off>(p, first, threads);
    }
    return;
  }
  const Off lane = thread & ((Off{1} << p.group_shift) - 1);
  const Off step = threads >> p.group_shift;
  for (Off item = thread >> p.group_shift; item < items; item += step) {
    gather_item<UnitBytes, Index, Off>(p, item, lane);
  }
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
  // One item per thread group when that fits in a few waves; otherwise a grid-stride loop over
  // a grid that fills every multiprocessor several times.
  const std::int64_t threads =
      ((params.items + params.rows_per_thread - 1) / params.rows_per_thread) << params.group_shift;
  std::int64_t blocks = (threads + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t max_blocks =
      static_cast<std::int64_t>(multiprocessors > 0 ? multiprocessors : 1) * 64;
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  void* args[] = {const_cast<CudaGatherParams*>(&params)};
  return cudaLaunchKernel(pick.kernel, dim3(static_cast<unsigned>(blocks)),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

}  // namespace multigather::detail
