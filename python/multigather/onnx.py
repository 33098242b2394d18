"""ONNX on multigather.

Ops (opset 13 / 18 semantics, ONNX Runtime's CPU reading): ``gather``, ``gather_elements``,
``gather_nd``, ``scatter_elements``, ``scatter_nd``. Each function is made from its registry row
(``_registry.op_function``): its parameters, its defaults and its whole docstring (signature,
formula, shape and dtype rules, index rule, attributes, source) are the C++ row's
(``multigather.explain("onnx.GatherND", ...)``).
Errors: IndexError (an index out of range), ValueError (shapes, attributes), TypeError (dtypes).

Whole models (docs/onnx.md): ``lower_model`` rewrites every gather and scatter node of a model
onto ``multigather.GatherMultiaxis`` / ``ScatterMultiaxis`` nodes, each with a standard-ONNX
function body; ``explain_model`` prints what each node became; ``custom_ops_library`` is the
ONNX Runtime library that runs those nodes on multigather's engine; ``register_schemas`` and
``reference_ops`` make the op known to ``onnx.checker`` and ``onnx.reference``.
"""

from __future__ import annotations

from ._onnx_model import DOMAIN, LoweredModel, ModelError, NodeReport, explain_model, lower_model
from ._onnx_runtime import OPSET_VERSION, custom_ops_library
from ._onnx_ops import (gather_multiaxis_reference, reference_ops, register_schemas,
                        scatter_multiaxis_reference)
from ._registry import op_function

# The model tools: not registry rows (the op functions above are).
_MODEL_TOOLS = ["DOMAIN", "OPSET_VERSION", "custom_ops_library", "lower_model", "explain_model", "LoweredModel", "NodeReport", "ModelError",
                "register_schemas", "reference_ops", "gather_multiaxis_reference",
                "scatter_multiaxis_reference"]
__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd", *_MODEL_TOOLS]

gather = op_function("onnx.Gather", "gather")
gather_elements = op_function("onnx.GatherElements", "gather_elements")
gather_nd = op_function("onnx.GatherND", "gather_nd")
scatter_elements = op_function("onnx.ScatterElements", "scatter_elements")
scatter_nd = op_function("onnx.ScatterND", "scatter_nd")
