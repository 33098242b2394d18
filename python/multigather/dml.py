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
    """DML_GATHER: Output.Sizes = Input.Sizes[:Axis] ++ Indices.Sizes[last IndexDimensions] ++
    Input.Sizes[Axis+1:] (all tensors of one DimensionCount)."""
    result = run_fast(_GATHER, input, indices, None, axis, index_dimensions)
    if result is NotImplemented:
        result = run_general("dml.Gather", input, indices, axis=axis,
                             index_dimensions=index_dimensions)
    return result


def gather_elements(input: Any, indices: Any, axis: int = 0) -> Any:
    """DML_GATHER_ELEMENTS: output sizes = indices sizes, which must match the input's except
    at Axis."""
    result = run_fast(_GATHER_ELEMENTS, input, indices, None, axis)
    if result is NotImplemented:
        result = run_general("dml.GatherElements", input, indices, axis=axis)
    return result


def gather_nd(input: Any, indices: Any, input_dimension_count: int = 0,
              indices_dimension_count: int = 0, batch_dimension_count: int = 0) -> Any:
    """DML_GATHER_ND1: GatherND with batch dimensions over the trailing InputDimensionCount /
    IndicesDimensionCount dims of each tensor (0 = the tensor's rank)."""
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
    array of input's shape and dtype, output = input; output[indices[i, j, k], j, k] =
    updates[i, j, k] (axis 0). All three have the same rank (DimensionCount); indices match
    input's sizes on every dimension but axis; updates.shape == indices.shape; updates dtype ==
    input dtype; indices int32, int64, uint32 or uint64. Negative indices wrap once, then
    out-of-range values clamp to [0, D-1] (DirectML: "incorrect outputs, but no failure").
    Duplicates: undefined in DirectML; the last update in row-major order of indices wins here.
    Raises ValueError (ranks, shapes, axis), TypeError (dtypes)."""
    return run_scatter("dml.ScatterElements", input, indices, updates, axis=axis)


def scatter_nd(input: Any, indices: Any, updates: Any, input_dimension_count: int = 0,
               indices_dimension_count: int = 0) -> Any:
    """DML_SCATTER_ND_OPERATOR_DESC{InputTensor, IndicesTensor, UpdatesTensor,
    InputDimensionCount, IndicesDimensionCount}: on the original-rank tensors (the counts; 0 means
    the DimensionCount; the leading padding must be 1s), with k = indices.shape[-1] <= the input
    rank: output = input; output[indices[j, 0], ..., indices[j, k-1], t] = updates[j, t]. All three
    have the same DimensionCount; updates = indices.shape[:-1] + input.shape[k:] right-aligned
    (leading 1s). Index rule and duplicates as scatter_elements. Output: input's shape. Raises
    ValueError (ranks, shapes, counts), TypeError (dtypes)."""
    return run_scatter("dml.ScatterND", input, indices, updates,
                       input_dimension_count=input_dimension_count,
                       indices_dimension_count=indices_dimension_count)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
