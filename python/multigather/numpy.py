"""numpy's gathers on multigather, with numpy's signatures and rules.

- ``take(a, indices, axis=None, out=None, mode="raise")``: numpy.take
  (https://numpy.org/doc/stable/reference/generated/numpy.take.html).
- ``take_along_axis(arr, indices, axis=-1)``: numpy.take_along_axis
  (https://numpy.org/doc/stable/reference/generated/numpy.take_along_axis.html).

Arrays of any framework are accepted; the result has the input's framework.
"""

from __future__ import annotations

from typing import Any, Optional

from ._lowering import Lowering, block, flat, elements, normalize_axis
from ._registry import register, run

__all__ = ["take", "take_along_axis"]

_TAKE_MODES = {
    # raise: negatives wrap once, anything else out of range is an IndexError.
    "raise": dict(index_mode="error", negative_indices=True),
    # wrap: floor modulo the axis size.
    "wrap": dict(index_mode="wrap", negative_indices=True),
    # clip: clamp to [0, n-1]; numpy "disables indexing with negative numbers" (-1 -> 0).
    "clip": dict(index_mode="clamp", negative_indices=False),
}


@register("numpy.take")
def lower_take(a_shape, indices_shape, axis: Optional[int] = None, mode: str = "raise") -> Lowering:
    if mode not in _TAKE_MODES:
        raise ValueError(f"numpy.take: mode '{mode}' is not one of 'raise', 'wrap', 'clip'")
    policy = _TAKE_MODES[mode]
    if axis is None:
        return flat("numpy.take", a_shape, indices_shape, rule="out[j] = a.flat[indices[j]]",
                    **policy)
    if len(a_shape) == 0:
        raise ValueError(f"numpy.take: axis {axis} is out of bounds for array of dimension 0")
    a = normalize_axis("numpy.take", "axis", axis, len(a_shape))
    return block("numpy.take", a_shape, indices_shape, a,
                 rule="out[p, j, s] = a[p, indices[j], s]", **policy)


def take(a: Any, indices: Any, axis: Optional[int] = None, out: Any = None,
         mode: str = "raise") -> Any:
    """numpy.take: elements of ``a`` at ``indices`` along ``axis`` (flattened when None).

    Shapes: a.shape[:axis] + indices.shape + a.shape[axis+1:] (indices.shape for axis=None).
    Dtypes: any ``a``; integer ``indices``. Modes: "raise" (negatives wrap once, otherwise
    IndexError), "wrap" (modulo), "clip" (clamp to [0, n-1], negatives become 0).
    Raises IndexError (mode "raise", or any non-empty take from an empty axis), ValueError
    (axis, mode), TypeError (dtypes). ``out``: writable array of the output shape.
    """
    return run("numpy.take", a, indices, out=out, axis=axis, mode=mode)


@register("numpy.take_along_axis")
def lower_take_along_axis(arr_shape, indices_shape, axis: Optional[int] = -1) -> Lowering:
    policy = dict(index_mode="error", negative_indices=True)
    if axis is None:
        if len(indices_shape) != 1:
            raise ValueError("numpy.take_along_axis: when axis=None, `indices` must have a "
                             f"single dimension (got rank {len(indices_shape)})")
        return flat("numpy.take_along_axis", arr_shape, indices_shape,
                    rule="out[j] = arr.flat[indices[j]]", **policy)
    if len(indices_shape) != len(arr_shape):
        raise ValueError("numpy.take_along_axis: `indices` and `arr` must have the same number "
                         f"of dimensions (got {len(indices_shape)} and {len(arr_shape)})")
    if len(arr_shape) == 0:
        raise ValueError(f"numpy.take_along_axis: axis {axis} is out of bounds for array of "
                         "dimension 0")
    a = normalize_axis("numpy.take_along_axis", "axis", axis, len(arr_shape))
    return elements("numpy.take_along_axis", arr_shape, indices_shape, a,
                    rule="out[p, j, s] = arr[p, indices[p, j, s], s] (p, s broadcast)", **policy)


def take_along_axis(arr: Any, indices: Any, axis: Optional[int] = -1) -> Any:
    """numpy.take_along_axis: out[p, j, s] = arr[p, indices[p, j, s], s].

    Shapes: same rank; the dimensions other than ``axis`` broadcast both ways; axis=None
    flattens ``arr`` and needs 1-D indices. Negatives wrap once; out of range is IndexError.
    Raises ValueError (ranks, broadcasting, axis), TypeError (dtypes).
    """
    return run("numpy.take_along_axis", arr, indices, axis=axis)
