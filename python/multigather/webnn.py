"""WebNN's gathers and scatters on multigather, with WebNN's names: ``gather(input, indices,
axis=0)``, ``gather_elements(input, indices, axis=0)`` (gatherElements), ``gather_nd(input,
indices)`` (gatherND), ``scatter_elements(input, indices, updates, axis=0)`` (scatterElements),
``scatter_nd(input, indices, updates)`` (scatterND). Negative indices wrap once, then out-of-range indices clamp to [0, N-1] (what the
web-platform-tests expect). They run in the C++ op registry (the frontends).
Source: https://www.w3.org/TR/webnn/ (gather, gatherElements, gatherND, scatterElements, scatterND).
"""

from __future__ import annotations

from ._registry import op_function

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]

gather = op_function("webnn.gather", "gather")
gather_elements = op_function("webnn.gatherElements", "gather_elements")
gather_nd = op_function("webnn.gatherND", "gather_nd")
scatter_elements = op_function("webnn.scatterElements", "scatter_elements")
scatter_nd = op_function("webnn.scatterND", "scatter_nd")
