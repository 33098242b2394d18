"""ONNX's gathers on multigather (opset 13 semantics, ONNX Runtime's CPU reading).

- ``gather(data, indices, axis=0)``: onnx.Gather (https://onnx.ai/onnx/operators/onnx__Gather.html)
- ``gather_elements(data, indices, axis=0)``: onnx.GatherElements
  (https://onnx.ai/onnx/operators/onnx__GatherElements.html); indices dimensions other than
  ``axis`` may be smaller than data's and read its leading part (ONNX Runtime's rule).
- ``gather_nd(data, indices, batch_dims=0)``: onnx.GatherND
  (https://onnx.ai/onnx/operators/onnx__GatherND.html).
- ``scatter_elements(data, indices, updates, axis=0, reduction="none")``: onnx.ScatterElements
  (opset 18, https://onnx.ai/onnx/operators/onnx__ScatterElements.html).
- ``scatter_nd(data, indices, updates, reduction="none")``: onnx.ScatterND (opset 18,
  https://onnx.ai/onnx/operators/onnx__ScatterND.html).

Negative indices wrap once ([-s, s-1] is valid); anything else out of range is an IndexError
(ONNX: "it is an error"; ONNX Runtime CPU fails the run). Index dtypes are the opset-13
schemas': int32 or int64 for Gather and GatherElements, int64 for GatherND; any other dtype is a
TypeError (ONNX Runtime refuses such a model when it loads it).
"""

from __future__ import annotations

from typing import Any

from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("onnx.Gather", "axis")
_GATHER_ELEMENTS = fast_op("onnx.GatherElements", "axis")
_GATHER_ND = fast_op("onnx.GatherND", "batch_dims")

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]


def gather(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.Gather: output = data.shape[:axis] + indices.shape + data.shape[axis+1:],
    output[p, j, s] = data[p, indices[j], s]. data rank >= 1, any dtype; indices int32 or int64
    (the ONNX schema's types: uint32 and the other integer dtypes are TypeError). Every index is
    checked, also when the output is empty. Raises IndexError (index outside [-s, s-1]),
    ValueError (axis, rank), TypeError (dtypes)."""
    result = run_fast(_GATHER, data, indices, None, axis)
    if result is NotImplemented:
        result = run_general("onnx.Gather", data, indices, axis=axis)
    return result


def gather_elements(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.GatherElements: output.shape = indices.shape, output[p, j, s] =
    data[p, indices[p, j, s], s]. Same rank; indices.shape[d] <= data.shape[d] for d != axis
    (the leading part of data is read, never broadcast). indices int32 or int64. Raises
    IndexError, ValueError, TypeError as onnx.Gather."""
    result = run_fast(_GATHER_ELEMENTS, data, indices, None, axis)
    if result is NotImplemented:
        result = run_general("onnx.GatherElements", data, indices, axis=axis)
    return result


def gather_nd(data: Any, indices: Any, batch_dims: int = 0) -> Any:
    """onnx.GatherND: with data = B + Xk + T and indices = B + J + [k], output.shape = B + J + T,
    output[b, j, t] = data[b, indices[b, j, :], t]. 1 <= k <= rank - batch_dims; batch
    dimensions must be equal; indices int64 only. Raises IndexError, ValueError, TypeError as
    onnx.Gather."""
    result = run_fast(_GATHER_ND, data, indices, None, batch_dims)
    if result is NotImplemented:
        result = run_general("onnx.GatherND", data, indices, batch_dims=batch_dims)
    return result


def scatter_elements(data: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none") -> Any:
    """onnx.ScatterElements (opset 18): a new array of data's shape and dtype,
    output = data; output[p, indices[p, j, s], s] = f(output[..], updates[p, j, s]) (axis
    position), f per ``reduction``: "none" (assign), "add", "mul", "max", "min".
    data rank >= 1; indices int32 or int64 with data's rank; updates shape == indices shape and
    updates dtype == data dtype. indices.shape[d] must not exceed data.shape[d] for d != axis; a
    smaller size (ONNX Runtime writes a leading window) is refused as not supported yet
    (ValueError). Duplicates with reduction "none": ONNX leaves the result undefined; here the
    last update in row-major order of indices wins. Negative indices wrap once; anything else
    out of range is an IndexError. Raises ValueError (shapes, axis, reduction), TypeError
    (dtypes). Source: https://onnx.ai/onnx/operators/onnx__ScatterElements.html"""
    return run_scatter("onnx.ScatterElements", data, indices, updates, axis=axis, reduction=reduction)


def scatter_nd(data: Any, indices: Any, updates: Any, reduction: str = "none") -> Any:
    """onnx.ScatterND (opset 18): a new array of data's shape and dtype, output = data;
    output[indices[j, :], t] = f(output[..], updates[j, t]), with k = indices.shape[-1] in
    [1, rank(data)] and updates.shape == indices.shape[:-1] + data.shape[k:]; ``reduction``
    "none", "add", "mul", "max", "min". indices int64 only; updates dtype == data dtype.
    Duplicates with "none": undefined in ONNX, the last in row-major order wins here. Negative
    indices wrap once; out of range is an IndexError. Raises ValueError (shapes, reduction),
    TypeError (dtypes). Source: https://onnx.ai/onnx/operators/onnx__ScatterND.html"""
    return run_scatter("onnx.ScatterND", data, indices, updates, reduction=reduction)
