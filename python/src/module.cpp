// multigather._multigather: the nanobind extension behind the `multigather` Python package.
//
// Deliberately small and framework-neutral: arrays arrive through DLPack or the buffer protocol
// (nb::ndarray), are viewed without copies, and the result leaves as an array of the input's
// framework (nanobind calls that framework's from_dlpack). Framework ops go through the C++ op
// registry (registry.cpp), which does every lowering on the views.
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
#include "cuda_arrays.hpp"
#include "numpy_fast.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace multigather::python {
namespace {

/// gather_multiaxis on framework arrays (viewed in place); the result is a new array of
/// `framework`, or None after writing into `out` (any strides, not overlapping the operands).
nb::object gather(const InputArray& input_array, const InputArray& indices_array,
                  const std::vector<std::int64_t>& axes, std::string_view index_mode,
                  bool negative_indices, nb::handle fill_value, std::optional<OutputArray> out,
                  std::optional<std::string_view> input_dtype,
                  std::optional<std::string_view> out_dtype, std::string_view framework) {
  const GatherOptions options = options_of(index_mode, negative_indices, fill_value);
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  if (is_cuda_memory(input_array.device_type())) {  // CUDA arrays run on the GPU
    return gather_cuda(input_array, indices_array, axes, options, out, input_dtype, out_dtype,
                       framework);
  }
#endif
  const TensorView input = view_of(input_array, "input", input_dtype);
  const TensorView indices = view_of(indices_array, "indices");
  GatherShape shape;
  raise_if_error(infer_shape(input.shape, indices.shape, axes, &shape));

  if (out) {
    const MutableTensorView target = mutable_view_of(*out, "out", out_dtype);
    check_out(target, input, indices, shape.output_shape);
    Status status;
    {
      nb::gil_scoped_release release;
      status = gather_multiaxis_into(input, indices, axes, target, options);
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
  return to_python(std::move(result), input_array.dtype(), framework);
}

}  // namespace
}  // namespace multigather::python

NB_MODULE(_multigather, m) {
  using namespace multigather::python;
  m.doc() = "multigather's C++ core (see the `multigather` package for the documented API)";
  m.def("gather", &gather, "input"_a, "indices"_a, "axes"_a, "index_mode"_a = "error",
        "negative_indices"_a = true, "fill_value"_a = 0, "out"_a = nb::none(),
        "input_dtype"_a = nb::none(), "out_dtype"_a = nb::none(), "framework"_a = "numpy",
        "gather_multiaxis on any DLPack / buffer-protocol arrays; returns the result as an "
        "array of `framework`, or None with out=.");
  m.attr("max_rank") = multigather::kMaxRank;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  m.attr("has_cuda") = true;  // the library has its CUDA engine; device arrays: see arrays.cpp
#else
  m.attr("has_cuda") = false;
#endif
  m.def("set_num_threads", &set_num_threads, "num_threads"_a,
        "Sets the num_threads option of every later call (0: automatic).");
  m.def("get_num_threads", &get_num_threads, "The num_threads option of calls (0: automatic).");
  bind_numpy_fast(m);
  bind_registry(m);
}
