"""Core ML MIL (iOS17) gathers on multigather, with coremltools' argument names. They run in the
C++ op registry (the frontends); a build without it raises ValueError.

- ``gather(x, indices, axis=0, batch_dims=0, validate_indices=False)``: iOS17 gather
- ``gather_along_axis(x, indices, axis=0, validate_indices=False)``: iOS17 gather_along_axis
- ``gather_nd(x, indices, batch_dims=0, validate_indices=False)``: iOS17 gather_nd

Source: https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html
(iOS17.scatter_gather). Core ML has no int64 indices; they are accepted here anyway. Shapes and
index rules follow the op's registry entry (``multigather.explain("coreml.gather", ...)``).
"""

from __future__ import annotations

from typing import Any

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("coreml.gather", "axis", "batch_dims", "validate_indices")
_GATHER_ALONG_AXIS = fast_op("coreml.gather_along_axis", "axis", "validate_indices")
_GATHER_ND = fast_op("coreml.gather_nd", "batch_dims", "validate_indices")

__all__ = ["gather", "gather_along_axis", "gather_nd"]


def gather(x: Any, indices: Any, axis: int = 0, batch_dims: int = 0,
           validate_indices: bool = False) -> Any:
    """coreml gather: out = x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis+1:]."""
    result = run_fast(_GATHER, x, indices, None, axis, batch_dims, validate_indices)
    if result is NotImplemented:
        result = run_general("coreml.gather", x, indices, axis=axis, batch_dims=batch_dims,
                             validate_indices=validate_indices)
    return result


def gather_along_axis(x: Any, indices: Any, axis: int = 0, validate_indices: bool = False) -> Any:
    """coreml gather_along_axis: out.shape = indices.shape, out[p, j, s] = x[p, indices[p, j, s],
    s]; the dims other than axis must be equal."""
    result = run_fast(_GATHER_ALONG_AXIS, x, indices, None, axis, validate_indices)
    if result is NotImplemented:
        result = run_general("coreml.gather_along_axis", x, indices, axis=axis,
                             validate_indices=validate_indices)
    return result


def gather_nd(x: Any, indices: Any, batch_dims: int = 0, validate_indices: bool = False) -> Any:
    """coreml gather_nd: out = indices.shape[:-1] + x.shape[batch_dims + indices.shape[-1]:]."""
    result = run_fast(_GATHER_ND, x, indices, None, batch_dims, validate_indices)
    if result is NotImplemented:
        result = run_general("coreml.gather_nd", x, indices, batch_dims=batch_dims,
                             validate_indices=validate_indices)
    return result
