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
"""

from __future__ import annotations

from typing import Any, Sequence

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("stablehlo.gather", "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                  "start_indices_batching_dims", "start_index_map", "index_vector_dim",
                  "slice_sizes", "indices_are_sorted")

__all__ = ["gather"]


def gather(operand: Any, start_indices: Any, *, offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], start_index_map: Sequence[int],
           index_vector_dim: int, slice_sizes: Sequence[int],
           operand_batching_dims: Sequence[int] = (),
           start_indices_batching_dims: Sequence[int] = (),
           indices_are_sorted: bool = False) -> Any:
    """stablehlo.gather: slices of ``operand`` at clamped starts (see the module docstring).
    Result shape: batch dims (start_indices without index_vector_dim) and offset dims
    (slice_sizes without collapsed and batching dims) interleaved by offset_dims. Any integer
    start_indices (unsigned ones clamp as unsigned). Raises ValueError for dimension numbers
    that break the StableHLO constraints (C1-C22), TypeError for dtypes. Never IndexError:
    starts are clamped."""
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
