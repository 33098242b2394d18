"""TOSA's GATHER on multigather: ``gather(values, indices)`` with values [N,K,C], indices [N,W]
-> output [N,W,C], output[n,w,c] = values[n, indices[n,w], c]. Negative and out-of-range
indices are errors (TOSA: REQUIRE fails). Runs in the C++ op registry (the frontends).
Source: https://www.mlplatform.org/tosa/tosa_spec.html#_gather

``scatter(values_in, indices, input)``: TOSA SCATTER, the dual (#_scatter).
"""

from __future__ import annotations

from typing import Any

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("tosa.gather")

__all__ = ["gather", "scatter"]


def gather(values: Any, indices: Any) -> Any:
    """tosa.gather: output[n, w, c] = values[n, indices[n, w], c]."""
    result = run_fast(_GATHER, values, indices, None)
    if result is NotImplemented:
        result = run_general("tosa.gather", values, indices)
    return result


def scatter(values_in: Any, indices: Any, input: Any) -> Any:
    """tosa.scatter (TOSA SCATTER): a new array values_out of values_in's shape and dtype,
    values_out = values_in; values_out[n, indices[n, w], c] = input[n, w, c].
    Shapes: values_in [N,K,C], indices [N,W], input [N,W,C]. Dtypes: indices int32 (int64
    accepted), input of values_in's dtype. Indices must lie in [0, K) (TOSA REQUIRE; negatives
    are errors): IndexError otherwise. Duplicates: TOSA REQUIREs each [n, k] to be written at
    most once; multigather does not check it and the last update in row-major order of indices
    wins. Raises ValueError (ranks, shapes), TypeError (dtypes), IndexError (range).
    Source: https://www.mlplatform.org/tosa/tosa_spec.html#_scatter (SCATTER.tosac)"""
    return run_scatter("tosa.scatter", values_in, indices, input)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
