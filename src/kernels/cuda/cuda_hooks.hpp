// Internal (not installed): what src/api (execute.cpp, c_api.cpp) asks of the CUDA backend
// (cuda_api.cpp), declared only in CUDA builds.
#pragma once

#include <cstddef>
#include <vector>

#include "core/device_memory.hpp"  // is_cuda_pointer
#include "multigather/cuda.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather::detail {

/// Copies the bytes that `view` (device memory) reaches into `storage`; *host is the same view
/// over the host copy. For out-of-range messages, which read the framework's indices.
Status copy_view_to_host(const TensorView& view, std::vector<std::byte>* storage,
                         TensorView* host) noexcept;

/// The CUDA form of run_scatter_validated (plan/scatter_plan.hpp), same contract: operands and
/// output already validated; then the index values (error mode: checked before any write), the
/// copy of input (or `base`) into the output, the combine. Runs on `stream`.
Status run_scatter_validated_cuda(const TensorView& input, const TensorView& indices,
                                  const MutableTensorView& output, const ValidatedScatter& call,
                                  const ScatterOptions& options, void* stream, bool deterministic,
                                  const TensorView* base = nullptr,
                                  const MutableTensorView* base_output = nullptr) noexcept;

}  // namespace multigather::detail
