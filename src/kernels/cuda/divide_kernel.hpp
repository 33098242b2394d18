// Internal: the launcher of the CUDA mean division (divide_kernel.cu; body in divide_rows.hpp).
// It does not synchronize; the current device must own the pointers and `stream`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/divide_rows.hpp"

namespace multigather::detail {

/// Divides every element of p.out (of `dtype`) by its count (divide_rows.hpp's rules);
/// cudaErrorInvalidValue for a dtype without a division (visit_divide).
cudaError_t launch_divide(const CudaDivideParams& p, DType dtype, int multiprocessors, cudaStream_t stream) noexcept;

}  // namespace multigather::detail
