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

import sys as _sys

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
# (data, segment_ids): each runs its row. TensorFlow on CPU: a negative id drops its update, an id
# >= num_segments is an error; segment_* wants sorted, non-negative ids and reads them to size its
# output. The wrappers add what TensorFlow does around its kernels: its exception type (below),
# tf.GradientTape gradients by TensorFlow's rules (tensorflow/python/ops/math_grad.py), and the
# integer means (segment_mean: truncating division in data's dtype; unsorted_segment_mean: a
# float quotient, as its Python definition in math_ops.py computes it).
_unsorted_rows = {r: op_function(f"tf.math.unsorted_segment_{r}", f"unsorted_segment_{r}")
                  for r in ("sum", "prod", "max", "min", "mean", "sqrt_n")}
_sorted_rows = {r: op_function(f"tf.math.segment_{r}", f"segment_{r}") for r in ("sum", "prod", "max", "min", "mean")}

#: builtin class of our error -> the class raised when tensorflow is imported: TensorFlow's
#: tf.errors.InvalidArgumentError (what its kernels raise in eager mode) and ours both.
_TF_ERROR_CLASSES: dict = {}


def _tf():
    """The tensorflow module when it is imported (multigather never imports it)."""
    return _sys.modules.get("tensorflow")


def _as_tf_error(error: Exception) -> Exception:
    """``error`` (ValueError, IndexError, TypeError of the row) as an exception that is both
    tf.errors.InvalidArgumentError (TensorFlow's, in eager mode) and ``type(error)``; ``error``
    itself when tensorflow is not imported."""
    tf = _tf()
    if tf is None:
        return error
    base = type(error)
    cls = _TF_ERROR_CLASSES.get(base)
    if cls is None:
        cls = type("InvalidArgumentError", (tf.errors.InvalidArgumentError, base),
                   {"__module__": __name__,
                    "__doc__": f"tf.errors.InvalidArgumentError that is also {base.__name__} (multigather's class)."})
        _TF_ERROR_CLASSES[base] = cls
    return cls(None, None, str(error))


def _is_tf(value: Any) -> bool:
    return type(value).__module__.startswith("tensorflow")


def _on_cuda(value: Any) -> bool:
    """Whether ``value`` exports CUDA memory through DLPack (kDLCUDA, kDLCUDAManaged)."""
    device = getattr(value, "__dlpack_device__", None)
    try:
        return callable(device) and device()[0] in (2, 13)
    except Exception:  # an array that cannot say: the row's own error follows
        return False


def _run(row: Any, data: Any, segment_ids: Any, *num_segments: Any) -> Any:
    """The row's function, its errors in TensorFlow's type when tensorflow is imported."""
    try:
        return row(data, segment_ids, *num_segments)
    except (ValueError, IndexError, TypeError) as error:
        raise _as_tf_error(error) from None


def _tensors(data: Any, segment_ids: Any) -> tuple:
    """tf.Variables as tensors (the rows read tensors); everything else as given."""
    tf = _tf()
    if tf is not None:
        if isinstance(data, tf.Variable):
            data = tf.convert_to_tensor(data)
        if isinstance(segment_ids, tf.Variable):
            segment_ids = tf.convert_to_tensor(segment_ids)
    return data, segment_ids


def _recording() -> bool:
    """Whether a tf.GradientTape (or forward accumulator) may record now: TensorFlow's own test
    (tensorflow/python/eager/record.py); True where it is missing."""
    try:
        from tensorflow.python.eager import record
    except ImportError:  # pragma: no cover - another TensorFlow layout: always attach the gradient
        return True
    return record.could_possibly_record()


def _differentiable(data: Any) -> bool:
    """TensorFlow data of a floating or complex dtype while a tape may record: the result gets
    TensorFlow's gradient (tf.custom_gradient, which adds a cost to every call, only then;
    measured: bench/README.md, "Measurements behind the CPU engine's choices")."""
    return _is_tf(data) and (data.dtype.is_floating or data.dtype.is_complex) and _recording()


def _dtype(data: Any) -> Any:
    """data's numpy dtype (tf, jax and numpy arrays, JAX tracers, lists) without reading it."""
    dtype = getattr(data, "dtype", None)
    if dtype is None:
        return _np.asarray(data).dtype
    return _np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def _integer(data: Any) -> bool:
    return _dtype(data).kind in "iu"


def _like(data: Any, value: Any) -> Any:
    """``value`` (numpy) in data's framework: a tf tensor for tf data."""
    tf = _tf()
    return tf.convert_to_tensor(value) if tf is not None and _is_tf(data) else value


# TensorFlow's segment gradients (tensorflow/python/ops/math_grad.py: _SegmentSumGrad,
# _SegmentMeanGrad, _SegmentMinOrMaxGrad, _SegmentProdGrad and their Unsorted* forms), written
# with multigather's gather and segment sum; negative ids (unsorted) take no gradient
# (_GatherDropNegatives). A sorted op is the unsorted one with num_segments = its output rows.

def _gather_drop_negatives(tf: Any, params: Any, ids: Any) -> Any:
    gathered = gather(params, tf.maximum(ids, 0))
    positive = tf.reshape(ids >= 0, tf.concat([tf.shape(ids), tf.ones([tf.rank(gathered) - tf.rank(ids)], tf.int32)], 0))
    return tf.where(positive & tf.ones_like(gathered, dtype=tf.bool), gathered, tf.zeros_like(gathered))


def _counts(tf: Any, data: Any, ids: Any, num_segments: int, dtype: Any) -> Any:
    """The number of rows per segment, [num_segments, 1..] (broadcastable to the output)."""
    n = _unsorted_rows["sum"](tf.ones(tf.shape(ids), dtype), ids, num_segments)
    return tf.reshape(n, tf.concat([[num_segments], tf.ones([tf.rank(data) - tf.rank(ids)], tf.int32)], 0))


def _segment_gradient(kind: str, data: Any, ids: Any, num_segments: int, unsorted: bool, output: Any,
                      dy: Any) -> Any:
    tf = _tf()
    ids = tf.cast(ids, tf.int64)
    if kind == "sum":
        return _gather_drop_negatives(tf, dy, ids)
    if kind in ("mean", "sqrt_n"):
        # the count in the real dtype: unsorted_segment_mean / _sqrt_n divide by max(N, 1)
        # (math_ops.py), segment_mean by N (_SegmentMeanGrad: an empty row is never gathered)
        n = _counts(tf, data, ids, num_segments, dy.dtype.real_dtype)
        n = tf.maximum(n, tf.ones([], n.dtype)) if unsorted else n
        n = tf.cast(n if kind == "mean" else tf.sqrt(n), dy.dtype)
        return _gather_drop_negatives(tf, dy / n, ids)
    if kind in ("max", "min"):
        selected = tf.equal(data, _gather_drop_negatives(tf, output, ids))
        positive = tf.reshape(ids >= 0, tf.concat([tf.shape(ids), tf.ones([tf.rank(data) - tf.rank(ids)], tf.int32)], 0))
        selected = tf.logical_and(selected, positive)
        chosen = _unsorted_rows["sum"](tf.cast(selected, dy.dtype), ids, num_segments)
        shared = _gather_drop_negatives(tf, tf.math.divide(dy, chosen), ids)
        return tf.where(selected, shared, tf.zeros_like(shared))
    # prod: a segment with one zero gives that row the product of the others, with two or more 0
    is_zero = tf.equal(data, tf.zeros([], data.dtype))
    zeros = _unsorted_rows["sum"](tf.cast(is_zero, tf.int32), ids, num_segments)
    dy = tf.where(zeros > 1, tf.zeros_like(dy), dy)
    non_zero_prod = _unsorted_rows["prod"](tf.where(is_zero, tf.ones_like(data), data), ids, num_segments)
    clipped = tf.maximum(ids, 0)
    partial = tf.where(is_zero, gather(non_zero_prod, clipped), gather(output, clipped) / data)
    return _gather_drop_negatives(tf, dy, ids) * partial


def _with_gradient(kind: str, forward: Any, data: Any, ids: Any, num_segments: Optional[int]) -> Any:
    """forward(data) with TensorFlow's gradient for data (tf.custom_gradient)."""
    tf = _tf()

    @tf.custom_gradient
    def run(x):
        y = forward(x)
        rows = int(y.shape[0]) if num_segments is None else num_segments

        def grad(dy):
            return _segment_gradient(kind, x, tf.convert_to_tensor(ids), rows, num_segments is not None, y, dy)
        return y, grad
    return run(data)


def _integer_mean(data: Any, segment_ids: Any, unsorted: bool, *num_segments: Any) -> Any:
    """TensorFlow's mean of integer data: the sum in data's dtype (it wraps) and the count in
    data's dtype; segment_mean divides them truncating toward zero (Eigen's MeanReducer),
    unsorted_segment_mean returns their float quotient with the count at least 1 (math_ops.py:
    summed / maximum(N, 1), float32 for 8- and 16-bit data, float64 otherwise)."""
    dtype = _dtype(data)
    ids_shape = tuple(segment_ids.shape) if hasattr(segment_ids, "shape") else _np.shape(segment_ids)
    ones = _np.ones(ids_shape, dtype)
    if not unsorted:
        total = _np.asarray(_run(_sorted_rows["sum"], data, segment_ids))
        count = _np.asarray(_run(_sorted_rows["sum"], ones, segment_ids))
        count = count.reshape(count.shape + (1,) * (total.ndim - count.ndim))
        safe = _np.where(count == 0, _np.ones_like(count), count)
        quotient = (total - _np.fmod(total, safe)) // safe if dtype.kind == "i" else total // safe
        return _like(data, _np.where(count == 0, _np.zeros_like(total), quotient).astype(dtype))
    total = _np.asarray(_run(_unsorted_rows["sum"], data, segment_ids, *num_segments))
    count = _np.maximum(_np.asarray(_run(_unsorted_rows["sum"], ones, segment_ids, *num_segments)), 1)
    count = count.reshape(count.shape + (1,) * (total.ndim - count.ndim))
    real = _np.float32 if dtype.itemsize <= 2 else _np.float64
    return _like(data, total.astype(real) / count.astype(real))


def _segment(op: str, data: Any, segment_ids: Any, *, num_segments: Any = None) -> Any:
    """Registry op ``op`` (tf.math.segment_* / unsorted_segment_*) as TensorFlow runs it."""
    data, segment_ids = _tensors(data, segment_ids)
    kind = op.rsplit("_", 1)[-1] if not op.endswith("sqrt_n") else "sqrt_n"
    rows = _unsorted_rows if op.startswith("tf.math.unsorted_") else _sorted_rows
    if num_segments is not None and not isinstance(num_segments, int) and _np.ndim(num_segments) == 0:
        dtype = getattr(num_segments, "dtype", None)
        dtype = getattr(dtype, "as_numpy_dtype", dtype) if dtype is not None else _np.asarray(num_segments).dtype
        if _np.dtype(dtype).kind in "iu":  # a scalar int32 / int64 tensor or array, as TensorFlow takes
            num_segments = int(num_segments)
    unsorted = rows is _unsorted_rows
    if not unsorted and _on_cuda(segment_ids) and getattr(segment_ids, "ndim", None) == 1:
        # ids on a GPU: segment_ids[-1] + 1 read back, as TensorFlow's GPU kernel copies the last
        # id to the host (the row cannot read device memory); nothing else is checked there
        num_segments = max(int(segment_ids[-1]) + 1, 0) if segment_ids.shape[0] else 0
    extra = (num_segments,) if unsorted or num_segments is not None else ()
    if kind == "mean" and _integer(data):
        return _integer_mean(data, segment_ids, unsorted, *extra)
    if not _differentiable(data):
        return _run(rows[kind], data, segment_ids, *extra)
    return _with_gradient(kind, lambda x: _run(rows[kind], x, segment_ids, *extra), data, segment_ids,
                          num_segments if unsorted else None)


_UNSORTED_DOC = """tf.math.unsorted_segment_{r}(data, segment_ids, num_segments)
    (https://www.tensorflow.org/api_docs/python/tf/math/unsorted_segment_{r}): TensorFlow's CPU
    rules (a negative id drops its row, one >= num_segments is an error); segment_ids int16,
    int32 or int64. Errors are tf.errors.InvalidArgumentError (as TensorFlow's in eager mode) and
    also ValueError / IndexError / TypeError (multigather's) when tensorflow is imported. Floating
    and complex TensorFlow data get TensorFlow's gradient under tf.GradientTape.{extra} The rules
    and the index rule are the registry row's (below)."""
_SORTED_DOC = """tf.math.segment_{r}(data, segment_ids)
    (https://www.tensorflow.org/api_docs/python/tf/math/segment_{r}): sorted non-negative ids,
    int32 or int64, checked with TensorFlow's words. Ids in CUDA memory (torch, cupy: DLPack
    kDLCUDA): segment_ids[-1] + 1 is read back (one synchronization) and the row runs on the
    device with TensorFlow's GPU rule (nothing checked: an id outside the rows drops its row). Errors are tf.errors.InvalidArgumentError (as
    TensorFlow's in eager mode) and also ValueError / IndexError / TypeError (multigather's) when
    tensorflow is imported. Floating and complex TensorFlow data get TensorFlow's gradient under
    tf.GradientTape.{extra} The rules and the index rule are the registry row's (below)."""


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_sum", data, segment_ids, num_segments=num_segments)


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_prod", data, segment_ids, num_segments=num_segments)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_max", data, segment_ids, num_segments=num_segments)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_min", data, segment_ids, num_segments=num_segments)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_mean", data, segment_ids, num_segments=num_segments)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    return _segment("tf.math.unsorted_segment_sqrt_n", data, segment_ids, num_segments=num_segments)


def segment_sum(data: Any, segment_ids: Any) -> Any:
    return _segment("tf.math.segment_sum", data, segment_ids)


def segment_prod(data: Any, segment_ids: Any) -> Any:
    return _segment("tf.math.segment_prod", data, segment_ids)


def segment_max(data: Any, segment_ids: Any) -> Any:
    return _segment("tf.math.segment_max", data, segment_ids)


def segment_min(data: Any, segment_ids: Any) -> Any:
    return _segment("tf.math.segment_min", data, segment_ids)


def segment_mean(data: Any, segment_ids: Any) -> Any:
    return _segment("tf.math.segment_mean", data, segment_ids)


for _f in (unsorted_segment_sum, unsorted_segment_prod, unsorted_segment_max, unsorted_segment_min,
           unsorted_segment_mean, unsorted_segment_sqrt_n):
    _r = _f.__name__[len("unsorted_segment_"):]
    _f.__doc__ = _UNSORTED_DOC.format(r=_r, extra=" Integer data: TensorFlow's float quotient (sum in data's dtype "
                                      "/ max(count, 1); float32 for 8- and 16-bit data, float64 otherwise)."
                                      if _r == "mean" else "")
for _f in (segment_sum, segment_prod, segment_max, segment_min, segment_mean):
    _r = _f.__name__[len("segment_"):]
    _f.__doc__ = _SORTED_DOC.format(r=_r, extra=" Integer data: the sum in data's dtype divided by the count, "
                                    "truncated toward zero (TensorFlow's)." if _r == "mean" else "")

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
