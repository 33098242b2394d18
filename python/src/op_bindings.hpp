// python/src/op_bindings.hpp: the registry from Python (its rows, shapes-only lowerings,
// explain) and the typed attributes of a call.
//
// Every call from Python runs through ONE function, the door (op_fast.cpp: run_op_fast, and
// multigather.run on top of it): readers turn operands into views (numpy's C API, torch tensors,
// lists, DLPack / the buffer protocol; host or CUDA memory), a cached Lowering (keyed by op,
// shapes, strides, dtypes, device and attributes) goes to execute.
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

/// One attribute value as attributes_of converts it (the door's conversion of a value its cache
/// key does not encode). TypeError / ValueError naming attribute `name`.
AttrArg attr_arg_of(const std::string& name, nb::handle value);

/// Adds registry_ops, lower_op_shape, lower_op_info, explain_op and explain_svg to `m`.
void bind_ops(nb::module_& m);

/// Adds jax_ffi_handlers to `m`: the XLA FFI handlers (jax_ffi.cpp) as capsules, by platform.
void bind_jax_ffi(nb::module_& m);

}  // namespace multigather::python
