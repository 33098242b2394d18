// Internal: where a view's memory lives. CUDA builds ask the CUDA runtime
// (kernels/cuda/cuda_api.cpp defines is_cuda_pointer); other builds have host memory only.
#pragma once

#include <initializer_list>

#include "multigather/tensor.hpp"

namespace multigather::detail {

#if defined(MULTIGATHER_HAVE_CUDA)
/// True when `data` is CUDA device or managed memory (false without a usable device).
bool is_cuda_pointer(const void* data) noexcept;
#else
inline bool is_cuda_pointer(const void*) noexcept { return false; }
#endif

/// True when an operand with elements (null operands and null data are skipped) is CUDA
/// device or managed memory: the host must not read it.
inline bool any_cuda_memory(std::initializer_list<const TensorView*> operands) noexcept {
  for (const TensorView* v : operands) {
    if (v != nullptr && v->data != nullptr && v->numel() > 0 && is_cuda_pointer(v->data)) return true;
  }
  return false;
}

}  // namespace multigather::detail
