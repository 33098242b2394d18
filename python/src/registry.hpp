// python/src/registry.hpp: Python bindings of the op registry (multigather/ops.hpp), present
// when the library has one (the frontends); `_multigather.has_registry` says which.
#pragma once

#include <nanobind/nanobind.h>

#if __has_include("multigather/ops.hpp")
#define MULTIGATHER_PYTHON_HAS_REGISTRY 1
#else
#define MULTIGATHER_PYTHON_HAS_REGISTRY 0
#endif

namespace multigather::python {

namespace nb = nanobind;

/// Adds registry_ops, run_op, lower_op_shape, explain_op and has_registry to `m`.
void bind_registry(nb::module_& m);

}  // namespace multigather::python
