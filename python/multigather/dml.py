"""DirectML's gather operators on multigather, with the DML_*_OPERATOR_DESC fields as arguments
(snake_case). Tensors are right-aligned to one DimensionCount (leading 1s) as in DirectML;
out-of-range indices are clamped ("all reads will be clamped safely within the input tensor").
They run in the C++ op registry.

- ``gather(input, indices, axis=0, index_dimensions=1)``: DML_GATHER_OPERATOR_DESC
- ``gather_elements(input, indices, axis=0)``: DML_GATHER_ELEMENTS_OPERATOR_DESC
- ``gather_nd(input, indices, input_dimension_count=0, indices_dimension_count=0,
  batch_dimension_count=0)``: DML_GATHER_ND1_OPERATOR_DESC
- ``scatter_elements(input, indices, updates, axis=0)``: DML_SCATTER_ELEMENTS_OPERATOR_DESC
- ``scatter_nd(input, indices, updates, input_dimension_count=0, indices_dimension_count=0)``:
  DML_SCATTER_ND_OPERATOR_DESC

Source: https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_gather_operator_desc
(and _gather_elements_, _gather_nd1_).
"""

from __future__ import annotations

from typing import Any

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("dml.Gather", "axis", "index_dimensions")
_GATHER_ELEMENTS = fast_op("dml.GatherElements", "axis")
_GATHER_ND = fast_op("dml.GatherND", "input_dimension_count", "indices_dimension_count",
                     "batch_dimension_count")

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd"]


def gather(input: Any, indices: Any, axis: int = 0, index_dimensions: int = 1) -> Any:
    """DML_GATHER_OPERATOR_DESC{InputTensor, IndicesTensor, Axis, IndexDimensions}, the desc fields
    as snake_case arguments. The operands are named input / indices here (the row: InputTensor,
    IndicesTensor). The rules and the index rule are the registry row's (below)."""
    result = run_fast(_GATHER, input, indices, None, axis, index_dimensions)
    if result is NotImplemented:
        result = run_general("dml.Gather", input, indices, axis=axis,
                             index_dimensions=index_dimensions)
    return result


def gather_elements(input: Any, indices: Any, axis: int = 0) -> Any:
    """DML_GATHER_ELEMENTS_OPERATOR_DESC{InputTensor, IndicesTensor, Axis}. The operands are named
    input / indices here (the row: InputTensor, IndicesTensor). The rules and the index rule are
    the registry row's (below)."""
    result = run_fast(_GATHER_ELEMENTS, input, indices, None, axis)
    if result is NotImplemented:
        result = run_general("dml.GatherElements", input, indices, axis=axis)
    return result


def gather_nd(input: Any, indices: Any, input_dimension_count: int = 0,
              indices_dimension_count: int = 0, batch_dimension_count: int = 0) -> Any:
    """DML_GATHER_ND1_OPERATOR_DESC{InputTensor, IndicesTensor, InputDimensionCount,
    IndicesDimensionCount, BatchDimensionCount}, the desc fields as snake_case arguments. The
    operands are named input / indices here (the row: InputTensor, IndicesTensor). The rules and
    the index rule are the registry row's (below)."""
    result = run_fast(_GATHER_ND, input, indices, None, input_dimension_count,
                      indices_dimension_count, batch_dimension_count)
    if result is NotImplemented:
        result = run_general("dml.GatherND", input, indices,
                             input_dimension_count=input_dimension_count,
                             indices_dimension_count=indices_dimension_count,
                             batch_dimension_count=batch_dimension_count)
    return result


def scatter_elements(input: Any, indices: Any, updates: Any, axis: int = 0) -> Any:
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC{InputTensor, IndicesTensor, UpdatesTensor, Axis}: a new
    array of input's shape and dtype. The operands are named input / indices / updates here (the
    row: InputTensor, IndicesTensor, UpdatesTensor). The rules and the index rule are the
    registry row's (below)."""
    return run_scatter("dml.ScatterElements", input, indices, updates, axis=axis)


def scatter_nd(input: Any, indices: Any, updates: Any, input_dimension_count: int = 0,
               indices_dimension_count: int = 0) -> Any:
    """DML_SCATTER_ND_OPERATOR_DESC{InputTensor, IndicesTensor, UpdatesTensor, InputDimensionCount,
    IndicesDimensionCount}: a new array of input's shape and dtype. The operands are named input
    / indices / updates here (the row: InputTensor, IndicesTensor, UpdatesTensor). The rules and
    the index rule are the registry row's (below)."""
    return run_scatter("dml.ScatterND", input, indices, updates,
                       input_dimension_count=input_dimension_count,
                       indices_dimension_count=indices_dimension_count)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
