// The per-call fast path for plain numpy arrays: gather_multiaxis straight on ndarray objects
// through the NumPy C API (shape, strides and data read from the array struct), bypassing
// DLPack / buffer-protocol import and export, which cost more than the whole gather on a tiny
// call (docs/bench.md case 9). Anything it does not take as is (another array type, a
// non-native byte order, strides that are not whole elements, axes that are not a list or tuple
// of ints, ...) answers NotImplemented, and the Python wrapper goes the general way
// (arrays.cpp), which gives the precise message for bad input. Also the NumPy helpers of the
// registry fast path (op_fast.cpp; numpy_fast.hpp): this is the one file with NumPy's headers.
// Results of kOutputCacheMinBytes and more live in allocate_output_memory's blocks (a cache of
// freed blocks: a repeated one-shot call reuses pages that are already mapped), smaller ones
// in numpy's memory.
#include "numpy_fast.hpp"

#include <nanobind/nanobind.h>

#include <Python.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string_view>

#include "arrays.hpp"
#include "multigather/output_memory.hpp"
#include "multigather/scatter.hpp"

#if defined(MULTIGATHER_PYTHON_NUMPY_FAST)
#define PY_ARRAY_UNIQUE_SYMBOL multigather_numpy_fast_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#endif

namespace multigather::python {
namespace {

namespace nb = nanobind;

bool numpy_ready = false;

#if defined(MULTIGATHER_PYTHON_NUMPY_FAST)

/// The DType of a native-byte-order numpy array, nullopt for any other (multigather's general
/// path then decides: ml_dtypes bfloat16 / float8 go through DLPack there). numpy's kind and
/// item size say what DLPack's code and bits say: one mapping (dtype_from_dlpack) serves both.
std::optional<DType> dtype_of(PyArrayObject* a) {
  if (PyArray_ISBYTESWAPPED(a)) return std::nullopt;
  nb::dlpack::dtype_code code;
  switch (PyArray_DESCR(a)->kind) {
    case 'b': code = nb::dlpack::dtype_code::Bool; break;
    case 'i': code = nb::dlpack::dtype_code::Int; break;
    case 'u': code = nb::dlpack::dtype_code::UInt; break;
    case 'f': code = nb::dlpack::dtype_code::Float; break;
    case 'c': code = nb::dlpack::dtype_code::Complex; break;
    default: return std::nullopt;
  }
  const auto bits = PyArray_ITEMSIZE(a) * 8;
  if (bits > 255) return std::nullopt;
  return dtype_from_dlpack({static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1});
}

/// A view of an exact numpy ndarray; false when the fast path does not take it.
template <class View>
bool view_of_ndarray(PyObject* object, View* view) {
  if (!PyArray_CheckExact(object)) return false;
  auto* a = reinterpret_cast<PyArrayObject*>(object);
  const std::optional<DType> dtype = dtype_of(a);
  if (!dtype) return false;
  const int rank = PyArray_NDIM(a);
  if (rank > kMaxRank) return false;
  const auto size = static_cast<npy_intp>(element_size(*dtype));
  const npy_intp* shape = PyArray_DIMS(a);
  const npy_intp* strides = PyArray_STRIDES(a);
  view->shape = Dims();
  view->strides = Dims();
  for (int d = 0; d < rank; ++d) {
    if (strides[d] % size != 0) return false;  // not whole elements (a packed record field)
    view->shape.push_back(static_cast<std::int64_t>(shape[d]));
    view->strides.push_back(static_cast<std::int64_t>(strides[d] / size));
  }
  view->data = PyArray_DATA(a);
  view->dtype = *dtype;
  return true;
}

/// axes as ints, from a list or tuple of Python ints; false for anything else.
bool axes_of(PyObject* object, Dims* axes) {
  const bool list = PyList_CheckExact(object);
  if (!list && !PyTuple_CheckExact(object)) return false;
  const Py_ssize_t n = list ? PyList_GET_SIZE(object) : PyTuple_GET_SIZE(object);
  if (n > kMaxRank) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = list ? PyList_GET_ITEM(object, i) : PyTuple_GET_ITEM(object, i);
    if (!PyLong_CheckExact(item)) return false;
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow != 0) return false;
    axes->push_back(static_cast<std::int64_t>(v));
  }
  return true;
}

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

nb::object gather_numpy(nb::handle input_object, nb::handle indices_object, nb::handle axes_object,
                        nb::handle index_mode_object, nb::handle negative_object,
                        nb::handle fill_value, nb::handle out_object) {
  if (!numpy_ready) return not_implemented();
  TensorView input;
  TensorView indices;
  Dims axes;
  if (!view_of_ndarray(input_object.ptr(), &input) || !view_of_ndarray(indices_object.ptr(), &indices) ||
      !axes_of(axes_object.ptr(), &axes) || !PyUnicode_Check(index_mode_object.ptr()) ||
      !PyBool_Check(negative_object.ptr())) {
    return not_implemented();
  }
  Py_ssize_t mode_length = 0;
  const char* mode = PyUnicode_AsUTF8AndSize(index_mode_object.ptr(), &mode_length);
  if (mode == nullptr) throw nb::python_error();
  const GatherOptions options = options_of(std::string_view(mode, static_cast<std::size_t>(mode_length)),
                                           negative_object.ptr() == Py_True, fill_value);
  const std::span<const std::int64_t> axis_span(axes.data(), static_cast<std::size_t>(axes.size()));

  if (!out_object.is_none()) {
    TensorView out_view;
    if (!view_of_ndarray(out_object.ptr(), &out_view) ||
        !PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject*>(out_object.ptr())) ||
        out_view.dtype != input.dtype || views_overlap(out_view, input) ||
        views_overlap(out_view, indices)) {
      return not_implemented();  // the general path names what is wrong with out
    }
    const MutableTensorView target(const_cast<void*>(out_view.data), out_view.dtype,
                                   out_view.shape, out_view.strides);
    Status status;
    std::int64_t numel = 0;
    const PythonInterruptible interruptible;
    if (element_count(target.shape, &numel) &&
        numel * static_cast<std::int64_t>(element_size(target.dtype)) >= kReleaseGilBytes) {
      nb::gil_scoped_release release;
      status = gather_multiaxis_into(input, indices, axis_span, target, options);
    } else {
      status = gather_multiaxis_into(input, indices, axis_span, target, options);
    }
    if (status.code() == StatusCode::kInvalidArgument) return not_implemented();  // out's shape
    raise_if_error(status);
    return nb::borrow(out_object);
  }

  // One validation: the result is allocated (new_output_ndarray, GIL held) after the
  // operands are validated, then the GIL is let go for a large gather and taken back after it.
  struct Allocation {
    PyArray_Descr* descr;
    PyObject* array = nullptr;
    PyThreadState* released = nullptr;
  } allocation{PyArray_DESCR(reinterpret_cast<PyArrayObject*>(input_object.ptr()))};
  auto allocate = [](void* context, DType dtype, const Dims& shape, MutableTensorView* output) {
    auto* a = static_cast<Allocation*>(context);
    Py_INCREF(a->descr);  // stolen by the call
    void* data = nullptr;
    a->array = new_output_ndarray(reinterpret_cast<PyObject*>(a->descr), dtype, shape, &data);
    if (a->array == nullptr) return false;  // MemoryError is set
    *output = MutableTensorView(data, dtype, shape);
    const std::int64_t numel = PyArray_SIZE(reinterpret_cast<PyArrayObject*>(a->array));
    if (numel * static_cast<std::int64_t>(element_size(dtype)) >= kReleaseGilBytes) {
      a->released = PyEval_SaveThread();
    }
    return true;
  };
  const PythonInterruptible interruptible;
  const Status status = gather_multiaxis_alloc(input, indices, axis_span, options, allocate, &allocation);
  if (allocation.released != nullptr) PyEval_RestoreThread(allocation.released);
  nb::object result = nb::steal(allocation.array);
  if (allocation.array == nullptr) {
    if (PyErr_Occurred()) throw nb::python_error();  // numpy could not allocate
    return not_implemented();  // invalid operands: the general path raises the same error
  }
  raise_if_error(status);
  return result;
}

/// A str argument as a view; false when it is not a str.
bool text_of(nb::handle object, std::string_view* text) {
  if (!PyUnicode_Check(object.ptr())) return false;
  Py_ssize_t length = 0;
  const char* data = PyUnicode_AsUTF8AndSize(object.ptr(), &length);
  if (data == nullptr) throw nb::python_error();
  *text = std::string_view(data, static_cast<std::size_t>(length));
  return true;
}

/// scatter_multiaxis on exact numpy ndarrays: the core call itself (validation, index check,
/// copy, combine), its result a new ndarray of input's dtype or `out` (which may be input:
/// in place). NotImplemented for anything it does not take as is (another array type, a
/// reduction or mode name it does not know, an out it cannot write): the general path
/// (the registry row scatter_multiaxis) then gives the result or the registry's message.
nb::object scatter_numpy(nb::handle input_object, nb::handle indices_object, nb::handle updates_object,
                         nb::handle axes_object, nb::handle reduction_object, nb::handle index_mode_object,
                         nb::handle negative_object, nb::handle include_object, nb::handle out_object) {
  if (!numpy_ready) return not_implemented();
  TensorView input, indices, updates;
  Dims axes;
  std::string_view reduction_name_text, mode_name;
  ScatterOptions options;
  if (!view_of_ndarray(input_object.ptr(), &input) || !view_of_ndarray(indices_object.ptr(), &indices) ||
      !view_of_ndarray(updates_object.ptr(), &updates) || !axes_of(axes_object.ptr(), &axes) ||
      !text_of(reduction_object, &reduction_name_text) || !text_of(index_mode_object, &mode_name) ||
      !parse_reduction(reduction_name_text, &options.reduction) ||
      !parse_index_mode(mode_name, &options.index_mode) || options.index_mode == IndexMode::kFill ||
      !PyBool_Check(negative_object.ptr()) || !PyBool_Check(include_object.ptr())) {
    return not_implemented();
  }
  options.negative_indices = negative_object.ptr() == Py_True;
  options.include_input = include_object.ptr() == Py_True;
  options.num_threads = get_num_threads();
  const std::span<const std::int64_t> axis_span(axes.data(), static_cast<std::size_t>(axes.size()));
  nb::object result;
  MutableTensorView target;
  if (!out_object.is_none()) {
    TensorView out_view;
    if (!view_of_ndarray(out_object.ptr(), &out_view) ||
        !PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject*>(out_object.ptr())) ||
        out_view.dtype != input.dtype) {
      return not_implemented();  // the general path names what is wrong with out
    }
    target = MutableTensorView(const_cast<void*>(out_view.data), out_view.dtype, out_view.shape,
                               out_view.strides);
    result = nb::borrow(out_object);
  } else {
    PyArray_Descr* descr = PyArray_DESCR(reinterpret_cast<PyArrayObject*>(input_object.ptr()));
    Py_INCREF(descr);  // stolen by the call
    void* data = nullptr;
    PyObject* array = new_output_ndarray(reinterpret_cast<PyObject*>(descr), input.dtype, input.shape, &data);
    if (array == nullptr) throw nb::python_error();
    result = nb::steal(array);
    target = MutableTensorView(data, input.dtype, input.shape);
  }
  Status status;
  std::int64_t numel = 0;
  const PythonInterruptible interruptible;
  if (element_count(input.shape, &numel) &&
      numel * static_cast<std::int64_t>(element_size(input.dtype)) >= kReleaseGilBytes) {
    nb::gil_scoped_release release;
    status = scatter_multiaxis_into(input, indices, updates, axis_span, target, options);
  } else {
    status = scatter_multiaxis_into(input, indices, updates, axis_span, target, options);
  }
  // Bad arguments (nothing was written): the general path words them (names `out`, the
  // registry's attribute rules); an index out of range is raised here, as there.
  if (status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kTypeError) {
    return not_implemented();
  }
  raise_if_error(status);
  return result;
}

#else  // no NumPy headers at build time: the general path serves numpy arrays too

nb::object gather_numpy(nb::handle, nb::handle, nb::handle, nb::handle, nb::handle, nb::handle,
                        nb::handle) {
  return nb::borrow(Py_NotImplemented);
}

nb::object scatter_numpy(nb::handle, nb::handle, nb::handle, nb::handle, nb::handle, nb::handle,
                         nb::handle, nb::handle, nb::handle) {
  return nb::borrow(Py_NotImplemented);
}

#endif

}  // namespace

bool numpy_fast_ready() noexcept { return numpy_ready; }

#if defined(MULTIGATHER_PYTHON_NUMPY_FAST)

bool ndarray_view(PyObject* object, TensorView* view) {
  return numpy_ready && view_of_ndarray(object, view);
}

bool ndarray_mutable_view(PyObject* object, MutableTensorView* view) {
  TensorView v;
  if (!numpy_ready || !view_of_ndarray(object, &v) ||
      !PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject*>(object))) {
    return false;
  }
  *view = MutableTensorView(const_cast<void*>(v.data), v.dtype, v.shape, v.strides);
  return true;
}

PyObject* ndarray_from_sequence(PyObject* object) {
  if (!numpy_ready || !(PyList_CheckExact(object) || PyTuple_CheckExact(object) ||
                        PyLong_CheckExact(object) || PyFloat_CheckExact(object))) {
    return nullptr;
  }
  PyObject* array = PyArray_FromAny(object, nullptr, 0, 0, 0, nullptr);  // np.asarray
  if (array == nullptr) PyErr_Clear();  // the general path raises numpy's error
  return array;
}

PyObject* ndarray_descr(PyObject* array) {
  PyArray_Descr* descr = PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array));
  Py_INCREF(descr);
  return reinterpret_cast<PyObject*>(descr);
}

PyObject* numpy_descr_of(DType dtype) {
  int type = -1;
  switch (dtype) {
    case DType::kBool: type = NPY_BOOL; break;
    case DType::kInt8: type = NPY_INT8; break;
    case DType::kInt16: type = NPY_INT16; break;
    case DType::kInt32: type = NPY_INT32; break;
    case DType::kInt64: type = NPY_INT64; break;
    case DType::kUInt8: type = NPY_UINT8; break;
    case DType::kUInt16: type = NPY_UINT16; break;
    case DType::kUInt32: type = NPY_UINT32; break;
    case DType::kUInt64: type = NPY_UINT64; break;
    case DType::kFloat16: type = NPY_FLOAT16; break;
    case DType::kFloat32: type = NPY_FLOAT32; break;
    case DType::kFloat64: type = NPY_FLOAT64; break;
    case DType::kComplex64: type = NPY_COMPLEX64; break;
    case DType::kComplex128: type = NPY_COMPLEX128; break;
    default: return nullptr;  // bfloat16, float8: not numpy's own types
  }
  return reinterpret_cast<PyObject*>(PyArray_DescrFromType(type));
}

namespace {

constexpr const char* kOutputCapsule = "multigather.output_memory";

void free_output_capsule(PyObject* capsule) {
  free_output_memory(PyCapsule_GetPointer(capsule, kOutputCapsule));
}

}  // namespace

PyObject* new_output_ndarray(PyObject* descr_object, DType dtype, const Dims& shape, void** data) {
  auto* descr = reinterpret_cast<PyArray_Descr*>(descr_object);
  npy_intp dims[kMaxRank];
  std::int64_t numel = 1;
  for (int d = 0; d < shape.size(); ++d) {
    dims[d] = static_cast<npy_intp>(shape[d]);
    numel *= shape[d];
  }
  const auto bytes = static_cast<std::size_t>(numel) * static_cast<std::size_t>(PyDataType_ELSIZE(descr));
  if (bytes < kOutputCacheMinBytes) {
    PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, shape.size(), dims, nullptr,
                                           nullptr, 0, nullptr);
    if (array != nullptr) *data = PyArray_DATA(reinterpret_cast<PyArrayObject*>(array));
    return array;
  }
  void* memory = nullptr;
  try {
    memory = allocate_output_memory(bytes);
  } catch (const std::bad_alloc&) {
    Py_DECREF(descr);
    return memory_error(dtype, shape);
  }
  PyObject* owner = PyCapsule_New(memory, kOutputCapsule, free_output_capsule);
  if (owner == nullptr) {
    free_output_memory(memory);
    Py_DECREF(descr);
    return nullptr;
  }
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, shape.size(), dims, nullptr, memory,
                                         NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) {
    Py_DECREF(owner);  // frees the memory
    return nullptr;
  }
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner) < 0) {  // steals owner
    Py_DECREF(array);
    return nullptr;
  }
  *data = memory;
  return array;
}

#else

bool ndarray_view(PyObject*, TensorView*) { return false; }
bool ndarray_mutable_view(PyObject*, MutableTensorView*) { return false; }
PyObject* ndarray_from_sequence(PyObject*) { return nullptr; }
PyObject* ndarray_descr(PyObject*) { return nullptr; }
PyObject* numpy_descr_of(DType) { return nullptr; }
PyObject* new_output_ndarray(PyObject* descr, DType, const Dims&, void**) {
  Py_XDECREF(descr);
  PyErr_SetString(PyExc_RuntimeError, "multigather was built without NumPy's headers");
  return nullptr;
}

#endif

namespace {

/// gather_numpy as a METH_FASTCALL function (no argument binding layer: the per-call cost of
/// multigather.gather_multiaxis on tiny arrays). A core error answers NotImplemented: the
/// general path runs the same validation and raises it with its message.
PyObject* gather_numpy_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError,
                    "gather_numpy(input, indices, axes, index_mode, negative_indices, fill_value, out)");
    return nullptr;
  }
  try {
    return gather_numpy(args[0], args[1], args[2], args[3], args[4], args[5], args[6]).release().ptr();
  } catch (nb::python_error& e) {
    e.restore();  // MemoryError and the like
    return nullptr;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  } catch (const std::exception&) {
    Py_RETURN_NOTIMPLEMENTED;
  }
}

PyMethodDef gather_numpy_def = {
    "gather_numpy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&gather_numpy_fastcall)),
    METH_FASTCALL,
    "gather_numpy(input, indices, axes, index_mode, negative_indices, fill_value, out): "
    "gather_multiaxis on exact numpy ndarrays of native dtypes through the NumPy C API; "
    "NotImplemented for any call it does not take as is, and for invalid operands (the caller "
    "then takes the general path, which raises the error)."};

}  // namespace

void add_fastcall_function(nb::module_& m, PyMethodDef* def) {
  nb::object function = nb::steal(PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr()));
  if (!function.is_valid()) throw nb::python_error();
  m.attr(def->ml_name) = function;
}

void bind_numpy_fast(nb::module_& m) {
#if defined(MULTIGATHER_PYTHON_NUMPY_FAST)
  // numpy missing or broken at import time: the fast path stays off (NotImplemented).
  numpy_ready = _import_array() >= 0;
  if (!numpy_ready) PyErr_Clear();
#endif
  m.attr("has_numpy_fast_path") = numpy_ready;
  add_fastcall_function(m, &gather_numpy_def);
  m.def("scatter_numpy", &scatter_numpy, nb::arg("input").none(), nb::arg("indices").none(),
        nb::arg("updates").none(), nb::arg("axes").none(), nb::arg("reduction").none(),
        nb::arg("index_mode").none(), nb::arg("negative_indices").none(),
        nb::arg("include_input").none(), nb::arg("out").none(),
        "scatter_multiaxis(input, indices, updates, axes, reduction, index_mode, "
        "negative_indices, include_input, out) on exact numpy ndarrays of native dtypes through "
        "the NumPy C API; NotImplemented for any call it does not take as is.");
  bind_op_fast(m);
}

}  // namespace multigather::python
