// python/src/cuda_arrays.hpp: what the Python pipeline needs for CUDA arrays (torch, cupy,
// jax, anything that exports DLPack with kDLCUDA): the framework's current stream and device
// memory for one-shot results. The call itself is the one pipeline (op_bindings.cpp ->
// multigather::execute). Compiled when the library has its CUDA engine
// (MULTIGATHER_PYTHON_HAS_CUDA).
#pragma once

#if defined(MULTIGATHER_PYTHON_HAS_CUDA)

#include <string_view>

#include "arrays.hpp"

namespace multigather::python {

/// The framework's current CUDA stream on `device` (torch.cuda.current_stream,
/// cupy.cuda.get_current_stream), as a cudaStream_t; nullptr (the legacy default stream) for
/// other frameworks.
void* current_stream(std::string_view framework, int device);

/// New device memory for a result of `shape` and `dtype` on `device` (freed when the framework
/// drops the array).
struct DeviceResult {
  MutableTensorView view;
  nb::capsule owner;
};
DeviceResult allocate_device_result(int device, DType dtype, const Dims& shape);

/// The result as an array of `framework` on `device`, without a copy.
nb::object device_array(DeviceResult&& result, nb::dlpack::dtype dtype, int device,
                        std::string_view framework);

}  // namespace multigather::python

#endif  // MULTIGATHER_PYTHON_HAS_CUDA
