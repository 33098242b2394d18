"""PyTorch's gathers on multigather, with PyTorch's argument names and CPU rules.

- ``gather(input, dim, index)``: torch.gather
  (https://pytorch.org/docs/stable/generated/torch.gather.html)
- ``take(input, index)``: torch.take (https://pytorch.org/docs/stable/generated/torch.take.html)
- ``take_along_dim(input, indices, dim=None)``: torch.take_along_dim
  (https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)
- ``index_select(input, dim, index)``: torch.index_select
  (https://pytorch.org/docs/stable/generated/torch.index_select.html)
- ``embedding(input, weight, padding_idx=None)``: torch.nn.functional.embedding
  (https://pytorch.org/docs/stable/generated/torch.nn.functional.embedding.html)

Torch tensors go through the PyTorch ops ``torch.ops.multigather.gather`` / ``take`` /
``take_along_dim`` / ``index_select`` / ``embedding`` (``multigather.torch_ops``) whenever
autograd or PyTorch's tracing can see the call (an input that requires grad in grad mode,
torch.compile, torch.export, FakeTensors, torch function / dispatch modes): they have gradients
(input's, as a scatter_multiaxis add; indices get none), fake implementations for
``torch.compile(fullgraph=True)`` and ``torch.export``, and run the same registry op. Plain
tensors in eager mode without autograd run that registry op directly (the op's real
implementation, without the dispatcher's overhead); other arrays (numpy, lists, jax, ...) too.

Scatters (out of place, as the torch functions): ``scatter(input, dim, index, src, reduce=None)``,
``scatter_add(input, dim, index, src)``, ``scatter_reduce(input, dim, index, src, reduce,
include_self=True)`` (sum, prod, mean, amax, amin), ``index_add(input, dim, index, source,
alpha=1)``. They reject negative indices.

gather and index_select reject negative indices (IndexError); torch.take wraps them once.
take_along_dim with a dim takes ``indices % input.size(dim)`` (floor modulo) as PyTorch 2.15
does, so negatives and out-of-range indices wrap; with dim=None they raise. Arrays of any framework
are accepted (not only torch tensors). The lowerings are the C++ registry's
(``multigather.explain("torch.gather", ...)``).
"""

from __future__ import annotations

from typing import Any, Optional

from ._registry import document as _registry_document
from ._registry import op_function, run_fast, run_general, run_scatter
from . import _torch_route
from ._torch_impl import _GATHER, _INDEX_SELECT, _TAKE, _TAKE_ALONG_DIM, _embedding
from ._torch_route import torch_op_needed, torch_ops

__all__ = ["gather", "take", "take_along_dim", "index_select", "embedding", "index_copy", "index_fill", "put", "index_put",
           "scatter", "scatter_add",
           "scatter_reduce", "index_add"]


def gather(input: Any, dim: int, index: Any) -> Any:
    """torch.gather: out.shape = index.shape, out[p, j, s] = input[p, index[p, j, s], s].
    Same number of dims; index.size(d) <= input.size(d) for d != dim (the leading part of input
    is read, no broadcasting). index int32 or int64; indices in [0, input.size(dim)): negatives
    are IndexError. An empty index gives an empty result of its shape after checking dim only
    (any dtype, rank and sizes, as PyTorch does). Raises IndexError, ValueError (dims, sizes),
    TypeError (dtypes). Torch tensors needing autograd or tracing: ``torch.ops.multigather.gather``
    (differentiable in input). Registry op "torch.gather"."""
    if not _torch_route.is_compiling():  # eager calls; torch.compile traces the torch op below
        result = run_fast(_GATHER, input, index, None, dim)
        if result is not NotImplemented:
            return result
    if torch_op_needed(input, index):
        return torch_ops().gather(input, dim, index)
    return run_general("torch.gather", input, index, dim=dim)


def take(input: Any, index: Any) -> Any:
    """torch.take: input treated as 1-D; out.shape = index.shape; index int64 only; negatives
    wrap once, other out-of-range indices (and any non-empty take from an empty input) are
    IndexError. Torch tensors: ``torch.ops.multigather.take`` (differentiable in input).
    Registry op "torch.take"."""
    if not _torch_route.is_compiling():  # eager calls; torch.compile traces the torch op below
        result = run_fast(_TAKE, input, index, None)
        if result is not NotImplemented:
            return result
    if torch_op_needed(input, index):
        return torch_ops().take(input, index)
    return run_general("torch.take", input, index)


def take_along_dim(input: Any, indices: Any, dim: Optional[int] = None) -> Any:
    """torch.take_along_dim: out[p, j, s] = input[p, indices[p, j, s], s], the dims other than
    ``dim`` broadcast both ways; dim=None flattens input and indices (1-D output). With a dim,
    indices must be int64 and are taken modulo input.size(dim) as in PyTorch 2.15 (an empty dim
    is IndexError); dim=None is torch.gather on the flattened tensors: int32 or int64 indices
    (any dtype when empty), negative and out-of-range indices are IndexError. Raises
    IndexError, ValueError, TypeError. Torch tensors: ``torch.ops.multigather.take_along_dim``
    (differentiable in input). Registry op "torch.take_along_dim"."""
    if not _torch_route.is_compiling():  # eager calls; torch.compile traces the torch op below
        result = run_fast(_TAKE_ALONG_DIM, input, indices, None, dim)
        if result is not NotImplemented:
            return result
    if torch_op_needed(input, indices):
        return torch_ops().take_along_dim(input, indices, dim)
    return run_general("torch.take_along_dim", input, indices, dim=dim)


def index_select(input: Any, dim: int, index: Any) -> Any:
    """torch.index_select: out = input with out.size(dim) = len(index), out[p, j, s] =
    input[p, index[j], s]. index 1-D (or 0-D), int32 or int64. A 0-D input takes exactly one
    index (0) and gives a 0-D result. Negatives are IndexError; every index is checked, also
    when another dim of input is 0 (an empty result), as PyTorch does. Torch tensors:
    ``torch.ops.multigather.index_select`` (differentiable in input). Registry op
    "torch.index_select"."""
    if not _torch_route.is_compiling():  # eager calls; torch.compile traces the torch op below
        result = run_fast(_INDEX_SELECT, input, index, None, dim)
        if result is not NotImplemented:
            return result
    if torch_op_needed(input, index):
        return torch_ops().index_select(input, dim, index)
    return run_general("torch.index_select", input, index, dim=dim)


def embedding(input: Any, weight: Any, padding_idx: Optional[int] = None) -> Any:
    """torch.nn.functional.embedding(input, weight, padding_idx): rows of ``weight``
    [num_embeddings, embedding_dim] at the int32/int64 indices ``input`` (any shape); the result
    has shape input.shape + [embedding_dim] and weight's dtype. Indices must be in
    [0, num_embeddings) (IndexError otherwise; negatives too, as PyTorch). padding_idx (negative
    counts from the end, as PyTorch) gets no gradient. Raises ValueError for a weight that is
    not 2-D or a padding_idx out of range. Torch tensors: ``torch.ops.multigather.embedding``
    (differentiable in weight); other arrays: index_select of the rows (registry op
    "torch.index_select", dim 0)."""
    if padding_idx is not None:
        n = int(weight.shape[0]) if len(weight.shape) == 2 else None
        if n is not None and not -n <= padding_idx < n:  # torch's rule, on the value as given
            raise ValueError(f"embedding: padding_idx = {padding_idx} must be within "
                             f"[-num_embeddings, num_embeddings) = [{-n}, {n})")
        if n is not None and padding_idx < 0:
            padding_idx += n
    if torch_op_needed(weight, input):
        return torch_ops().embedding(input, weight, padding_idx)
    return _embedding(input, weight, padding_idx)


_SCATTER_DOC = """ Same number of dims for input, index and src (0-D counts as 1-D); index int64 (or
    int32, as PyTorch 2.15 accepts); src dtype == input dtype; index.size(d) <= src.size(d) for
    every d (src's leading part is read) and <= input.size(d) for d != dim (a smaller size writes
    only the leading part, as PyTorch: the rest of the output keeps input's values). Indices in [0, input.size(dim)): negatives and
    out of range are IndexError. Raises ValueError (dims, sizes, reduce), TypeError (dtypes)."""


def scatter(input: Any, dim: int, index: Any, src: Any, reduce: Optional[str] = None) -> Any:
    """torch.scatter: a new tensor, out = input; out[index[i][j][k]][j][k] = src[i][j][k] (dim 0;
    likewise for other dims); reduce "add" or "multiply" combines instead of assigning.
    Duplicates without reduce: PyTorch picks one nondeterministically; here the last update in
    row-major order of index wins. (The ``value=`` scalar form is not provided.)"""
    if reduce is None:
        reduce = "none"
    return run_scatter("torch.scatter", input, index, src, dim=dim, reduce=reduce)


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Any:
    """torch.scatter_add: a new tensor, out = input; out[index[i][j][k]][j][k] += src[i][j][k]
    (dim 0), every duplicate added in row-major order of index (bit-identical at any thread
    count)."""
    return run_scatter("torch.scatter_add", input, index, src, dim=dim)


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
    """torch.scatter_reduce: a new tensor, out = input; out[index[i][j][k]][j][k] =
    f(out[..], src[i][j][k]) (dim 0) with reduce "sum", "prod", "amax" or "amin"; with
    include_self=False the input's value at a position some update reaches takes no part.
    reduce="mean" divides each element some update reaches by its count of updates (+1 with
    include_self), as PyTorch: floating and complex dtypes divide, integers round toward
    negative infinity; bool is TypeError. Not differentiable (JAX: NotImplementedError)."""
    return run_scatter("torch.scatter_reduce", input, index, src, dim=dim, reduce=reduce,
                       include_self=include_self)


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    """torch.index_add: a new tensor, out = input; out[.., index[j], ..] += alpha * source[.., j, ..]
    (index on dimension dim). index a vector (int64 or int32), source.size(dim) == len(index),
    source's other sizes == input's, source dtype == input dtype; duplicates all add. alpha != 1
    multiplies a copy of source first (integer inputs: alpha truncated to an integer, as PyTorch
    2.15), for float32, float64, int8, uint8, int16, int32 and int64 sources only (any other
    source dtype with alpha != 1 is a TypeError); on CUDA tensors alpha != 1 is a ValueError
    (multigather copies nothing on the host: pass source * alpha). Indices in
    [0, input.size(dim)): negatives and out of range are IndexError. Raises ValueError (shapes),
    TypeError (dtypes)."""
    return run_scatter("torch.index_add", input, index, source, dim=dim, alpha=alpha)


def index_copy(input: Any, dim: int, index: Any, source: Any) -> Any:
    """torch.index_copy: a new tensor, out = input; out[.., index[j], ..] = source[.., j, ..]
    (index on dimension dim). index a vector or a scalar, int64 only; source dtype == input
    dtype; source.size(dim) == index.numel() and source's other sizes == input's. Indices in
    [0, input.size(dim)): negatives and out of range are IndexError (as PyTorch). Duplicates:
    PyTorch's result is nondeterministic; the last in index order wins here. Raises ValueError
    (shapes), TypeError (dtypes)."""
    return run_scatter("torch.index_copy", input, index, source, dim=dim)


def _value_like(input: Any, value: Any) -> Any:
    """value as a 0-d array of input's dtype (PyTorch casts a number or a 0-d tensor value)."""
    if hasattr(input, "new_full") and hasattr(input, "dtype"):  # a torch tensor
        if hasattr(value, "dim"):
            return value.to(input.dtype)
        return input.new_full((), value)
    import numpy as np

    return np.asarray(value).astype(np.asarray(input).dtype)


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Any:
    """torch.index_fill: a new tensor, out = input; out[.., index[j], ..] = value (index on
    dimension dim). value: a number or a 0-dimensional tensor, cast to input's dtype (a
    1-dimensional value is a ValueError, as PyTorch's RuntimeError); it is broadcast to every
    slice (a stride-0 view, nothing copied). index a vector or a scalar, int64 only; negative
    indices wrap once, out of range is IndexError. Duplicates write the same value."""
    value = _value_like(input, value)
    return run_scatter("torch.index_fill", input, index, value, dim=dim)


put = op_function("torch.put", "put")


def _stacked_index_tuple(input: Any, indices: Any) -> tuple[Any, list[int]]:
    """PyTorch's index tuple (index tensors and None for full slices) as the registry form of
    torch.index_put: the index tensors broadcast and stacked on a last dimension, and the input
    dimensions they index."""
    entries = tuple(indices) if isinstance(indices, (tuple, list)) else (indices,)
    rank = len(input.shape)
    if len(entries) > rank:
        raise IndexError(f"torch.index_put: too many indices for tensor of dimension {rank} "
                         f"(got {len(entries)})")
    dims = [d for d, e in enumerate(entries) if e is not None]
    arrays = [entries[d] for d in dims]
    if not arrays:
        raise ValueError("torch.index_put: the indices tuple has no index tensor (all None)")
    framework = type(arrays[0]).__module__.split(".", 1)[0]
    if framework == "torch":
        import torch as xp
        arrays = [a if isinstance(a, xp.Tensor) else xp.as_tensor(a) for a in arrays]
        kinds = [a.dtype for a in arrays]
        if any(k in (xp.bool, xp.uint8) for k in kinds):
            raise TypeError("torch.index_put: boolean / uint8 mask indices are not supported "
                            "(use mask.nonzero(as_tuple=True))")
        if len(set(kinds)) > 1:  # int32 beside int64: one dtype to stack
            arrays = [a.to(xp.int64) for a in arrays]
        stacked = xp.stack(xp.broadcast_tensors(*arrays), dim=-1)
    else:
        import numpy as xp
        arrays = [xp.asarray(a) for a in arrays]
        if any(a.dtype.kind not in "iu" for a in arrays):
            raise TypeError("torch.index_put: tensors used as indices must be long or int tensors "
                            "(boolean masks are not supported)")
        stacked = xp.stack(xp.broadcast_arrays(*arrays), axis=-1)
    return stacked, dims


def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    """torch.index_put: a new tensor, out = input; out[indices] = values (+= when accumulate),
    with PyTorch's advanced indexing. ``indices``: a tuple of int64 / int32 index tensors
    (broadcast to a common shape B) or None (a full slice of that dimension); adjacent index
    tensors put B in their place, separated ones put B first (numpy's rule). ``values``:
    input's dtype, broadcast to input[indices].shape. Negative indices wrap once; out of range
    is IndexError. Duplicates: undefined in PyTorch without accumulate (the last in row-major
    order of input[indices] wins here); with accumulate every one adds. Raises IndexError (too
    many indices, out of range), ValueError (shapes), TypeError (dtypes, boolean masks)."""
    indices, index_dims = _stacked_index_tuple(input, indices)
    return run_scatter("torch.index_put", input, indices, values, index_dims=index_dims,
                       accumulate=accumulate)


for _f in (scatter, scatter_add, scatter_reduce):
    _f.__doc__ += _SCATTER_DOC
del _f

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
