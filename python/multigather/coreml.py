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

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("coreml.gather", "axis", "batch_dims", "validate_indices")
_GATHER_ALONG_AXIS = fast_op("coreml.gather_along_axis", "axis", "validate_indices")
_GATHER_ND = fast_op("coreml.gather_nd", "batch_dims", "validate_indices")

__all__ = ["gather", "gather_along_axis", "gather_nd", "scatter", "scatter_along_axis", "scatter_nd"]


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


def scatter(data: Any, indices: Any, updates: Any, axis: int = 0, mode: str = "add",
            validate_indices: bool = False) -> Any:
    """coreml scatter (iOS17): output = data; output[p, indices[i], q] = f(output[..], updates[p, i, q])
    with updates.shape == data.shape[:axis] + indices.shape + data.shape[axis+1:];
    mode "update", "add" (the default), "sub" (an exact negated copy of updates is added), "mul",
    "max", "min"; "div" is refused (ValueError: no exact form). Index dtypes int32, int16,
    uint16, int8, uint8 (int64 accepted); negative indices wrap once; validate_indices=True:
    out of range is an IndexError, False: undefined in Core ML, clamped to [0, D-1] here.
    Duplicates with mode "update": unspecified in Core ML, the last in row-major order wins.
    Raises ValueError (shapes, axis, mode), TypeError (dtypes).
    Source: https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html (iOS17.scatter_gather.scatter)"""
    return run_scatter("coreml.scatter", data, indices, updates, axis=axis, mode=mode,
                       validate_indices=validate_indices)


def scatter_along_axis(data: Any, indices: Any, updates: Any, axis: int = 0, mode: str = "add",
                       validate_indices: bool = False) -> Any:
    """coreml scatter_along_axis (iOS17): output = data; output[indices[i][j][k]][j][k] =
    f(output[..], updates[i][j][k]) (axis 0); indices rank == data rank with data's sizes on every
    dimension but axis; updates.shape == indices.shape;
    mode "update", "add" (the default), "sub" (an exact negated copy of updates is added), "mul",
    "max", "min"; "div" is refused (ValueError: no exact form). Index dtypes int32, int16,
    uint16, int8, uint8 (int64 accepted); negative indices wrap once; validate_indices=True:
    out of range is an IndexError, False: undefined in Core ML, clamped to [0, D-1] here.
    Duplicates with mode "update": unspecified in Core ML, the last in row-major order wins.
    Raises ValueError (shapes, axis, mode), TypeError (dtypes).
    Source: https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html (iOS17.scatter_gather.scatter_along_axis)"""
    return run_scatter("coreml.scatter_along_axis", data, indices, updates, axis=axis, mode=mode,
                       validate_indices=validate_indices)


def scatter_nd(data: Any, indices: Any, updates: Any, mode: str = "add", validate_indices: bool = False) -> Any:
    """coreml scatter_nd (iOS17): output = data; output[indices[i, :], t] = f(output[..], updates[i, t])
    with K = indices.shape[-1] <= rank(data) and updates.shape == indices.shape[:-1] + data.shape[K:];
    mode "update", "add" (the default), "sub" (an exact negated copy of updates is added), "mul",
    "max", "min"; "div" is refused (ValueError: no exact form). Index dtypes int32, int16,
    uint16, int8, uint8 (int64 accepted); negative indices wrap once; validate_indices=True:
    out of range is an IndexError, False: undefined in Core ML, clamped to [0, D-1] here.
    Duplicates with mode "update": unspecified in Core ML, the last in row-major order wins.
    Raises ValueError (shapes, axis, mode), TypeError (dtypes).
    Source: https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html (iOS17.scatter_gather.scatter_nd)"""
    return run_scatter("coreml.scatter_nd", data, indices, updates, mode=mode, validate_indices=validate_indices)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
