"""Inductor rules for ``torch.ops.multigather.*`` (docs/torch.md, "torch.compile"): under
``torch.compile`` a call whose lowering is views decomposes into aten ops that Inductor fuses with
their producers and consumers; eager calls, ``torch.export`` and AOTInductor keep the C++ op.

One rule serves every row and one its gradient (docs/spec.md sections 1 and 4, the core operator
written in aten). The row's Lowering as data (``_multigather.lowering_views``, from shapes alone)
gives the core views of the operands, written as reshape / narrow / permute / expand (the view
planner shared with the ONNX rewrite, ``_views``); then

- the core gather: along one axis (every other dimension of the core input as long as G's),
  ``aten.gather``; else ``aten.index`` of the core input with one index tensor per leading
  dimension (an axis's coordinate, resolved by the index mode; an ``arange`` elsewhere). Inductor
  lowers both to a loop with indirect loads;
- the core scatter: aten's ``scatter`` / ``scatter_reduce`` along its one axis, or on the
  flattened target for several axes (a dropped update goes to a spare slot, then sliced off);
- the core output written back into the framework output.

A gather's gradient is the scatter-add of the output gradient through the same views
(``scatter_add`` along one axis, else ``index_put`` with accumulate); a scatter's (add and
replace: PyTorch's rows) are the output gradient, zeroed where a replace wrote, and the output
gradient gathered at each update's target. ``scatter_reduce_values_backward`` (amax / amin;
mean if an op calls it) is PyTorch's formula in aten.

Index modes: ``error`` keeps Inductor's own bounds check (a RuntimeError "index out of bounds"
where eager raises multigather's IndexError). Inductor's gather and scatter check each raw index,
a negative one too, so along one axis the indices go in as they are; ``aten.index`` wraps a
negative index, so there a negative index of a row without the negative rule is first sent out
of range (one more pass over the indices). ``clamp`` and ``wrap`` resolve as ``resolve(v, n)``
does, ``fill`` selects the fill value, ``drop`` skips.

Scatters: by default (``"deterministic"``) a float scatter and a float scatter-add gradient stay
the C++ op, whose bytes do not depend on the thread count (Inductor's scatter-add adds with
atomics, in an order that varies with the threads); what no order can change is fused in both
modes. ``set_compiled_scatters("fused")`` decomposes the rest.

Symbolic sizes (``dynamic=True``, data-dependent sizes): the views come from concrete sizes, so
the torch rows that are PyTorch's op by definition (gather, index_select, scatter_add, index_add,
scatter_reduce) become that aten op, and the others stay the C++ op.

The rule declines, and the call stays the C++ op, when: the lowering is more than views (it
reads index values, computes operands, divides a mean, scales updates, accumulates float16 /
bfloat16 in float32, or is a segment op), a size is symbolic (but above), the call is batched
(vmap), an operand is empty, or the dtype is one Inductor does not index (complex, float8,
unsigned beyond uint8).
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import torch

from . import _multigather as _mg
from . import _registry
from ._core_ops import Namespace, Resolved, fill_scalar, resolve
from ._views import NotAView, array_emitter, int_list, plan_of, plan_view, read_array_view, read_view, write_view

_SCATTERS = "deterministic"

# Dtypes whose loads, stores and comparisons Inductor generates.
_DTYPES = frozenset({torch.bool, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.float16,
                     torch.bfloat16, torch.float32, torch.float64})


def _dtype_name(dtype: torch.dtype) -> str:
    """multigather's name of a torch dtype (torch.float32 -> "float32", as torch_ops names it)."""
    return str(dtype).removeprefix("torch.")


_INDEX_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_ORDER_FREE = {"add", "mul", "min", "max"}  # reductions an integer scatter combines in any order


def _order_free(dtype: torch.dtype) -> bool:
    """An integer dtype: its add / mul / min / max give the same bytes in any order."""
    return dtype != torch.bool and not dtype.is_floating_point


def set_compiled_scatters(mode: str) -> None:
    """How ``torch.compile`` runs multigather's scatters and gradients. ``"deterministic"`` (the
    default): the C++ op, the same bytes at every thread count, as in eager. ``"fused"``: aten's
    scatter / scatter_reduce, which Inductor fuses with producers and runs with atomic adds:
    float sums then vary in their last bits with the thread count (as torch's own compiled
    scatter_add does), and a replace with duplicate targets keeps one of the updates, not
    always the last. Integer add / mul / min / max are fused in both modes (their result does not
    depend on the order). Takes effect for graphs compiled afterwards (``torch._dynamo.reset()``
    recompiles those already compiled); Inductor's caches key the mode. Raises ValueError for
    another mode."""
    global _SCATTERS
    if mode not in ("deterministic", "fused"):
        raise ValueError(f"set_compiled_scatters: mode {mode!r} is not 'deterministic' or 'fused'")
    _SCATTERS = mode
    _key_compile_caches(mode)


_RULES_HASH: Optional[str] = None


def _key_compile_caches(mode: str) -> None:
    """Inductor's caches (AOTAutograd's and the FX graph cache, on disk too) key a graph before
    the decompositions run: a no-op post-grad pass whose uuid names the mode and these rules'
    source is added to Inductor's config, so that a graph compiled in one mode, or by another
    version of the rules, is never served."""
    import hashlib

    from torch._inductor import config
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_custom_graph_passes

    global _RULES_HASH
    if _RULES_HASH is None:
        with open(__file__, "rb") as f:
            _RULES_HASH = hashlib.sha256(f.read()).hexdigest()[:16]
    key = f"multigather inductor rules {_RULES_HASH}, scatters {mode}"

    class MultigatherRules(CustomGraphPass):
        def __call__(self, graph) -> None:
            pass

        def uuid(self) -> str:
            return key

    passes = [p for p in get_custom_graph_passes(config.post_grad_custom_pre_pass)
              if type(p).__name__ != "MultigatherRules"]
    config.post_grad_custom_pre_pass = passes + [MultigatherRules()]


def compiled_scatters() -> str:
    """The mode set by ``set_compiled_scatters``."""
    return _SCATTERS


# ---- views as torch ops ----------------------------------------------------------------------

_emit = array_emitter(lambda x, shape: x.reshape(shape), lambda x, shape: x.expand(shape),
                      lambda x, perm: x.permute(perm), lambda x, axis, start, length: x.narrow(axis, start, length),
                      lambda arrays, axis: torch.cat(arrays, dim=axis))


def _read(source: torch.Tensor, view: dict) -> torch.Tensor:
    return read_array_view(_emit, source, view)


# ---- the core operator in aten ---------------------------------------------------------------

class _Torch(Namespace):
    """The array library of the Inductor rules: torch (a broadcast index dimension, stride 0,
    is resolved once)."""

    def __init__(self, device):
        super().__init__(torch)
        self.device = device

    def compact(self, coords, logical):
        for e in range(len(logical)):
            if logical[e] > 1 and coords.stride(e) == 0:
                coords = coords.narrow(e, 0, 1)
        return coords

    def as_index(self, coords):
        return coords.to(torch.int64)

    def zero(self):
        return torch.zeros((), dtype=torch.int64, device=self.device)

    def arange(self, n):
        return torch.arange(n, device=self.device)


def _resolve(x_shape, indices: torch.Tensor, axes, g_shape, mode: str, negative: bool, raw: bool) -> Resolved:
    """resolve() for the consumer: ``raw``, aten's gather / scatter (a negative index is not
    wrapped, and the bounds check sees it as it is), else aten.index (which wraps negatives)."""
    return resolve(_Torch(indices.device), x_shape, indices, axes, g_shape, mode, negative,
                   wrap_negatives=raw, checked=raw)


def _along(x_shape, axes, g_shape) -> Optional[int]:
    """The axis along which aten's gather / scatter do the core op: one axis, and every other
    dimension of the core input as long as G's; None otherwise (aten.index / the flat target).
    Their Inductor lowerings check the raw index (no wrap of negatives), so error mode passes the
    indices as they are: no pass that writes them out, no copy saved for the backward."""
    if len(axes) == 1 and all(x_shape[e] == g_shape[e] for e in range(len(x_shape)) if e != axes[0]):
        return axes[0]
    return None


def _fill_scalar(text: str, dtype: torch.dtype):
    return fill_scalar(text, dtype == torch.bool, dtype.is_floating_point)


def _index(x: torch.Tensor, resolved: Resolved, g_shape, along: Optional[int] = None) -> torch.Tensor:
    """x at the resolved indices, in G's shape: aten.gather along `along` (resolved with
    raw=True), else aten.index."""
    if along is not None:
        return x.gather(along, resolved.axis_index[along].expand(g_shape))
    if not resolved.index:
        return x.expand(g_shape)
    return torch.ops.aten.index.Tensor(x, resolved.index).expand(g_shape)


def _core_gather(x: torch.Tensor, indices: torch.Tensor, info: dict, g_shape) -> torch.Tensor:
    d = _along(list(x.shape), info["axes"], g_shape)
    resolved = _resolve(list(x.shape), indices, info["axes"], g_shape, info["index_mode"], info["negative_indices"],
                        raw=d is not None)
    out = _index(x, resolved, g_shape, d)
    if resolved.valid is not None:
        fill = torch.full((), _fill_scalar(info["fill_value"], x.dtype), dtype=x.dtype, device=x.device)
        out = torch.where(resolved.valid, out, fill)
    return out


_REDUCE = {"add": "sum", "mul": "prod", "min": "amin", "max": "amax"}


def _core_scatter(target: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, info: dict,
                  g_shape) -> torch.Tensor:
    """One axis whose other dimensions G shares with the target: aten's scatter / scatter_reduce
    along it (Inductor's own scatter loops); else the flat target of each update, scattered
    into the flattened target. A dropped update goes to a spare slot, then sliced off."""
    shape = list(target.shape)
    axes = list(info["axes"])
    # Error mode: aten's scatter checks the raw index, and the flat target's per-dimension check
    # below refuses a negative one.
    resolved = _resolve(shape, indices, axes, g_shape, info["index_mode"], info["negative_indices"], raw=True)
    reduction = info["reduction"]
    values = updates.expand(g_shape)
    dropped = resolved.valid is not None
    d = _along(shape, axes, g_shape)
    if d is not None:
        v = resolved.axis_index[d].expand(g_shape)
        source = target
        if dropped:
            v = torch.where(resolved.valid, v, shape[d])
            source = torch.cat([target, target.narrow(d, 0, 1)], dim=d)
        if reduction == "none":
            out = source.scatter(d, v, values)
        else:
            out = source.scatter_reduce(d, v, values, _REDUCE[reduction], include_self=info["include_input"])
        return out.narrow(d, 0, shape[d]) if dropped else out
    numel = target.numel()
    flat = torch.zeros((), dtype=torch.int64, device=target.device)
    stride = 1
    inside = None
    for e in reversed(range(len(shape))):
        n = shape[e]
        if e in resolved.axis_index:
            v = resolved.axis_index[e]
            if info["index_mode"] == "error":  # per dimension: the bounds the flat check cannot see
                ok = (v >= 0) & (v < n)
                inside = ok if inside is None else inside & ok
        elif n == 1:
            v = None
        else:
            v = torch.arange(g_shape[e], device=target.device).reshape([g_shape[e]] + [1] * (len(shape) - 1 - e))
        if v is not None:
            flat = flat + v * stride
        stride *= n
    flat = flat.expand(g_shape)
    if inside is not None:
        flat = torch.where(inside, flat, numel)  # out of the flat bounds: the check fires
    source = target.reshape(-1)
    if dropped:
        flat = torch.where(resolved.valid, flat, numel)
        source = torch.cat([source, source[:1]])
    flat = flat.reshape(-1)
    values = values.reshape(-1)
    if reduction == "none":
        out = source.scatter(0, flat, values)
    else:
        out = source.scatter_reduce(0, flat, values, _REDUCE[reduction], include_self=info["include_input"])
    if dropped:
        out = out[:numel]
    return out.reshape(shape)


# ---- the rule --------------------------------------------------------------------------------

def _symbolic(*shaped) -> bool:
    """Whether a size of these tensors or size lists is symbolic (a torch.SymInt)."""
    return any(isinstance(n, torch.SymInt) for t in shaped for n in (t if isinstance(t, (list, tuple)) else t.shape))


def _views(row: str, dtype: torch.dtype, input_shape, indices: torch.Tensor, updates_shape,
           attrs: dict, fused_only: bool = False) -> Optional[dict]:
    """The lowering as views, or None when the rule declines (module docstring). fused_only: a
    call that adds floats in an order of the compiler's (a gradient's scatter-add), fused only
    in "fused" mode."""
    if _symbolic(input_shape, indices, updates_shape or []):
        return None
    if dtype not in _DTYPES or indices.dtype not in _INDEX_DTYPES:
        return None
    if any(isinstance(v, (torch.Tensor, torch.SymInt, torch.SymFloat)) for v in attrs.values()):
        return None
    if fused_only and _SCATTERS != "fused" and not _order_free(dtype):
        return None
    tolerate = ["accumulates in float32"] if dtype not in (torch.float16, torch.bfloat16) else []
    try:
        info = _mg.lowering_views(row, [int(n) for n in input_shape], _dtype_name(dtype),
                                  [int(n) for n in indices.shape], _dtype_name(indices.dtype), attrs,
                                  None if updates_shape is None else [int(n) for n in updates_shape],
                                  tolerate=tolerate)
    except Exception:  # the op's own error: the C++ op raises it in its words
        return None
    if "input" not in info or info.get("input_is_constant") or not info["axes"]:
        return None
    if info["kind"] == "scatter" and info["index_mode"] == "fill":
        return None
    return info


def _forward(row: str, input: torch.Tensor, indices: torch.Tensor, updates: Optional[torch.Tensor],
             attrs: dict) -> Any:
    """The op, decomposed: core views, the core operator, the core output written back."""
    scatter = updates is not None
    if scatter and updates.dtype != input.dtype:
        return NotImplemented
    info = _views(row, input.dtype, input.shape, indices, None if updates is None else updates.shape, attrs)
    if info is None:
        return NotImplemented
    if scatter:  # a scatter that adds floats in the compiler's order: "fused" mode only
        if _SCATTERS != "fused" and not (_order_free(input.dtype) and info["reduction"] in _ORDER_FREE):
            return NotImplemented
    try:
        x = _read(input, info["input"])
        ix = _read(indices, info["indices"])
        out_shape = list(info["output_shape"])
        core_shape, core_strides = info["core_output_shape"], info["core_output_strides"]
        if info["kind"] == "gather":
            core = _core_gather(x, ix, info, list(core_shape))
        else:
            u = _read(updates, info["updates"])
            core = _core_scatter(x, ix, u, info, list(u.shape))
        plan = plan_view(out_shape, core_shape, core_strides, 0)
        if info.get("has_scatter_base"):
            base = _read(input, info["scatter_base"]).reshape(out_shape)
            return write_view(_emit, int_list, core, plan, base=base)
        return write_view(_emit, int_list, core, plan).reshape(out_shape)
    except NotAView:
        return NotImplemented


def _read_adjoint(grad: torch.Tensor, source_shape, view: dict) -> torch.Tensor:
    """The gradient of _read(source, view) for its source: broadcast dimensions summed, the view
    written back into zeros (NotAView for an overlapping view)."""
    plan = plan_of(source_shape, view)
    if plan.broadcast_dims:
        grad = grad.sum(plan.broadcast_dims, keepdim=True)
        shape = [1 if d in plan.broadcast_dims else n for d, n in enumerate(view["shape"])]
        plan = plan_view(list(source_shape), shape, view["strides"], view["offset"])
    if plan.covers_source:
        return write_view(_emit, int_list, grad, plan).reshape(list(source_shape))
    return write_view(_emit, int_list, grad, plan, base=grad.new_zeros(list(source_shape))).reshape(list(source_shape))


def _backward(row: str, grad_output: torch.Tensor, input_size, indices: torch.Tensor, updates_size,
              attrs: dict, input_grad: bool, updates_grad: bool) -> Any:
    """The op's gradient (the generic VJP, docs/spec.md section 4), decomposed: a gather's is a
    scatter-add of grad_output ("fused" mode: Inductor adds with atomics); a scatter's (add and
    replace, PyTorch's rows) are grad_output, zeroed at each written target for a replace, and
    grad_output gathered at each update's target (deterministic: fused in both modes)."""
    scatter = updates_size is not None
    info = _views(row, grad_output.dtype, input_size, indices, updates_size, attrs, fused_only=not scatter)
    if info is None:
        return NotImplemented
    if scatter and (info["reduction"] not in ("add", "none") or not info["include_input"] or
                    info.get("has_scatter_base") or row == "scatter_multiaxis"):
        return NotImplemented  # (scatter_multiaxis's replace: only the winning update's gradient)
    try:
        ix = _read(indices, info["indices"])
        out_shape = list(info["output_shape"])
        core_shape = list(info["core_output_shape"])
        out_plan = plan_view(out_shape, core_shape, info["core_output_strides"], 0)
        g_core = read_view(_emit, int_list, grad_output.reshape(out_shape), out_plan)
        target_shape = list(info["input"]["shape"])
        if not scatter:
            d = _along(target_shape, info["axes"], core_shape)
            resolved = _resolve(target_shape, ix, info["axes"], core_shape, info["index_mode"],
                                info["negative_indices"], raw=d is not None)
            if resolved.valid is not None:
                g_core = torch.where(resolved.valid, g_core, 0)
            zeros = g_core.new_zeros(target_shape)
            if d is not None:
                core_grad = zeros.scatter_add(d, resolved.axis_index[d].expand(core_shape), g_core)
            else:
                core_grad = zeros.index_put(resolved.index, g_core, accumulate=True)
            return _read_adjoint(core_grad, input_size, info["input"])
        g_shape = list(info["updates"]["shape"])
        # aten.gather for updates' gradient, unless a replace's input gradient needs index_put too.
        d = None if input_grad and info["reduction"] == "none" else _along(target_shape, info["axes"], g_shape)
        resolved = _resolve(target_shape, ix, info["axes"], g_shape, info["index_mode"], info["negative_indices"],
                            raw=d is not None)
        unused = grad_output.new_zeros([0])
        grad_input = grad_updates = unused
        if input_grad:
            core_grad = g_core
            if info["reduction"] == "none":  # an overwritten element passes nothing back
                if resolved.valid is None:  # every duplicate writes the same 0
                    core_grad = g_core.index_put(resolved.index, g_core.new_zeros(()).expand(g_shape))
                else:  # a dropped update overwrites nothing: count the kept ones (exact, any order)
                    kept = resolved.valid.to(torch.float32).expand(g_shape)
                    written = kept.new_zeros(target_shape).index_put(resolved.index, kept, accumulate=True)
                    core_grad = torch.where(written > 0, 0, g_core)
            grad_input = _read_adjoint(core_grad, input_size, info["input"])
        if updates_grad:
            gathered = _index(g_core, resolved, g_shape, d)
            if resolved.valid is not None:
                gathered = torch.where(resolved.valid, gathered, 0)
            grad_updates = _read_adjoint(gathered, updates_size, info["updates"])
        return grad_input, grad_updates
    except NotAView:
        return NotImplemented


def _scatter_reduce_values_backward(grad: torch.Tensor, input: torch.Tensor, dim: int, index: torch.Tensor,
                                     src: torch.Tensor, result: torch.Tensor, reduce: str, include_self: bool, *,
                                     batch_rank: int = 0) -> Any:
    """scatter_reduce's mean / amax / amin gradients (PyTorch's scatter_reduce_backward, as the
    C++ op scatter_reduce_values_backward computes them) in aten. Deterministic in both modes:
    its scatter-adds sum ones and zeros (counts, ties), exact in any order. prod declines."""
    if batch_rank or reduce not in ("mean", "amax", "amin") or input.dim() == 0:
        return NotImplemented
    if _symbolic(grad, input, index, src, result):
        return NotImplemented
    d = dim % input.dim()
    part = src
    for k in range(src.dim()):
        part = part.narrow(k, 0, index.shape[k])
    ones = torch.ones((), dtype=grad.dtype, device=grad.device).expand(part.shape)
    zeros = torch.zeros((), dtype=grad.dtype, device=grad.device).expand(input.shape)
    if reduce == "mean":
        count = (zeros + 1 if include_self else zeros).scatter_add(d, index, ones)
        reached = None if include_self else count.ne(0)
        per = grad / count.masked_fill(count == 0, 1)
        grad_self, grad_part = per, per.gather(d, index)
    else:
        reached = None if include_self else zeros.scatter_add(d, index, ones).ne(0)
        self_is = input == result
        if reached is not None:
            self_is = self_is & reached.logical_not()
        self_w = self_is.to(grad.dtype)
        src_w = (part == result.gather(d, index)).to(grad.dtype)
        per = grad / self_w.scatter_add(d, index, src_w)
        grad_self, grad_part = self_w * per, src_w * per.gather(d, index)
    if reached is not None:
        grad_self = grad_self.masked_fill(reached, 0)
    if tuple(part.shape) != tuple(src.shape):
        pad = []
        for k in reversed(range(src.dim())):
            pad += [0, src.shape[k] - part.shape[k]]
        grad_part = torch.nn.functional.pad(grad_part, pad)
    return grad_self, grad_part


# ---- symbolic sizes: PyTorch's own op ---------------------------------------------------------
#
# The views come from concrete sizes. With symbolic ones (dynamic=True, sizes from nonzero()), a
# torch row that is PyTorch's op by definition becomes that aten op (its gradient: PyTorch's
# formula); a negative index, which these rows refuse, is sent out of range for the compiler's
# bounds check where the aten op wraps it (index_select, index_add: ``_checked``; gather and the
# scatters check the raw index). float16 / bfloat16 decline (their float32 accumulation).

def _checked(row: str, index: torch.Tensor, size) -> torch.Tensor:
    if row not in ("torch.index_select", "torch.index_add"):
        return index
    return torch.where(index < 0, size, index)


def _aten_forward(row: str, input: torch.Tensor, indices: torch.Tensor, updates: Optional[torch.Tensor],
                  attrs: dict) -> Any:
    if input.dtype in (torch.float16, torch.bfloat16) or input.dtype not in _DTYPES:
        return NotImplemented
    dim = attrs.get("dim")
    if row in ("torch.gather", "torch.index_select"):
        op = torch.ops.aten.gather.default if row == "torch.gather" else torch.ops.aten.index_select.default
        return op(input, dim, _checked(row, indices, input.shape[dim]))
    if updates is None or updates.dtype != input.dtype:
        return NotImplemented
    if _SCATTERS != "fused" and not (_order_free(input.dtype) and row in ("torch.scatter_add", "torch.index_add")):
        return NotImplemented
    index = _checked(row, indices, input.shape[dim])
    if row == "torch.scatter_add":
        return torch.ops.aten.scatter_add.default(input, dim, index, updates)
    if row == "torch.index_add" and attrs.get("alpha", 1) == 1:
        return torch.ops.aten.index_add.default(input, dim, index, updates)
    if row == "torch.scatter_reduce":
        return torch.ops.aten.scatter_reduce.two(input, dim, index, updates, attrs["reduce"],
                                                 include_self=attrs.get("include_self", True))
    return NotImplemented


def _aten_backward(row: str, grad: torch.Tensor, input_size, indices: torch.Tensor, updates_size, attrs: dict,
                   input_grad: bool, updates_grad: bool) -> Any:
    if grad.dtype in (torch.float16, torch.bfloat16) or grad.dtype not in _DTYPES:
        return NotImplemented
    dim = attrs.get("dim")
    fused = _SCATTERS == "fused"
    if row == "torch.gather" and fused:
        return grad.new_zeros(input_size).scatter_add(dim, indices, grad)
    if row == "torch.index_select" and fused:
        return grad.new_zeros(input_size).index_add(dim, indices, grad)
    unused = grad.new_zeros([0])
    if row in ("torch.scatter_add", "torch.scatter_reduce") and list(updates_size) == list(indices.shape):
        if row == "torch.scatter_reduce" and (attrs["reduce"] != "sum" or not attrs.get("include_self", True)):
            return NotImplemented
        return (grad if input_grad else unused), (grad.gather(dim, indices) if updates_grad else unused)
    if row == "torch.index_add" and attrs.get("alpha", 1) == 1:
        return (grad if input_grad else unused), (grad.index_select(dim, indices) if updates_grad else unused)
    return NotImplemented


def _bind(packet):
    arguments = packet.default._schema.arguments
    names = [a.name for a in arguments]
    defaults = {a.name: a.default_value for a in arguments if a.has_default_value()}

    def bind(args, kwargs) -> dict:
        bound = dict(defaults)
        bound.update(zip(names, args))
        bound.update(kwargs)
        return bound
    return names, bind


def _rules(row: str, op_name: str) -> list:
    """[(OpOverload, rule)] of the row's op and of its backward."""
    spec = _registry.OPS[row]
    operands = (spec["input_name"], spec["indices_name"], spec["updates_name"])
    packet = getattr(torch.ops.multigather, op_name)
    names, bind = _bind(packet)
    scatter = operands[2] in names

    def forward(*args, **kwargs):
        bound = bind(args, kwargs)
        if bound.pop("batch_rank", 0):
            return NotImplemented
        input, indices = bound.pop(operands[0]), bound.pop(operands[1])
        updates = bound.pop(operands[2]) if scatter else None
        out = _forward(row, input, indices, updates, bound)
        if out is NotImplemented and _symbolic(*[t for t in (input, indices, updates) if t is not None]):
            out = _aten_forward(row, input, indices, updates, bound)
        return out

    backward_packet = getattr(torch.ops.multigather, op_name + "_backward")
    _, bind_backward = _bind(backward_packet)

    def backward(*args, **kwargs):
        bound = bind_backward(args, kwargs)
        if bound.pop("batch_rank", 0):
            return NotImplemented
        grad_output = bound.pop("grad_output")
        input_size, indices = bound.pop(operands[0] + "_size"), bound.pop(operands[1])
        updates_size = bound.pop(operands[2] + "_size") if scatter else None
        input_grad, updates_grad = bound.pop("input_grad", True), bound.pop("updates_grad", True)
        out = _backward(row, grad_output, input_size, indices, updates_size, bound, input_grad, updates_grad)
        if out is NotImplemented and _symbolic(grad_output, input_size, indices, updates_size or []):
            out = _aten_backward(row, grad_output, input_size, indices, updates_size, bound, input_grad, updates_grad)
        return out

    forward.__name__ = f"multigather_{op_name}_inductor"
    backward.__name__ = f"multigather_{op_name}_backward_inductor"
    return [(packet.default, forward), (backward_packet.default, backward)]


@functools.cache
def _ops() -> list:
    """(OpOverload, rule) of every row's op and its backward (segment rows: none, their ids
    decide shapes); made once, for the decompositions and the fallbacks."""
    out = []
    for row in _registry.torch_op_rows():
        if _registry.OPS[row]["kind"] != "segment":
            out.extend(_rules(row, _registry.torch_op_name(row)))
    out.append((torch.ops.multigather.scatter_reduce_values_backward.default, _scatter_reduce_values_backward))
    return out


def register_decompositions() -> None:
    """Adds one rule per op to Inductor's decomposition table (idempotent); called once
    ``torch._inductor.decomposition`` is imported."""
    from torch._inductor import decomposition as inductor_decomposition

    table = inductor_decomposition.decompositions
    for op, rule in _ops():
        table.setdefault(op, rule)
    # the table's cached copy (select_decomp_table) is made at the first compile
    cached = getattr(inductor_decomposition, "fast_random_decomps", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
    _key_compile_caches(_SCATTERS)


def register_fallbacks() -> None:
    """Where a rule declines, Inductor calls the op: its extern kernel, made here as Inductor
    would make it (Inductor refuses to make one itself for an op that has a decomposition);
    called once ``torch._inductor.lowering`` is imported."""
    from torch._inductor import lowering
    from torch._library.utils import get_layout_constraint_tag

    for op, _ in _ops():
        if op not in lowering.lowerings:
            constraint = lowering.tag_to_layout_constraint(get_layout_constraint_tag(op, with_default=True))
            lowering.make_fallback(op, layout_constraint=constraint, warn=False, override_decomp=True)
