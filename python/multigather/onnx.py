"""ONNX's gathers and scatters on multigather (opset 13 / 18 semantics, ONNX Runtime's CPU
reading): ``gather``, ``gather_elements``, ``gather_nd``, ``scatter_elements``, ``scatter_nd``.
Each function's signature, formula, attributes and source document are its registry row's
(appended to its docstring from the C++ registry; ``multigather.explain("onnx.GatherND")``);
what a docstring says by hand is the rest: shape and dtype rules, duplicates, errors.

Negative indices wrap once ([-s, s-1] is valid); anything else out of range is an IndexError
(ONNX: "it is an error"; ONNX Runtime CPU fails the run). Index dtypes are the opset-13
schemas': int32 or int64 for Gather and GatherElements, int64 for GatherND; any other dtype is a
TypeError (ONNX Runtime refuses such a model when it loads it).
"""

from __future__ import annotations

from typing import Any

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("onnx.Gather", "axis")
_GATHER_ELEMENTS = fast_op("onnx.GatherElements", "axis")
_GATHER_ND = fast_op("onnx.GatherND", "batch_dims")

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]


def gather(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.Gather: output shape data.shape[:axis] + indices.shape + data.shape[axis+1:].
    data rank >= 1, any dtype; indices int32 or int64
    (the ONNX schema's types: uint32 and the other integer dtypes are TypeError). Every index is
    checked, also when the output is empty. Raises IndexError (index outside [-s, s-1]),
    ValueError (axis, rank), TypeError (dtypes)."""
    result = run_fast(_GATHER, data, indices, None, axis)
    if result is NotImplemented:
        result = run_general("onnx.Gather", data, indices, axis=axis)
    return result


def gather_elements(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.GatherElements: output shape indices.shape. Same rank; indices.shape[d] <=
    data.shape[d] for d != axis
    (the leading part of data is read, never broadcast). indices int32 or int64. Raises
    IndexError, ValueError, TypeError as onnx.Gather."""
    result = run_fast(_GATHER_ELEMENTS, data, indices, None, axis)
    if result is NotImplemented:
        result = run_general("onnx.GatherElements", data, indices, axis=axis)
    return result


def gather_nd(data: Any, indices: Any, batch_dims: int = 0) -> Any:
    """onnx.GatherND: with data = B + Xk + T and indices = B + J + [k], output shape B + J + T;
    1 <= k <= rank - batch_dims; batch dimensions must be equal; indices int64 only. Raises
    IndexError, ValueError, TypeError as onnx.Gather."""
    result = run_fast(_GATHER_ND, data, indices, None, batch_dims)
    if result is NotImplemented:
        result = run_general("onnx.GatherND", data, indices, batch_dims=batch_dims)
    return result


def scatter_elements(data: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none") -> Any:
    """onnx.ScatterElements (opset 18): a new array of data's shape and dtype; ``reduction``
    "none" (assign), "add", "mul", "max", "min". data rank >= 1; indices int32 or int64 with data's rank; updates shape == indices shape and
    updates dtype == data dtype. indices.shape[d] must not exceed data.shape[d] for d != axis; a
    smaller size (ONNX Runtime writes a leading window) is refused as not supported yet
    (ValueError). Duplicates with reduction "none": ONNX leaves the result undefined; here the
    last update in row-major order of indices wins. Negative indices wrap once; anything else
    out of range is an IndexError. Raises ValueError (shapes, axis, reduction), TypeError
    (dtypes)."""
    return run_scatter("onnx.ScatterElements", data, indices, updates, axis=axis, reduction=reduction)


def scatter_nd(data: Any, indices: Any, updates: Any, reduction: str = "none") -> Any:
    """onnx.ScatterND (opset 18): a new array of data's shape and dtype, with k =
    indices.shape[-1] in [1, rank(data)] and updates.shape == indices.shape[:-1] +
    data.shape[k:]; ``reduction``
    "none", "add", "mul", "max", "min". indices int64 only; updates dtype == data dtype.
    Duplicates with "none": undefined in ONNX, the last in row-major order wins here. Negative
    indices wrap once; out of range is an IndexError. Raises ValueError (shapes, reduction),
    TypeError (dtypes)."""
    return run_scatter("onnx.ScatterND", data, indices, updates, reduction=reduction)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
