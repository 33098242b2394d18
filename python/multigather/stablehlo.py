"""StableHLO's gather (and so XLA's and jax.lax.gather's) on multigather.

``gather(operand, start_indices, *, offset_dims, collapsed_slice_dims, start_index_map,
index_vector_dim, slice_sizes, operand_batching_dims=(), start_indices_batching_dims=(),
indices_are_sorted=False)`` follows https://openxla.org/stablehlo/spec#gather: for every result
position, the start of the slice is start_indices[batch..., :] mapped to operand dims by
start_index_map and CLAMPED to [0, dim(d) - slice_sizes[d]] (no negative wrap: -1 -> 0); the
slice is added to it; batching dims pair an operand dim with a start_indices dim.

Point gathers become one gather_multiaxis call on views; windowed slices need coordinates
clamp(start) + iota(window) materialized (``multigather.explain("stablehlo.gather", ...)``
shows the lowering of a given call). The lowering is the C++ registry's.

``scatter(inputs, scatter_indices, updates, *, update_window_dims, inserted_window_dims,
scatter_dims_to_operand_dims, index_vector_dim, input_batching_dims=(),
scatter_indices_batching_dims=(), update_computation="assign", indices_are_sorted=False,
unique_indices=False)`` follows https://openxla.org/stablehlo/spec#scatter with one input and
the update_computation restricted to "assign" / "add" / "mul" / "min" / "max": every update
element goes to result_index = full_start_index + full_batching_index + full_window_index and
combines there. Index rule: XLA's, which ``jax.lax.scatter`` follows (FILL_OR_DROP and
PROMISE_IN_BOUNDS): an update whose window does not fit, i.e. whose start on an indexed dim is
outside [0, D - window], is skipped WHOLE (the StableHLO spec's text checks each element's
result_index instead: a window that sticks out would be written in part); no negative wrap.
Duplicates combine in row-major order of the core gather shape (free scatter_indices dims,
then operand dims; StableHLO leaves the schedule implementation-defined).
"""

from __future__ import annotations

from typing import Any, Sequence

from ._registry import document as _registry_document
from ._registry import fast_op, run_fast, run_general, run_scatter

_GATHER = fast_op("stablehlo.gather", "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                  "start_indices_batching_dims", "start_index_map", "index_vector_dim",
                  "slice_sizes", "indices_are_sorted")

__all__ = ["gather", "scatter"]


def gather(operand: Any, start_indices: Any, *, offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], start_index_map: Sequence[int],
           index_vector_dim: int, slice_sizes: Sequence[int],
           operand_batching_dims: Sequence[int] = (),
           start_indices_batching_dims: Sequence[int] = (),
           indices_are_sorted: bool = False) -> Any:
    """stablehlo.gather with the dimension numbers as keyword arguments (see the module docstring).
    The rules and the index rule are the registry row's (below)."""
    result = run_fast(_GATHER, operand, start_indices, None, offset_dims, collapsed_slice_dims,
                      operand_batching_dims, start_indices_batching_dims, start_index_map,
                      index_vector_dim, slice_sizes, indices_are_sorted)
    if result is NotImplemented:
        result = run_general("stablehlo.gather", operand, start_indices, offset_dims=offset_dims,
                             collapsed_slice_dims=collapsed_slice_dims,
                             start_index_map=start_index_map, index_vector_dim=index_vector_dim,
                             slice_sizes=slice_sizes, operand_batching_dims=operand_batching_dims,
                             start_indices_batching_dims=start_indices_batching_dims,
                             indices_are_sorted=indices_are_sorted)
    return result


def scatter(inputs: Any, scatter_indices: Any, updates: Any, *, update_window_dims: Sequence[int],
            inserted_window_dims: Sequence[int], scatter_dims_to_operand_dims: Sequence[int],
            index_vector_dim: int, input_batching_dims: Sequence[int] = (),
            scatter_indices_batching_dims: Sequence[int] = (), update_computation: str = "assign",
            indices_are_sorted: bool = False, unique_indices: bool = False) -> Any:
    """stablehlo.scatter with one input and the scatter dimension numbers as keyword arguments (see
    the module docstring): a new array of ``inputs``' shape and dtype. The rules and the index
    rule are the registry row's (below)."""
    return run_scatter("stablehlo.scatter", inputs, scatter_indices, updates,
                       update_window_dims=update_window_dims,
                       inserted_window_dims=inserted_window_dims,
                       input_batching_dims=input_batching_dims,
                       scatter_indices_batching_dims=scatter_indices_batching_dims,
                       scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
                       index_vector_dim=index_vector_dim, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, update_computation=update_computation)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
