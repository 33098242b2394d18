"""ONNX's gathers on multigather (opset 13 semantics, ONNX Runtime's CPU reading).

- ``gather(data, indices, axis=0)``: onnx.Gather (https://onnx.ai/onnx/operators/onnx__Gather.html)
- ``gather_elements(data, indices, axis=0)``: onnx.GatherElements
  (https://onnx.ai/onnx/operators/onnx__GatherElements.html); indices dimensions other than
  ``axis`` may be smaller than data's and read its leading part (ONNX Runtime's rule).
- ``gather_nd(data, indices, batch_dims=0)``: onnx.GatherND
  (https://onnx.ai/onnx/operators/onnx__GatherND.html).

Negative indices wrap once ([-s, s-1] is valid); anything else out of range is an IndexError
(ONNX: "it is an error"; ONNX Runtime CPU fails the run).
"""

from __future__ import annotations

from typing import Any

from ._lowering import Lowering, block, elements, nd, normalize_axis
from ._registry import register, run

__all__ = ["gather", "gather_elements", "gather_nd"]

_POLICY = dict(index_mode="error", negative_indices=True)


@register("onnx.Gather")
def lower_gather(data_shape, indices_shape, axis: int = 0) -> Lowering:
    if len(data_shape) < 1:
        raise ValueError("onnx.Gather: data must have rank >= 1 (got rank 0)")
    a = normalize_axis("onnx.Gather", "axis", axis, len(data_shape))
    return block("onnx.Gather", data_shape, indices_shape, a,
                 rule="out[p, j, s] = data[p, indices[j], s]", **_POLICY)


def gather(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.Gather: output = data.shape[:axis] + indices.shape + data.shape[axis+1:],
    output[p, j, s] = data[p, indices[j], s]. data rank >= 1, any dtype; integer indices (ONNX
    allows int32 and int64; every integer dtype is accepted here). Raises IndexError (index
    outside [-s, s-1]), ValueError (axis, rank), TypeError (dtypes)."""
    return run("onnx.Gather", data, indices, axis=axis)


@register("onnx.GatherElements")
def lower_gather_elements(data_shape, indices_shape, axis: int = 0) -> Lowering:
    r = len(data_shape)
    if r < 1:
        raise ValueError("onnx.GatherElements: data must have rank >= 1 (got rank 0)")
    if len(indices_shape) != r:
        raise ValueError(f"onnx.GatherElements: indices rank {len(indices_shape)} must equal "
                         f"data rank {r}")
    a = normalize_axis("onnx.GatherElements", "axis", axis, r)
    for d in range(r):
        if d != a and indices_shape[d] > data_shape[d]:
            raise ValueError(f"onnx.GatherElements: indices.shape[{d}] = {indices_shape[d]} "
                             f"exceeds data.shape[{d}] = {data_shape[d]} (dimension {d} is not "
                             "the axis)")
    return elements("onnx.GatherElements", data_shape, indices_shape, a, leading_part=True,
                    rule="out[p, j, s] = data[p, indices[p, j, s], s], out.shape = indices.shape",
                    **_POLICY)


def gather_elements(data: Any, indices: Any, axis: int = 0) -> Any:
    """onnx.GatherElements: output.shape = indices.shape, output[p, j, s] =
    data[p, indices[p, j, s], s]. Same rank; indices.shape[d] <= data.shape[d] for d != axis
    (the leading part of data is read, never broadcast). Raises IndexError, ValueError,
    TypeError as onnx.Gather."""
    return run("onnx.GatherElements", data, indices, axis=axis)


@register("onnx.GatherND")
def lower_gather_nd(data_shape, indices_shape, batch_dims: int = 0) -> Lowering:
    r, q, b = len(data_shape), len(indices_shape), batch_dims
    if r < 1 or q < 1:
        raise ValueError(f"onnx.GatherND: data and indices must have rank >= 1 (got {r} and {q})")
    if not 0 <= b < min(q, r):
        raise ValueError(f"onnx.GatherND: batch_dims {b} must be in [0, min(indices rank {q}, "
                         f"data rank {r}))")
    if tuple(data_shape[:b]) != tuple(indices_shape[:b]):
        raise ValueError(f"onnx.GatherND: the first batch_dims={b} dimensions of data "
                         f"{list(data_shape)} and indices {list(indices_shape)} must be equal")
    return nd("onnx.GatherND", data_shape, indices_shape, b,
              rule="out[b, j, t] = data[b, indices[b, j, :], t]", **_POLICY)


def gather_nd(data: Any, indices: Any, batch_dims: int = 0) -> Any:
    """onnx.GatherND: with data = B + Xk + T and indices = B + J + [k], output.shape = B + J + T,
    output[b, j, t] = data[b, indices[b, j, :], t]. 1 <= k <= rank - batch_dims; batch
    dimensions must be equal. Raises IndexError, ValueError, TypeError as onnx.Gather."""
    return run("onnx.GatherND", data, indices, batch_dims=batch_dims)
