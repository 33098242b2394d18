// CUDA arrays through the CUDA backend (see cuda_arrays.hpp).
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)

#include "cuda_arrays.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "multigather/cuda.hpp"

namespace multigather::python {
namespace {

// The framework's current CUDA stream on `device`, as a cudaStream_t (nullptr: legacy default).
void* current_stream(std::string_view framework, int device) {
  try {
    if (framework == "torch") {
      nb::object stream = nb::module_::import_("torch").attr("cuda").attr("current_stream")(device);
      return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(stream.attr("cuda_stream")));
    }
    if (framework == "cupy") {
      nb::object cuda = nb::module_::import_("cupy").attr("cuda");
      nb::object stream = cuda.attr("get_current_stream")();
      return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(stream.attr("ptr")));
    }
  } catch (const nb::python_error&) {
    // a framework without the usual stream API: the legacy default stream orders after its work
  }
  return nullptr;
}

// Device memory for a result, released with cudaFree when the framework drops the array.
void* allocate_on(int device, std::size_t bytes) {
  int previous = 0;
  cudaGetDevice(&previous);
  if (previous != device) cudaSetDevice(device);
  void* data = nullptr;
  const cudaError_t error = cudaMalloc(&data, bytes > 0 ? bytes : 1);
  if (previous != device) cudaSetDevice(previous);
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA allocation of the result (") +
                             std::to_string(bytes) + " bytes) failed: " + cudaGetErrorString(error));
  }
  return data;
}

nb::object device_array(void* data, nb::capsule owner, const Dims& shape, nb::dlpack::dtype dtype,
                        int device, std::string_view framework) {
  std::vector<std::size_t> sizes(static_cast<std::size_t>(shape.size()));
  for (int d = 0; d < shape.size(); ++d) sizes[static_cast<std::size_t>(d)] = static_cast<std::size_t>(shape[d]);
  auto make = [&](auto framework_tag) {
    return nb::ndarray<decltype(framework_tag)>(data, sizes.size(), sizes.data(), owner, nullptr,
                                                dtype, nb::device::cuda::value, device)
        .cast();
  };
  if (framework == "torch") return make(nb::pytorch());
  if (framework == "jax") return make(nb::jax());
  if (framework == "cupy") return make(nb::cupy());
  return make(nb::array_api());
}

}  // namespace

nb::object gather_cuda(const InputArray& input_array, const InputArray& indices_array,
                       const std::vector<std::int64_t>& axes, const GatherOptions& options,
                       std::optional<OutputArray> out, std::optional<std::string_view> input_dtype,
                       std::optional<std::string_view> out_dtype, std::string_view framework) {
  const TensorView input = device_view_of(input_array, "input", input_dtype);
  const TensorView indices = device_view_of(indices_array, "indices");
  const int device = input_array.device_id();
  if (indices_array.device_id() != device) {
    throw nb::value_error(("indices is on cuda:" + std::to_string(indices_array.device_id()) +
                           " but input is on cuda:" + std::to_string(device) +
                           " (every array of a call must be on one CUDA device)").c_str());
  }
  GatherShape shape;
  raise_if_error(infer_shape(input.shape, indices.shape, axes, &shape));
  void* stream = current_stream(framework, device);

  if (out) {
    const MutableTensorView target = device_mutable_view_of(*out, "out", out_dtype);
    check_out(target, input, indices, shape.output_shape);
    Status status;
    {
      nb::gil_scoped_release release;
      status = gather_multiaxis_cuda_into(input, indices, axes, target, options, stream);
    }
    raise_if_error(status);
    return nb::none();
  }

  const std::size_t bytes = static_cast<std::size_t>(shape.output_numel) * element_size(input.dtype);
  void* data = allocate_on(device, bytes);
  nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
  Status status;
  {
    nb::gil_scoped_release release;
    status = gather_multiaxis_cuda_into(input, indices, axes,
                                        MutableTensorView(data, input.dtype, shape.output_shape),
                                        options, stream);
  }
  raise_if_error(status);
  return device_array(data, owner, shape.output_shape, input_array.dtype(), device, framework);
}

}  // namespace multigather::python

#endif  // MULTIGATHER_PYTHON_HAS_CUDA
