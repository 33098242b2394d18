"""The registry of ops: one name per framework gather ("onnx.GatherND", "torch.gather", ...).

When the C++ library has its op registry (multigather/ops.hpp, the frontends), every op runs
there: attributes travel as the texts the CLI takes, errors are the frontends' (in the
framework's terms). Without it, the Python lowerings registered here with ``register`` (numpy,
onnx, torch, tf, jax, stablehlo) are used; the other families need the C++ registry.
"""

from __future__ import annotations

import inspect
import operator
from typing import Any, Callable, Optional, Sequence

from . import _interop
from . import _multigather as _core
from ._lowering import Lowering, shape_of

LowerFn = Callable[..., Lowering]
OPS: dict[str, LowerFn] = {}

HAS_NATIVE_REGISTRY: bool = bool(getattr(_core, "has_registry", False))
NATIVE_OPS: dict[str, dict] = (
    {op["name"]: op for op in _core.registry_ops()} if HAS_NATIVE_REGISTRY else {}
)
_OPTIONAL_TYPES = {"int|none", "scalar|none"}


def register(name: str) -> Callable[[LowerFn], LowerFn]:
    """Decorator: registers ``fn(input_shape, indices_shape, **attrs) -> Lowering`` as the
    Python lowering of ``name`` (used when the C++ registry is absent)."""

    def add(fn: LowerFn) -> LowerFn:
        OPS[name] = fn
        return fn

    return add


def names() -> list[str]:
    """Every op that can run in this build, sorted."""
    return sorted(set(NATIVE_OPS) | set(OPS))


def _unknown(op: str) -> ValueError:
    return ValueError(f"unknown op '{op}' (known: {', '.join(names())})")


def attributes(op: str) -> list[str]:
    """The attribute names ``op`` accepts."""
    if op in NATIVE_OPS:
        return [a["name"] for a in NATIVE_OPS[op]["attrs"]]
    if op in OPS:
        return [p.name for p in list(inspect.signature(OPS[op]).parameters.values())[2:]]
    raise _unknown(op)


def _check_names(op: str, attrs: dict) -> None:
    known = attributes(op)
    for name in attrs:
        if name not in known:
            raise ValueError(f"{op} has no attribute '{name}' (attributes: {', '.join(known)})")


def _text(value: Any, name: str) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "__iter__"):
        return ",".join(str(operator.index(v)) for v in value)
    try:
        return str(operator.index(value))
    except TypeError:
        pass
    if hasattr(value, "item"):  # numpy scalars
        return _text(value.item(), name)
    raise TypeError(f"attribute {name} must be an int, float, bool, str or list of ints, "
                    f"not {type(value).__name__}")


def native_attributes(op: str, attrs: dict) -> list[tuple[str, str]]:
    """``attrs`` as (name, text) pairs for the C++ registry. None means "the default" except for
    the attributes whose type allows none (numpy.take's axis=None)."""
    _check_names(op, attrs)
    types = {a["name"]: a["type"] for a in NATIVE_OPS[op]["attrs"]}
    return [(name, _text(value, name)) for name, value in attrs.items()
            if value is not None or types[name] in _OPTIONAL_TYPES]


def lower(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
          **attrs: Any) -> Lowering:
    """The Python Lowering of ``op`` for these shapes; ValueError for an unknown op or attribute
    and for shapes and attributes that break the op's rules."""
    if op not in OPS:
        if op in NATIVE_OPS:
            raise ValueError(f"{op} has no Python lowering (it runs in the C++ registry)")
        raise _unknown(op)
    _check_names(op, attrs)
    return OPS[op](tuple(int(s) for s in input_shape), tuple(int(s) for s in indices_shape),
                   **attrs)


def run(op: str, input: Any, indices: Any, out: Any = None, **attrs: Any) -> Any:
    """Runs ``op`` on framework arrays (the C++ registry when present)."""
    if op in NATIVE_OPS:
        return _interop.call_core(_core.run_op, input, indices, out,
                                  op=op, attrs=native_attributes(op, attrs))
    return lower(op, shape_of(input), shape_of(indices), **attrs).run(input, indices, out=out)


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
                 input_dtype: str, indices_dtype: str, **attrs: Any) -> tuple[int, ...]:
    if op in NATIVE_OPS:
        return tuple(_core.lower_op_shape(op, list(input_shape), input_dtype,
                                          list(indices_shape), indices_dtype,
                                          native_attributes(op, attrs)))
    return None  # the caller uses the Python lowering


def explain(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
            input_dtype: str, indices_dtype: str, **attrs: Any) -> Optional[str]:
    if op in NATIVE_OPS:
        return _core.explain_op(op, list(input_shape), input_dtype, list(indices_shape),
                                indices_dtype, native_attributes(op, attrs))
    return None
