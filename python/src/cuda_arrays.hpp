// python/src/cuda_arrays.hpp: gather_multiaxis on CUDA arrays (torch, cupy, jax, anything that
// exports DLPack with kDLCUDA), through the CUDA backend (multigather/cuda.hpp). Compiled when
// the library has its CUDA engine (MULTIGATHER_PYTHON_HAS_CUDA).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "arrays.hpp"

namespace multigather::python {

/// The CUDA twin of the extension's gather(): every array on one CUDA device, viewed in place.
/// Runs on the framework's current stream of that device (torch.cuda.current_stream,
/// cupy.cuda.get_current_stream; the legacy default stream otherwise). Without `out`, the result
/// is new device memory on the input's device, handed to `framework` without a copy. In
/// index_mode "error" the call waits for its stream and raises IndexError with the CPU core's
/// message; the other modes return as soon as the kernel is enqueued.
nb::object gather_cuda(const InputArray& input_array, const InputArray& indices_array,
                       const std::vector<std::int64_t>& axes, const GatherOptions& options,
                       std::optional<OutputArray> out, std::optional<std::string_view> input_dtype,
                       std::optional<std::string_view> out_dtype, std::string_view framework);

}  // namespace multigather::python
