"""WebNN's gathers and scatters on multigather, with WebNN's names: ``gather``,
``gather_elements`` (gatherElements), ``gather_nd`` (gatherND), ``scatter_elements``
(scatterElements), ``scatter_nd`` (scatterND). Each function is made from its registry row
(``_registry.op_function``): its parameters, defaults and whole docstring (signature, formula,
shape and dtype rules, index rule, attributes, source) are the C++ row's
(``multigather.explain("webnn.gather", ...)``).
"""

from __future__ import annotations

from ._registry import op_function

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]

gather = op_function("webnn.gather", "gather")
gather_elements = op_function("webnn.gatherElements", "gather_elements")
gather_nd = op_function("webnn.gatherND", "gather_nd")
scatter_elements = op_function("webnn.scatterElements", "scatter_elements")
scatter_nd = op_function("webnn.scatterND", "scatter_nd")
