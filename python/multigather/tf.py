"""TensorFlow's gathers and scatters on multigather, with TensorFlow's CPU rules.

- ``gather(params, indices, axis=None, batch_dims=0)``: tf.gather
  (https://www.tensorflow.org/api_docs/python/tf/gather)
- ``gather_nd(params, indices, batch_dims=0)``: tf.gather_nd
  (https://www.tensorflow.org/api_docs/python/tf/gather_nd)

- ``tensor_scatter_nd_update / _add / _sub / _min / _max(tensor, indices, updates)`` and
  ``scatter_nd(indices, updates, shape)``
  (https://www.tensorflow.org/api_docs/python/tf/tensor_scatter_nd_update, ...)
- ``unsorted_segment_sum / _prod / _max / _min / _mean / _sqrt_n(data, segment_ids,
  num_segments)`` and ``segment_sum / _prod / _max / _min / _mean(data, segment_ids)``:
  tf.math's segment reductions (https://www.tensorflow.org/api_docs/python/tf/math/segment_sum,
  ...), each one scatter of data into the reduction's identity

Indices must lie in [0, params.shape[axis]): negative indices are out of range (TensorFlow on
CPU raises InvalidArgumentError; here IndexError). TensorFlow on GPU writes zeros instead:
``multigather.gather_multiaxis(..., index_mode="fill")`` reproduces that.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as _np

from ._registry import document as _registry_document
from ._registry import DEFAULT, fast_op, op_function, run_fast, run_general, run_scatter

_GATHER = fast_op("tf.gather", "axis", "batch_dims", "index_mode")
_GATHER_ND = fast_op("tf.gather_nd", "batch_dims", "index_mode")

__all__ = ["gather", "gather_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
           "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max", "scatter_nd",
           "unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max", "unsorted_segment_min",
           "unsorted_segment_mean", "unsorted_segment_sqrt_n", "segment_sum", "segment_prod", "segment_max",
           "segment_min", "segment_mean"]


def gather(params: Any, indices: Any, axis: Optional[int] = None, batch_dims: int = 0) -> Any:
    """tf.gather(params, indices, axis=None, batch_dims=0) with TensorFlow's CPU index rule;
    ``multigather.run("tf.gather", ..., index_mode="fill")`` gives TF-GPU's zeros. The rules and
    the index rule are the registry row's (below)."""
    result = run_fast(_GATHER, params, indices, None, axis, batch_dims, DEFAULT)
    if result is NotImplemented:
        result = run_general("tf.gather", params, indices, axis=axis, batch_dims=batch_dims)
    return result


def gather_nd(params: Any, indices: Any, batch_dims: int = 0) -> Any:
    """tf.gather_nd(params, indices, batch_dims=0) with TensorFlow's CPU index rule;
    ``multigather.run("tf.gather_nd", ..., index_mode="fill")`` gives TF-GPU's zeros. The rules
    and the index rule are the registry row's (below)."""
    result = run_fast(_GATHER_ND, params, indices, None, batch_dims, DEFAULT)
    if result is NotImplemented:
        result = run_general("tf.gather_nd", params, indices, batch_dims=batch_dims)
    return result


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any) -> Any:
    """tf.tensor_scatter_nd_update(tensor, indices, updates): a new array of tensor's shape and
    dtype. TensorFlow's CPU index rule; ``multigather.run("tf.tensor_scatter_nd_update", ...,
    index_mode="drop")`` skips out-of-range updates as TF on GPU does. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("tf.tensor_scatter_nd_update", tensor, indices, updates)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any) -> Any:
    """tf.tensor_scatter_nd_add(tensor, indices, updates): a new array of tensor's shape and dtype.
    TensorFlow's CPU index rule; ``multigather.run("tf.tensor_scatter_nd_add", ...,
    index_mode="drop")`` skips out-of-range updates as TF on GPU does. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("tf.tensor_scatter_nd_add", tensor, indices, updates)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any) -> Any:
    """tf.tensor_scatter_nd_sub(tensor, indices, updates): a new array of tensor's shape and dtype.
    TensorFlow's CPU index rule; ``multigather.run("tf.tensor_scatter_nd_sub", ...,
    index_mode="drop")`` skips out-of-range updates as TF on GPU does. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("tf.tensor_scatter_nd_sub", tensor, indices, updates)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any) -> Any:
    """tf.tensor_scatter_nd_min(tensor, indices, updates): a new array of tensor's shape and dtype.
    TensorFlow's CPU index rule; ``multigather.run("tf.tensor_scatter_nd_min", ...,
    index_mode="drop")`` skips out-of-range updates as TF on GPU does. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("tf.tensor_scatter_nd_min", tensor, indices, updates)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any) -> Any:
    """tf.tensor_scatter_nd_max(tensor, indices, updates): a new array of tensor's shape and dtype.
    TensorFlow's CPU index rule; ``multigather.run("tf.tensor_scatter_nd_max", ...,
    index_mode="drop")`` skips out-of-range updates as TF on GPU does. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("tf.tensor_scatter_nd_max", tensor, indices, updates)


def scatter_nd(indices: Any, updates: Any, shape: Any) -> Any:
    """tf.scatter_nd(indices, updates, shape): a new array of ``shape`` and updates' dtype. The
    registry op takes the shape as its input operand ``output_like`` (a read-only broadcast array
    made here, never read); ``multigather.run("tf.scatter_nd", ..., index_mode="drop")`` skips
    out-of-range updates as TF on GPU does. The rules and the index rule are the registry row's
    (below)."""
    updates = _np.asarray(updates)
    # The registry's input operand: a read-only array of the output shape (never read).
    shape = _np.broadcast_to(_np.zeros((), dtype=updates.dtype),
                             tuple(int(s) for s in _np.asarray(shape).reshape(-1)))
    return run_scatter("tf.scatter_nd", shape, indices, updates)

# ---- tf.math.unsorted_segment_* (data, segment_ids, num_segments) and tf.math.segment_* --------
# (data, segment_ids): made from their rows. TensorFlow on CPU: a negative id drops its update, an
# id >= num_segments is an IndexError; segment_* wants sorted, non-negative ids (ValueError /
# IndexError otherwise) and reads them to size its output.
unsorted_segment_sum = op_function("tf.math.unsorted_segment_sum", "unsorted_segment_sum")
unsorted_segment_prod = op_function("tf.math.unsorted_segment_prod", "unsorted_segment_prod")
unsorted_segment_max = op_function("tf.math.unsorted_segment_max", "unsorted_segment_max")
unsorted_segment_min = op_function("tf.math.unsorted_segment_min", "unsorted_segment_min")
unsorted_segment_mean = op_function("tf.math.unsorted_segment_mean", "unsorted_segment_mean")
unsorted_segment_sqrt_n = op_function("tf.math.unsorted_segment_sqrt_n", "unsorted_segment_sqrt_n")
segment_sum = op_function("tf.math.segment_sum", "segment_sum")
segment_prod = op_function("tf.math.segment_prod", "segment_prod")
segment_max = op_function("tf.math.segment_max", "segment_max")
segment_min = op_function("tf.math.segment_min", "segment_min")
segment_mean = op_function("tf.math.segment_mean", "segment_mean")

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
