"""TensorFlow's gathers on multigather, with TensorFlow's CPU rules.

- ``gather(params, indices, axis=None, batch_dims=0)``: tf.gather
  (https://www.tensorflow.org/api_docs/python/tf/gather)
- ``gather_nd(params, indices, batch_dims=0)``: tf.gather_nd
  (https://www.tensorflow.org/api_docs/python/tf/gather_nd)

Indices must lie in [0, params.shape[axis]): negative indices are out of range (TensorFlow on
CPU raises InvalidArgumentError; here IndexError). TensorFlow on GPU writes zeros instead:
``multigather.gather_multiaxis(..., index_mode="fill")`` reproduces that.
"""

from __future__ import annotations

from typing import Any, Optional

from ._lowering import Lowering, block, nd, normalize_axis
from ._registry import register, run

__all__ = ["gather", "gather_nd"]

_POLICY = dict(index_mode="error", negative_indices=False)


def _batch_dims(op: str, batch_dims: int, q: int) -> int:
    b = batch_dims + q if batch_dims < 0 else batch_dims
    if not 0 <= b <= q:
        raise ValueError(f"{op}: batch_dims {batch_dims} must be in [-{q}, {q}] for indices "
                         f"rank {q}")
    return b


def _check_batch(op: str, params_shape, indices_shape, b: int) -> None:
    if tuple(params_shape[:b]) != tuple(indices_shape[:b]):
        raise ValueError(f"{op}: params.shape[:{b}] = {list(params_shape[:b])} must equal "
                         f"indices.shape[:{b}] = {list(indices_shape[:b])} (batch_dims={b})")


@register("tf.gather")
def lower_gather(params_shape, indices_shape, axis: Optional[int] = None,
                 batch_dims: int = 0) -> Lowering:
    r, q = len(params_shape), len(indices_shape)
    if axis is None:
        axis = batch_dims  # TensorFlow's default, before either is normalized
    b = _batch_dims("tf.gather", batch_dims, q)
    if r < 1:
        raise ValueError("tf.gather: params must have rank >= 1 (got rank 0)")
    a = normalize_axis("tf.gather", "axis", axis, r)
    if a < b:
        raise ValueError(f"tf.gather: batch_dims ({b}) must be less than or equal to axis ({a})")
    _check_batch("tf.gather", params_shape, indices_shape, b)
    return block("tf.gather", params_shape, indices_shape, a, batch_dims=b,
                 rule="out[p, j, s] = params[p, indices[p_batch, j], s]", **_POLICY)


def gather(params: Any, indices: Any, axis: Optional[int] = None, batch_dims: int = 0) -> Any:
    """tf.gather: output.shape = params.shape[:axis] + indices.shape[batch_dims:] +
    params.shape[axis+1:]; the first batch_dims dimensions of params and indices are paired
    (equal sizes). axis defaults to batch_dims (as given: a negative batch_dims then counts from
    params' rank for the axis and from indices' rank for the batch dims, as in TensorFlow).
    Indices in [0, params.shape[axis]) (negatives are out of range). Raises IndexError,
    ValueError (axis, batch_dims, shapes), TypeError (dtypes)."""
    return run("tf.gather", params, indices, axis=axis, batch_dims=batch_dims)


@register("tf.gather_nd")
def lower_gather_nd(params_shape, indices_shape, batch_dims: int = 0) -> Lowering:
    q = len(indices_shape)
    if q < 1:
        raise ValueError("tf.gather_nd: indices must have rank >= 1 (got rank 0)")
    b = batch_dims
    if not 0 <= b < q:
        raise ValueError(f"tf.gather_nd: batch_dims {b} must be in [0, indices rank {q})")
    _check_batch("tf.gather_nd", params_shape, indices_shape, b)
    return nd("tf.gather_nd", params_shape, indices_shape, b,
              rule="out[b, j, t] = params[b, indices[b, j, :], t]", **_POLICY)


def gather_nd(params: Any, indices: Any, batch_dims: int = 0) -> Any:
    """tf.gather_nd: with params = B + Xk + T and indices = B + J + [k], output.shape =
    B + J + T, output[b, j, t] = params[b, indices[b, j, :], t]. Indices in [0, size).
    Raises IndexError, ValueError, TypeError as tf.gather."""
    return run("tf.gather_nd", params, indices, batch_dims=batch_dims)
