"""ONNX's gathers and scatters on multigather (opset 13 / 18 semantics, ONNX Runtime's CPU
reading): ``gather``, ``gather_elements``, ``gather_nd``, ``scatter_elements``, ``scatter_nd``.
Each function is made from its registry row (``_registry.op_function``): its parameters, its
defaults and its whole docstring (signature, formula, shape and dtype rules, index rule,
attributes, source) are the C++ row's (``multigather.explain("onnx.GatherND", ...)``).
Errors: IndexError (an index out of range), ValueError (shapes, attributes), TypeError (dtypes).
"""

from __future__ import annotations

from ._registry import op_function

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]

gather = op_function("onnx.Gather", "gather")
gather_elements = op_function("onnx.GatherElements", "gather_elements")
gather_nd = op_function("onnx.GatherND", "gather_nd")
scatter_elements = op_function("onnx.ScatterElements", "scatter_elements")
scatter_nd = op_function("onnx.ScatterND", "scatter_nd")
