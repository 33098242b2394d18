"""JAX's numpy-style gathers on multigather, with jax.numpy's signatures and index modes.

- ``take(a, indices, axis=None, mode=None, fill_value=None)``: jax.numpy.take
  (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html)
- ``take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None)``:
  jax.numpy.take_along_axis
  (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take_along_axis.html)

Modes (jax/_src/numpy/indexing.py): None or "fill" (default): negatives wrap once, anything
else out of range becomes ``fill_value`` (default NaN for inexact dtypes, the minimum for signed
integers, the maximum for unsigned ones, True for bool). take: "clip" clamps WITHOUT wrapping
negatives (-1 -> 0), "wrap" is modulo; "promise_in_bounds" is a ValueError, as jnp.take's.
take_along_axis: "clip" wraps negatives once, then clamps; "promise_in_bounds" clamps without
wrapping (what XLA does with indices that break the promise).
lax.gather's dimension numbers are in ``multigather.stablehlo``.

``segment_sum / segment_prod / segment_max / segment_min(data, segment_ids, num_segments=None,
indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None, out_sharding=None)``:
jax.ops's segment reductions
(https://docs.jax.dev/en/latest/_autosummary/jax.ops.segment_sum.html), each one scatter of
data into the reduction's identity; ids outside [0, num_segments) are dropped (mode "clip" clamps
them); num_segments=None is max(segment_ids) + 1, read from the ids (ids on a GPU are copied
back for it, as jax.ops's own np.max copies them). Differentiable under jax.grad (every
reduction), batched under jax.vmap.

The indexed updates ``x.at[idx].set / add / subtract / multiply / min / max``
(https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html), written as in JAX:
``multigather.jax.at(x)[idx].add(values, mode=None)`` returns a new array (``x`` is never
written). ``idx``: integers and integer arrays (numpy, jax, lists) on some dimensions, full
slices ``:`` and one ``...`` elsewhere, with numpy's advanced-indexing rules (adjacent index
arrays keep their place, separated ones put their broadcast shape first). Index rule
(jax/_src/ops/scatter.py, lax.GatherScatterMode): negatives wrap once (unless
``wrap_negative_indices=False``); then mode None / "drop" / "fill" (the default) skips an update
whose index is out of range, "clip" clamps it into [0, D-1], and "promise_in_bounds" skips it
(what XLA's scatter does with an index that breaks the promise). Duplicates all apply; JAX
applies them in an implementation-defined order, multigather in row-major order of ``x[idx]``
(so ``set`` keeps the last, and float sums are reproducible). The registry form (indices
stacked as ``numpy.advanced_index`` takes them) is ``at_set(x, indices, values, index_dims)``
and its siblings.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._jax_xla import jit_ops, set_jit_ops
from ._registry import document as _registry_document
from ._registry import fast_op, op_function, run_fast, run_general, run_scatter

_TAKE = fast_op("jax.numpy.take", "axis", "mode", "fill_value")
_TAKE_ALONG_AXIS = fast_op("jax.numpy.take_along_axis", "axis", "mode", "fill_value")

__all__ = ["take", "take_along_axis", "at", "at_set", "at_add", "at_subtract", "at_multiply", "at_min",
           "at_max", "segment_sum", "segment_prod", "segment_max", "segment_min", "set_jit_ops",
           "jit_ops"]


def take(a: Any, indices: Any, axis: Optional[int] = None, mode: Optional[str] = None,
         fill_value: Any = None) -> Any:
    """jax.numpy.take(a, indices, axis=None, mode=None, fill_value=None): mode None is the row's
    default "fill". The rules and the index rule are the registry row's (below)."""
    result = run_fast(_TAKE, a, indices, None, axis, mode, fill_value)
    if result is NotImplemented:
        result = run_general("jax.numpy.take", a, indices, axis=axis, mode=mode,
                             fill_value=fill_value)
    return result


def take_along_axis(arr: Any, indices: Any, axis: Optional[int] = -1, mode: Optional[str] = None,
                    fill_value: Any = None) -> Any:
    """jax.numpy.take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None): mode None is
    the row's default "fill". The rules and the index rule are the registry row's (below)."""
    result = run_fast(_TAKE_ALONG_AXIS, arr, indices, None, axis, mode, fill_value)
    if result is NotImplemented:
        result = run_general("jax.numpy.take_along_axis", arr, indices, axis=axis, mode=mode,
                             fill_value=fill_value)
    return result


# ---- x.at[idx].<update>(values) ------------------------------------------------------------------

_AT_DOC = """jax ``x.at[idx].{method}(values)`` in the registry form ``jax.at.{method}``
    (``multigather.jax.at(x)[idx].{method}(values)`` takes JAX's index form). ``mode`` and
    ``wrap_negative_indices`` are keyword-only, as JAX's; mode None is FILL_OR_DROP (the row's
    "drop"). Returns a new array in ``x``'s framework. The rules and the index rule are the
    registry row's (below)."""


def _scatter_mode(mode: Optional[str]) -> str:
    """jax's mode=None for a scatter: FILL_OR_DROP (lax.GatherScatterMode.from_any)."""
    return "drop" if mode is None else mode


def at_set(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
           mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.set", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


def at_add(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
           mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.add", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


def at_subtract(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
                mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.subtract", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


def at_multiply(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
                mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.multiply", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


def at_min(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
           mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.min", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


def at_max(x: Any, indices: Any, values: Any, index_dims: Sequence[int] = (0,), *,
           mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
    mode = _scatter_mode(mode)
    return run_scatter("jax.at.max", x, indices, values, index_dims=index_dims, mode=mode,
                       wrap_negative_indices=wrap_negative_indices)


for _function in (at_set, at_add, at_subtract, at_multiply, at_min, at_max):
    _function.__doc__ = _AT_DOC.format(method=_function.__name__[3:])


_AT_FUNCTIONS = {"set": at_set, "add": at_add, "subtract": at_subtract, "multiply": at_multiply,
                 "min": at_min, "max": at_max}


def _is_jax(value: Any) -> bool:
    return type(value).__module__.startswith(("jax", "jaxlib"))


def _array_module(*values: Any) -> Any:
    if any(_is_jax(v) for v in values):
        import jax.numpy as jnp
        return jnp
    import numpy as np
    return np


def _stacked_indices(shape: Sequence[int], index: Any) -> tuple[Any, list[int]]:
    """``x[index]`` with integer (array) indices, full slices and one Ellipsis, as the registry
    form takes it: (the index arrays broadcast and stacked on a last dimension, their dims)."""
    import numpy as np

    entries = index if isinstance(index, tuple) else (index,)
    rank = len(shape)
    ellipses = sum(1 for e in entries if e is Ellipsis)
    if ellipses > 1:
        raise IndexError("multigather.jax.at: an index can only have a single ellipsis ('...')")
    regular = len(entries) - ellipses
    if regular > rank:
        raise IndexError(f"multigather.jax.at: Too many indices: {rank}-dimensional array indexed "
                         f"with {regular} regular indices.")
    full: list[Any] = []
    for e in entries:
        full.extend([slice(None)] * (rank - regular) if e is Ellipsis else [e])
    full.extend([slice(None)] * (rank - len(full)))
    dims, arrays = [], []
    for d, e in enumerate(full):
        if isinstance(e, slice):
            if e != slice(None):
                raise ValueError(f"multigather.jax.at: index entry {d} is {e}: only full slices ':' "
                                 "are supported beside integer (array) indices")
            continue
        if e is None:
            raise ValueError("multigather.jax.at: None (np.newaxis) in the index is not supported")
        kind = np.asarray(e).dtype.kind if not _is_jax(e) else np.dtype(e.dtype).kind
        if kind not in "iu":
            raise TypeError(f"multigather.jax.at: index entry {d} has dtype kind '{kind}': only "
                            "integer indices (and full slices) are supported; boolean masks are not")
        dims.append(d)
        arrays.append(e)
    if not arrays:
        raise ValueError("multigather.jax.at: the index has no integer (array) entry; use x.at[idx] "
                         "with at least one integer or integer array")
    xp = _array_module(*arrays)
    arrays = xp.broadcast_arrays(*[xp.asarray(a) for a in arrays])
    return xp.stack(arrays, axis=-1), dims


def _values_for(x: Any, values: Any) -> Any:
    """values in x's dtype: Python scalars (JAX's weak types take x's dtype; a float for an
    integer x is refused, where JAX adds in float and truncates the result), arrays whose dtype
    numpy casts safely to x's (JAX's promotion then gives x's dtype); TypeError otherwise."""
    import numpy as np

    dtype = np.dtype(x.dtype)
    xp = _array_module(x, values)
    if isinstance(values, (bool, int, float, complex)):
        kind = {bool: "b", int: "i", float: "f", complex: "c"}[type(values)]
        if dtype.kind in "biu" and kind not in "biu" or dtype.kind == "f" and kind == "c":
            raise TypeError(f"multigather.jax.at: a Python {type(values).__name__} value for an x of "
                            f"dtype {dtype}: JAX would compute in a promoted dtype and cast the result "
                            "back; pass values of x's dtype")
        return xp.asarray(values, dtype=dtype)
    vdtype = np.dtype(values.dtype) if hasattr(values, "dtype") else np.asarray(values).dtype
    if vdtype == dtype:
        return values
    if not np.can_cast(vdtype, dtype, "safe"):
        raise TypeError(f"multigather.jax.at: values dtype {vdtype} cannot be cast safely to x's "
                        f"dtype {dtype} (JAX promotes both and casts the result back; pass values "
                        "of x's dtype)")
    return xp.asarray(values).astype(dtype)


class _IndexUpdateRef:
    """``at(x)[idx]``: the updates of ``x`` at ``idx`` (see the module docstring)."""

    __slots__ = ("array", "indices", "index_dims")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.indices, self.index_dims = _stacked_indices(tuple(array.shape), index)

    def _update(self, method: str, values: Any, mode: Optional[str],
                wrap_negative_indices: bool) -> Any:
        return _AT_FUNCTIONS[method](self.array, self.indices, _values_for(self.array, values),
                                     self.index_dims, mode=mode,
                                     wrap_negative_indices=wrap_negative_indices)

    def set(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = values`` as a new array; duplicates: the last in row-major order of
        x[idx] wins. ``indices_are_sorted`` / ``unique_indices`` are JAX's promises, unused."""
        return self._update("set", values, mode, wrap_negative_indices)

    def add(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] += values`` as a new array; every duplicate adds (row-major order)."""
        return self._update("add", values, mode, wrap_negative_indices)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Optional[str] = None,
                 wrap_negative_indices: bool = True) -> Any:
        """``x[idx] -= values`` as a new array; every duplicate subtracts."""
        return self._update("subtract", values, mode, wrap_negative_indices)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Optional[str] = None,
                 wrap_negative_indices: bool = True) -> Any:
        """``x[idx] *= values`` as a new array; every duplicate multiplies."""
        return self._update("multiply", values, mode, wrap_negative_indices)

    def min(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = minimum(x[idx], values)`` as a new array; NaN propagates."""
        return self._update("min", values, mode, wrap_negative_indices)

    def max(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Optional[str] = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = maximum(x[idx], values)`` as a new array; NaN propagates."""
        return self._update("max", values, mode, wrap_negative_indices)


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


def at(x: Any) -> _IndexUpdateHelper:
    """JAX's ``x.at`` for any array ``x`` (jax, numpy, torch): ``at(x)[idx].add(values,
    mode=None)`` returns ``x`` with ``values`` added at ``idx``, a new array in x's framework.
    Methods: set, add, subtract, multiply, min, max, each with ``mode`` (None / "drop" / "fill":
    skip out-of-range updates; "clip": clamp; "promise_in_bounds": skip, as XLA does) and
    ``wrap_negative_indices``. ``idx``: integers, integer arrays, full slices and ``...``
    (IndexError for too many indices, ValueError for partial slices or None, TypeError for
    boolean masks). ``values`` broadcast to ``x[idx].shape``; Python scalars take x's dtype,
    arrays must cast safely to it (TypeError). Source:
    https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"""
    return _IndexUpdateHelper(x)

# ---- jax.ops.segment_* ---------------------------------------------------------------------------
# Each runs its registry row (data, segment_ids, num_segments, mode); the wrappers add what
# jax.ops does in Python before its scatter (jax/_src/ops/scatter.py, _segment_update): the
# signature, num_segments = max(segment_ids) + 1 read from concrete ids (so jax.grad over data
# works with numpy ids), the dtype check of the reduction's lax op, bucket_size and out_sharding.

_SEGMENT_OPS = {"sum": "jax.ops.segment_sum", "prod": "jax.ops.segment_prod", "max": "jax.ops.segment_max",
                "min": "jax.ops.segment_min"}
_SEGMENT_FAST = {name: fast_op(op, "num_segments", "indices_are_sorted", "unique_indices", "mode") for name, op in _SEGMENT_OPS.items()}
# lax.add / lax.mul refuse bool (jax.ops.segment_sum / _prod raise this TypeError); max / min take it.
_SEGMENT_LAX_OP = {"sum": "add", "prod": "mul"}


def _segment_mode(mode: Any) -> Any:
    """JAX's mode (None, a string or a lax.GatherScatterMode) as the row's enum string."""
    if mode is None or isinstance(mode, str):
        return "fill" if mode is None else mode
    name = getattr(mode, "name", None)
    table = {"CLIP": "clip", "FILL_OR_DROP": "fill", "PROMISE_IN_BOUNDS": "promise_in_bounds"}
    if name not in table:
        raise ValueError(f"multigather.jax.segment_*: mode {mode!r} is not supported (None, 'fill', 'drop', "
                         "'clip', 'promise_in_bounds' or the lax.GatherScatterMode of one of them)")
    return table[name]


def _concrete(value: Any) -> bool:
    """Whether ``value`` has values in Python (not a JAX tracer)."""
    try:
        from jax import core
    except ImportError:  # pragma: no cover - multigather.jax without jax: numpy arrays only
        return True
    return not isinstance(value, core.Tracer)


def _on_accelerator(value: Any) -> bool:
    """Whether ``value`` is a jax.Array on a device other than the CPU."""
    devices = getattr(value, "devices", None)
    try:
        return callable(devices) and any(d.platform != "cpu" for d in devices())
    except Exception:  # a deleted or donated array: the row's own error follows
        return False


def _segment(op: str, data: Any, segment_ids: Any, *, num_segments: Any, indices_are_sorted: bool,
             unique_indices: bool, bucket_size: Any, mode: Any, out_sharding: Any) -> Any:
    import numpy as np

    name = op[len("jax.ops.segment_"):]
    if out_sharding is not None:
        raise NotImplementedError(f"multigather.jax.segment_{name}: out_sharding = {out_sharding!r} is not "
                                  "supported (only None); reshard the result with jax.sharding.reshard instead")
    dtype = getattr(data, "dtype", None)
    if name in _SEGMENT_LAX_OP and np.dtype(dtype if dtype is not None else np.asarray(data).dtype) == np.bool_:
        lax_op = _SEGMENT_LAX_OP[name]
        raise TypeError(f"{lax_op} does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
                        f"subtypes of integer, floating, complexfloating. ({op}: data dtype bool)")
    if num_segments is None and _concrete(segment_ids) and not _concrete(data):
        # jax.ops: num_segments = np.max(segment_ids) + 1, read from concrete ids while data is
        # traced (jax.grad, jax.vmap over data); the row reads them itself in every other call.
        num_segments = int(np.max(np.asarray(segment_ids))) + 1
    elif num_segments is None and _concrete(segment_ids) and _on_accelerator(segment_ids):
        # ids on a GPU: read back as jax.ops reads them (np.max of the ids), where the row cannot
        # (the row's floor: no rows for empty or negative ids)
        ids = np.asarray(segment_ids)
        num_segments = max(int(ids.max()) + 1, 0) if ids.size else 0
    elif num_segments is not None:
        num_segments = int(num_segments)
    mode = _segment_mode(mode)
    if bucket_size is not None and name in ("sum", "prod"):
        return _bucketed(name, op, data, segment_ids, num_segments, bucket_size, mode)
    result = run_fast(_SEGMENT_FAST[name], data, segment_ids, None, num_segments, indices_are_sorted,
                      unique_indices, mode)
    if result is NotImplemented:
        result = run_general(op, data, segment_ids, num_segments=num_segments,
                             indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    return result


def _bucketed(name: str, op: str, data: Any, segment_ids: Any, num_segments: Any, bucket_size: int,
              mode: str) -> Any:
    """jax.ops' bucket_size for sum / prod: row n of data reduces into bucket n // bucket_size of
    its segment, then the buckets reduce (jnp.sum / jnp.prod over them, in data's dtype)."""
    if num_segments is None:
        raise ValueError(f"{op}: num_segments = None is max(segment_ids) + 1: it needs the values of segment_ids "
                         "(give num_segments for shapes alone)")
    xp = _array_module(data, segment_ids)
    ids = xp.asarray(segment_ids)
    rows = int(ids.shape[0])
    buckets = -(-int(ids.size) // int(bucket_size))
    if mode == "clip":
        ids = xp.clip(ids, 0, max(num_segments - 1, 0))
    inside = (ids >= 0) & (ids < num_segments)
    flat = xp.where(inside, (xp.arange(rows) // bucket_size) * num_segments + ids, -1)
    result = run_general(op, data, flat, num_segments=buckets * num_segments, mode="fill")
    shape = tuple(data.shape)
    result = xp.reshape(xp.asarray(result), (buckets, num_segments) + shape[1:])
    reduce = xp.sum if name == "sum" else xp.prod
    return reduce(result, axis=0).astype(data.dtype)


_SEGMENT_DOC = """jax.ops.segment_{name}(data, segment_ids, num_segments=None, indices_are_sorted=False,
    unique_indices=False, bucket_size=None, mode=None, out_sharding=None), JAX's signature
    (https://docs.jax.dev/en/latest/_autosummary/jax.ops.segment_{name}.html). num_segments None:
    max(segment_ids) + 1, read from concrete ids (a JAX tracer has none: give num_segments inside
    jax.jit); ids outside [0, num_segments) are dropped (mode None / "fill" / "drop" /
    "promise_in_bounds"), or clamped (mode "clip"); mode may be a lax.GatherScatterMode.
    ``indices_are_sorted`` / ``unique_indices``: JAX's promises, passed to the row.
    ``bucket_size``: {bucket}
    ``out_sharding``: only None (NotImplementedError otherwise: reshard the result).
    {dtypes} The rules and the index rule are the registry row's (below)."""


def segment_sum(data: Any, segment_ids: Any, num_segments: Optional[int] = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Optional[int] = None, mode: Any = None, out_sharding: Any = None) -> Any:
    return _segment("jax.ops.segment_sum", data, segment_ids, num_segments=num_segments,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, bucket_size=bucket_size,
                    mode=mode, out_sharding=out_sharding)


def segment_prod(data: Any, segment_ids: Any, num_segments: Optional[int] = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: Optional[int] = None, mode: Any = None, out_sharding: Any = None) -> Any:
    return _segment("jax.ops.segment_prod", data, segment_ids, num_segments=num_segments,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, bucket_size=bucket_size,
                    mode=mode, out_sharding=out_sharding)


def segment_max(data: Any, segment_ids: Any, num_segments: Optional[int] = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Optional[int] = None, mode: Any = None, out_sharding: Any = None) -> Any:
    return _segment("jax.ops.segment_max", data, segment_ids, num_segments=num_segments,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, bucket_size=bucket_size,
                    mode=mode, out_sharding=out_sharding)


def segment_min(data: Any, segment_ids: Any, num_segments: Optional[int] = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Optional[int] = None, mode: Any = None, out_sharding: Any = None) -> Any:
    return _segment("jax.ops.segment_min", data, segment_ids, num_segments=num_segments,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, bucket_size=bucket_size,
                    mode=mode, out_sharding=out_sharding)


for _function in (segment_sum, segment_prod, segment_max, segment_min):
    _name = _function.__name__[len("segment_"):]
    _function.__doc__ = _SEGMENT_DOC.format(
        name=_name,
        bucket="as JAX's: rows reduce per bucket of bucket_size rows, then the\n    buckets reduce (float "
               "results may differ from bucket_size=None in the last bits, as JAX's do)." if _name in ("sum", "prod") else
               "accepted and ignored (a max / min is the same for every bucketing).",
        dtypes="bool data is a TypeError, as jax.ops' (lax.{} refuses it).".format(_SEGMENT_LAX_OP[_name])
        if _name in _SEGMENT_LAX_OP else "bool data is taken, as jax.ops' (False < True).")

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
