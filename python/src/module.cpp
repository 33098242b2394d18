// multigather._multigather: the nanobind extension behind the `multigather` Python package.
//
// Deliberately small and framework-neutral: arrays arrive through DLPack or the buffer protocol
// (nb::ndarray), are viewed without copies, and the result leaves as an array of the input's
// framework (nanobind calls that framework's from_dlpack).
// Shapes-only lowerings (unit dimensions, flattening, leading parts) are applied to the views
// here, so a framework adapter written in Python never copies or reshapes data itself.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace multigather::python {
namespace {

using IntList = std::vector<std::int64_t>;

Dims dims_of(const IntList& values) { return Dims(std::span<const std::int64_t>(values)); }

nb::tuple tuple_of(const Dims& dims) {
  nb::list out;
  for (int d = 0; d < dims.size() && d < kMaxRank; ++d) out.append(dims[d]);
  return nb::tuple(out);
}

// A Python fill value (bool, int of any size within 64 bits, float, numpy scalar) as a Scalar.
Scalar scalar_of(nb::handle value) {
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
    throw nb::value_error(("fill_value " + nb::cast<std::string>(nb::str(value)) +
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

GatherOptions options_of(std::string_view index_mode, bool negative_indices,
                         nb::handle fill_value) {
  GatherOptions options;
  if (!parse_index_mode(index_mode, &options.index_mode)) {
    throw nb::value_error(("index_mode '" + std::string(index_mode) +
                           "' is not one of 'error', 'clamp', 'wrap', 'fill'").c_str());
  }
  options.negative_indices = negative_indices;
  options.fill_value = scalar_of(fill_value);
  return options;
}

/// The one entry point of every Python call. `input_part` (a leading part of the input),
/// `input_shape`, `indices_shape` and `result_shape` are the shapes-only steps of a framework
/// lowering; all default to "as given".
nb::object gather(const InputArray& input_array, const InputArray& indices_array,
                  const IntList& axes, std::string_view index_mode, bool negative_indices,
                  nb::handle fill_value, std::optional<OutputArray> out,
                  std::optional<std::string_view> input_dtype,
                  std::optional<std::string_view> out_dtype, std::string_view framework,
                  std::optional<IntList> input_part, std::optional<IntList> input_shape,
                  std::optional<IntList> indices_shape, std::optional<IntList> result_shape) {
  const GatherOptions options = options_of(index_mode, negative_indices, fill_value);
  Tensor input_copy, indices_copy;
  TensorView input = view_of(input_array, "input", input_dtype);
  TensorView indices = view_of(indices_array, "indices");
  if (input_part) input = leading_part(input, dims_of(*input_part), "input");
  if (input_shape) input = reshape_view(input, dims_of(*input_shape), "input", &input_copy);
  if (indices_shape) {
    indices = reshape_view(indices, dims_of(*indices_shape), "indices", &indices_copy);
  }
  GatherShape shape;
  raise_if_error(infer_shape(input.shape, indices.shape, axes, &shape));
  const Dims final_shape = result_shape ? dims_of(*result_shape) : shape.output_shape;

  if (out) {
    MutableTensorView target = mutable_view_of(*out, "out", out_dtype);
    if (target.dtype != input.dtype) {
      throw nb::type_error(("out dtype " + std::string(dtype_name(target.dtype)) +
                            " must equal the input dtype " + std::string(dtype_name(input.dtype)))
                               .c_str());
    }
    if (!(target.shape == final_shape)) {
      throw nb::value_error(("out shape " + to_string(target.shape) +
                             " must equal the output shape " + to_string(final_shape)).c_str());
    }
    Tensor no_copy;
    const TensorView as_kernel =
        reshape_view(target, shape.output_shape, "out", &no_copy);
    if (no_copy.data() != nullptr) {
      throw nb::value_error(("out strides " + to_string(target.strides) +
                             " cannot be viewed with the kernel's output shape " +
                             to_string(shape.output_shape) + " without a copy").c_str());
    }
    if (may_overlap(as_kernel, input) || may_overlap(as_kernel, indices)) {
      throw nb::value_error("out overlaps input or indices (gather cannot write into memory it "
                            "reads)");
    }
    MutableTensorView kernel_out(const_cast<void*>(as_kernel.data), as_kernel.dtype,
                                 as_kernel.shape, as_kernel.strides);
    Status status;
    {
      nb::gil_scoped_release release;
      status = gather_multiaxis_into(input, indices, axes, kernel_out, options);
    }
    raise_if_error(status);
    return nb::none();
  }

  Tensor result(input.dtype, shape.output_shape);
  Status status;
  {
    nb::gil_scoped_release release;
    status = gather_multiaxis_into(input, indices, axes, result.mutable_view(), options);
  }
  raise_if_error(status);
  result.reshape(final_shape);
  return to_python(std::move(result), input_array.dtype(), framework);
}

nb::dict shape_info(const IntList& input_shape, const IntList& indices_shape,
                    const IntList& axes) {
  GatherShape s;
  raise_if_error(infer_shape(dims_of(input_shape), dims_of(indices_shape), axes, &s));
  nb::list is_axis, input_broadcast, indices_broadcast;
  for (int d = 0; d < s.output_shape.size(); ++d) {
    is_axis.append(s.is_axis[static_cast<std::size_t>(d)]);
    input_broadcast.append(s.input_broadcast[static_cast<std::size_t>(d)]);
    indices_broadcast.append(s.indices_broadcast[static_cast<std::size_t>(d)]);
  }
  nb::dict info;
  info["output_shape"] = tuple_of(s.output_shape);
  info["logical_indices_shape"] = tuple_of(s.logical_indices_shape);
  info["axes"] = tuple_of(s.axes);
  info["coordinate_size"] = s.coordinate_size;
  info["is_axis"] = nb::tuple(is_axis);
  info["input_broadcast"] = nb::tuple(input_broadcast);
  info["indices_broadcast"] = nb::tuple(indices_broadcast);
  return info;
}

}  // namespace
}  // namespace multigather::python

NB_MODULE(_multigather, m) {
  using namespace multigather::python;
  m.doc() = "multigather's C++ core (see the `multigather` package for the documented API)";
  m.def("gather", &gather, "input"_a, "indices"_a, "axes"_a, "index_mode"_a = "error",
        "negative_indices"_a = true, "fill_value"_a = 0, "out"_a = nb::none(),
        "input_dtype"_a = nb::none(), "out_dtype"_a = nb::none(), "framework"_a = "numpy", "input_part"_a = nb::none(),
        "input_shape"_a = nb::none(), "indices_shape"_a = nb::none(),
        "result_shape"_a = nb::none(),
        "gather_multiaxis on any DLPack / buffer-protocol arrays, with optional shapes-only "
        "lowering steps; returns the result as an array of `framework`, or None with out=.");
  m.def("shape_info", &shape_info, "input_shape"_a, "indices_shape"_a, "axes"_a,
        "infer_shape: output shape, logical indices shape, normalized axes, broadcast flags.");
  m.attr("max_rank") = multigather::kMaxRank;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  m.attr("has_cuda") = true;  // the library has its CUDA engine; device arrays: see arrays.cpp
#else
  m.attr("has_cuda") = false;
#endif
  bind_registry(m);
}
