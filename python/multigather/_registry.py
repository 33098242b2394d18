"""The registry of ops: one name per framework gather ("onnx.GatherND", "torch.gather", ...),
each a function from shapes and attributes to a Lowering. ``multigather.run``, ``explain`` and
``output_shape`` read it; each framework module registers its ops when imported.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from ._lowering import Lowering

LowerFn = Callable[..., Lowering]
OPS: dict[str, LowerFn] = {}


def register(name: str) -> Callable[[LowerFn], LowerFn]:
    """Decorator: registers ``fn(input_shape, indices_shape, **attrs) -> Lowering`` as ``name``."""

    def add(fn: LowerFn) -> LowerFn:
        OPS[name] = fn
        return fn

    return add


def attributes(op: str) -> list[str]:
    """The attribute names ``op`` accepts, in signature order."""
    params = list(inspect.signature(_find(op)).parameters.values())[2:]
    return [p.name for p in params]


def _find(op: str) -> LowerFn:
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"unknown op '{op}' (known: {', '.join(sorted(OPS))})") from None


def lower(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
          **attrs: Any) -> Lowering:
    """The Lowering of ``op`` for these shapes; ValueError for an unknown op or attribute and
    for shapes and attributes that break the op's rules."""
    fn = _find(op)
    known = attributes(op)
    for name in attrs:
        if name not in known:
            raise ValueError(f"{op} has no attribute '{name}' (attributes: {', '.join(known)})")
    return fn(tuple(int(s) for s in input_shape), tuple(int(s) for s in indices_shape), **attrs)
