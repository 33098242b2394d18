// python/src/op_bindings.hpp: the one pipeline from Python (multigather/execute.hpp).
//
// Every call from Python, the core operator (`gather`) and every registry op (`run_op`), goes
//   arrays (DLPack / buffer protocol, zero-copy views) + typed attributes (Python ints, lists,
//   bools, floats, strings, None: no text) -> lower_op -> execute(Lowering, output, context)
// with the device taken from where the arrays live (CPU, or CUDA in a CUDA build).
#pragma once

#include <nanobind/nanobind.h>

#include "multigather/ops.hpp"

namespace multigather::python {

namespace nb = nanobind;

/// A Python dict of attributes as typed Attributes: None -> none (the default), bool -> bool,
/// int or any __index__ object (numpy integers) -> int (beyond int64: a scalar), float ->
/// scalar, str -> enum choice, any other iterable -> int list (each through __index__).
/// TypeError for anything else, naming the attribute.
Attributes attributes_of(nb::handle attrs);

/// Adds gather, registry_ops, run_op, lower_op_shape and explain_op to `m`.
void bind_ops(nb::module_& m);

/// Adds jax_ffi_handlers to `m`: the XLA FFI handlers (jax_ffi.cpp) as capsules, by platform.
void bind_jax_ffi(nb::module_& m);

}  // namespace multigather::python
