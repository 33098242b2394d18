"""PyTorch's gathers on multigather, with PyTorch's argument names and CPU rules.

- ``gather(input, dim, index)``: torch.gather
  (https://pytorch.org/docs/stable/generated/torch.gather.html)
- ``take(input, index)``: torch.take (https://pytorch.org/docs/stable/generated/torch.take.html)
- ``take_along_dim(input, indices, dim=None)``: torch.take_along_dim
  (https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)
- ``index_select(input, dim, index)``: torch.index_select
  (https://pytorch.org/docs/stable/generated/torch.index_select.html)

gather and index_select reject negative indices (IndexError); torch.take wraps them once.
take_along_dim with a dim takes ``indices % input.size(dim)`` (floor modulo) as PyTorch 2.15
does, so negatives and out-of-range indices wrap; with dim=None they raise. Arrays of any framework
are accepted (not only torch tensors). The lowerings are the C++ registry's
(``multigather.explain("torch.gather", ...)``).
"""

from __future__ import annotations

from typing import Any, Optional

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("torch.gather", "dim")
_TAKE = fast_op("torch.take")
_TAKE_ALONG_DIM = fast_op("torch.take_along_dim", "dim")
_INDEX_SELECT = fast_op("torch.index_select", "dim")

__all__ = ["gather", "take", "take_along_dim", "index_select"]


def gather(input: Any, dim: int, index: Any) -> Any:
    """torch.gather: out.shape = index.shape, out[p, j, s] = input[p, index[p, j, s], s].
    Same number of dims; index.size(d) <= input.size(d) for d != dim (the leading part of input
    is read, no broadcasting). index int32 or int64; indices in [0, input.size(dim)): negatives
    are IndexError. An empty index gives an empty result of its shape after checking dim only
    (any dtype, rank and sizes, as PyTorch does). Raises IndexError, ValueError (dims, sizes),
    TypeError (dtypes)."""
    result = run_fast(_GATHER, input, index, None, dim)
    if result is NotImplemented:
        result = run_general("torch.gather", input, index, dim=dim)
    return result


def take(input: Any, index: Any) -> Any:
    """torch.take: input treated as 1-D; out.shape = index.shape; index int64 only; negatives
    wrap once, other out-of-range indices (and any non-empty take from an empty input) are
    IndexError."""
    result = run_fast(_TAKE, input, index, None)
    if result is NotImplemented:
        result = run_general("torch.take", input, index)
    return result


def take_along_dim(input: Any, indices: Any, dim: Optional[int] = None) -> Any:
    """torch.take_along_dim: out[p, j, s] = input[p, indices[p, j, s], s], the dims other than
    ``dim`` broadcast both ways; dim=None flattens input and indices (1-D output). With a dim,
    indices must be int64 and are taken modulo input.size(dim) as in PyTorch 2.15 (an empty dim
    is IndexError); dim=None is torch.gather on the flattened tensors: int32 or int64 indices
    (any dtype when empty), negative and out-of-range indices are IndexError. Raises
    IndexError, ValueError, TypeError."""
    result = run_fast(_TAKE_ALONG_DIM, input, indices, None, dim)
    if result is NotImplemented:
        result = run_general("torch.take_along_dim", input, indices, dim=dim)
    return result


def index_select(input: Any, dim: int, index: Any) -> Any:
    """torch.index_select: out = input with out.size(dim) = len(index), out[p, j, s] =
    input[p, index[j], s]. index 1-D (or 0-D), int32 or int64. A 0-D input takes exactly one
    index (0) and gives a 0-D result. Negatives are IndexError; every index is checked, also
    when another dim of input is 0 (an empty result), as PyTorch does."""
    result = run_fast(_INDEX_SELECT, input, index, None, dim)
    if result is NotImplemented:
        result = run_general("torch.index_select", input, index, dim=dim)
    return result
