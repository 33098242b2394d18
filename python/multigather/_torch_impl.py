"""The real implementations of the torch ops that have a fast path (torch.gather, torch.take,
torch.take_along_dim, torch.index_select, F.embedding) on any array, without the torch-op road:
``multigather.torch`` calls them for plain eager tensors and other arrays, and the
``torch.ops.multigather.*`` ops (``multigather.torch_ops``) call them as their implementation.

Imports: _registry only (so that torch.py and torch_ops.py both import it without a circle).
"""

from __future__ import annotations

from typing import Any, Optional

from ._registry import fast_op, run_fast, run_general

_GATHER = fast_op("torch.gather", "dim")
_TAKE = fast_op("torch.take")
_TAKE_ALONG_DIM = fast_op("torch.take_along_dim", "dim")
_INDEX_SELECT = fast_op("torch.index_select", "dim")

def _gather(input: Any, dim: int, index: Any) -> Any:
    """``gather`` on any array, without the torch-op route: the real implementation of
    torch.ops.multigather.gather (registry op "torch.gather")."""
    result = run_fast(_GATHER, input, index, None, dim)
    if result is NotImplemented:
        result = run_general("torch.gather", input, index, dim=dim)
    return result


def _take(input: Any, index: Any) -> Any:
    """``take`` on any array, without the torch-op route: the real implementation of
    torch.ops.multigather.take (registry op "torch.take")."""
    result = run_fast(_TAKE, input, index, None)
    if result is NotImplemented:
        result = run_general("torch.take", input, index)
    return result


def _take_along_dim(input: Any, indices: Any, dim: Optional[int] = None) -> Any:
    """``take_along_dim`` on any array, without the torch-op route: the real implementation of
    torch.ops.multigather.take_along_dim (registry op "torch.take_along_dim")."""
    result = run_fast(_TAKE_ALONG_DIM, input, indices, None, dim)
    if result is NotImplemented:
        result = run_general("torch.take_along_dim", input, indices, dim=dim)
    return result


def _index_select(input: Any, dim: int, index: Any) -> Any:
    """``index_select`` on any array, without the torch-op route: the real implementation of
    torch.ops.multigather.index_select (registry op "torch.index_select")."""
    result = run_fast(_INDEX_SELECT, input, index, None, dim)
    if result is NotImplemented:
        result = run_general("torch.index_select", input, index, dim=dim)
    return result


def _check_embedding(weight: Any, padding_idx: Optional[int]) -> None:
    if len(weight.shape) != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), not "
                         f"{len(weight.shape)}-D of shape {list(weight.shape)}")
    if padding_idx is not None and not 0 <= padding_idx < weight.shape[0]:
        raise ValueError(f"embedding: padding_idx = {padding_idx} must be within "
                         f"[-num_embeddings, num_embeddings) = [{-weight.shape[0]}, "
                         f"{weight.shape[0]})")


def _embedding(input: Any, weight: Any, padding_idx: Optional[int] = None) -> Any:
    """``embedding`` on any array, without the torch-op route (padding_idx already
    non-negative): the real implementation of torch.ops.multigather.embedding, registry op
    "torch.index_select" (dim 0) on the flattened indices."""
    _check_embedding(weight, padding_idx)
    if not hasattr(input, "reshape"):
        import numpy as np

        input = np.asarray(input)
    rows = _index_select(weight, 0, input.reshape(-1))
    return rows.reshape(tuple(input.shape) + (int(weight.shape[1]),))
