// python/src/registry.hpp: Python bindings of the op registry (multigather/ops.hpp).
#pragma once

#include <nanobind/nanobind.h>

namespace multigather::python {

namespace nb = nanobind;

/// Adds registry_ops, run_op, lower_op_shape and explain_op to `m`.
void bind_registry(nb::module_& m);

}  // namespace multigather::python
