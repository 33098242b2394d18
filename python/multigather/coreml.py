"""Core ML MIL (iOS17) gathers and scatters on multigather, with coremltools' argument names:
``gather``, ``gather_along_axis``, ``gather_nd``, ``scatter``, ``scatter_along_axis``,
``scatter_nd``. Each function is made from its registry row (``_registry.op_function``): its
parameters, defaults and whole docstring (signature, formula, shape and dtype rules, index
rule, attributes, source) are the C++ row's (``multigather.explain("coreml.gather", ...)``).
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
