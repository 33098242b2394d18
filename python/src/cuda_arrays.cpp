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

// Runs fn() with `device` current, then makes the caller's device current again.
template <class F>
auto on_device(int device, F fn) {
  int previous = device;
  cudaGetDevice(&previous);
  if (previous != device) cudaSetDevice(device);
  auto result = fn();
  if (previous != device) cudaSetDevice(previous);
  return result;
}

// Runs fn() inside `with cupy.cuda.Device(device):` (CuPy's current stream and memory pool are
// per device), leaving the device scope on an exception too.
template <class F>
nb::object in_cupy_device(int device, F fn) {
  nb::object scope = nb::module_::import_("cupy").attr("cuda").attr("Device")(device);
  scope.attr("__enter__")();
  nb::object result;
  try {
    result = fn();
  } catch (...) {
    scope.attr("__exit__")(nb::none(), nb::none(), nb::none());
    throw;
  }
  scope.attr("__exit__")(nb::none(), nb::none(), nb::none());
  return result;
}

// A block from cudaMallocAsync, returned to the pool in stream order when the array goes.
struct AsyncBlock {
  void* data = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
};

}  // namespace

void* current_stream(std::string_view framework, int device) {
  try {
    if (framework == "torch") {
      nb::object stream = nb::module_::import_("torch").attr("cuda").attr("current_stream")(device);
      return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(stream.attr("cuda_stream")));
    }
    if (framework == "cupy") {
      // CuPy's current stream is per device: ask with the array's device current.
      nb::object cuda = nb::module_::import_("cupy").attr("cuda");
      nb::object stream = in_cupy_device(device, [&] { return cuda.attr("get_current_stream")(); });
      return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(stream.attr("ptr")));
    }
  } catch (const nb::python_error&) {
    // a framework without the usual stream API: the legacy default stream orders after its work
  }
  return nullptr;
}

bool knows_consumer_stream(std::string_view framework) noexcept {
  return framework == "torch" || framework == "cupy";
}

void finish_for_unknown_consumer(void* stream, int device) {
  const cudaError_t error =
      on_device(device, [&] { return cudaStreamSynchronize(static_cast<cudaStream_t>(stream)); });
  if (error != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("CUDA stream synchronization after the call failed: ") +
                             cudaGetErrorString(error));
  }
}

DeviceResult allocate_device_result(std::string_view framework, void* stream, int device,
                                    DType dtype, const Dims& shape) {
  std::int64_t numel = 0;
  element_count(shape, &numel);
  const std::size_t bytes = static_cast<std::size_t>(numel) * element_size(dtype);
  const std::size_t request = bytes > 0 ? bytes : 1;
  if (framework == "torch" || framework == "cupy") {
    // The framework's caching allocator: a uint8 buffer on `device` and its current stream.
    nb::object buffer;
    std::uintptr_t address = 0;
    if (framework == "torch") {
      nb::module_ torch = nb::module_::import_("torch");
      buffer = torch.attr("empty")(request, nb::arg("dtype") = torch.attr("uint8"),
                                   nb::arg("device") = nb::str(("cuda:" + std::to_string(device)).c_str()));
      address = nb::cast<std::uintptr_t>(buffer.attr("data_ptr")());
    } else {
      nb::module_ cupy = nb::module_::import_("cupy");
      buffer = in_cupy_device(device, [&] {
        return nb::object(cupy.attr("empty")(request, nb::arg("dtype") = cupy.attr("uint8")));
      });
      address = nb::cast<std::uintptr_t>(buffer.attr("data").attr("ptr"));
    }
    return {MutableTensorView(reinterpret_cast<void*>(address), dtype, shape), std::move(buffer)};
  }
  // Other frameworks: the device's stream-ordered pool, on the stream the kernel runs on.
  auto* block = new AsyncBlock{nullptr, static_cast<cudaStream_t>(stream), device};
  const cudaError_t error =
      on_device(device, [&] { return cudaMallocAsync(&block->data, request, block->stream); });
  if (error != cudaSuccess) {
    delete block;
    cudaGetLastError();
    throw std::runtime_error(std::string("CUDA allocation of the result (") +
                             std::to_string(bytes) + " bytes) failed: " + cudaGetErrorString(error));
  }
  void* data = block->data;
  nb::capsule owner(block, [](void* p) noexcept {
    auto* b = static_cast<AsyncBlock*>(p);
    on_device(b->device, [b] { return cudaFreeAsync(b->data, b->stream); });
    delete b;
  });
  return {MutableTensorView(data, dtype, shape), std::move(owner)};
}

nb::object device_array(DeviceResult&& result, nb::dlpack::dtype dtype, int device,
                        std::string_view framework) {
  const Dims& shape = result.view.shape;
  if (framework == "torch") {
    // The result is the torch uint8 buffer allocate_device_result took from torch's caching
    // allocator, viewed as the dtype and shape: no DLPack round trip.
    nb::module_ torch = nb::module_::import_("torch");
    nb::list sizes;
    for (int d = 0; d < shape.size(); ++d) sizes.append(shape[d]);
    std::int64_t numel = 0;
    element_count(shape, &numel);
    const std::int64_t bytes = numel * static_cast<std::int64_t>(element_size(result.view.dtype));
    return result.owner.attr("narrow")(0, 0, bytes)
        .attr("view")(torch.attr(std::string(dtype_name(result.view.dtype)).c_str()))
        .attr("view")(nb::tuple(sizes));
  }
  std::vector<std::size_t> sizes(static_cast<std::size_t>(shape.size()));
  for (int d = 0; d < shape.size(); ++d) sizes[static_cast<std::size_t>(d)] = static_cast<std::size_t>(shape[d]);
  auto make = [&](auto framework_tag) {
    return exported(nb::ndarray<decltype(framework_tag)>(result.view.data, sizes.size(), sizes.data(),
                                                         result.owner, nullptr, dtype,
                                                         nb::device::cuda::value, device));
  };
  if (framework == "jax") return make(nb::jax());
  if (framework == "cupy") return make(nb::cupy());
  return make(nb::array_api());
}

}  // namespace multigather::python

#endif  // MULTIGATHER_PYTHON_HAS_CUDA
