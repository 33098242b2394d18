// The NumPy reader of the per-call fast path (op_fast.cpp, numpy_fast.hpp): views of numpy
// ndarrays read straight from the array struct through the NumPy C API (shape, strides, data),
// bypassing DLPack / buffer-protocol import and export, which cost more than the whole gather on
// a tiny call (docs/bench.md case 9), and the result ndarrays. The one file with NumPy's headers.
// An array it does not read as is (another type, a non-native byte order, strides that are not
// whole elements, ...) is left to the door's other readers (op_fast_operands.cpp) and, failing
// those, to the Python normalization, which gives the precise message.
// Results of kOutputCacheMinBytes and more live in allocate_output_memory's blocks (a cache of
// freed blocks: a repeated one-shot call reuses pages that are already mapped), smaller ones
// in numpy's memory.
#include "numpy_fast.hpp"

#include <nanobind/nanobind.h>

#include <Python.h>

#include <cstdint>
#include <new>
#include <optional>

#include "arrays.hpp"
#include "multigather/output_memory.hpp"

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

/// The DType of a native-byte-order numpy array, nullopt for any other. numpy's kind and item
/// size say what DLPack's code and bits say: one mapping (dtype_from_dlpack) serves both.
std::optional<DType> dtype_of(PyArrayObject* a) {
  if (PyArray_ISBYTESWAPPED(a)) return std::nullopt;
  if (PyArray_DESCR(a)->type_num >= NPY_USERDEF) {
    // ml_dtypes' bfloat16, float8_e4m3fn, float8_e5m2 (user dtypes that numpy cannot export
    // through DLPack), by their scalar type's name; no other user dtype.
    std::string_view name = PyArray_DESCR(a)->typeobj->tp_name;
    name = name.substr(name.rfind('.') + 1);
    if (name != "bfloat16" && name != "float8_e4m3fn" && name != "float8_e5m2") return std::nullopt;
    const std::optional<DType> dtype = parse_dtype(name);
    if (!dtype || static_cast<npy_intp>(element_size(*dtype)) != PyArray_ITEMSIZE(a)) return std::nullopt;
    return dtype;
  }
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
  // Element sizes are powers of two: a shift, not a division, per stride.
  const int shift = __builtin_ctzll(element_size(*dtype));
  const npy_intp* shape = PyArray_DIMS(a);
  const npy_intp* strides = PyArray_STRIDES(a);
  view->shape.clear();
  view->strides.clear();
  for (int d = 0; d < rank; ++d) {
    const npy_intp stride = strides[d];
    if ((stride & ((npy_intp{1} << shift) - 1)) != 0) return false;  // not whole elements (a packed record field)
    view->shape.push_back(static_cast<std::int64_t>(shape[d]));
    view->strides.push_back(static_cast<std::int64_t>(stride >> shift));  // arithmetic: negative strides stay exact
  }
  view->data = PyArray_DATA(a);
  view->dtype = *dtype;
  return true;
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
  bind_op_fast(m);
}

}  // namespace multigather::python
