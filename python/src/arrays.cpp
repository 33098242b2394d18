// Arrays from Python as views, results back to Python (see arrays.hpp).
#include "arrays.hpp"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "multigather/output_memory.hpp"

namespace multigather::python {
namespace {

namespace dl = nb::dlpack;


std::string dlpack_dtype_text(dl::dtype dtype) {
  return "(DLPack code " + std::to_string(dtype.code) + ", " + std::to_string(dtype.bits) + " bits, " +
         std::to_string(dtype.lanes) + " lanes)";
}

// DLPack device types that the CPU engine can read (kDLCPU, kDLCUDAHost).
bool is_host_memory(int device_type) {
  return device_type == nb::device::cpu::value || device_type == nb::device::cuda_host::value;
}

std::string device_text(int device_type, int device_id) {
  switch (device_type) {
    case nb::device::cuda::value: return "cuda:" + std::to_string(device_id);
    case nb::device::cuda_managed::value: return "cuda_managed:" + std::to_string(device_id);
    case nb::device::rocm::value: return "rocm:" + std::to_string(device_id);
    case nb::device::metal::value: return "metal:" + std::to_string(device_id);
    default: return "DLPack device type " + std::to_string(device_type) + ":" + std::to_string(device_id);
  }
}

template <class Array>
void check_host(const Array& array, std::string_view name) {
  if (is_host_memory(array.device_type())) return;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  const char* why = is_cuda_memory(array.device_type())
                        ? "; every array of a call must be on one device (input decides)"
                        : "; multigather runs on host memory and CUDA devices";
#else
  const char* why = is_cuda_memory(array.device_type())
                        ? "; CUDA arrays need a build with MULTIGATHER_CUDA (this build is "
                          "CPU-only): copy the array to host memory first"
                        : "; multigather runs on host memory (and CUDA devices in CUDA builds)";
#endif
  throw nb::value_error((std::string(name) + " is on device " +
                         device_text(array.device_type(), array.device_id()) + why).c_str());
}

// A view for the CUDA backend: the array must live in CUDA device or managed memory.
template <class Array>
void check_cuda(const Array& array, std::string_view name) {
  if (is_cuda_memory(array.device_type())) return;
  throw nb::value_error((std::string(name) + " is on device " +
                         device_text(array.device_type(), array.device_id()) +
                         ", but input is a CUDA array: every array of a call must be on one "
                         "CUDA device").c_str());
}

template <class Array>
void read_layout(const Array& array, Dims* shape, Dims* strides) {
  const std::size_t n = array.ndim();
  for (std::size_t d = 0; d < n; ++d) {
    shape->push_back(static_cast<std::int64_t>(array.shape(d)));
    strides->push_back(array.stride(d));
  }
}

// set_num_threads: the num_threads option of every call from Python (0: automatic).
std::atomic<int> default_num_threads{0};

}  // namespace

Scalar scalar_of(nb::handle value, std::string_view what) {
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) return Scalar::from_int(o == Py_True ? 1 : 0);
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {
    nb::object as_int = nb::steal(PyNumber_Index(o));
    if (!as_int.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    if (overflow == 0) return Scalar::from_int(v);
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(as_int.ptr());
      if (!PyErr_Occurred()) return Scalar::from_uint(u);
      PyErr_Clear();
    }
    throw nb::value_error((std::string(what) + " " + nb::cast<std::string>(nb::str(value)) +
                           " is outside the 64-bit integer range").c_str());
  }
  if (PyFloat_Check(o) || PyObject_HasAttrString(o, "__float__")) {
    const double f = PyFloat_AsDouble(o);
    if (f == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return Scalar::from_float(f);
  }
  throw nb::type_error(("fill_value must be a bool, int or float, not " +
                        nb::cast<std::string>(nb::str(value.type().attr("__name__"))))
                           .c_str());
}

void set_num_threads(int threads) {
  if (threads < 0) {
    throw nb::value_error(("num_threads " + std::to_string(threads) + " must be >= 0 (0: automatic)").c_str());
  }
  default_num_threads.store(threads, std::memory_order_relaxed);
}

int get_num_threads() noexcept { return default_num_threads.load(std::memory_order_relaxed); }

bool set_python_error(const Status& status) noexcept {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case StatusCode::kOk: return false;
    case StatusCode::kOutOfRange: type = PyExc_IndexError; break;
    case StatusCode::kInvalidArgument: type = PyExc_ValueError; break;
    case StatusCode::kTypeError: type = PyExc_TypeError; break;
    case StatusCode::kInternal:
      if (status.reason() == StatusReason::kOutOfMemory) type = PyExc_MemoryError;  // unable_to_allocate's words
      break;
    case StatusCode::kCancelled:
      // The signal handler's exception (KeyboardInterrupt) is set: python_interrupt_check.
      if (PyErr_Occurred()) return true;
      type = PyExc_KeyboardInterrupt;
      break;
  }
  PyErr_SetString(type, status.message().c_str());
  return true;
}

void raise_if_error(const Status& status) {
  if (set_python_error(status)) throw nb::python_error();
}

namespace {
// multigather.ArgumentTypeError (bind_argument_type_error); lives as long as the interpreter.
PyObject* argument_type_error = nullptr;
}  // namespace

void bind_argument_type_error(nb::module_& m) {
  const nb::object bases = nb::make_tuple(nb::handle(PyExc_TypeError), nb::handle(PyExc_ValueError));
  argument_type_error = PyErr_NewExceptionWithDoc(
      "multigather.ArgumentTypeError",
      "An invalid argument (a shape, rank, axis or attribute that breaks the op's rules) of an op "
      "whose framework throws TypeError for every invalid argument (WebNN's MLGraphBuilder "
      "methods). A subclass of TypeError and of ValueError: `except ValueError` catches it as it "
      "catches the other families' argument errors.",
      bases.ptr(), nullptr);
  if (argument_type_error == nullptr) throw nb::python_error();
  m.attr("ArgumentTypeError") = nb::handle(argument_type_error);
}

void retype_argument_error(const OpSpec* spec) noexcept {
  if (spec == nullptr || spec->argument_error != ArgumentError::kTypeError || argument_type_error == nullptr) {
    return;
  }
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  if (type != PyExc_ValueError) {  // only exactly ValueError: a subclass keeps its own meaning
    PyErr_Restore(type, value, traceback);
    return;
  }
  PyErr_NormalizeException(&type, &value, &traceback);
  PyObject* args = value == nullptr ? nullptr : PyObject_GetAttrString(value, "args");
  if (args == nullptr || !PyTuple_Check(args)) {
    Py_XDECREF(args);
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return;
  }
  PyErr_SetObject(argument_type_error, args);  // ArgumentTypeError(*args): the same message
  Py_DECREF(args);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
}

PyObject* memory_error(DType dtype, const Dims& shape) {
  PyErr_SetString(PyExc_MemoryError, unable_to_allocate(dtype, shape).c_str());
  return nullptr;
}

namespace {
// The interpreter's main thread (PyThread_get_thread_ident), read at import.
unsigned long main_thread = PyThread_get_thread_ident();
}  // namespace

bool python_interrupt_check(void*) noexcept {
  if (PyThread_get_thread_ident() != main_thread) return false;
  const PyGILState_STATE gil = PyGILState_Ensure();
  const bool raised = PyErr_CheckSignals() != 0;
  PyGILState_Release(gil);
  return raised;
}

std::optional<DType> dtype_from_dlpack(dl::dtype dtype) noexcept {
  if (dtype.lanes != 1) return std::nullopt;
  const auto code = static_cast<dl::dtype_code>(dtype.code);
  switch (code) {
    case dl::dtype_code::Bool:
      if (dtype.bits == 8) return DType::kBool;
      break;
    case dl::dtype_code::Int:
      switch (dtype.bits) {
        case 8: return DType::kInt8;
        case 16: return DType::kInt16;
        case 32: return DType::kInt32;
        case 64: return DType::kInt64;
      }
      break;
    case dl::dtype_code::UInt:
      switch (dtype.bits) {
        case 8: return DType::kUInt8;
        case 16: return DType::kUInt16;
        case 32: return DType::kUInt32;
        case 64: return DType::kUInt64;
      }
      break;
    case dl::dtype_code::Float:
      switch (dtype.bits) {
        case 16: return DType::kFloat16;
        case 32: return DType::kFloat32;
        case 64: return DType::kFloat64;
      }
      break;
    case dl::dtype_code::Bfloat:
      if (dtype.bits == 16) return DType::kBFloat16;
      break;
    case dl::dtype_code::Complex:
      if (dtype.bits == 64) return DType::kComplex64;
      if (dtype.bits == 128) return DType::kComplex128;
      break;
    case dl::dtype_code::Float8_E4M3FN:
      if (dtype.bits == 8) return DType::kFloat8E4M3FN;
      break;
    case dl::dtype_code::Float8_E5M2:
      if (dtype.bits == 8) return DType::kFloat8E5M2;
      break;
    default:
      break;
  }
  return std::nullopt;
}

dl::dtype dlpack_from_dtype(DType dtype) noexcept {
  const auto bits = static_cast<std::uint8_t>(element_size(dtype) * 8);
  dl::dtype_code code = dl::dtype_code::UInt;
  switch (dtype) {
    case DType::kBool: code = dl::dtype_code::Bool; break;
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
      code = dl::dtype_code::Int; break;
    case DType::kFloat16: case DType::kFloat32: case DType::kFloat64:
      code = dl::dtype_code::Float; break;
    case DType::kBFloat16: code = dl::dtype_code::Bfloat; break;
    case DType::kComplex64: case DType::kComplex128: code = dl::dtype_code::Complex; break;
    case DType::kFloat8E4M3FN: code = dl::dtype_code::Float8_E4M3FN; break;
    case DType::kFloat8E5M2: code = dl::dtype_code::Float8_E5M2; break;
    default: break;
  }
  return {static_cast<std::uint8_t>(code), bits, 1};
}

namespace {

// The array's dtype, or the tagged one (which must have the same width).
DType resolve_dtype(dl::dtype dtype, std::string_view name,
                    std::optional<std::string_view> dtype_name) {
  if (dtype_name) {
    const std::optional<DType> tagged = parse_dtype(*dtype_name);
    if (!tagged) {
      throw nb::type_error((std::string(name) + " dtype " + std::string(*dtype_name) +
                            " is not supported").c_str());
    }
    if (element_size(*tagged) * 8 != dtype.bits) {
      throw nb::type_error((std::string(name) + " dtype " + std::string(*dtype_name) + " has " +
                            std::to_string(static_cast<std::int64_t>(element_size(*tagged) * 8)) +
                            " bits but the array's elements have " + std::to_string(dtype.bits))
                               .c_str());
    }
    return *tagged;
  }
  if (const std::optional<DType> own = dtype_from_dlpack(dtype)) return *own;
  throw nb::type_error((std::string(name) + " dtype " + dlpack_dtype_text(dtype) +
                        " is not supported (expected bool, int8-64, uint8-64, float16, "
                        "bfloat16, float32, float64, complex64, complex128, float8_e4m3fn "
                        "or float8_e5m2)").c_str());
}

}  // namespace

template <class View, class Array>
View view_from(const Array& array, std::string_view name,
               std::optional<std::string_view> dtype_name, bool on_device = false) {
  if (on_device) {
    check_cuda(array, name);
  } else {
    check_host(array, name);
  }
  View view;
  view.data = array.data();
  read_layout(array, &view.shape, &view.strides);
  view.dtype = resolve_dtype(array.dtype(), name, dtype_name);
  if (view.data == nullptr && !on_device && view.numel() == 0) view.data = empty_tensor_data();  // TensorView
  return view;
}

TensorView view_of(const InputArray& array, std::string_view name,
                   std::optional<std::string_view> dtype_name) {
  return view_from<TensorView>(array, name, dtype_name);
}

MutableTensorView mutable_view_of(const OutputArray& array, std::string_view name,
                                  std::optional<std::string_view> dtype_name) {
  return view_from<MutableTensorView>(array, name, dtype_name);
}

bool is_cuda_memory(int device_type) noexcept {
  return device_type == nb::device::cuda::value || device_type == nb::device::cuda_managed::value;
}

TensorView device_view_of(const InputArray& array, std::string_view name,
                          std::optional<std::string_view> dtype_name) {
  return view_from<TensorView>(array, name, dtype_name, /*on_device=*/true);
}

MutableTensorView device_mutable_view_of(const OutputArray& array, std::string_view name,
                                         std::optional<std::string_view> dtype_name) {
  return view_from<MutableTensorView>(array, name, dtype_name, /*on_device=*/true);
}

void check_out(const MutableTensorView& out, DType input_dtype, const Dims& shape) {
  if (out.dtype != input_dtype) {
    throw nb::type_error(("out dtype " + std::string(dtype_name(out.dtype)) +
                          " must equal the input dtype " + std::string(dtype_name(input_dtype)))
                             .c_str());
  }
  if (!(out.shape == shape)) {
    throw nb::value_error(("out shape " + to_string(out.shape) + " must equal the output shape " +
                           to_string(shape)).c_str());
  }
}

nb::object to_python(Tensor&& tensor, dl::dtype dtype, std::string_view framework) {
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<std::size_t> shape(static_cast<std::size_t>(owned->rank()));
  for (int d = 0; d < owned->rank(); ++d) {
    shape[static_cast<std::size_t>(d)] = static_cast<std::size_t>(owned->shape()[d]);
  }
  void* data = owned->data() != nullptr ? owned->data() : empty_tensor_data();
  auto make = [&](auto framework_tag) {
    return exported(nb::ndarray<decltype(framework_tag)>(data, shape.size(), shape.data(), owner,
                                                         nullptr, dtype));
  };
  if (framework == "numpy") return make(nb::numpy());
  if (framework == "torch") return make(nb::pytorch());
  if (framework == "jax") return make(nb::jax());
  if (framework == "tensorflow") return make(nb::tensorflow());
  if (framework == "cupy") return make(nb::cupy());
  return make(nb::array_api());
}

}  // namespace multigather::python
