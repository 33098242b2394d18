"""``multigather.torch.routing()``: PyTorch's gathers and scatters in code the user does not edit,
run by multigather's ops (a torch function mode, torch.overrides.TorchFunctionMode).

Routed, as functions and as Tensor methods (in-place methods too):

- gathers: ``torch.gather``, ``index_select``, ``take``, ``take_along_dim``,
  ``torch.nn.functional.embedding`` and advanced indexing ``x[idx]`` / ``x[:, idx]`` /
  ``x[mask]`` / ``x[b, h, w]`` (Tensor.__getitem__ whose key is index tensors, masks and full
  slices ``:`` / ``...``);
- scatters: ``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_add``, ``index_copy``,
  ``index_fill``, ``index_put``, ``put`` and ``scatter_`` ... ``put_``;
- segment reductions: ``torch.segment_reduce`` (lengths or offsets);
- ``torch.nn.functional.embedding_bag`` (so ``torch.nn.EmbeddingBag`` too).

Not routed (PyTorch runs them): calls with ``out=``, ``sparse_grad=True``; segment_reduce with
``indices=`` (PyTorch refuses it too); F.embedding and F.embedding_bag with
``max_norm``, ``scale_grad_by_freq`` or ``sparse``; indexing with ints, partial slices or None
(new axes) beside the index tensors; ``x[idx] = v`` (Tensor.__setitem__); in-place methods on a
self whose elements share memory (expanded, interleaved strides: PyTorch's own rules, see
_overlapping). Under torch.compile Dynamo traces the mode: the graph holds multigather's ops
(then Inductor's rules fuse them); Dynamo guards on the mode, so code compiled outside routing()
is compiled again inside it.
An in-place method that autograd must see (self or a source, positional or keyword, requires
grad) runs the op out of place and copies the result into its tensor (``x.copy_``, recorded by
autograd as PyTorch's in-place ops are); without autograd it scatters in place.

Imports: _registry, _torch_dispatch and _import_hooks only; multigather.torch hands its own functions to the mode (Routing(mt)),
so that neither module imports the other.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from . import _registry, _torch_dispatch
from ._torch_dispatch import torch_op_needed

F = torch.nn.functional
_NOT = NotImplemented


def _index_key(input: torch.Tensor, key: Any):
    """The aten.index tuple of a __getitem__ key made of index tensors, boolean masks, full
    slices and one Ellipsis (None entries for full dimensions), or None when the key has
    anything else (ints, partial slices, new axes, lists): PyTorch indexes then."""
    if isinstance(key, torch.Tensor) and (key.dtype is torch.int64 or key.dtype is torch.int32):
        return (key,)  # the commonest keys, x[i] and x[i, j, ..]
    if isinstance(key, tuple) and key and all(isinstance(e, torch.Tensor) and (e.dtype is torch.int64 or
                                                                               e.dtype is torch.int32) for e in key):
        return key
    entries = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(e, torch.Tensor) for e in entries):
        return None
    out: list = []
    for e in entries:
        if isinstance(e, torch.Tensor):
            if e.dtype not in (torch.int64, torch.int32, torch.bool) or (e.dtype == torch.bool and e.dim() == 0):
                return None
            out.append(e)
        elif isinstance(e, slice) and e == slice(None):
            out.append(None)
        elif e is Ellipsis:
            out.append(Ellipsis)
        else:
            return None
    # (by identity: `in`, count and index compare with ==, which a tensor answers elementwise)
    ellipses = [j for j, e in enumerate(out) if e is Ellipsis]
    if len(ellipses) > 1:
        return None
    if ellipses:
        at = ellipses[0]
        covered = sum(e.dim() if isinstance(e, torch.Tensor) and e.dtype == torch.bool else 1
                      for e in out if e is not Ellipsis)
        out[at:at + 1] = [None] * max(input.dim() - covered, 0)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _overlapping(t: torch.Tensor) -> bool:
    """Whether some elements of ``t`` may share memory (an expanded tensor: a stride 0; or
    interleaved strides): no dimension's stride passes the extent of the smaller ones. An
    in-place method on such a tensor is left to PyTorch (its own rules: index_fill_ / index_put_
    warn and write, the others raise), as multigather does not write through shared memory."""
    extent = 0
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz > 1):
        if stride <= extent:
            return True
        extent += stride * (size - 1)
    return False


def _torch_rows() -> list[tuple[str, bool]]:
    """(PyTorch's function name, is a scatter) of every registry row of a torch.<name> function
    with a PyTorch op (torch.gather, ..., torch.put): the routed names come from the rows."""
    return [(row[len("torch."):], _registry.is_scatter(row)) for row in _registry.torch_op_rows()
            if row.startswith("torch.") and "." not in row[len("torch."):]]


def _gather_route(mt, name: str) -> Callable:
    """The route of gather row torch.<name>: multigather.torch.<name> for a call whose keyword
    arguments the row's signature names; a call with out= or another keyword (torch.gather's
    sparse_grad) is PyTorch's."""
    function = getattr(mt, name)
    accepted = {p.name for p in _registry.signature_parameters("torch." + name)} - {"out"}

    def route(*args, **kwargs):
        if kwargs.pop("out", None) is not None or not accepted.issuperset(kwargs):
            return _NOT
        return function(*args, **kwargs)
    return route


def _routes(mt) -> dict:
    """{torch function or Tensor method: its route}; a route returns NotImplemented for a call
    it does not take (PyTorch runs it). `mt`: the module multigather.torch. The rows' torch
    functions are routed by name (_torch_rows); the others are written here."""
    def _embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                   sparse=False):
        if max_norm is not None or scale_grad_by_freq or sparse:
            return _NOT
        return mt.embedding(input, weight, padding_idx)

    def _embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                       mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                       padding_idx=None):
        if max_norm is not None or scale_grad_by_freq or sparse:
            return _NOT
        return mt.embedding_bag(input, weight, offsets, mode=mode, per_sample_weights=per_sample_weights,
                                include_last_offset=include_last_offset, padding_idx=padding_idx)

    def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                        initial=None):
        if indices is not None:
            return _NOT
        return mt.segment_reduce(data, reduce, lengths=lengths, offsets=offsets, axis=axis, unsafe=unsafe,
                                 initial=initial)

    def _getitem(input, key):
        entries = _index_key(input, key)
        return _NOT if entries is None else mt.index(input, entries)

    def _scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
        """torch.scatter's overloads: src, or value= (a number)."""
        return mt.scatter(input, dim, index, value if src is None else src, reduce, out=out)

    def _in_place(function: Callable, reads_input: bool = False) -> Callable:
        """A Tensor's in-place scatter method from multigather.torch's out-of-place function: in
        place through the door when autograd need not see the call, else the differentiable op
        and self.copy_(result). `reads_input`: the op's gradient reads input's values
        (scatter_reduce's prod / amax / amin), so it gets a copy that the copy_ does not touch."""
        def method(self, *args, **kwargs):
            if kwargs.get("out") is not None or _overlapping(self):
                return _NOT
            # Sources given by keyword (src=, source=, values=, value=) count as the positional ones.
            tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
            tensors += [t for a in (*args, *kwargs.values()) if isinstance(a, (tuple, list))  # index_put_'s indices
                        for t in a if isinstance(t, torch.Tensor)]
            if torch_op_needed(self, *tensors):
                reduce = args[3] if len(args) > 3 else kwargs.get("reduce")
                source = self.clone() if reads_input and reduce != "sum" else self
                self.copy_(function(source, *args, **kwargs))
            else:
                function(self, *args, out=self, **kwargs)
            return self
        return method

    T = torch.Tensor
    routes = {
        F.embedding: _embedding,
        F.embedding_bag: _embedding_bag,
        T.__getitem__: _getitem,
    }
    for name, scatter in _torch_rows():
        if name == "segment_reduce":
            function = _segment_reduce
        elif not scatter:
            function = _gather_route(mt, name)
        else:
            function = _scatter if name == "scatter" else getattr(mt, name)
        for owner in (torch, T):
            if hasattr(owner, name):
                routes[getattr(owner, name)] = function
        if scatter:
            routes[getattr(T, name + "_")] = _in_place(function, reads_input=name == "scatter_reduce")
    return routes


class Routing(TorchFunctionMode):
    """The torch function mode of ``multigather.torch.routing()`` (see its docstring)."""

    def __init__(self, mt) -> None:
        super().__init__()
        self.routes = _routes(mt)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = self.routes.get(func)
        if route is not None:
            result = route(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


def routing(mt) -> Routing:
    """A context manager that runs PyTorch's gather and scatter family on multigather, in code
    you do not edit (a transformers model, a graph network)::

        with multigather.torch.routing():
            loss = model(batch)
            loss.backward()

    Routed (functions and Tensor methods, in-place methods too): torch.gather, index_select,
    take, take_along_dim, F.embedding, advanced indexing x[idx] (index tensors, masks, full
    slices), scatter, scatter_add, scatter_reduce, index_add, index_copy, index_fill, index_put,
    put, segment_reduce. The results and gradients are multigather.torch.*'s: PyTorch's values and gradient
    rules (torch.ops.multigather.*, C++ autograd). Not routed: out=, sparse_grad, F.embedding's
    max_norm / scale_grad_by_freq / sparse, indexing with ints, partial slices or new axes
    beside index tensors, x[idx] = v, in-place methods on a tensor whose elements share memory
    (an expanded tensor or interleaved strides: PyTorch's rules apply, index_fill_ / index_put_
    warn and write, the others raise; multigather never writes through shared memory). Under
    torch.compile the compiled graph holds multigather's ops (Dynamo traces the mode and guards
    on it). Results have the strides PyTorch's op returns
    (contiguous gathers and scatters; index_fill / index_put / put preserve input's layout;
    x[idx] aten.index's TensorIterator order). In-place methods take their source positionally or
    by keyword (src=, source=, values=, value=) with the same gradients. Operands on two devices
    (meta beside CPU) raise RuntimeError in PyTorch's words before anything is written.
    Errors are multigather's (IndexError, ValueError, TypeError with the registry's messages;
    x[idx] out of range: PyTorch's "index 5 is out of bounds for dimension 1 with size 3", with
    the position in the index tensor).
    Source: torch.overrides.TorchFunctionMode. `mt`: the module multigather.torch (which calls
    this as multigather.torch.routing())."""
    return Routing(mt)


# Dynamo never compiles Routing.__torch_function__ as a frame of its own, nor the frames it calls
# (_torch_dispatch.skip_as_root_frames; it still inlines it where it traces a model): a model
# frame that Dynamo gives up on (a graph break inside a loop) runs eagerly, and a torch function
# mode's handler compiled as its own frame there returns a torch.return_types tuple wrongly
# (`w, c = x.max(-1)`: "too many values to unpack"; a plain pass-through mode does it too,
# torch 2.15).
_torch_dispatch.skip_as_root_frames([Routing.__torch_function__])
