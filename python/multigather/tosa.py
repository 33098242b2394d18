"""TOSA's GATHER on multigather: ``gather(values, indices)`` with values [N,K,C], indices [N,W]
-> output [N,W,C], output[n,w,c] = values[n, indices[n,w], c]. Negative and out-of-range
indices are errors (TOSA: REQUIRE fails). Runs in the C++ op registry (the frontends).
Source: https://www.mlplatform.org/tosa/tosa_spec.html#_gather

``scatter(values_in, indices, input)``: TOSA SCATTER, the dual (#_scatter).
"""

from __future__ import annotations

from ._registry import op_function

__all__ = ["gather", "scatter"]

gather = op_function("tosa.gather", "gather")
scatter = op_function("tosa.scatter", "scatter")
