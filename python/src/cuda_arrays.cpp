// CUDA arrays: streams and result memory for the one pipeline (see cuda_arrays.hpp).
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)

#include "cuda_arrays.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "multigather/cuda.hpp"

namespace multigather::python {
namespace {

// Device memory for a result, released with cudaFree when the framework drops the array.
void* allocate_on(int device, std::size_t bytes);

}  // namespace

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

namespace {

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

}  // namespace

DeviceResult allocate_device_result(int device, DType dtype, const Dims& shape) {
  std::int64_t numel = 0;
  element_count(shape, &numel);
  const std::size_t bytes = static_cast<std::size_t>(numel) * element_size(dtype);
  void* data = allocate_on(device, bytes);
  nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
  return {MutableTensorView(data, dtype, shape), std::move(owner)};
}

nb::object device_array(DeviceResult&& result, nb::dlpack::dtype dtype, int device,
                        std::string_view framework) {
  const Dims& shape = result.view.shape;
  std::vector<std::size_t> sizes(static_cast<std::size_t>(shape.size()));
  for (int d = 0; d < shape.size(); ++d) sizes[static_cast<std::size_t>(d)] = static_cast<std::size_t>(shape[d]);
  auto make = [&](auto framework_tag) {
    return nb::ndarray<decltype(framework_tag)>(result.view.data, sizes.size(), sizes.data(),
                                                result.owner, nullptr, dtype,
                                                nb::device::cuda::value, device)
        .cast();
  };
  if (framework == "torch") return make(nb::pytorch());
  if (framework == "jax") return make(nb::jax());
  if (framework == "cupy") return make(nb::cupy());
  return make(nb::array_api());
}

}  // namespace multigather::python

#endif  // MULTIGATHER_PYTHON_HAS_CUDA
