"""WebNN's gathers on multigather, with WebNN's names: ``gather(input, indices, axis=0)``,
``gather_elements(input, indices, axis=0)`` (gatherElements), ``gather_nd(input, indices)``
(gatherND). Negative indices wrap once, then out-of-range indices clamp to [0, N-1] (what the
web-platform-tests expect). They run in the C++ op registry (the frontends).
Source: https://www.w3.org/TR/webnn/ (gather, gatherElements, gatherND).
"""

from __future__ import annotations

from typing import Any

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("webnn.gather", "axis")
_GATHER_ELEMENTS = fast_op("webnn.gatherElements", "axis")
_GATHER_ND = fast_op("webnn.gatherND")

__all__ = ["gather", "gather_elements", "gather_nd"]


def gather(input: Any, indices: Any, axis: int = 0) -> Any:
    """webnn gather: out = input.shape[:axis] + indices.shape + input.shape[axis+1:]."""
    result = run_fast(_GATHER, input, indices, None, axis)
    if result is NotImplemented:
        result = run_general("webnn.gather", input, indices, axis=axis)
    return result


def gather_elements(input: Any, indices: Any, axis: int = 0) -> Any:
    """webnn gatherElements: out.shape = indices.shape; dims other than axis must be equal."""
    result = run_fast(_GATHER_ELEMENTS, input, indices, None, axis)
    if result is NotImplemented:
        result = run_general("webnn.gatherElements", input, indices, axis=axis)
    return result


def gather_nd(input: Any, indices: Any) -> Any:
    """webnn gatherND: out = indices.shape[:-1] + input.shape[indices.shape[-1]:]."""
    result = run_fast(_GATHER_ND, input, indices, None)
    if result is NotImplemented:
        result = run_general("webnn.gatherND", input, indices)
    return result
