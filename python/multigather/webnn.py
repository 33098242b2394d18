"""WebNN's gathers and scatters on multigather, with WebNN's names: ``gather(input, indices,
axis=0)``, ``gather_elements(input, indices, axis=0)`` (gatherElements), ``gather_nd(input,
indices)`` (gatherND), ``scatter_elements(input, indices, updates, axis=0)`` (scatterElements),
``scatter_nd(input, indices, updates)`` (scatterND). Negative indices wrap once, then out-of-range indices clamp to [0, N-1] (what the
web-platform-tests expect). They run in the C++ op registry (the frontends).
Source: https://www.w3.org/TR/webnn/ (gather, gatherElements, gatherND, scatterElements, scatterND).
"""

from __future__ import annotations

from typing import Any

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("webnn.gather", "axis")
_GATHER_ELEMENTS = fast_op("webnn.gatherElements", "axis")
_GATHER_ND = fast_op("webnn.gatherND")

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]


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


def scatter_elements(input: Any, indices: Any, updates: Any, axis: int = 0) -> Any:
    """webnn scatterElements: a new array of input's shape and dtype, output = input;
    output[i][indices[i][j][k]][k] = updates[i][j][k] (axis 1).
    input rank >= 1; axis unsigned and < rank; indices int32, uint32 or int64 with input's rank
    and input's sizes on every dimension but axis; updates shape == indices shape, updates dtype
    == input dtype. Negative indices wrap once, then out-of-range values clamp to [0, N-1] (the
    web-platform-tests' rule). Duplicates: unspecified by WebNN; the last update in row-major
    order of indices wins here. Raises ValueError (ranks, shapes, axis), TypeError (dtypes).
    Source: https://www.w3.org/TR/webnn/#api-mlgraphbuilder-scatterelements"""
    return run_scatter("webnn.scatterElements", input, indices, updates, axis=axis)


def scatter_nd(input: Any, indices: Any, updates: Any) -> Any:
    """webnn scatterND: a new array of input's shape and dtype, output = input;
    output[indices[j, 0], ..., indices[j, c-1], t] = updates[j, t] with c = indices.shape[-1]
    <= rank(input) and updates.shape == indices.shape[:-1] + input.shape[c:]. Index dtypes,
    wrap-then-clamp rule and duplicates (last wins) as scatter_elements. Raises ValueError
    (ranks, shapes), TypeError (dtypes).
    Source: https://www.w3.org/TR/webnn/#api-mlgraphbuilder-scatternd"""
    return run_scatter("webnn.scatterND", input, indices, updates)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
