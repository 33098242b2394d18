"""multigather's operators registered with PyTorch (``torch.library``): real, fake (meta) and
autograd implementations, so that they work under autograd, ``torch.compile(fullgraph=True)``
and ``torch.export``.

Importing this module (``import multigather.torch_ops``; ``import multigather`` does it when torch
is already imported, and the first call of a multigather function on a torch tensor does it
otherwise) defines:

==========================================================  =====================================
``torch.ops.multigather.gather_multiaxis(input, indices,    ``multigather.gather_multiaxis``
axes, index_mode="error", negative_indices=True,
fill_value=0)``
``torch.ops.multigather.scatter_multiaxis(input, indices,   ``multigather.scatter_multiaxis``
updates, axes, reduction="none", index_mode="error",        (CPU, and CUDA in a CUDA build)
negative_indices=True, include_input=True)``
``torch.ops.multigather.gather(input, dim, index)``         torch.gather (registry "torch.gather")
``torch.ops.multigather.take(input, index)``                torch.take
``torch.ops.multigather.take_along_dim(input, indices,      torch.take_along_dim
dim=None)``
``torch.ops.multigather.index_select(input, dim, index)``   torch.index_select
``torch.ops.multigather.embedding(input, weight,            F.embedding (index_select of rows;
padding_idx=None)``                                         padding_idx >= 0 here)
==========================================================  =====================================

Real implementations run the one execute path (the registry op or core call on the tensors,
zero-copy; CUDA tensors run on their device in a CUDA build: gathers, and scatters in the
deterministic mode, bit-identical to the CPU engine).
Fake implementations take the output shape from multigather's own shape inference
(``multigather.output_shape``; no data is read), so shape errors surface while tracing. Symbolic
sizes (dynamic shapes, torch.export's Dim) stay symbolic: the core checks their hints, and the
op's shape rule in torch sizes, checked against the core's answer, gives the symbolic shape.

Gradients (source: docs/spec.md section 4, "Adjoint"): every gather's input gradient is
``scatter_multiaxis(zeros_like(input), indices, grad, axes, reduction="add")`` in the same index
mode ("drop" for "fill") with the op's axes, run through ``torch.ops.multigather.scatter_multiaxis``
(so it is traced and compiled too, and differentiable again). Indices get no gradient.
scatter_multiaxis: reduction "add" and "none" have exact gradients (input: grad, zeroed where
updates overwrite it; updates: grad gathered at their targets, summed over broadcast dimensions;
under "none" only the winning (last) update of each element gets a gradient: where PyTorch's
scatter/index_put give every duplicate the gradient, this is the derivative of what the forward
computes). "mul", "min", "max" raise NotImplementedError in backward.
"""

from __future__ import annotations

from typing import List, Optional

import torch
from torch import Tensor
from torch.types import Number

from . import _registry
from . import _torch_impl as _impl

__all__ = ["gather_multiaxis", "scatter_multiaxis", "gather", "take", "take_along_dim",
           "index_select", "embedding"]

# torch dtype -> multigather dtype name (for the shape inference of the fake implementations).
_DTYPE_NAMES = {
    torch.bool: "bool", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
    torch.complex64: "complex64", torch.complex128: "complex128",
}
for _name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _DTYPE_NAMES[getattr(torch, _name)] = _name


def _dtype(t: Tensor, name: str) -> str:
    try:
        return _DTYPE_NAMES[t.dtype]
    except KeyError:
        raise TypeError(f"{name} dtype {t.dtype} is not supported by multigather") from None


def _hint(size) -> int:
    if isinstance(size, torch.SymInt):
        from torch.fx.experimental.symbolic_shapes import guarding_hint_or_throw

        return int(guarding_hint_or_throw(size))
    return int(size)


def _shape(t: Tensor) -> list[int]:
    """t's sizes as ints (a symbolic size: its hint, no guard)."""
    return [_hint(s) for s in t.shape]


def _infer(op: str, input: Tensor, indices: Tensor, updates: Optional[Tensor] = None,
           symbolic=None, **attrs) -> list:
    """The output shape of registry op ``op`` from the core's shape inference (its rules and
    errors; no data). With symbolic sizes (dynamic shapes), the core checks the sizes' hints and
    ``symbolic()`` gives the shape in the symbolic sizes (the op's rule, written in torch), which
    must agree with the core's answer on the hints; without ``symbolic`` the sizes are
    specialized to their hints."""
    shape = list(_registry.output_shape(
        op, _shape(input), _shape(indices), _dtype(input, "input"), _dtype(indices, "indices"),
        None if updates is None else _shape(updates), **attrs))
    tensors = [t for t in (input, indices, updates) if t is not None]
    if not any(isinstance(s, torch.SymInt) for t in tensors for s in t.shape):
        return shape
    if symbolic is None:
        for t in tensors:  # specialize: guards that each size equals its hint
            for s in t.shape:
                int(s)
        return shape
    sym = list(symbolic())
    if [_hint(s) for s in sym] != shape:
        raise AssertionError(f"multigather::{op}: symbolic shape {sym} disagrees with the core's "
                             f"{shape}")
    return sym


def _fresh(result: Tensor, *inputs: Tensor) -> Tensor:
    """A custom op may not return a view of its inputs (the core always allocates; this guards)."""
    for t in inputs:
        if result.numel() and t.numel() and result.untyped_storage().data_ptr() == \
                t.untyped_storage().data_ptr():
            return result.clone()
    return result


def _plain(t: Tensor) -> Tensor:
    """t without autograd history (the real implementations run below autograd; a tensor that
    requires grad would miss the fast path)."""
    return t.detach() if t.requires_grad else t


def _zeros(like: Tensor, shape) -> Tensor:
    """zeros of ``shape`` (like's dtype and device) as a broadcast view of one zero: the scatter
    reads it in place and writes its own output (no zero-filled buffer of the full size; for
    large gradients that first touch of fresh memory costs more than the scatter)."""
    return like.new_zeros(()).expand(list(shape))


def _gather_mode_of_scatter(index_mode: str) -> str:
    return "fill" if index_mode == "drop" else index_mode


def _scatter_mode_of_gather(index_mode: str) -> str:
    return "drop" if index_mode == "fill" else index_mode


# ---- gather_multiaxis ---------------------------------------------------------------------------

@torch.library.custom_op("multigather::gather_multiaxis", mutates_args=())
def gather_multiaxis(input: Tensor, indices: Tensor, axes: List[int], index_mode: str = "error",
                     negative_indices: bool = True, fill_value: Number = 0) -> Tensor:
    """``multigather.gather_multiaxis`` as a PyTorch op (see its docstring for the shape rules:
    output.shape[d] = L[d] for d in axes, broadcast(input.shape[d], L[d]) otherwise). Any dtype
    the core takes; int indices. Raises IndexError, ValueError, TypeError like the core."""
    return _fresh(_registry.run("gather_multiaxis", _plain(input), indices, axes=list(axes),
                                index_mode=index_mode, negative_indices=bool(negative_indices),
                                fill_value=fill_value), input, indices)


@gather_multiaxis.register_fake
def _(input, indices, axes, index_mode="error", negative_indices=True, fill_value=0):
    def symbolic():
        rank, c = input.dim(), max(len(axes), 1)
        logical = list(indices.shape[:-1]) + [indices.shape[-1] // c] if rank else []
        dims = {a % rank for a in axes} if rank else set()
        return [logical[d] if d in dims or input.shape[d] == 1 else input.shape[d]
                for d in range(rank)]

    shape = _infer("gather_multiaxis", input, indices, symbolic=symbolic, axes=list(axes),
                   index_mode=index_mode, negative_indices=bool(negative_indices))
    return input.new_empty(shape)


def _gather_multiaxis_setup(ctx, inputs, output):
    input, indices, axes, index_mode, negative_indices, _ = inputs
    ctx.save_for_backward(indices)
    ctx.input_shape = tuple(input.shape)
    ctx.args = (list(axes), index_mode, bool(negative_indices))


def _gather_multiaxis_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    axes, index_mode, negative_indices = ctx.args
    grad_input = scatter_multiaxis(_zeros(grad, ctx.input_shape), indices, grad, axes, "add",
                                   _scatter_mode_of_gather(index_mode), negative_indices, True)
    return grad_input, None, None, None, None, None


gather_multiaxis.register_autograd(_gather_multiaxis_backward,
                                   setup_context=_gather_multiaxis_setup)


# ---- scatter_multiaxis --------------------------------------------------------------------------

def _require_engine_device(op: str, **tensors: Tensor) -> None:
    """CPU tensors, or CUDA tensors in a CUDA build (the CUDA scatter, deterministic: the same
    bytes as the CPU engine); meta tensors carry shapes only (the fake kernel)."""
    from . import _multigather
    for name, t in tensors.items():
        if t.device.type in ("cpu", "meta") or (t.device.type == "cuda" and _multigather.has_cuda):
            continue
        where = "the CPU engine and CUDA devices" if _multigather.has_cuda else \
            "the CPU engine only (this build has no CUDA engine)"
        raise ValueError(
            f"multigather::{op}: {name} is on {t.device}; scatter_multiaxis runs on {where} "
            f"(move the tensors with .cpu())")


@torch.library.custom_op("multigather::scatter_multiaxis", mutates_args=())
def scatter_multiaxis(input: Tensor, indices: Tensor, updates: Tensor, axes: List[int],
                      reduction: str = "none", index_mode: str = "error",
                      negative_indices: bool = True, include_input: bool = True) -> Tensor:
    """``multigather.scatter_multiaxis`` as a PyTorch op: a new tensor of input's shape and dtype.
    CPU tensors, or CUDA tensors in a CUDA build (ValueError naming the argument on another
    device)."""
    _require_engine_device("scatter_multiaxis", input=input, indices=indices, updates=updates)
    return _fresh(_registry.run_scatter(
        "scatter_multiaxis", _plain(input), indices, _plain(updates), None, axes=list(axes),
        reduction=reduction, index_mode=index_mode, negative_indices=bool(negative_indices),
        include_input=bool(include_input)), input, indices, updates)


@scatter_multiaxis.register_fake
def _(input, indices, updates, axes, reduction="none", index_mode="error", negative_indices=True,
      include_input=True):
    _require_engine_device("scatter_multiaxis", input=input, indices=indices, updates=updates)
    shape = _infer("scatter_multiaxis", input, indices, updates, symbolic=lambda: input.shape,
                   axes=list(axes),
                   reduction=reduction, index_mode=index_mode,
                   negative_indices=bool(negative_indices), include_input=bool(include_input))
    return input.new_empty(shape)


def _scatter_multiaxis_setup(ctx, inputs, output):
    input, indices, updates, axes, reduction, index_mode, negative_indices, include_input = inputs
    ctx.save_for_backward(indices)
    ctx.input_shape = tuple(input.shape)
    ctx.updates_shape = tuple(updates.shape)
    ctx.args = (list(axes), reduction, index_mode, bool(negative_indices), bool(include_input))


def _scatter_multiaxis_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    axes, reduction, index_mode, negative_indices, include_input = ctx.args
    if reduction not in ("none", "add"):
        raise NotImplementedError(
            f"multigather::scatter_multiaxis: the gradient of reduction='{reduction}' is not "
            f"implemented (only reduction='none' and 'add' have gradients); detach the inputs or "
            f"use another reduction")
    rank = len(ctx.input_shape)
    gather_mode = _gather_mode_of_scatter(index_mode)
    reached = None
    if reduction == "none" or not include_input:
        # The elements some update overwrites (or, add without input, replaces): no gradient to
        # input there.
        reached = scatter_multiaxis(
            torch.zeros((), dtype=torch.bool, device=grad.device).expand(ctx.input_shape), indices,
            torch.ones([1] * rank, dtype=torch.bool, device=grad.device), axes, "none",
            index_mode, negative_indices, True)
    grad_input = grad_updates = None
    if ctx.needs_input_grad[0]:
        grad_input = grad if reached is None else grad.masked_fill(reached, 0)
    if ctx.needs_input_grad[2]:
        taken = gather_multiaxis(grad, indices, axes, gather_mode, negative_indices, 0)
        if reduction == "none":
            # Only the last update reaching an element (row-major order) is in the output.
            order = torch.arange(taken.numel(), dtype=torch.int64,
                                 device=grad.device).reshape(taken.shape)
            owner = scatter_multiaxis(
                torch.full((), -1, dtype=torch.int64, device=grad.device).expand(ctx.input_shape),
                indices,
                order, axes, "none", index_mode, negative_indices, True)
            back = gather_multiaxis(owner, indices, axes, gather_mode, negative_indices, -1)
            wins = back == order
            taken = taken.masked_fill(~wins, 0)
        grad_updates = taken.sum_to_size(ctx.updates_shape)
    return grad_input, None, grad_updates, None, None, None, None, None


scatter_multiaxis.register_autograd(_scatter_multiaxis_backward,
                                    setup_context=_scatter_multiaxis_setup)


def _scatter_add(input_shape, indices: Tensor, updates: Tensor, axes: List[int],
                 index_mode: str = "error", negative_indices: bool = True) -> Tensor:
    """zeros(input_shape) with updates added at the targets: the adjoint of a gather."""
    return scatter_multiaxis(_zeros(updates, input_shape), indices, updates, axes, "add",
                             index_mode, negative_indices, True)


# ---- torch-flavoured registry ops ---------------------------------------------------------------

@torch.library.custom_op("multigather::gather", mutates_args=())
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.gather on registry op "torch.gather" (see ``multigather.torch.gather``)."""
    return _fresh(_impl._gather(_plain(input), dim, index), input, index)


@gather.register_fake
def _(input, dim, index):
    return input.new_empty(_infer("torch.gather", input, index, symbolic=lambda: index.shape,
                                  dim=dim))


def _gather_setup(ctx, inputs, output):
    input, dim, index = inputs
    ctx.save_for_backward(index)
    ctx.input_shape = tuple(input.shape)
    ctx.dim = dim


def _gather_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    shape = ctx.input_shape
    if index.numel() == 0:
        return grad.new_zeros(shape), None, None
    if len(shape) == 0:  # every output element is the one input element
        return grad.sum().reshape(()), None, None
    rank = len(shape)
    if index.dim() != rank:  # a 0-d index of a 1-d input
        index, grad = index.reshape([1] * rank), grad.reshape([1] * rank)
    dim = ctx.dim % rank
    # torch.gather reads the leading part of input (index.size(d) <= input.size(d), d != dim):
    # scatter into that part, then pad to input's shape.
    part = [shape[d] if d == dim else index.shape[d] for d in range(rank)]
    grad_input = _scatter_add(part, index, grad, [dim])
    if list(part) != list(shape):
        pad = []
        for d in reversed(range(rank)):
            pad += [0, shape[d] - part[d]]
        grad_input = torch.nn.functional.pad(grad_input, pad)
    return grad_input, None, None


gather.register_autograd(_gather_backward, setup_context=_gather_setup)


@torch.library.custom_op("multigather::take", mutates_args=())
def take(input: Tensor, index: Tensor) -> Tensor:
    """torch.take on registry op "torch.take" (see ``multigather.torch.take``)."""
    return _fresh(_impl._take(_plain(input), index), input, index)


@take.register_fake
def _(input, index):
    return input.new_empty(_infer("torch.take", input, index, symbolic=lambda: index.shape))


def _take_setup(ctx, inputs, output):
    input, index = inputs
    ctx.save_for_backward(index)
    ctx.input_shape = tuple(input.shape)


def _take_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    numel = 1
    for s in ctx.input_shape:
        numel *= s
    flat = _scatter_add([numel], index.reshape(-1), grad.reshape(-1), [0])
    return flat.reshape(ctx.input_shape), None


take.register_autograd(_take_backward, setup_context=_take_setup)


@torch.library.custom_op("multigather::take_along_dim", mutates_args=())
def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    """torch.take_along_dim on registry op "torch.take_along_dim" (see
    ``multigather.torch.take_along_dim``)."""
    return _fresh(_impl._take_along_dim(_plain(input), indices, dim), input, indices)


@take_along_dim.register_fake
def _(input, indices, dim=None):
    def symbolic():
        if dim is None:
            return [indices.numel()]
        d0 = dim % input.dim()
        return [indices.shape[d] if d == d0 or input.shape[d] == 1 else input.shape[d]
                for d in range(input.dim())]

    return input.new_empty(_infer("torch.take_along_dim", input, indices, symbolic=symbolic,
                                  dim=dim))


def _take_along_dim_setup(ctx, inputs, output):
    input, indices, dim = inputs
    ctx.save_for_backward(indices)
    ctx.input_shape = tuple(input.shape)
    ctx.dim = dim


def _take_along_dim_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    shape = ctx.input_shape
    if ctx.dim is None or len(shape) == 0:
        numel = 1
        for s in shape:
            numel *= s
        flat = _scatter_add([numel], indices.reshape(-1), grad.reshape(-1), [0])
        return flat.reshape(shape), None, None
    # Indices are taken modulo input.size(dim) (PyTorch 2.15): index_mode "wrap"; dimensions of
    # size 1 that broadcast against indices sum their gradient.
    return _scatter_add(shape, indices, grad, [ctx.dim % len(shape)], "wrap"), None, None


take_along_dim.register_autograd(_take_along_dim_backward, setup_context=_take_along_dim_setup)


@torch.library.custom_op("multigather::index_select", mutates_args=())
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.index_select on registry op "torch.index_select" (see
    ``multigather.torch.index_select``)."""
    return _fresh(_impl._index_select(_plain(input), dim, index), input, index)


@index_select.register_fake
def _(input, dim, index):
    def symbolic():
        if input.dim() == 0:
            return []
        shape = list(input.shape)
        shape[dim % input.dim()] = index.numel()
        return shape

    return input.new_empty(_infer("torch.index_select", input, index, symbolic=symbolic, dim=dim))


def _index_select_setup(ctx, inputs, output):
    input, dim, index = inputs
    ctx.save_for_backward(index)
    ctx.input_shape = tuple(input.shape)
    ctx.dim = dim


def _index_select_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    shape = ctx.input_shape
    if len(shape) == 0:  # one index (0): the one element
        return grad.reshape(()), None, None
    rank, dim = len(shape), ctx.dim % len(shape)
    n = index.numel()
    view = [n if d == dim else 1 for d in range(rank)]
    taken = [n if d == dim else shape[d] for d in range(rank)]
    return _scatter_add(shape, index.reshape(view), grad.reshape(taken), [dim]), None, None


index_select.register_autograd(_index_select_backward, setup_context=_index_select_setup)


# ---- embedding ----------------------------------------------------------------------------------

@torch.library.custom_op("multigather::embedding", mutates_args=())
def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None) -> Tensor:
    """F.embedding(input, weight, padding_idx): out[..., :] = weight[input[...], :], of shape
    input.shape + [embedding_dim]; registry op "torch.index_select" (dim 0) on the flattened
    indices. padding_idx (non-negative here) only stops that row's gradient."""
    return _fresh(_impl._embedding(input, _plain(weight), padding_idx), input, weight)


@embedding.register_fake
def _(input, weight, padding_idx=None):
    _impl._check_embedding(weight, padding_idx)
    rows = _infer("torch.index_select", weight, input.reshape(-1), dim=0,
                  symbolic=lambda: [input.numel(), weight.shape[1]])
    return weight.new_empty(list(input.shape) + rows[1:])


def _embedding_setup(ctx, inputs, output):
    input, weight, padding_idx = inputs
    ctx.save_for_backward(input)
    ctx.weight_shape = tuple(weight.shape)
    ctx.padding_idx = padding_idx


def _embedding_backward(ctx, grad):
    (input,) = ctx.saved_tensors
    n, dim = input.numel(), ctx.weight_shape[1]
    grad_weight = _scatter_add(ctx.weight_shape, input.reshape(n, 1), grad.reshape(n, dim), [0])
    if ctx.padding_idx is not None:
        grad_weight = grad_weight.index_fill(
            0, torch.tensor([ctx.padding_idx], device=grad_weight.device), 0)
    return None, grad_weight, None


embedding.register_autograd(_embedding_backward, setup_context=_embedding_setup)
