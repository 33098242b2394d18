"""numpy's gathers on multigather, with numpy's signatures and rules.

- ``take(a, indices, axis=None, out=None, mode="raise")``: numpy.take
  (https://numpy.org/doc/stable/reference/generated/numpy.take.html).
- ``take_along_axis(arr, indices, axis=-1)``: numpy.take_along_axis
  (https://numpy.org/doc/stable/reference/generated/numpy.take_along_axis.html).
- ``advanced_index(a, indices, index_dims)``: ``a[..., idx_0, ..., idx_{k-1}, ...]``
  (https://numpy.org/doc/stable/user/basics.indexing.html#integer-array-indexing).

Arrays of any framework are accepted; the result has the input's framework.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._registry import document as _registry_document
from ._registry import fast_op, op_function, run_fast, run_general, run_scatter

_TAKE = fast_op("numpy.take", "axis", "mode")
_ADVANCED_INDEX = fast_op("numpy.advanced_index", "index_dims")

__all__ = ["take", "take_along_axis", "advanced_index", "put_along_axis", "put", "add_at", "multiply_at",
           "minimum_at", "maximum_at"]


def take(a: Any, indices: Any, axis: Optional[int] = None, out: Any = None,
         mode: str = "raise") -> Any:
    """numpy.take(a, indices, axis=None, out=None, mode='raise'). ``out``: a writable array of the
    output shape (a run() argument, not an attribute of the op); a call that raises (IndexError
    included) leaves it unchanged, as numpy's mode='raise' does. Ctrl-C raises KeyboardInterrupt.
    The rules and the index rule are the registry row's (below)."""
    result = run_fast(_TAKE, a, indices, out, axis, mode)
    if result is NotImplemented:
        result = run_general("numpy.take", a, indices, out, axis=axis, mode=mode)
    return result


take_along_axis = op_function("numpy.take_along_axis", "take_along_axis")


def advanced_index(a: Any, indices: Any, index_dims: Sequence[int]) -> Any:
    """numpy advanced integer indexing ``a[..., idx_0, ..., idx_{k-1}, ...]`` with the index arrays
    given stacked: indices = stack(broadcast(idx_0, ..., idx_{k-1}), axis=-1) on the dims
    ``index_dims`` (required here, as numpy's index has them). The rules and the index rule are
    the registry row's (below)."""
    result = run_fast(_ADVANCED_INDEX, a, indices, None, index_dims)
    if result is NotImplemented:
        result = run_general("numpy.advanced_index", a, indices, index_dims=index_dims)
    return result



def _values_for(arr: Any, values: Any, casting: str, name: str) -> Any:
    """values as an array of arr's dtype when arr is a numpy array (numpy casts them; the C++ op
    does not): ``casting`` is numpy's rule for the call ('unsafe' for assignment, 'same_kind' for
    ufunc.at)."""
    import numpy as np

    if not isinstance(arr, np.ndarray):
        return values
    if not isinstance(values, np.ndarray):
        return np.asarray(values, dtype=arr.dtype)
    if values.dtype != arr.dtype:
        if not np.can_cast(values.dtype, arr.dtype, casting):
            raise TypeError(f"{name}: cannot cast {values.dtype} to {arr.dtype} with casting rule '{casting}'")
        return values.astype(arr.dtype)
    return values


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Optional[int]) -> None:
    """numpy.put_along_axis(arr, indices, values, axis), IN PLACE like numpy (returns None); values
    are cast to arr's dtype (numpy arrays, 'unsafe' as numpy's assignment). The rules and the
    index rule are the registry row's (below)."""
    values = _values_for(arr, values, "unsafe", "numpy.put_along_axis")
    run_scatter("numpy.put_along_axis", arr, indices, values, arr, axis=axis)


def _tuple_at(name: str, reduction: str, a: Any, index: tuple, b: Any) -> None:
    """numpy.<ufunc>.at(a, index, b) for a tuple ``index``, with the reductions add, mul, min,
    max, in place: integer arrays and ints (broadcast together), slices and at most one ``...``.
    Slices (and ``...``) are applied first, as numpy's basic indexing does (a view of ``a``); the
    integer arrays then index the dimensions they stand for, their broadcast shape placed where
    the first one stands when they are adjacent and first otherwise (numpy's advanced-indexing
    rule). Refused (TypeError, naming the entry): boolean masks, ``None`` (newaxis), and anything
    else that is not an integer index."""
    b = _values_for(a, b, "same_kind", name)
    view, arrays, positions = _split_index(name, a, index)
    if not arrays:
        raise TypeError(f"{name}: the index {index!r} has no integer array or int (basic "
                        f"indexing alone is not modelled)")
    if len(arrays) == 1 and positions == [0]:
        run_scatter(name, view, arrays[0], b, view)
        return
    _advanced_scatter(name, reduction, view, arrays, positions, b)


def _split_index(name: str, a: Any, index: tuple) -> tuple[Any, list, list[int]]:
    """(view, integer arrays, the view dimensions they index): the slices of ``index`` applied
    to ``a`` (``...`` expanded), the integer entries kept for the advanced step."""
    import numpy as np

    ellipses = sum(1 for e in index if e is Ellipsis)
    if ellipses > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    rank = np.ndim(a)
    explicit = len(index) - ellipses
    if explicit > rank:
        raise IndexError(f"{name}: too many indices: a is {rank}-dimensional, but {explicit} were indexed")
    expanded: list = []
    for e in index:
        if e is Ellipsis:
            expanded += [slice(None)] * (rank - explicit)
        else:
            expanded.append(e)
    expanded += [slice(None)] * (rank - len(expanded))
    basic, arrays, positions = [], [], []
    for d, e in enumerate(expanded):
        if isinstance(e, slice):
            basic.append(e)
            continue
        if e is None:
            raise TypeError(f"{name}: index entry {d} is None (np.newaxis), which ufunc.at's "
                            f"in-place update does not model here")
        if isinstance(e, (bool, np.bool_)) or getattr(getattr(e, "dtype", None), "kind", "") == "b":
            raise TypeError(f"{name}: index entry {d} is a boolean mask, which multigather does not "
                            f"model (pass np.nonzero(mask) instead)")
        if not (isinstance(e, (int, np.integer)) or getattr(getattr(e, "dtype", None), "kind", "") in "iu"
                or isinstance(e, (list, tuple))):
            raise TypeError(f"{name}: index entry {d} must be an integer array, an int, a slice or "
                            f"'...', not {type(e).__name__}")
        basic.append(slice(None))
        arrays.append(e)
        positions.append(d)
    view = a[tuple(basic)] if any(sl != slice(None) for sl in basic) else a
    # The slices' dimensions keep their places: positions stay valid in the view.
    return view, arrays, positions


def _advanced_scatter(name: str, reduction: str, view: Any, arrays: list, positions: list[int],
                      b: Any) -> None:
    """view[arrays at positions] <reduction>= b, unbuffered, through scatter_multiaxis: the
    stacked index arrays index the view dimensions ``positions``; unit dimensions inserted into
    a view of ``view`` hold the broadcast index shape where numpy puts it."""
    import numpy as np

    torch_mode = type(view).__module__.split(".", 1)[0] == "torch"
    if torch_mode:
        import torch

        parts = [torch.as_tensor(x) for x in arrays]
        parts = torch.broadcast_tensors(*parts)
        stacked = torch.stack([p.to(torch.int64) for p in parts], dim=-1)
    else:
        parts = np.broadcast_arrays(*[np.asarray(x) for x in arrays])
        for j, p in enumerate(parts):
            if p.dtype.kind not in "iu":
                raise TypeError(f"{name}: index array {j} has dtype {p.dtype}, not an integer dtype")
        stacked = np.stack([p.astype(np.int64, copy=False) for p in parts], axis=-1)
    bshape = tuple(stacked.shape[:-1])
    m, k, rank = len(bshape), len(positions), len(view.shape)
    adjacent = positions == list(range(positions[0], positions[0] + k))
    at = positions[0] if adjacent else 0  # where numpy puts the broadcast index shape
    for j, p in enumerate(positions):  # numpy's bounds rule and message, before any write
        n = view.shape[p]
        col = stacked[..., j]
        if col.numel() if torch_mode else col.size:
            lo, hi = int(col.min()), int(col.max())
            bad = hi if hi >= n else lo if lo < -n else None
            if bad is not None:
                raise IndexError(f"{name}: index {bad} is out of bounds for axis {p} with size {n}")
    # The input: a view of `view` with m unit dimensions inserted at `at` (where numpy puts the
    # broadcast index shape); the axes are the indexed dimensions, shifted past them. The
    # indices' logical shape is 1 on every view dimension and B on the inserted ones; the last
    # dimension (a view dimension: at + m < rank + m) holds the k coordinates.
    target = view[(slice(None),) * at + (None,) * m]
    axes = [p + m if p >= at else p for p in positions]
    total = rank + m
    idx = stacked.reshape([1] * at + list(bshape) + [1] * (total - at - m - 1) + [k])
    # Updates: b broadcast to numpy's result shape, viewed as the scatter shape (the inserted
    # dimensions B, the indexed ones 1).
    rest = [view.shape[d] for d in range(rank) if d not in positions]
    result_shape = (rest[:at] + list(bshape) + rest[at:]) if adjacent else (list(bshape) + rest)
    gshape = list(target.shape)
    gshape[at:at + m] = bshape
    for ax in axes:
        gshape[ax] = 1
    if torch_mode:
        u = torch.as_tensor(b, dtype=view.dtype).broadcast_to(result_shape).reshape(gshape)
    else:
        u = np.broadcast_to(np.asarray(b, dtype=view.dtype), result_shape).reshape(gshape)
    run_scatter("scatter_multiaxis", target, idx, u, target, axes=axes, reduction=reduction)


def add_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.add.at(a, indices, b), IN PLACE like numpy (returns None). ``indices``: one integer
    array, or numpy's tuple form: integer arrays and ints (broadcast together), slices and one
    ``...``, with numpy's advanced-indexing rules (see _tuple_at); boolean masks, np.newaxis and
    non-integer entries are TypeError (not modelled). ``a``: any writable numpy array or torch
    tensor, whatever its strides; b is cast to a's dtype under numpy's 'same_kind' rule (numpy
    arrays). The rules and the index rule are the registry row's (below)."""
    if isinstance(indices, tuple):
        _tuple_at("numpy.add_at", "add", a, indices, b)
        return
    b = _values_for(a, b, "same_kind", "numpy.add_at")
    run_scatter("numpy.add_at", a, indices, b, a)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """numpy.put(a, ind, v, mode='raise'), IN PLACE like numpy (returns None). ``v``: cast to a's
    dtype ('unsafe', as numpy); repeated cyclically when shorter than ind (done here with
    numpy.resize; the C++ op accepts 1 or >= ind.size elements). The rules and the index rule are
    the registry row's (below)."""
    import numpy as np

    v = _values_for(a, v, "unsafe", "numpy.put")
    size = int(np.size(ind))
    if 1 < np.size(v) < size:
        v = np.resize(v, size)
    run_scatter("numpy.put", a, ind, v, a, mode=mode)


def multiply_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.multiply.at(a, indices, b), IN PLACE (returns None), numpy's index forms as add_at. The
    rules and the index rule are the registry row's (below)."""
    if isinstance(indices, tuple):
        _tuple_at("numpy.multiply_at", "mul", a, indices, b)
        return
    b = _values_for(a, b, "same_kind", "numpy.multiply_at")
    run_scatter("numpy.multiply_at", a, indices, b, a)


def minimum_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.minimum.at(a, indices, b), IN PLACE (returns None), numpy's index forms as add_at. The
    rules and the index rule are the registry row's (below)."""
    if isinstance(indices, tuple):
        _tuple_at("numpy.minimum_at", "min", a, indices, b)
        return
    b = _values_for(a, b, "same_kind", "numpy.minimum_at")
    run_scatter("numpy.minimum_at", a, indices, b, a)


def maximum_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.maximum.at(a, indices, b), IN PLACE (returns None), numpy's index forms as add_at. The
    rules and the index rule are the registry row's (below)."""
    if isinstance(indices, tuple):
        _tuple_at("numpy.maximum_at", "max", a, indices, b)
        return
    b = _values_for(a, b, "same_kind", "numpy.maximum_at")
    run_scatter("numpy.maximum_at", a, indices, b, a)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
