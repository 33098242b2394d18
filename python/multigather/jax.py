"""JAX's numpy-style gathers on multigather, with jax.numpy's signatures and index modes.

- ``take(a, indices, axis=None, mode=None, fill_value=None)``: jax.numpy.take
  (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html)
- ``take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None)``:
  jax.numpy.take_along_axis
  (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take_along_axis.html)

Modes (jax/_src/numpy/indexing.py): None or "fill" (default): negatives wrap once, anything
else out of range becomes ``fill_value`` (default NaN for inexact dtypes, the minimum for signed
integers, the maximum for unsigned ones, True for bool). take: "clip" clamps WITHOUT wrapping
negatives (-1 -> 0), "wrap" is modulo. take_along_axis: "clip" wraps negatives once, then clamps;
"promise_in_bounds" clamps without wrapping (what XLA does with indices that break the promise).
lax.gather's dimension numbers are in ``multigather.stablehlo``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._lowering import Lowering, block, elements, flat, normalize_axis, numel
from ._registry import register, run

__all__ = ["take", "take_along_axis", "default_fill_value"]


def default_fill_value(dtype: Any) -> Any:
    """jax.numpy's fill value for out-of-range indices in mode "fill": NaN (inexact), the
    minimum (signed integers), the maximum (unsigned integers), True (bool)."""
    name = getattr(dtype, "name", None) or str(dtype).replace("torch.", "")
    if name == "bool":
        return True
    if name.startswith("int"):
        return int(np.iinfo(name).min)
    if name.startswith("uint"):
        return int(np.iinfo(name).max)
    return float("nan")


def _fill_for(fill_value: Any):
    # Resolved against the input's dtype when the lowering runs (see Lowering.run).
    return fill_value if fill_value is not None else default_fill_value


@register("jax.numpy.take")
def lower_take(a_shape, indices_shape, axis: Optional[int] = None, mode: Optional[str] = None,
               fill_value: Any = None) -> Lowering:
    if mode in (None, "fill"):
        policy = dict(index_mode="fill", negative_indices=True, fill_value=_fill_for(fill_value))
    elif mode == "clip":
        policy = dict(index_mode="clamp", negative_indices=False)
    elif mode == "wrap":
        policy = dict(index_mode="wrap", negative_indices=True)
    else:
        raise ValueError(f"jax.numpy.take: invalid mode '{mode}' (expected None, 'fill', 'clip' "
                         "or 'wrap'; jax does not support 'raise')")
    if axis is None:
        a_view, a = (numel(a_shape),), 0
    else:
        a_view = a_shape
        a = normalize_axis("jax.numpy.take", "axis", axis, len(a_shape))
    if a_view[a] == 0 and numel(indices_shape) > 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if axis is None:
        return flat("jax.numpy.take", a_shape, indices_shape, rule="out[j] = a.flat[indices[j]]",
                    **policy)
    return block("jax.numpy.take", a_shape, indices_shape, a,
                 rule="out[p, j, s] = a[p, indices[j], s]", **policy)


def take(a: Any, indices: Any, axis: Optional[int] = None, mode: Optional[str] = None,
         fill_value: Any = None) -> Any:
    """jax.numpy.take: numpy.take's shapes with jax's modes (see the module docstring).
    Raises IndexError for a non-empty take from an empty axis, ValueError (axis, mode),
    TypeError (dtypes)."""
    return run("jax.numpy.take", a, indices, axis=axis, mode=mode, fill_value=fill_value)


@register("jax.numpy.take_along_axis")
def lower_take_along_axis(arr_shape, indices_shape, axis: Optional[int] = -1,
                          mode: Optional[str] = None, fill_value: Any = None) -> Lowering:
    if mode in (None, "fill"):
        policy = dict(index_mode="fill", negative_indices=True, fill_value=_fill_for(fill_value))
    elif mode == "clip":
        policy = dict(index_mode="clamp", negative_indices=True)
    elif mode == "promise_in_bounds":
        policy = dict(index_mode="clamp", negative_indices=False)
    else:
        raise ValueError(f"jax.numpy.take_along_axis: invalid mode '{mode}' (expected None, "
                         "'fill', 'clip' or 'promise_in_bounds')")
    op = "jax.numpy.take_along_axis"
    if axis is None:
        if len(indices_shape) != 1:
            raise ValueError(f"{op}: indices must be 1-D if axis=None, got shape "
                             f"{tuple(indices_shape)}")
        lowering = flat(op, arr_shape, indices_shape, rule="out[j] = arr.flat[indices[j]]",
                        **policy)
    else:
        if len(indices_shape) != len(arr_shape):
            raise ValueError(f"{op}: indices and arr must have the same number of dimensions; "
                             f"{len(indices_shape)} vs. {len(arr_shape)}")
        a = normalize_axis(op, "axis", axis, len(arr_shape))
        lowering = elements(op, arr_shape, indices_shape, a,
                            rule="out[p, j, s] = arr[p, indices[p, j, s], s] (p, s broadcast)",
                            **policy)
    if lowering.input_shape[lowering.axes[0]] == 0:
        # jax returns zeros when the axis is empty, whatever the mode and the indices.
        lowering = lowering.replace(index_mode="fill", fill_value=0,
                                    notes=("the axis is empty: jax returns zeros",))
    return lowering


def take_along_axis(arr: Any, indices: Any, axis: Optional[int] = -1, mode: Optional[str] = None,
                    fill_value: Any = None) -> Any:
    """jax.numpy.take_along_axis: numpy.take_along_axis's shapes (broadcasting) with jax's
    modes (see the module docstring); an empty axis gives zeros. Raises ValueError (ranks,
    broadcasting, axis, mode), TypeError (dtypes)."""
    return run("jax.numpy.take_along_axis", arr, indices, axis=axis, mode=mode,
               fill_value=fill_value)
