// python/src/numpy_fast.hpp: the NumPy C-API fast path of gather_multiaxis (numpy_fast.cpp).
#pragma once

#include <nanobind/nanobind.h>

namespace multigather::python {

/// Adds `gather_numpy` and `has_numpy_fast_path` to the module (imports the NumPy C API when
/// the build found NumPy's headers).
void bind_numpy_fast(nanobind::module_& m);

}  // namespace multigather::python
