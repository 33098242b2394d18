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

from ._registry import fast_op, run_fast, run_general, run_scatter

_TAKE = fast_op("numpy.take", "axis", "mode")
_TAKE_ALONG_AXIS = fast_op("numpy.take_along_axis", "axis")
_ADVANCED_INDEX = fast_op("numpy.advanced_index", "index_dims")

__all__ = ["take", "take_along_axis", "advanced_index", "put_along_axis", "put", "add_at", "multiply_at",
           "minimum_at", "maximum_at"]


def take(a: Any, indices: Any, axis: Optional[int] = None, out: Any = None,
         mode: str = "raise") -> Any:
    """numpy.take: elements of ``a`` at ``indices`` along ``axis`` (flattened when None).

    Shapes: a.shape[:axis] + indices.shape + a.shape[axis+1:] (indices.shape for axis=None).
    Dtypes: any ``a``; integer or bool ``indices``, converted as numpy casts them to intp
    (bool is 0/1, uint64 values from 2**63 wrap to negatives). A 0-D ``a`` with axis 0 or -1 is
    taken as 1-D. Modes: "raise" (negatives wrap once, otherwise IndexError), "wrap" (modulo),
    "clip" (clamp to [0, n-1], negatives become 0). Raises IndexError (mode "raise"; a take
    with a non-empty output from an empty axis), ValueError (axis, mode), TypeError (dtypes).
    ``out``: writable array of the output shape.
    """
    result = run_fast(_TAKE, a, indices, out, axis, mode)
    if result is NotImplemented:
        result = run_general("numpy.take", a, indices, out, axis=axis, mode=mode)
    return result


def take_along_axis(arr: Any, indices: Any, axis: Optional[int] = -1) -> Any:
    """numpy.take_along_axis: out[p, j, s] = arr[p, indices[p, j, s], s].

    Shapes: same rank; the dimensions other than ``axis`` broadcast both ways; axis=None
    flattens ``arr`` and needs 1-D indices. Integer indices (uint64 wraps as numpy's intp cast;
    bool is TypeError, where numpy raises IndexError). Negatives wrap once; out of range is
    IndexError. Raises ValueError (ranks, broadcasting, axis; numpy raises IndexError for
    shapes that do not broadcast), TypeError (dtypes).
    """
    result = run_fast(_TAKE_ALONG_AXIS, arr, indices, None, axis)
    if result is NotImplemented:
        result = run_general("numpy.take_along_axis", arr, indices, axis=axis)
    return result


def advanced_index(a: Any, indices: Any, index_dims: Sequence[int]) -> Any:
    """numpy advanced integer indexing ``a[..., idx_0, ..., idx_{k-1}, ...]`` with the index
    arrays on the increasing dims ``index_dims``, given stacked: indices = stack(broadcast(
    idx_0, ..., idx_{k-1}), axis=-1). Adjacent index dims put the broadcast shape in their
    place, separated ones put it first (numpy's rule). Integer indices only (a bool array in
    a[...] is a mask: TypeError here). Negatives wrap once; out of range is IndexError, also
    when the result is empty (https://numpy.org/doc/stable/user/basics.indexing.html).
    """
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
    """numpy.put_along_axis, IN PLACE like numpy (returns None): arr[i.., indices[i.., j, k..],
    k..] = values[i.., j, k..]. Same rules as take_along_axis: indices integer with arr's rank,
    broadcasting against arr on the other dimensions (axis=None: arr flattened, 1-D indices);
    values broadcast to that result shape and are cast to arr's dtype (numpy arrays). Duplicates:
    the last value in row-major order wins (numpy's fancy assignment). Negative indices wrap
    once; out of range is an IndexError. Raises ValueError (ranks, broadcasting), TypeError
    (dtypes). Source: https://numpy.org/doc/stable/reference/generated/numpy.put_along_axis.html"""
    values = _values_for(arr, values, "unsafe", "numpy.put_along_axis")
    run_scatter("numpy.put_along_axis", arr, indices, values, arr, axis=axis)


def add_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.add.at(a, indices, b) with ONE integer index array, IN PLACE like numpy (returns
    None): a[indices[j..], k..] += b[j.., k..], unbuffered (every duplicate adds, in row-major
    order of indices). b broadcasts to indices.shape + a.shape[1:] and is cast to a's dtype under
    numpy's 'same_kind' rule (numpy arrays). Negative indices wrap once; out of range is an
    IndexError. Tuples of index arrays, slices and masks are not supported. Raises ValueError
    (broadcasting), TypeError (dtypes). Source:
    https://numpy.org/doc/stable/reference/generated/numpy.ufunc.at.html"""
    b = _values_for(a, b, "same_kind", "numpy.add_at")
    run_scatter("numpy.add_at", a, indices, b, a)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """numpy.put(a, ind, v, mode='raise'), IN PLACE like numpy (returns None): a.flat[ind.flat[j]]
    = v.flat[j] for every j in order, so the last duplicate wins. ``ind``: integer indices of any
    shape (flat positions). ``v``: cast to a's dtype ('unsafe', as numpy); repeated cyclically
    when shorter than ind (done here with numpy.resize; the C++ op accepts 1 or >= ind.size
    elements), its first ind.size elements used when longer. Modes: "raise" (negatives wrap
    once, otherwise IndexError), "wrap" (modulo), "clip" (clamp to [0, a.size-1]; negatives
    become 0). Raises IndexError (range, an empty ``a``), ValueError (mode), TypeError (dtypes).
    Source: https://numpy.org/doc/stable/reference/generated/numpy.put.html"""
    import numpy as np

    v = _values_for(a, v, "unsafe", "numpy.put")
    size = int(np.size(ind))
    if 1 < np.size(v) < size:
        v = np.resize(v, size)
    run_scatter("numpy.put", a, ind, v, a, mode=mode)


def multiply_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.multiply.at(a, indices, b) with ONE integer index array, IN PLACE (returns None):
    a[indices[j..], k..] *= b[j.., k..], unbuffered (every duplicate multiplies, in row-major
    order of indices). Shapes, dtypes, index rule and errors as add_at.
    Source: https://numpy.org/doc/stable/reference/generated/numpy.ufunc.at.html"""
    b = _values_for(a, b, "same_kind", "numpy.multiply_at")
    run_scatter("numpy.multiply_at", a, indices, b, a)


def minimum_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.minimum.at(a, indices, b) with ONE integer index array, IN PLACE (returns None):
    a[indices[j..], k..] = minimum(a[indices[j..], k..], b[j.., k..]), unbuffered (every
    duplicate applies). Shapes, dtypes, index rule and errors as add_at. A NaN on either side
    gives NaN, as numpy.minimum.
    Source: https://numpy.org/doc/stable/reference/generated/numpy.ufunc.at.html"""
    b = _values_for(a, b, "same_kind", "numpy.minimum_at")
    run_scatter("numpy.minimum_at", a, indices, b, a)


def maximum_at(a: Any, indices: Any, b: Any) -> None:
    """numpy.maximum.at(a, indices, b) with ONE integer index array, IN PLACE (returns None):
    a[indices[j..], k..] = maximum(a[indices[j..], k..], b[j.., k..]), unbuffered. Shapes,
    dtypes, index rule and errors as add_at; a NaN on either side gives NaN, as numpy.maximum.
    Source: https://numpy.org/doc/stable/reference/generated/numpy.ufunc.at.html"""
    b = _values_for(a, b, "same_kind", "numpy.maximum_at")
    run_scatter("numpy.maximum_at", a, indices, b, a)
