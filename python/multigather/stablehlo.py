"""StableHLO's gather (and so XLA's and jax.lax.gather's) on multigather.

``gather(operand, start_indices, *, offset_dims, collapsed_slice_dims, start_index_map,
index_vector_dim, slice_sizes, operand_batching_dims=(), start_indices_batching_dims=(),
indices_are_sorted=False)`` follows https://openxla.org/stablehlo/spec#gather: for every result
position, the start of the slice is start_indices[batch..., :] mapped to operand dims by
start_index_map and CLAMPED to [0, dim(d) - slice_sizes[d]] (no negative wrap: -1 -> 0); the
slice is added to it; batching dims pair an operand dim with a start_indices dim.

Lowering: one gather_multiaxis call whose kernel dims are the result dims in order, plus one
size-1 dim for each collapsed or batching operand dim (placed so that operand dims stay in
order: the operand is only viewed, never transposed or copied). Non-indexed operand dims are read
as their leading part [0, slice_size). The coordinates, clamp(start) + iota(window) for each
start_index_map dim and the batch position for each batching dim, are materialized from
start_indices (an index array prod(window sizes) times larger; point gathers have windows of 1).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._lowering import Lowering, numel
from ._registry import register, run

__all__ = ["gather"]

OP = "stablehlo.gather"


def _sorted_unique(name: str, values, bound: int) -> None:
    if list(values) != sorted(set(values)) or any(not 0 <= v < bound for v in values):
        raise ValueError(f"{OP}: {name} {list(values)} must be sorted, unique and in [0, {bound})")


@register("stablehlo.gather")
def lower_gather(operand_shape, start_indices_shape, *, offset_dims: Sequence[int] = (),
                 collapsed_slice_dims: Sequence[int] = (), start_index_map: Sequence[int] = (),
                 index_vector_dim: int = 0, slice_sizes: Sequence[int] = (),
                 operand_batching_dims: Sequence[int] = (),
                 start_indices_batching_dims: Sequence[int] = (),
                 indices_are_sorted: bool = False) -> Lowering:
    X, S = tuple(operand_shape), tuple(start_indices_shape)
    r, sr = len(X), len(S)
    M, OB, SB = list(start_index_map), list(operand_batching_dims), list(start_indices_batching_dims)
    collapsed, sizes = list(collapsed_slice_dims), list(slice_sizes)
    if not 0 <= index_vector_dim <= sr:
        raise ValueError(f"{OP}: index_vector_dim {index_vector_dim} must be in [0, {sr}]")
    if len(offset_dims) + len(collapsed) + len(OB) != r:
        raise ValueError(f"{OP}: rank(operand) {r} must equal size(offset_dims) "
                         f"{len(offset_dims)} + size(collapsed_slice_dims) {len(collapsed)} + "
                         f"size(operand_batching_dims) {len(OB)}")
    if len(sizes) != r or any(not 0 <= s <= d for s, d in zip(sizes, X)):
        raise ValueError(f"{OP}: slice_sizes {sizes} must have one entry in [0, dim] per operand "
                         f"dim {list(X)}")
    _sorted_unique("collapsed_slice_dims", collapsed, r)
    _sorted_unique("operand_batching_dims", OB, r)
    if set(collapsed) & set(OB):
        raise ValueError(f"{OP}: collapsed_slice_dims and operand_batching_dims must be disjoint")
    for d in collapsed + OB:
        if sizes[d] != 1:
            raise ValueError(f"{OP}: slice_sizes[{d}] = {sizes[d]} must be 1 for a collapsed or "
                             "batching dim (0 is not supported by this lowering)")
    vector_size = S[index_vector_dim] if index_vector_dim < sr else 1
    if len(M) != vector_size:
        raise ValueError(f"{OP}: size(start_index_map) {len(M)} must equal the index vector "
                         f"size {vector_size}")
    if len(set(M + OB)) != len(M + OB) or any(not 0 <= d < r for d in M):
        raise ValueError(f"{OP}: start_index_map {M} and operand_batching_dims {OB} must be "
                         f"distinct operand dims in [0, {r})")
    batch_source = [e for e in range(sr) if e != index_vector_dim]  # start dims -> batch dims
    if len(SB) != len(OB) or len(set(SB)) != len(SB) or any(
            e not in batch_source for e in SB):
        raise ValueError(f"{OP}: start_indices_batching_dims {SB} must pair one start_indices "
                         f"dim (not index_vector_dim) with each operand batching dim {OB}")
    for d, e in zip(OB, SB):
        if X[d] != S[e]:
            raise ValueError(f"{OP}: operand dim {d} (size {X[d]}) and start_indices dim {e} "
                             f"(size {S[e]}) are paired batching dims of different sizes")
    result_rank = len(batch_source) + len(offset_dims)
    _sorted_unique("offset_dims", list(offset_dims), result_rank)

    # Kernel dims: result dims in order, with each hidden (collapsed/batching) operand dim
    # inserted before the next operand dim, so that operand dims stay increasing.
    hidden = sorted(collapsed + OB)
    offset_operand = [d for d in range(r) if d not in hidden]
    kernel: list[tuple[str, int]] = []
    batch_iter, offset_iter = iter(batch_source), iter(offset_operand)
    for p in range(result_rank):
        if p in offset_dims:
            d = next(offset_iter)
            while hidden and hidden[0] < d:
                kernel.append(("operand", hidden.pop(0)))
            kernel.append(("operand", d))
        else:
            kernel.append(("batch", next(batch_iter)))
    kernel.extend(("operand", d) for d in hidden)
    position = {entry: p for p, entry in enumerate(kernel)}

    indexed = set(M) | set(OB)
    part = tuple(X[d] if d in indexed else sizes[d] for d in range(r))
    input_view = tuple(1 if kind == "batch" else part[i] for kind, i in kernel)
    logical = tuple(S[i] if kind == "batch" else (sizes[i] if i in M and i not in collapsed else 1)
                    for kind, i in kernel)
    axes = tuple(position[("operand", d)] for d in M + OB)
    c = max(len(axes), 1)
    indices_view = logical[:-1] + (logical[-1] * c,) if logical else ()
    result = tuple(S[i] if kind == "batch" else sizes[i] for kind, i in kernel
                   if not (kind == "operand" and i in collapsed + OB))

    def coordinates(start_indices: Any) -> np.ndarray:
        start = np.asarray(start_indices)
        if start.dtype.kind not in "iu":
            raise TypeError(f"{OP}: start_indices dtype {start.dtype} is not an integer type")
        if start.dtype.kind == "u":
            start = np.minimum(start, np.uint64(2**62)).astype(np.int64)
        start = start.astype(np.int64)
        start = (np.moveaxis(start, index_vector_dim, -1) if index_vector_dim < sr
                 else start[..., None])
        batch_view = tuple(S[i] if kind == "batch" else 1 for kind, i in kernel)
        coords = np.empty(logical + (len(axes),), np.int64)
        for j, d in enumerate(M):
            v = np.clip(start[..., j], 0, X[d] - sizes[d]).reshape(batch_view)
            if d not in collapsed:
                window = [1] * len(kernel)
                window[position[("operand", d)]] = sizes[d]
                v = v + np.arange(sizes[d]).reshape(window)
            coords[..., j] = np.broadcast_to(v, logical)
        for j, (d, e) in enumerate(zip(OB, SB)):
            iota = [1] * len(kernel)
            iota[position[("batch", e)]] = S[e]
            coords[..., len(M) + j] = np.broadcast_to(np.arange(S[e]).reshape(iota), logical)
        if not axes:
            return np.zeros(indices_view, np.int64)
        return coords.reshape(indices_view)

    notes = ["start indices are clamped to [0, dim - slice_size] and windows added "
             "(coordinates materialized from start_indices)"]
    if numel(result) and any(part[d] == 0 for d in range(r)):
        notes.append("an operand dim read by a non-empty result has size 0")
    return Lowering(OP, input_view, indices_view, axes, result, index_mode="error",
                    negative_indices=False, input_part=part,
                    rule="result = operand[clamp(start) + offset] (StableHLO gather)",
                    notes=tuple(notes), prepare_indices=coordinates)


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
    return run("stablehlo.gather", operand, start_indices, offset_dims=offset_dims,
               collapsed_slice_dims=collapsed_slice_dims, start_index_map=start_index_map,
               index_vector_dim=index_vector_dim, slice_sizes=slice_sizes,
               operand_batching_dims=operand_batching_dims,
               start_indices_batching_dims=start_indices_batching_dims,
               indices_are_sorted=indices_are_sorted)
