// python/src/numpy_fast.hpp: the per-call fast paths for plain arrays.
//
// numpy_fast.cpp: the NumPy helpers below (the only file that includes NumPy's headers).
// op_fast.cpp: the door (run_op_fast; multigather.run), whose numpy reader these helpers are.
#pragma once

#include <nanobind/nanobind.h>

#include <Python.h>

#include <cstdint>

#include "multigather/multigather.hpp"

namespace multigather::python {

/// Adds `has_numpy_fast_path` and the registry fast path (op_fast_bindings.cpp: `op_handle`,
/// `run_op_fast`, `run`, `default_attr`, `output_memory_stats`, ...) to the module
/// (imports the NumPy C API when the build found NumPy's headers).
void bind_numpy_fast(nanobind::module_& m);

/// op_fast_bindings.cpp's part of bind_numpy_fast.
void bind_op_fast(nanobind::module_& m);

/// Adds the METH_FASTCALL function `def` (static storage) to the module as `def->ml_name`
/// (run_op_fast, run: no nanobind argument binding on the per-call path).
void add_fastcall_function(nanobind::module_& m, PyMethodDef* def);

/// Whether the NumPy C API was imported (the fast paths are off otherwise).
bool numpy_fast_ready() noexcept;

/// Outputs of at least this many bytes are computed with the GIL released.
inline constexpr std::int64_t kReleaseGilBytes = std::int64_t{64} << 10;

/// A view of an exact numpy ndarray of a native dtype; false (no Python error set) when the
/// fast path does not take it (another type, byte order, dtype, partial-element strides).
bool ndarray_view(PyObject* object, TensorView* view);
/// As ndarray_view, for a writable ndarray.
bool ndarray_mutable_view(PyObject* object, MutableTensorView* view);

/// np.asarray(object) for a Python list, tuple, int or float (a new reference); null with no
/// Python error set for any other object or when numpy cannot convert it.
PyObject* ndarray_from_sequence(PyObject* object);

/// The dtype (a new reference) of an ndarray that ndarray_view took.
PyObject* ndarray_descr(PyObject* array);

/// The numpy dtype (a new reference) of a DType that numpy has natively; null otherwise.
PyObject* numpy_descr_of(DType dtype);

/// A new C-contiguous ndarray of `shape` with dtype `descr` (stolen; multigather's `dtype`, which
/// a MemoryError names): outputs of
/// kOutputCacheMinBytes and more live in allocate_output_memory's blocks (freed back to its
/// cache with the array), smaller ones in numpy's own memory. Null with a Python error set on
/// failure. *data receives the array's data pointer.
PyObject* new_output_ndarray(PyObject* descr, DType dtype, const Dims& shape, void** data);

}  // namespace multigather::python
