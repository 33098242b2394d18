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

/// Whether `framework` names the stream its next operation runs on (torch, cupy: the call runs
/// on that stream, so no synchronization is needed). For any other framework (JAX arrays
/// through DLPack, array-API libraries) the consumer's stream is unknown.
bool knows_consumer_stream(std::string_view framework) noexcept;

/// Waits for `stream` on `device`: after a call whose consumer's stream is unknown, so that the
/// result is complete whichever stream reads it next. Throws RuntimeError on a CUDA error.
void finish_for_unknown_consumer(void* stream, int device);

/// Device memory for a one-shot result of `shape` and `dtype` on `device`, never a
/// cudaMalloc/cudaFree pair per call: torch and cupy results come from the framework's own
/// caching allocator (a uint8 buffer from torch.empty / cupy.empty on `device`, allocated on the
/// current stream, which is the stream the kernel runs on), other frameworks' from
/// cudaMallocAsync on `stream` (the device's stream-ordered pool; freed with cudaFreeAsync on
/// the same stream when the array goes). `owner` keeps the memory alive.
struct DeviceResult {
  MutableTensorView view;
  nb::object owner;
};
DeviceResult allocate_device_result(std::string_view framework, void* stream, int device,
                                    DType dtype, const Dims& shape);

/// The result as an array of `framework` on `device`, without a copy (torch: a view of the
/// torch buffer that holds it; other frameworks: their from_dlpack).
nb::object device_array(DeviceResult&& result, nb::dlpack::dtype dtype, int device,
                        std::string_view framework);

}  // namespace multigather::python

#endif  // MULTIGATHER_PYTHON_HAS_CUDA
