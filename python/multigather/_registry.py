"""The op registry of the C++ library (multigather/registry.hpp): one name per framework gather
("onnx.GatherND", "torch.gather", "stablehlo.gather", ...), each lowered onto one
gather_multiaxis call by the frontends and run by the one pipeline (lower_op -> execute).
Python passes the arrays through (zero-copy) and the attributes as typed Python values (ints,
lists of ints, bools, floats, strings, None); the C++ registry checks their names and types.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import _interop
from . import _jax_ffi
from . import _multigather as _core

#: Every registry op by name: family, signature, formula, source, attribute specs.
OPS: dict[str, dict] = {op["name"]: op for op in _core.registry_ops()}

#: The door (python/src/op_fast.cpp): run_op_fast(handle, input, indices, out, *attrs) (a
#: scatter op: handle, input, indices, updates, out, *attrs) with the attributes positionally in
#: the op's declaration order; NotImplemented only when no reader takes an operand as is (the
#: caller then normalizes it: run_general, _interop.call_door).
run_fast = _core.run_op_fast
#: Passed to run_fast for an attribute the caller did not give (the op's default applies).
DEFAULT = _core.default_attr

# op name -> (fast-path handle, attribute names in declaration order)
_FAST: dict[str, tuple[int, tuple[str, ...]]] = {}


def fast_op(op: str, *attr_names: str) -> int:
    """The run_fast handle of ``op``, whose attributes must be ``attr_names`` in declaration
    order (ValueError otherwise: a wrapper passes them positionally)."""
    return _core.op_handle(op, list(attr_names))


def _fast_entry(op: str) -> tuple[int, tuple[str, ...]] | None:
    entry = _FAST.get(op)
    if entry is None and op in OPS:
        names = tuple(a["name"] for a in OPS[op]["attrs"])
        entry = _FAST[op] = (fast_op(op, *names), names)
    return entry


def row_doc(op: str) -> str:
    """The docstring part that registry row ``op`` states (the one place of these facts): the
    framework signature, the formula in docs/spec.md's notation, each attribute with its default
    and meaning, the equivalence class and the source document."""
    row = OPS[op]
    lines = [f"Registry op {op!r} ({row['kind']}, class {row['equivalence_class']}): {row['signature']}",
             f"    {row['formula']}"]
    for a in row["attrs"]:
        default = f" = {a['default']}" if a["default"] != "" else ""
        choices = f" (one of {', '.join(a['choices'])})" if a["choices"] else ""
        lines.append(f"    {a['name']}{default}: {a['help']}{choices}")
    lines.append(f"Source: {row['source']}")
    return "\n".join(lines)


def registry_op_of(function: Any) -> str | None:
    """The registry op a wrapper function runs: the first registry op name among its constants
    (the op name it passes to run_general / run_scatter); None for a composition (embedding)."""
    for const in getattr(getattr(function, "__code__", None), "co_consts", ()):
        if isinstance(const, str) and const in OPS:
            return const
    return None


def document(namespace: dict, public: Sequence[str]) -> None:
    """Appends to each public wrapper of a family module (``namespace``: its globals) the facts
    of its registry row (row_doc), so that the module states none of them by hand: signature,
    formula, attributes and source come from the C++ row (multigather._multigather.registry_ops)."""
    for name in public:
        function = namespace[name]
        op = registry_op_of(function)
        if op is None:
            continue
        doc = (function.__doc__ or "").rstrip()
        # Indented as the hand-written lines after the first (PEP 257), so that help() and
        # inspect.getdoc show one margin.
        rows = "\n".join("    " + line for line in row_doc(op).splitlines())
        function.__doc__ = f"{doc}\n\n{rows}" if doc else row_doc(op)
        function.registry_op = op


def names() -> list[str]:
    """Every op of the registry, sorted."""
    return sorted(OPS)


def spec(op: str) -> dict:
    """The registry entry of ``op``; ValueError for an unknown op."""
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"unknown op '{op}' (known: {', '.join(names())})") from None


def is_scatter(op: str) -> bool:
    """Whether registry op ``op`` is a scatter (it takes updates)."""
    entry = OPS.get(op)
    return entry is not None and entry["kind"] == "scatter"


def run_general_call(op: str, input: Any, indices: Any, *, updates: Any = None, out: Any = None,
                     **attrs: Any) -> Any:
    """The fallback of ``multigather.run`` (the door, python/src/op_fast.cpp's run_door, calls
    it for every call its readers do not take as is): the registry's message for an unknown op,
    a missing or extra updates or an unknown attribute; JAX tracers through the XLA FFI; every
    other call normalized (_interop.call_door) and run through the door again."""
    if getattr(input, "requires_grad", False) or getattr(updates, "requires_grad", False):
        # registry ops run outside autograd: never a result silently without a grad_fn.
        _interop._no_grad_check(input if getattr(input, "requires_grad", False) else updates,
                                "input" if getattr(input, "requires_grad", False) else "updates")
    if updates is not None:
        return run_scatter_general(op, input, indices, updates, out, **attrs)
    return run_general(op, input, indices, out, **attrs)


#: run(op, input, indices, *, updates=None, out=None, **attrs): the door (multigather.run).
run = _core.run


def _door_attrs(op: str, attrs: dict, has_updates: bool) -> tuple[int, list[Any]]:
    """The door's handle of ``op`` and ``attrs`` in its declaration order (DEFAULT where not
    given). An unknown op, an attribute the op does not have, or updates given to a gather (or
    not given to a scatter) raise the registry's own message (lower_op's checks, which come
    before any lowering)."""
    entry = _FAST.get(op) or _fast_entry(op)
    if entry is None or is_scatter(op) != has_updates or any(k not in entry[1] for k in attrs):
        _core.lower_op_shape(op, [], "float32", [], "int64", attrs, [] if has_updates else None)
        raise ValueError(f"{op}: bad call")  # not reached: lower_op raised
    handle, names = entry
    return handle, [attrs.get(n, DEFAULT) for n in names]


def run_general(op: str, input: Any, indices: Any, out: Any = None, **attrs: Any) -> Any:
    """A gather op on any framework's arrays (the door's readers after normalization,
    _interop.call_door); JAX tracers (inside jit / grad / vmap / shard_map) through the XLA FFI
    (_jax_ffi)."""
    if _jax_ffi.traced(input, indices):
        return _jax_ffi.run(op, input, indices, None, out, attrs)
    handle, values = _door_attrs(op, attrs, False)
    return _interop.call_door(handle, input, indices, None, out, values)


def run_scatter(op: str, input: Any, indices: Any, updates: Any, out: Any = None,
                **attrs: Any) -> Any:
    """A scatter op on framework arrays; ``out`` may be ``input``. The door first (numpy arrays,
    lists, torch tensors, DLPack arrays: run_fast with the updates), else run_scatter_general."""
    entry = _FAST.get(op) or _fast_entry(op)
    if entry is not None:
        handle, names = entry
        if all(k in names for k in attrs):
            result = run_fast(handle, input, indices, updates, out, *[attrs.get(n, DEFAULT) for n in names])
            if result is not NotImplemented:
                return result
    return run_scatter_general(op, input, indices, updates, out, **attrs)


def run_scatter_general(op: str, input: Any, indices: Any, updates: Any, out: Any = None,
                        **attrs: Any) -> Any:
    """``run_general`` for a scatter op (JAX tracers through the XLA FFI)."""
    if _jax_ffi.traced(input, indices, updates):
        return _jax_ffi.run(op, input, indices, updates, out, attrs)
    handle, values = _door_attrs(op, attrs, True)
    return _interop.call_door(handle, input, indices, updates, out, values)


def _shape(values: Sequence[int] | None) -> list[int] | None:
    return None if values is None else [int(s) for s in values]


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
                 input_dtype: str, indices_dtype: str, updates_shape: Sequence[int] | None = None,
                 **attrs: Any) -> tuple[int, ...]:
    return tuple(_core.lower_op_shape(op, [int(s) for s in input_shape], input_dtype,
                                      [int(s) for s in indices_shape], indices_dtype, attrs,
                                      _shape(updates_shape)))


def explain(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
            input_dtype: str, indices_dtype: str, updates_shape: Sequence[int] | None = None,
            **attrs: Any) -> str:
    return _core.explain_op(op, [int(s) for s in input_shape], input_dtype,
                            [int(s) for s in indices_shape], indices_dtype, attrs,
                            _shape(updates_shape))
