// multigather._multigather: the nanobind extension behind the `multigather` Python package.
//
// Deliberately small and framework-neutral: arrays arrive through DLPack or the buffer protocol
// (nb::ndarray), are viewed without copies, and the result leaves as an array of the input's
// framework (nanobind calls that framework's from_dlpack). Every call, the core operator and
// every framework op, goes through the one pipeline lower_op -> execute (op_bindings.cpp);
// numpy_fast.cpp is an accelerator in front of it for plain ndarrays.
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
#include "op_bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_multigather, m) {
  using namespace multigather::python;
  m.doc() = "multigather's C++ core (see the `multigather` package for the documented API)";
  m.attr("max_rank") = multigather::kMaxRank;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  m.attr("has_cuda") = true;  // the library has its CUDA engine; device arrays: see arrays.cpp
#else
  m.attr("has_cuda") = false;
#endif
  m.def("set_num_threads", &set_num_threads, "num_threads"_a,
        "Sets the num_threads option of every later call (0: automatic).");
  m.def("get_num_threads", &get_num_threads, "The num_threads option of calls (0: automatic).");
  bind_argument_type_error(m);
  bind_numpy_fast(m);
  bind_ops(m);
  bind_jax_ffi(m);
}
