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

from ._registry import op_function

__all__ = ["gather", "gather_along_axis", "gather_nd", "scatter", "scatter_along_axis", "scatter_nd"]

gather = op_function("coreml.gather", "gather")
gather_along_axis = op_function("coreml.gather_along_axis", "gather_along_axis")
gather_nd = op_function("coreml.gather_nd", "gather_nd")
scatter = op_function("coreml.scatter", "scatter")
scatter_along_axis = op_function("coreml.scatter_along_axis", "scatter_along_axis")
scatter_nd = op_function("coreml.scatter_nd", "scatter_nd")
