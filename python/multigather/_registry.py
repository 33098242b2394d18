"""The op registry of the C++ library (multigather/registry.hpp): one name per framework gather
("onnx.GatherND", "torch.gather", "stablehlo.gather", ...), each lowered onto one
gather_multiaxis call by the frontends and run by the one pipeline (lower_op -> execute).
Python passes the arrays through (zero-copy) and the attributes as typed Python values (ints,
lists of ints, bools, floats, strings, None); the C++ registry checks their names and types.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import _interop
from . import _multigather as _core

#: Every registry op by name: family, signature, formula, source, attribute specs.
OPS: dict[str, dict] = {op["name"]: op for op in _core.registry_ops()}


def names() -> list[str]:
    """Every op of the registry, sorted."""
    return sorted(OPS)


def spec(op: str) -> dict:
    """The registry entry of ``op``; ValueError for an unknown op."""
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"unknown op '{op}' (known: {', '.join(names())})") from None


def run(op: str, input: Any, indices: Any, out: Any = None, **attrs: Any) -> Any:
    """Runs registry op ``op`` on framework arrays (see ``multigather.run``)."""
    return _interop.call_core(_core.run_op, input, indices, out, op=op, attrs=attrs)


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
                 input_dtype: str, indices_dtype: str, **attrs: Any) -> tuple[int, ...]:
    return tuple(_core.lower_op_shape(op, [int(s) for s in input_shape], input_dtype,
                                      [int(s) for s in indices_shape], indices_dtype, attrs))


def explain(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
            input_dtype: str, indices_dtype: str, **attrs: Any) -> str:
    return _core.explain_op(op, [int(s) for s in input_shape], input_dtype,
                            [int(s) for s in indices_shape], indices_dtype, attrs)
