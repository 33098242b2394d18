// Internal: the launcher of the CUDA updates step (updates_step_kernel.cu; body in
// kernels/updates_step.hpp). It does not synchronize; the current device must own the pointers
// and `stream`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/updates_step.hpp"

namespace multigather::detail {

/// The step (negate, else scale) over p's elements of `dtype`; cudaErrorInvalidValue for a dtype
/// without it (visit_updates_step).
cudaError_t launch_updates_step(const UpdatesStepParams& p, DType dtype, bool negate, int multiprocessors,
                                cudaStream_t stream) noexcept;

}  // namespace multigather::detail
