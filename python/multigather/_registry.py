"""The op registry of the C++ library (multigather/ops.hpp): one name per framework gather
("onnx.GatherND", "torch.gather", "stablehlo.gather", ...), each lowered onto one
gather_multiaxis call by the frontends. Python passes the arrays through (zero-copy) and the
attributes as the texts the CLI takes ("1", "0,2", "none", "clip", "nan", "true").
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from . import _interop
from . import _multigather as _core

#: Every registry op by name: family, signature, formula, source, attribute specs.
OPS: dict[str, dict] = {op["name"]: op for op in _core.registry_ops()}
_OPTIONAL_TYPES = {"int|none", "scalar|none"}


def names() -> list[str]:
    """Every op of the registry, sorted."""
    return sorted(OPS)


def spec(op: str) -> dict:
    """The registry entry of ``op``; ValueError for an unknown op."""
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"unknown op '{op}' (known: {', '.join(names())})") from None


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


def attribute_texts(op: str, attrs: dict) -> list[tuple[str, str]]:
    """``attrs`` as (name, text) pairs for the registry. None means "the default" except for
    the attributes whose type allows none (numpy.take's axis=None). ValueError for a name the
    op does not have."""
    types = {a["name"]: a["type"] for a in spec(op)["attrs"]}
    for name in attrs:
        if name not in types:
            raise ValueError(f"{op} has no attribute '{name}' (attributes: {', '.join(types)})")
    return [(name, _text(value, name)) for name, value in attrs.items()
            if value is not None or types[name] in _OPTIONAL_TYPES]


def run(op: str, input: Any, indices: Any, out: Any = None, **attrs: Any) -> Any:
    """Runs registry op ``op`` on framework arrays (see ``multigather.run``)."""
    texts = attribute_texts(op, attrs)
    return _interop.call_core(_core.run_op, input, indices, out, op=op, attrs=texts)


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
                 input_dtype: str, indices_dtype: str, **attrs: Any) -> tuple[int, ...]:
    texts = attribute_texts(op, attrs)
    return tuple(_core.lower_op_shape(op, [int(s) for s in input_shape], input_dtype,
                                      [int(s) for s in indices_shape], indices_dtype, texts))


def explain(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
            input_dtype: str, indices_dtype: str, **attrs: Any) -> str:
    texts = attribute_texts(op, attrs)
    return _core.explain_op(op, [int(s) for s in input_shape], input_dtype,
                            [int(s) for s in indices_shape], indices_dtype, texts)
