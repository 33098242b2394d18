"""PyTorch's gathers on multigather, with PyTorch's argument names and CPU rules.

- ``gather(input, dim, index)``: torch.gather
  (https://pytorch.org/docs/stable/generated/torch.gather.html)
- ``take(input, index)``: torch.take (https://pytorch.org/docs/stable/generated/torch.take.html)
- ``take_along_dim(input, indices, dim=None)``: torch.take_along_dim
  (https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)
- ``index_select(input, dim, index)``: torch.index_select
  (https://pytorch.org/docs/stable/generated/torch.index_select.html)

gather, index_select and take_along_dim(dim=None) reject negative indices (IndexError, as
PyTorch); torch.take wraps them once; take_along_dim with a dim takes every index modulo the
dimension size (PyTorch 2.15 computes `indices % size` first; older releases rejected negatives). Arrays of any framework are accepted (not only torch tensors).
"""

from __future__ import annotations

from typing import Any, Optional

from ._lowering import Lowering, elements, flat, normalize_axis, numel
from ._registry import register, run

__all__ = ["gather", "take", "take_along_dim", "index_select"]

_NO_NEGATIVES = dict(index_mode="error", negative_indices=False)


@register("torch.gather")
def lower_gather(input_shape, index_shape, dim: int = 0) -> Lowering:
    # 0-d tensors count as 1-d of size 1 in PyTorch's shape checks.
    x = input_shape or (1,)
    i = index_shape or (1,)
    if len(x) != len(i):
        raise ValueError("torch.gather: Index tensor must have the same number of dimensions as "
                         f"input tensor (got {len(index_shape)} and {len(input_shape)})")
    d = normalize_axis("torch.gather", "dim", dim, len(x))
    for e in range(len(x)):
        if e != d and i[e] > x[e] and numel(i) > 0:
            raise ValueError(f"torch.gather: Size does not match at dimension {e} expected "
                             f"index {list(index_shape)} to be no larger than self "
                             f"{list(input_shape)} apart from dimension {d}")
    if numel(i) == 0:  # PyTorch returns an empty output without further checks
        part = tuple(min(s, 1) for s in input_shape)
        return Lowering("torch.gather", (numel(part),), (0,), (0,), tuple(index_shape),
                        input_part=part if input_shape else None,
                        rule="empty index: empty output", **_NO_NEGATIVES)
    lowering = elements("torch.gather", x, i, d, leading_part=True,
                        rule="out[p, j, s] = input[p, index[p, j, s], s], out.shape = index.shape",
                        **_NO_NEGATIVES)
    return lowering.replace(result_shape=tuple(index_shape),
                            input_part=lowering.input_part if input_shape else None)


def gather(input: Any, dim: int, index: Any) -> Any:
    """torch.gather: out.shape = index.shape, out[p, j, s] = input[p, index[p, j, s], s].
    Same number of dims; index.size(d) <= input.size(d) for d != dim (the leading part of input
    is read, no broadcasting). Indices in [0, input.size(dim)): negatives are IndexError.
    Raises IndexError, ValueError (dims, sizes), TypeError (dtypes)."""
    return run("torch.gather", input, index, dim=dim)


@register("torch.take")
def lower_take(input_shape, index_shape) -> Lowering:
    return flat("torch.take", input_shape, index_shape, rule="out[j] = input.flatten()[index[j]]",
                index_mode="error", negative_indices=True)


def take(input: Any, index: Any) -> Any:
    """torch.take: input treated as 1-D; out.shape = index.shape; negatives wrap once, other
    out-of-range indices (and any non-empty take from an empty input) are IndexError."""
    return run("torch.take", input, index)


@register("torch.take_along_dim")
def lower_take_along_dim(input_shape, indices_shape, dim: Optional[int] = None) -> Lowering:
    if dim is None:
        return flat("torch.take_along_dim", input_shape, indices_shape,
                    rule="out = input.view(-1).gather(0, indices.view(-1))",
                    **_NO_NEGATIVES).replace(result_shape=(numel(indices_shape),))
    if len(input_shape) != len(indices_shape):
        raise ValueError("torch.take_along_dim: input and indices should have the same number "
                         f"of dimensions, but got {len(input_shape)} dimensions for input, and "
                         f"{len(indices_shape)} dimensions for indices")
    d = normalize_axis("torch.take_along_dim", "dim", dim, max(len(input_shape), 1))
    # PyTorch (2.15, ATen and torch/_refs alike) computes `indices % input.size(dim)` before its
    # gather: negatives wrap, and so does every out-of-range index (floor modulo).
    return elements("torch.take_along_dim", input_shape, indices_shape, d,
                    rule="out[p, j, s] = input[p, indices[p, j, s] mod n, s] (p, s broadcast)",
                    index_mode="wrap", negative_indices=True)


def take_along_dim(input: Any, indices: Any, dim: Optional[int] = None) -> Any:
    """torch.take_along_dim: out[p, j, s] = input[p, indices[p, j, s] mod n, s], the dims other
    than ``dim`` broadcast both ways (indices wrap modulo n = input.size(dim), as PyTorch 2.15);
    dim=None flattens input and indices (1-D output) and rejects negatives and out-of-range
    indices (IndexError). Raises IndexError, ValueError, TypeError."""
    return run("torch.take_along_dim", input, indices, dim=dim)


@register("torch.index_select")
def lower_index_select(input_shape, index_shape, dim: int = 0) -> Lowering:
    if len(index_shape) > 1:
        raise ValueError(f"torch.index_select: index should have 1 or 0 dims (got "
                         f"{len(index_shape)})")
    x = input_shape or (1,)
    d = normalize_axis("torch.index_select", "dim", dim, len(x))
    n = numel(index_shape)
    indices_view = (1,) * d + (n,) + (1,) * (len(x) - d - 1)
    result = input_shape[:d] + (n,) + input_shape[d + 1 :] if input_shape else ()
    return Lowering("torch.index_select", x, indices_view, (d,), result,
                    rule="out[p, j, s] = input[p, index[j], s]", **_NO_NEGATIVES)


def index_select(input: Any, dim: int, index: Any) -> Any:
    """torch.index_select: out = input with out.size(dim) = len(index), out[p, j, s] =
    input[p, index[j], s]. index 1-D (or 0-D). Negatives are IndexError."""
    return run("torch.index_select", input, index, dim=dim)
