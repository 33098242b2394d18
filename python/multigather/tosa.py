"""TOSA's GATHER on multigather: ``gather(values, indices)`` with values [N,K,C], indices [N,W]
-> output [N,W,C], output[n,w,c] = values[n, indices[n,w], c]. Negative and out-of-range
indices are errors (TOSA: REQUIRE fails). Runs in the C++ op registry (the frontends).
Source: https://www.mlplatform.org/tosa/tosa_spec.html#_gather
"""

from __future__ import annotations

from typing import Any

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("tosa.gather")

__all__ = ["gather"]


def gather(values: Any, indices: Any) -> Any:
    """tosa.gather: output[n, w, c] = values[n, indices[n, w], c]."""
    result = run_fast(_GATHER, values, indices, None)
    if result is NotImplemented:
        result = run_general("tosa.gather", values, indices)
    return result
