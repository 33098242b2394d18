// Internal: the launcher of the CUDA gather kernel family (gather_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/launch_params.hpp"

namespace multigather::detail {

/// Enqueues the kernel for `params` on `stream` (the current device must own the pointers).
/// Returns the launch status; does not synchronize.
cudaError_t launch_gather(const CudaGatherParams& params, int multiprocessors,
                          cudaStream_t stream) noexcept;

}  // namespace multigather::detail
