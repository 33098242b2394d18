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

from ._registry import DEFAULT, fast_op, run_fast, run_general

_GATHER = fast_op("tf.gather", "axis", "batch_dims", "index_mode")
_GATHER_ND = fast_op("tf.gather_nd", "batch_dims", "index_mode")

__all__ = ["gather", "gather_nd"]


def gather(params: Any, indices: Any, axis: Optional[int] = None, batch_dims: int = 0) -> Any:
    """tf.gather: output.shape = params.shape[:axis] + indices.shape[batch_dims:] +
    params.shape[axis+1:]; the first batch_dims dimensions of params and indices are paired
    (equal sizes). axis defaults to batch_dims (as given: a negative batch_dims then counts from
    params' rank for the axis and from indices' rank for the batch dims, as in TensorFlow).
    Indices in [0, params.shape[axis]) (negatives are out of range). Raises IndexError,
    ValueError (axis, batch_dims, shapes), TypeError (dtypes)."""
    result = run_fast(_GATHER, params, indices, None, axis, batch_dims, DEFAULT)
    if result is NotImplemented:
        result = run_general("tf.gather", params, indices, axis=axis, batch_dims=batch_dims)
    return result


def gather_nd(params: Any, indices: Any, batch_dims: int = 0) -> Any:
    """tf.gather_nd: with params = B + Xk + T and indices = B + J + [k], output.shape =
    B + J + T, output[b, j, t] = params[b, indices[b, j, :], t]. Indices in [0, size).
    Raises IndexError, ValueError, TypeError as tf.gather."""
    result = run_fast(_GATHER_ND, params, indices, None, batch_dims, DEFAULT)
    if result is NotImplemented:
        result = run_general("tf.gather_nd", params, indices, batch_dims=batch_dims)
    return result
