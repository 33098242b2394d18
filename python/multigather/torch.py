"""PyTorch's gathers on multigather, with PyTorch's argument names and CPU rules.

- ``gather``, ``take``, ``take_along_dim``, ``index_select``: torch.gather, torch.take,
  torch.take_along_dim and torch.index_select, each made from its registry row (PyTorch's
  signature, out= forms included, its rules and source: ``help(multigather.torch.gather)``)
- ``embedding(input, weight, padding_idx=None)``: torch.nn.functional.embedding
  (https://pytorch.org/docs/stable/generated/torch.nn.functional.embedding.html)
- ``embedding_bag(input, weight, offsets=None, ..., mode='mean', per_sample_weights=None,
  include_last_offset=False, padding_idx=None)``: torch.nn.functional.embedding_bag, one fused
  gather + reduction per bag

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

import numbers
import sys

from typing import Any, NoReturn, Optional

from ._registry import document as _registry_document
from ._registry import fast_op, op_function, run_fast, run_general, run_scatter
from ._registry import torch_op_rows as _registry_torch_op_rows
from . import _torch_dispatch
from ._torch_dispatch import torch_op_needed, torch_ops

__all__ = ["gather", "take", "take_along_dim", "index_select", "embedding", "embedding_bag", "index", "index_copy", "index_fill", "put",
           "index_put",
           "scatter", "scatter_add",
           "scatter_reduce", "segment_reduce", "index_add", "routing", "library_path"]


_GATHER_MULTIAXIS = fast_op("gather_multiaxis", "axes", "index_mode", "negative_indices", "fill_value")
# x[i] on the first dimension is numpy.take(x, i, axis=0) (negatives wrap once, else an error):
# its row gives i.shape + x.shape[1:] in one call, with no view of i or of the result; x[i, j, ..]
# on the leading dimensions is numpy's advanced indexing, the same shape rule as aten.index's.
_NUMPY_TAKE = fast_op("numpy.take", "axis", "mode")
_NUMPY_ADVANCED_INDEX = fast_op("numpy.advanced_index", "index_dims")


def embedding(input: Any, weight: Any, padding_idx: Optional[int] = None) -> Any:
    """torch.nn.functional.embedding(input, weight, padding_idx): rows of ``weight``
    [num_embeddings, embedding_dim] at the int32/int64 indices ``input`` (any shape); the result
    has shape input.shape + [embedding_dim] and weight's dtype. Indices must be in
    [0, num_embeddings) (IndexError otherwise; negatives too, as PyTorch). padding_idx (negative
    counts from the end, as PyTorch) gets no gradient. Raises ValueError for a weight that is
    not 2-D or a padding_idx out of range, RuntimeError (F.embedding's) for indices that are
    not int32 / int64. Torch tensors: ``torch.ops.multigather.embedding``
    (differentiable in weight); other arrays: index_select of the rows (registry op
    "torch.index_select", dim 0)."""
    if padding_idx is not None:
        n = int(weight.shape[0]) if len(weight.shape) == 2 else None
        if n is not None and not -n <= padding_idx < n:  # torch's rule, on the value as given
            raise ValueError(f"embedding: padding_idx = {padding_idx} must be within "
                             f"[-num_embeddings, num_embeddings) = [{-n}, {n})")
        if n is not None and padding_idx < 0:
            padding_idx += n
    if not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::embedding", (input, weight, padding_idx,), None)
        if result is not NotImplemented:
            return result
    if torch_op_needed(weight, input):
        torch_ops().check_same_device("torch.nn.functional.embedding", [("weight", weight), ("input", input)])
        return torch_ops().embedding(input, weight, padding_idx)
    dtype = str(getattr(input, "dtype", "int64")).replace("torch.", "")
    if dtype not in ("int64", "int32"):  # F.embedding's check and words (a RuntimeError)
        raise RuntimeError(f"embedding: Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {dtype} instead (while checking "
                           f"arguments for embedding)")
    if len(weight.shape) != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), not "
                         f"{len(weight.shape)}-D of shape {list(weight.shape)}")
    if not hasattr(input, "reshape"):
        import numpy as np

        input = np.asarray(input)
    rows = index_select(weight, 0, input.reshape(-1))
    return rows.reshape(tuple(input.shape) + (int(weight.shape[1]),))


def scatter(input: Any, dim: int, index: Any, src: Any, reduce: Optional[str] = None, *,
            out: Any = None) -> Any:
    """torch.scatter(input, dim, index, src, reduce=None), in PyTorch's argument order: a new
    tensor (out of place); reduce None assigns (the row's reduce "none"). ``src`` may be a
    number: PyTorch's ``value`` overload (torch.scatter(input, dim, index, value)), the number
    cast to input's dtype and written (or added / multiplied) at every index position. The rules
    and the index rule are the registry row's (below)."""
    if reduce is None:
        reduce = "none"
    if isinstance(src, numbers.Number):
        src = _broadcast_to(_value_like(input, src), tuple(index.shape))
    if out is None and not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::scatter", (input, dim, index, src, None if reduce == "none" else reduce,), None)
        if result is not NotImplemented:
            return result
    if out is None and torch_op_needed(input, index, src):
        return torch_ops().scatter(input, dim, index, src, reduce=None if reduce == "none" else reduce)
    return run_scatter("torch.scatter", input, index, src, out, dim=dim, reduce=reduce)


def scatter_add(input: Any, dim: int, index: Any, src: Any, *, out: Any = None) -> Any:
    """torch.scatter_add(input, dim, index, src), in PyTorch's argument order: a new tensor
    (out of place). The rules and the index rule are the registry row's (below)."""
    if out is None and not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::scatter_add", (input, dim, index, src,), None)
        if result is not NotImplemented:
            return result
    if out is None and torch_op_needed(input, index, src):
        return torch_ops().scatter_add(input, dim, index, src)
    return run_scatter("torch.scatter_add", input, index, src, out, dim=dim)


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True,
                   out: Any = None) -> Any:
    """torch.scatter_reduce(input, dim, index, src, reduce, *, include_self=True), in
    PyTorch's argument order: a new tensor (out of place). Differentiable in input and src with
    PyTorch's rules for every reduction (torch.ops.multigather.scatter_reduce; JAX:
    NotImplementedError for prod, amax, amin, mean). The rules and the index rule are the
    registry row's (below)."""
    if out is None and not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::scatter_reduce", (input, dim, index, src, reduce,), {"include_self": include_self})
        if result is not NotImplemented:
            return result
    if out is None and torch_op_needed(input, index, src):
        return torch_ops().scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
    return run_scatter("torch.scatter_reduce", input, index, src, out, dim=dim, reduce=reduce,
                       include_self=include_self)


def segment_reduce(data: Any, reduce: str, *, lengths: Any = None, indices: Any = None, offsets: Any = None,
                   axis: int = 0, unsafe: bool = False, initial: Any = None) -> Any:
    """torch.segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
    unsafe=False, initial=None) (https://docs.pytorch.org/docs/stable/generated/
    torch.segment_reduce.html): reduce (sum / mean / max / min / prod; amax / amin are max / min,
    PyTorch's own names) data along ``axis`` over
    segments given by ``lengths`` (int32 / int64, data.shape[:axis] ++ [S]) or ``offsets``
    (data.shape[:axis] ++ [S + 1]); result data.shape[:axis] ++ [S] ++ data.shape[axis+1:], of
    data's dtype (float16, bfloat16, float32, float64). An empty segment holds ``initial``, else
    0 / 1 / -inf / +inf / NaN (sum / prod / max / min / mean). One scatter of data into that
    identity (registry row ``torch.segment_reduce``), deterministic at every thread count.
    Differentiable in data (torch.ops.multigather.segment_reduce; max / min share the gradient
    among ties and prod is exact with zeros, as PyTorch's). On CUDA tensors the segment ids are
    computed on the device, and their check reads one word back per call (a synchronization, as
    PyTorch's own makes unless unsafe). Errors: ValueError for lengths that
    are negative or do not sum to data.shape[axis] (unless unsafe), offsets that decrease or
    leave [0, data.shape[axis]], both or neither of lengths and offsets, and ``indices`` (not
    supported by PyTorch either); TypeError for other dtypes."""
    if indices is not None:
        raise ValueError("torch.segment_reduce: indices based reduction is not supported (as in PyTorch); "
                         "give lengths or offsets")
    if (lengths is None) == (offsets is None):
        raise ValueError("torch.segment_reduce: give exactly one of lengths and offsets")
    # The row takes one operand, lengths, which holds the offsets when lengths_are_offsets.
    lengths_are_offsets = offsets is not None
    if lengths_are_offsets:
        lengths = offsets
    if torch_op_needed(data, lengths):
        return torch_ops().segment_reduce(data, reduce, lengths, axis=axis, unsafe=unsafe, initial=initial,
                                          lengths_are_offsets=lengths_are_offsets)
    return run_general("torch.segment_reduce", data, lengths, reduce=reduce, axis=axis, unsafe=unsafe,
                       initial=initial, lengths_are_offsets=lengths_are_offsets)


def embedding_bag(input: Any, weight: Any, offsets: Any = None, max_norm: Optional[float] = None,
                  norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Any = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Any:
    """torch.nn.functional.embedding_bag (https://docs.pytorch.org/docs/stable/generated/
    torch.nn.functional.embedding_bag.html), PyTorch's signature: out [B, D] of weight's dtype
    (float16, bfloat16, float32, float64), where bag b's rows of ``weight`` [V, D] at the int32 /
    int64 ids ``input`` are reduced by ``mode`` (sum / mean / max). A 1-D input is cut into bags by
    ``offsets`` [B] (each bag's start; ``include_last_offset``: [B + 1], the last one the end); a
    2-D input [B, L] is B bags of L (offsets None). ``per_sample_weights`` (input's shape, mode
    'sum') scales each row; rows equal to ``padding_idx`` take no part (nor count in a mean); an
    empty bag is 0 in every mode. One fused pass per bag (registry row
    "torch.nn.functional.embedding_bag"): the gathered rows are never written, and the bytes do
    not depend on the thread count. Torch tensors: ``torch.ops.multigather.embedding_bag``,
    differentiable in weight and per_sample_weights (max: the gradient goes to the first row that
    holds the max, PyTorch's max_indices). Errors: IndexError for an id outside [0, V); ValueError
    for offsets that do not start at 0, decrease or pass input's length, a 2-D input with offsets,
    a 1-D input without, a padding_idx out of range; TypeError for other dtypes;
    NotImplementedError for per_sample_weights outside mode 'sum' (as PyTorch), max_norm,
    scale_grad_by_freq and sparse. CUDA tensors: the forward and the gradient run on the device
    (ids and offsets checked there, one synchronization each; the CPU engine's bytes)."""
    for name, value, default in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                 ("sparse", sparse, False)):
        if value != default:
            raise NotImplementedError(f"torch.nn.functional.embedding_bag: {name} = {value!r} is not supported by "
                                      f"multigather (use torch's own embedding_bag for it)")
    if per_sample_weights is not None and mode != "sum":  # PyTorch's exception type for it
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}')")
    if torch_op_needed(weight, input, *[t for t in (offsets, per_sample_weights) if t is not None]):
        return torch_ops().embedding_bag(input, weight, offsets, mode, per_sample_weights, include_last_offset,
                                         padding_idx)
    return run_general("torch.nn.functional.embedding_bag", weight, input, offsets=offsets, mode=mode,
                       per_sample_weights=per_sample_weights, include_last_offset=include_last_offset,
                       padding_idx=padding_idx)


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    """torch.index_add(input, dim, index, source, *, alpha=1), in PyTorch's argument order:
    a new tensor (out of place). The rules and the index rule are the registry row's (below):
    alpha scales source in the engine, on either device, and source's gradient is alpha times
    grad_output's."""
    if out is None and not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::index_add", (input, dim, index, source,), {"alpha": alpha})
        if result is not NotImplemented:
            return result
    if out is None and torch_op_needed(input, index, source):
        return torch_ops().index_add(input, dim, index, source, alpha=alpha)
    return run_scatter("torch.index_add", input, index, source, out, dim=dim, alpha=alpha)


def index_copy(input: Any, dim: int, index: Any, source: Any, *, out: Any = None) -> Any:
    """torch.index_copy(input, dim, index, source), in PyTorch's argument order: a new
    tensor (out of place). The rules and the index rule are the registry row's (below)."""
    if out is None and not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
        result = _torch_dispatch.call_op("multigather::index_copy", (input, dim, index, source,), None)
        if result is not NotImplemented:
            return result
    if out is None and torch_op_needed(input, index, source):
        return torch_ops().index_copy(input, dim, index, source)
    return run_scatter("torch.index_copy", input, index, source, out, dim=dim)


def _broadcast_to(value: Any, shape: tuple) -> Any:
    """A 0-d ``value`` (torch or numpy) as a stride-0 view of ``shape`` (no copy)."""
    if hasattr(value, "expand"):
        return value.expand(shape)
    import numpy as np

    return np.broadcast_to(value, shape)


def _masks_as_indices(entries: tuple, input_shape: tuple, op: str = "torch.index_put") -> tuple:
    """PyTorch's boolean mask entries of an index tuple as the index tensors of their true
    positions (mask.nonzero(as_tuple=True)), one per dimension the mask covers, as
    aten.index_put does. IndexError, in PyTorch's words, for a mask whose shape is not the
    indexed dimensions' shape; TypeError for a torch.uint8 index (PyTorch reads it as a
    deprecated mask, and index_put without accumulate refuses it)."""
    out: list = []
    for entry in entries:
        dtype = str(getattr(entry, "dtype", ""))
        if dtype == "torch.uint8":
            raise TypeError(f"{op}: a torch.uint8 index is a deprecated mask in PyTorch "
                            "(index_put refuses it without accumulate): pass a bool mask or int64 indices")
        if entry is None or dtype not in ("torch.bool", "bool"):
            out.append(entry)
            continue
        first = len(out)
        mask_shape = tuple(entry.shape)
        for j, size in enumerate(mask_shape):
            d = first + j
            if d >= len(input_shape) or input_shape[d] != size:
                have = input_shape[d] if d < len(input_shape) else "none"
                raise IndexError(f"{op}: The shape of the mask {list(mask_shape)} at index {j} does "
                                 f"not match the shape of the indexed tensor {list(input_shape)} at index {d}"
                                 f" ({size} vs {have})")
        # torch: nonzero(as_tuple=True); numpy: nonzero() is already the tuple.
        out.extend(entry.nonzero(as_tuple=True) if hasattr(entry, "dim") else entry.nonzero())
    return tuple(out)


def _preserving_out(input: Any, out: Any) -> Any:
    """The ``out`` of an out-of-place call whose PyTorch op returns ``self.clone(memory_format=
    torch.preserve_format)`` with the scatter applied (index_fill, index_put, put): for a torch
    tensor that is not contiguous, torch.empty_like(input) (input's strides when it is dense and
    non-overlapping, else contiguous); else ``out`` as given (None: a contiguous result)."""
    if out is None and hasattr(input, "is_contiguous") and not _plainly_contiguous(input):
        import torch

        return torch.empty_like(input)
    return out


def _plainly_contiguous(t: Any) -> bool:
    """Whether ``t`` is contiguous with no dimension of size 1 (whose stride a preserving clone
    keeps, whatever it is): torch.empty_like(t) is then the plain contiguous tensor."""
    return t.is_contiguous() and 1 not in t.shape


def _preserve_layout(input: Any, result: Any) -> Any:
    """The op's (contiguous) ``result`` in input's preserved layout (see _preserving_out)."""
    if _plainly_contiguous(input):
        return result
    import torch

    return _with_strides(result, list(torch.empty_like(input, device="meta").stride()))


def _value_like(input: Any, value: Any) -> Any:
    """value as a 0-d array of input's dtype (PyTorch casts a number or a 0-d tensor value)."""
    if hasattr(input, "new_full") and hasattr(input, "dtype"):  # a torch tensor
        if hasattr(value, "dim"):  # on input's device too (PyTorch takes a 0-d value from any device)
            device = input.device if value.device.type == "cpu" else value.device  # else: the device check
            return value.to(device=device, dtype=input.dtype)
        return input.new_full((), value)
    import numpy as np

    return np.asarray(value).astype(np.asarray(input).dtype)


def index_fill(input: Any, dim: int, index: Any, value: Any, *, out: Any = None) -> Any:
    """torch.index_fill(input, dim, index, value), in PyTorch's argument order: a new tensor
    (out of place). ``value``: a number or a 0-dimensional tensor, cast to input's dtype
    here. The rules and the index rule are the registry row's (below)."""
    value = _value_like(input, value)
    if out is None and torch_op_needed(input, index, value):
        return _preserve_layout(input, torch_ops().index_fill(input, dim, index, value))
    out = _preserving_out(input, out)
    return run_scatter("torch.index_fill", input, index, value, out, dim=dim)


def put(input: Any, index: Any, source: Any, accumulate: bool = False, *, out: Any = None) -> Any:
    """torch.put(input, index, source, accumulate=False): a new tensor (out of place). The
    rules and the index rule are the registry row's (below)."""
    if out is None and torch_op_needed(input, index, source):
        return _preserve_layout(input, torch_ops().put(input, index, source, accumulate))
    out = _preserving_out(input, out)
    return run_scatter("torch.put", input, index, source, out, accumulate=accumulate)


def _stacked_index_tuple(input: Any, indices: Any, op: str = "torch.index_put",
                         with_entries: bool = False) -> tuple:
    """PyTorch's index tuple (index tensors and None for full slices) as the registry form of
    torch.index_put: the index tensors broadcast and stacked on a last dimension, and the input
    dimensions they index (with_entries: and the tuple with masks as their index tensors)."""
    entries = tuple(indices) if isinstance(indices, (tuple, list)) else (indices,)
    rank = len(input.shape)
    entries = _masks_as_indices(entries, tuple(input.shape), op)
    if len(entries) > rank:
        raise IndexError(f"{op}: too many indices for tensor of dimension {rank} "
                         f"(got {len(entries)})")
    dims = [d for d, e in enumerate(entries) if e is not None]
    arrays = [entries[d] for d in dims]
    if not arrays:
        raise ValueError(f"{op}: the indices tuple has no index tensor (all None)")
    framework = type(arrays[0]).__module__.split(".", 1)[0]
    if framework == "torch":
        import torch as xp
        arrays = [a if isinstance(a, xp.Tensor) else xp.as_tensor(a) for a in arrays]
        kinds = [a.dtype for a in arrays]
        if len(set(kinds)) > 1:  # int32 beside int64: one dtype to stack
            arrays = [a.to(xp.int64) for a in arrays]
        same = all(a.shape == arrays[0].shape for a in arrays)
        stacked = xp.stack(arrays if same else xp.broadcast_tensors(*arrays), dim=-1)
    else:
        import numpy as xp
        arrays = [xp.asarray(a) for a in arrays]
        if any(a.dtype.kind not in "iu" for a in arrays):
            raise TypeError(f"{op}: tensors used as indices must be long, int, byte or bool "
                            "tensors")
        stacked = xp.stack(xp.broadcast_arrays(*arrays), axis=-1)
    if with_entries:
        return stacked, dims, entries
    return stacked, dims


def _tensor_iterator_strides(shape: list, operands: list) -> Optional[list]:
    """The strides of the output that PyTorch's TensorIterator allocates for ``operands``
    ((sizes, strides) pairs of the inputs, of rank len(shape), broadcast to ``shape``), or None
    when it is the contiguous one. TensorIteratorBase::compute_strides, reorder_dimensions and
    allocate_or_resize_outputs (aten/src/ATen/TensorIterator.cpp): the dimensions sorted by the
    first operand's strides that tells them apart (0: broadcast, no say; equal strides: the
    smaller size first), then dense strides in that order."""
    ndim = len(shape)
    if ndim <= 1:
        return None
    strides = [[0 if (size == 1 and shape[d] != 1) else stride for d, (size, stride) in
                enumerate(zip(sizes, op_strides))] for sizes, op_strides in operands]

    def should_swap(dim0: int, dim1: int) -> int:
        for op in strides:
            s0, s1 = op[dim0], op[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # perm[0]: the fastest dimension
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    out = [0] * ndim
    step = 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return out


def _aten_index_strides(input: Any, entries: tuple) -> Optional[list]:
    """The strides of PyTorch's CPU ``aten.index(input, entries)`` result (entries: index
    tensors, masks already as their index tensors, and None), or None when it is contiguous.
    The result is the output of a TensorIterator over input restrided (stride 0 on the indexed
    dimensions) and the index tensors (broadcast, reshaped to the output's rank): at::native's
    make_info, AdvancedIndex and build_index_op (aten/src/ATen/native/TensorAdvancedIndexing.cpp,
    IndexingUtils.h). Contiguous operands give a contiguous result without this computation."""
    import torch

    entries = list(entries) + [None] * (input.dim() - len(entries))
    defined = [e for e in entries if e is not None]
    if _plainly_contiguous(input) and all(_plainly_contiguous(e) and e.shape == defined[0].shape for e in defined):
        return None  # (a dimension of size 1 can move in TensorIterator's order: computed below)
    defined = list(torch.broadcast_tensors(*defined)) if len(defined) > 1 else defined
    it = iter(defined)
    entries = [None if e is None else next(it) for e in entries]
    positions = [d for d, e in enumerate(entries) if e is not None]
    sizes, strides = list(input.shape), list(input.stride())
    if positions != list(range(positions[0], positions[0] + len(positions))):  # transposeToFront
        order = positions + [d for d in range(len(entries)) if entries[d] is None]
        sizes, strides = [sizes[d] for d in order], [strides[d] for d in order]
        entries = [entries[d] for d in order]
        positions = list(range(len(positions)))
    # int32 indices become int64 (Tensor.to: the same strides when dense, else contiguous)
    entries = [e if e is None or e.dtype != torch.int32 else
               torch.empty_like(e, dtype=torch.int64, device="meta") for e in entries]
    before, k = positions[0], len(positions)
    after = len(entries) - before - k
    batch = list(entries[before].shape)
    shape = sizes[:before] + batch + sizes[before + k:]
    operands = [(shape[:before] + batch + sizes[before + k:],
                 strides[:before] + [0] * len(batch) + strides[before + k:])]
    for e in entries[before:before + k]:
        view = e.reshape([1] * before + list(e.shape) + [1] * after)
        operands.append((list(view.shape), list(view.stride())))
    return _tensor_iterator_strides(shape, operands)


def _index_out_of_bounds(shape: tuple, dims: list, entries: tuple) -> Optional[str]:
    """PyTorch's message for the first index out of range in an index tuple (entries: index
    tensors and None, masks already as their index tensors), naming the value, the input
    dimension it indexes and its position in the user's index tensor; None if none is out of
    range."""
    import numpy as np

    positions = [d for d, e in enumerate(entries) if e is not None]
    for d, entry in zip(dims, (entries[p] for p in positions)):
        values = np.asarray(entry.detach().cpu() if hasattr(entry, "detach") else entry)
        size = shape[d]
        bad = np.argwhere((values < -size) | (values >= size))
        if len(bad):
            at = tuple(int(j) for j in bad[0])
            value = int(values[at])
            where = f" at position [{', '.join(str(j) for j in at)}] of the index for dimension {d}" if at else ""
            return (f"torch.index: index {value} is out of bounds for dimension {d} with size {size}"
                    f"{where} (indices must be in [-{size}, {size}))")
    return None


def _with_strides(result: Any, strides: Optional[list]) -> Any:
    """``result`` (a torch tensor) copied into a tensor of these strides (None: as it is)."""
    if strides is None or list(result.stride()) == list(strides):
        return result
    import torch

    out = torch.empty_strided(result.shape, strides, dtype=result.dtype, device=result.device)
    return out.copy_(result)


def index(input: Any, indices: Any) -> Any:
    """PyTorch's advanced indexing, ``input[indices]`` (aten.index(input, indices)): ``indices``
    is a tuple with one entry per leading dimension of input: an int64 / int32 index tensor, a
    boolean mask (its true positions, one index tensor per dimension it covers) or None (the
    whole dimension). The index tensors broadcast to a shape B. The result has B in place of the
    indexed dimensions when they are adjacent (x[:, i, j] -> [s0, *B, ...]), else B first
    (x[i, :, j] -> [*B, s1, ...]), the other dimensions in order. Indices wrap once when negative;
    any other index out of range is an IndexError naming the index tensor, the position in it
    and the dimension it indexes (PyTorch's words); too many indices and masks of the wrong shape
    are IndexError, a torch.uint8 index a TypeError. Differentiable in input (the scatter-add of
    the gradient, through torch.ops.multigather.gather_multiaxis). Torch tensors get PyTorch's
    layout: the strides aten.index gives (contiguous for contiguous operands; else the order
    TensorIterator picks from input's and the index tensors' strides).

    One core gather: input (permuted, a view, when the indexed dimensions are not adjacent),
    the index tensors stacked as coordinate tuples, gather_multiaxis over the indexed axes, the
    result reshaped to the final shape. Source: https://pytorch.org/docs/stable/tensor_view.html
    and numpy's advanced indexing (https://numpy.org/doc/stable/user/basics.indexing.html)."""
    fast = _index_leading_dimensions(input, indices)
    if fast is not None:
        return fast
    stacked, dims, entries = _stacked_index_tuple(input, indices, "torch.index", with_entries=True)
    shape = tuple(int(s) for s in input.shape)
    rank, k = len(shape), len(dims)
    batch = tuple(int(s) for s in stacked.shape[:-1])
    n = 1
    for s in batch:
        n *= s
    others = [d for d in range(rank) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[0] + k))
    first = dims[0] if adjacent else 0  # where B goes, and the axis of the coordinates' n
    if adjacent:
        view, axes = input, dims
    else:
        order = dims + others
        view = input.permute(order) if hasattr(input, "permute") else input.transpose(order)
        axes = list(range(k))
    # Coordinates of the gather's logical index shape [1]*first + [n] + [1]*..., k per position.
    logical = [1] * rank
    logical[first] = n
    coordinates = stacked.reshape(tuple(logical[:-1]) + (logical[-1] * k,))
    result = _index_gather(input, view, coordinates, axes, shape, dims, entries)
    rest = tuple(shape[d] for d in others)
    result = _in_shape(result, rest[:first] + batch + rest[first:])
    if hasattr(result, "stride") and hasattr(result, "is_contiguous"):  # torch: aten.index's layout
        import torch

        entries = tuple(e if e is None or isinstance(e, torch.Tensor) else torch.as_tensor(e) for e in entries)
        result = _with_strides(result, _aten_index_strides(input, entries))
    return result


def _index_gather(input: Any, view: Any, coordinates: Any, axes: list, shape: tuple, dims: list,
                  entries: tuple) -> Any:
    """index()'s one core gather (gather_multiaxis, error mode, negatives wrapped), an index out
    of range reported in PyTorch's words."""
    try:
        if torch_op_needed(view, coordinates):
            if not _torch_dispatch.is_compiling():  # only autograd must see it: the torch op from C++
                result = _torch_dispatch.call_op("multigather::gather_multiaxis",
                                                 (view, coordinates, axes, "error", True, 0), None)
                if result is not NotImplemented:
                    return result
            torch_ops().check_same_device("torch.index", [("input", input)] + [
                (f"indices[{j}]", e) for j, e in enumerate(entries) if e is not None])
            return torch_ops().gather_multiaxis(view, coordinates, axes, "error", True, 0)
        result = run_fast(_GATHER_MULTIAXIS, view, coordinates, None, axes, "error", True, 0)
        if result is NotImplemented:
            result = run_general("gather_multiaxis", view, coordinates, axes=axes)
        return result
    except IndexError as error:
        _raise_in_torch_words(error, shape, dims, entries)


def _raise_in_torch_words(error: IndexError, shape: tuple, dims: list, entries: tuple) -> NoReturn:
    """Raises index()'s IndexError in PyTorch's words (``error`` itself if no index is out of
    range, which the op's message then explains)."""
    message = _index_out_of_bounds(shape, dims, entries)
    if message is None:
        raise error
    raise IndexError(message) from error


def _index_leading_dimensions(input: Any, indices: Any) -> Any:
    """index() of the commonest keys, ``x[i]`` and ``x[i, j, ..]``: int64 / int32 torch index
    tensors of one shape and dtype (at least 1-D, contiguous) on the leading dimensions of a
    contiguous torch tensor: no broadcast, no mask, no permute, and a contiguous result as
    aten.index gives. Without autograd to see the call, one call of a registry row: numpy.take
    (axis 0) for one index tensor, its values the coordinates as they are; numpy.advanced_index
    for several, stacked. With autograd, one index tensor: gather_multiaxis through the torch
    op, no stack. None for any other key (and for several index tensors that autograd sees)."""
    entries = indices if isinstance(indices, tuple) else (indices,)
    torch = sys.modules.get("torch")
    k = len(entries)
    if torch is None or k == 0 or not isinstance(input, torch.Tensor) or input.dim() < k or \
            not input.is_contiguous():
        return None
    i = entries[0]
    for e in entries:
        if not isinstance(e, torch.Tensor) or e.dtype != i.dtype or e.shape != i.shape or not e.is_contiguous():
            return None
    if i.dtype not in (torch.int64, torch.int32) or i.dim() == 0:
        return None
    shape = tuple(input.shape)
    needed = torch_op_needed(input, *entries)
    if not needed:
        dims = list(range(k))
        try:
            if k == 1:
                result = run_fast(_NUMPY_TAKE, input, i, None, 0, "raise")
            else:
                result = run_fast(_NUMPY_ADVANCED_INDEX, input, torch.stack(entries, -1), None, dims)
        except IndexError as error:
            _raise_in_torch_words(error, shape, dims, entries)
        if result is not NotImplemented:
            return result
    if k > 1:
        return None
    coordinates = i.reshape((i.numel(),) + (1,) * (len(shape) - 1))
    result = _index_gather(input, input, coordinates, [0], shape, [0], entries)
    return _in_shape(result, tuple(i.shape) + shape[1:])  # (a 1-D i: the gather's shape already)


def _in_shape(result: Any, shape: tuple) -> Any:
    """result reshaped to shape, or result itself when it has that shape already (a view would
    be one more autograd node)."""
    return result if tuple(result.shape) == shape else result.reshape(shape)


def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False, *, out: Any = None) -> Any:
    """torch.index_put(input, indices, values, accumulate=False): a new tensor (out of place),
    with PyTorch's advanced indexing. ``indices``: a tuple of int64 / int32 index tensors
    (broadcast to a common shape B), boolean masks (their true positions, one index tensor per
    masked dimension, as PyTorch does) or None (a full slice of that dimension), turned into
    the registry form (stacked, with index_dims). A mask of another shape than the dimensions
    it covers, and too many indices, are IndexError; a torch.uint8 index is a TypeError. The
    rules and the index rule are the registry row's (below)."""
    indices, index_dims = _stacked_index_tuple(input, indices)
    if out is None and torch_op_needed(input, indices, values):
        return _preserve_layout(input, torch_ops().index_put(input, indices, values, accumulate,
                                                             index_dims=index_dims))
    out = _preserving_out(input, out)
    return run_scatter("torch.index_put", input, indices, values, out, index_dims=index_dims,
                       accumulate=accumulate)


def library_path() -> str:
    """The shared library that registers torch.ops.multigather.* from C++ with the engine in it
    (``libmultigather_torch.so``): ``torch.ops.load_library(path)`` in a deployment without
    the Python package (an AOTInductor package's runtime, a libtorch program). ImportError when
    the package was built without torch. Source: multigather.torch_ops.library_path."""
    from .torch_ops import library_path as path

    return path()


def routing():
    """A context manager that runs PyTorch's gather and scatter family in unedited code on
    multigather (torch.gather, index_select, take, take_along_dim, F.embedding, advanced
    indexing, scatter*, index_add / index_copy / index_fill / index_put / put and their in-place
    methods), with gradients; see multigather._torch_routing.routing for what is and is not
    routed. Needs torch."""
    import sys

    from ._torch_routing import routing as make

    return make(sys.modules[__name__])


# Each wrapper's signature, formula, attributes and source: its registry row.
# gather, take, take_along_dim, index_select: each made from its row (_registry.op_function):
# the framework's parameters, the fast path, the torch op for what autograd or tracing sees,
# the general path. Every torch gather row with a PyTorch op that this module does not write by
# hand is made so.
for _row in _registry_torch_op_rows():
    _name = _row[len("torch."):]
    if _row.startswith("torch.") and "." not in _name and _name not in globals():
        globals()[_name] = op_function(_row, _name, torch_dispatch=_torch_dispatch)
del _row, _name

_registry_document(globals(), __all__)

# Dynamo compiles none of this module's functions as a frame of its own; it inlines them where it
# traces a caller (_torch_dispatch.skip_as_root_frames).
_torch_dispatch.skip_as_root_frames([globals()[name] for name in __all__])
