// The per-call fast path for plain numpy arrays: gather_multiaxis straight on ndarray objects
// through the NumPy C API (shape, strides and data read from the array struct; the result
// allocated by numpy), bypassing DLPack / buffer-protocol import and export, which cost more
// than the whole gather on a tiny call (docs/bench.md case 9). Anything it does not take as is
// (another array type, a non-native byte order, strides that are not whole elements, axes that
// are not a list or tuple of ints, ...) answers NotImplemented, and the Python wrapper goes the
// general way (arrays.cpp), which gives the precise message for bad input.
#include "numpy_fast.hpp"

#include <nanobind/nanobind.h>

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "arrays.hpp"

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

/// Work (output bytes) from which the GIL is released around the kernel; below, releasing and
/// taking it back costs more than the gather.
constexpr std::int64_t kReleaseGilBytes = std::int64_t{64} << 10;

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

  // One validation: the result is allocated by numpy (in the allocator callback, GIL held),
  // then the GIL is let go for a large gather and taken back after it.
  struct Allocation {
    PyArray_Descr* descr;
    PyObject* array = nullptr;
    PyThreadState* released = nullptr;
  } allocation{PyArray_DESCR(reinterpret_cast<PyArrayObject*>(input_object.ptr()))};
  auto allocate = [](void* context, DType dtype, const Dims& shape, MutableTensorView* output) {
    auto* a = static_cast<Allocation*>(context);
    npy_intp dims[kMaxRank];
    std::int64_t numel = 1;
    for (int d = 0; d < shape.size(); ++d) {
      dims[d] = static_cast<npy_intp>(shape[d]);
      numel *= shape[d];
    }
    Py_INCREF(a->descr);  // stolen by the call
    a->array = PyArray_NewFromDescr(&PyArray_Type, a->descr, shape.size(), dims, nullptr, nullptr,
                                    0, nullptr);
    if (a->array == nullptr) return false;  // MemoryError is set
    *output = MutableTensorView(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a->array)), dtype, shape);
    if (numel * static_cast<std::int64_t>(element_size(dtype)) >= kReleaseGilBytes) {
      a->released = PyEval_SaveThread();
    }
    return true;
  };
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

#else  // no NumPy headers at build time: the general path serves numpy arrays too

nb::object gather_numpy(nb::handle, nb::handle, nb::handle, nb::handle, nb::handle, nb::handle,
                        nb::handle) {
  return nb::borrow(Py_NotImplemented);
}

#endif

}  // namespace

void bind_numpy_fast(nb::module_& m) {
#if defined(MULTIGATHER_PYTHON_NUMPY_FAST)
  // numpy missing or broken at import time: the fast path stays off (NotImplemented).
  numpy_ready = _import_array() >= 0;
  if (!numpy_ready) PyErr_Clear();
#endif
  m.attr("has_numpy_fast_path") = numpy_ready;
  m.def("gather_numpy", &gather_numpy, nb::arg("input").none(), nb::arg("indices").none(),
        nb::arg("axes").none(), nb::arg("index_mode").none(), nb::arg("negative_indices").none(),
        nb::arg("fill_value").none(), nb::arg("out").none(),
        "gather_multiaxis(input, indices, axes, index_mode, negative_indices, fill_value, out) "
        "on exact numpy ndarrays of native dtypes through the NumPy C API; NotImplemented for "
        "any call it does not take as is (the caller then takes the general path).");
}

}  // namespace multigather::python
