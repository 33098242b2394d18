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

from ._registry import fast_op, run_fast, run_general

_TAKE = fast_op("jax.numpy.take", "axis", "mode", "fill_value")
_TAKE_ALONG_AXIS = fast_op("jax.numpy.take_along_axis", "axis", "mode", "fill_value")

__all__ = ["take", "take_along_axis"]


def take(a: Any, indices: Any, axis: Optional[int] = None, mode: Optional[str] = None,
         fill_value: Any = None) -> Any:
    """jax.numpy.take: numpy.take's shapes with jax's modes (see the module docstring).
    Raises IndexError for a non-empty take from an empty axis, ValueError (axis, mode),
    TypeError (dtypes)."""
    result = run_fast(_TAKE, a, indices, None, axis, mode, fill_value)
    if result is NotImplemented:
        result = run_general("jax.numpy.take", a, indices, axis=axis, mode=mode,
                             fill_value=fill_value)
    return result


def take_along_axis(arr: Any, indices: Any, axis: Optional[int] = -1, mode: Optional[str] = None,
                    fill_value: Any = None) -> Any:
    """jax.numpy.take_along_axis: numpy.take_along_axis's shapes (broadcasting) with jax's
    modes (see the module docstring); an empty axis gives zeros. Raises ValueError (ranks,
    broadcasting, axis, mode), TypeError (dtypes)."""
    result = run_fast(_TAKE_ALONG_AXIS, arr, indices, None, axis, mode, fill_value)
    if result is NotImplemented:
        result = run_general("jax.numpy.take_along_axis", arr, indices, axis=axis, mode=mode,
                             fill_value=fill_value)
    return result
