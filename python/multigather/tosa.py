"""TOSA's GATHER and SCATTER on multigather: ``gather`` and ``scatter``. Each function is made
from its registry row (``_registry.op_function``): its parameters, defaults and whole docstring
(signature, formula, shape and dtype rules, index rule, source) are the C++ row's
(``multigather.explain("tosa.gather", ...)``).
"""

from __future__ import annotations

from ._registry import op_function

__all__ = ["gather", "scatter"]

gather = op_function("tosa.gather", "gather")
scatter = op_function("tosa.scatter", "scatter")
