"""A gather or scatter inside a JAX transformation as XLA's own gather or scatter (jax.numpy
ops), which XLA fuses with its producers and consumers, instead of the FFI call (``_jax_ffi``).
Chosen per call site at trace time by ``set_jit_ops`` (docs/jax.md, "Under jax.jit: XLA's ops
or the FFI call").

The row's Lowering as data (``_multigather.lowering_views``, from shapes) gives the core views,
written as reshape / slice / transpose / broadcast (``_views``). The core gather is advanced
indexing ``x[i0, i1, ...]`` with every coordinate resolved by the index mode first
(``_core_ops.resolve``: clamp, wrap, fill), so XLA gathers in bounds
(``mode="promise_in_bounds"``); fill selects the fill value; the core output is written back.
The core scatter is ``x.at[i0, i1, ...].set / add / multiply / min / max(updates)`` with one
index array per updated element (row-major order of the updates, docs/spec.md section 3); drop
sends a skipped update out of range (``mode="drop"``); the core output is written back into the
scatter's base. On the CPU XLA's scatter is one loop over the updates in that order, so its
bytes are the engine's (tests/python/test_jax_ops.py compares them).

Gradients stay the FFI call's VJP (a jax.custom_vjp whose forward is XLA's op): a gather's is the
deterministic scatter-add of multigather, several times faster than XLA's on a large table
(bench/jax_ops.py S6). A mul / min / max scatter's gradient, whichever path ran the forward, is
JAX's own rule (mul's, in the updates, extended to repeated indices): ``_jax_ffi``
differentiates ``scatter_function(..., gradient=True)``. vmap is JAX's own
for the forward.

Declines (the FFI call runs) for: index_mode "error" (XLA has no failing gather or scatter: the
FFI call raises the op's error), a scatter in index mode "fill", without its input
(include_input false), of complex or float min / max or bool combines, lowerings beyond views
(segment ops, computed operands), an operand that is empty, and a call the rule sends to the FFI
("auto": float16 / bfloat16, several devices or a GPU, a large scatter, a large element gather).
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from . import _multigather as _core
from ._core_ops import Namespace, fill_scalar, indexed_dims, logical_shape, resolve
from ._views import NotAView, array_emitter, int_list, plan_of, plan_view, read_view, write_view

_MODE = "auto"


def set_jit_ops(mode: str) -> None:
    """How a multigather gather or scatter traced by JAX (jit, grad, vmap) runs: ``"auto"``
    (default): a gather as XLA's gather, except an element gather (each lookup one element) of
    16384 lookups or more, which runs 1.2-3x faster as the FFI call (bench/jax_ops.py
    --gather-sizes), a scatter of at most 262144 update positions as XLA's
    scatter (above that the FFI call's deterministic engine is faster: bench/jax_ops.py), except
    for float16 / bfloat16, whose gathers XLA's CPU backend runs an order of magnitude slower
    than the FFI call (bench/jax_ops.py case 8) and whose scatter-adds multigather sums in
    float32, except in a process with several devices, where multigather's sharding rules keep
    sharded operands sharded and XLA's own may replicate them, and except on a GPU, where XLA's
    scatter adds with atomics and this path has not run; ``"xla"``: XLA's op whenever the
    lowering allows it (module docstring); ``"ffi"``: always the FFI call. Index mode "error" and
    lowerings beyond views always take the FFI call. Gradients are the FFI call's VJP on both
    paths (a mul / min / max scatter's: JAX's rule). Applies to calls traced afterwards (a
    jitted function already compiled keeps its choice). Raises ValueError for another mode."""
    global _MODE
    if mode not in ("auto", "xla", "ffi"):
        raise ValueError(f"set_jit_ops: mode {mode!r} is not 'auto', 'xla' or 'ffi'")
    _MODE = mode


def jit_ops() -> str:
    """The mode set by ``set_jit_ops``."""
    return _MODE


class _Jnp(Namespace):
    def __init__(self):
        import jax.numpy as jnp

        super().__init__(jnp)
        self.jnp = jnp

    def as_index(self, coords):
        return coords.astype(self.jnp.int32 if coords.dtype.itemsize <= 4 else coords.dtype)

    def zero(self):
        return self.jnp.zeros((), self.jnp.int32)

    def arange(self, n):
        return self.jnp.arange(n, dtype=self.jnp.int32)


def _jax_emitter():
    import jax.numpy as jnp
    from jax import lax

    return array_emitter(jnp.reshape, jnp.broadcast_to, jnp.transpose,
                         lambda x, axis, start, length: lax.slice_in_dim(x, start, start + length, axis=axis),
                         lambda arrays, axis: jnp.concatenate(arrays, axis=axis))


def _fill(text: str, dtype: Any) -> Any:
    kind = np.dtype(dtype)
    return fill_scalar(text, kind == np.bool_, np.issubdtype(kind, np.inexact))


def _chosen(dtype: Any) -> bool:
    if _MODE != "auto":
        return _MODE == "xla"
    import jax

    # Several devices: operands may be sharded, and XLA's own sharding of a gather replicates
    # where multigather's partitioning rules keep operands sharded (a row-sharded table's
    # gradient: test_jax_sharding); the FFI call keeps those rules.
    # On a GPU: the FFI call (this path has not run on one).
    return (np.dtype(dtype).name not in ("float16", "bfloat16") and jax.device_count() == 1
            and jax.default_backend() == "cpu")


def _lowering(op: str, input: Any, indices: Any, updates: Optional[Any], attrs: dict,
              gradient: bool = False) -> Optional[dict]:
    """The row's lowering as views (lowering_views) when this path may take the call, else None.
    gradient: for a gradient's rule (any device, dtype or mode: the forward checked the indices)."""
    if (not gradient and not _chosen(input.dtype)) or input.size == 0 or indices.size == 0 or \
            (updates is not None and updates.size == 0):
        return None
    try:
        # float16 / bfloat16 sums in float32 ("xla" mode only): not a view, the FFI call runs
        tolerate = [] if np.dtype(input.dtype).name in ("float16", "bfloat16") and not gradient \
            else ["accumulates in float32"]
        info = _core.lowering_views(op, [int(n) for n in input.shape], np.dtype(input.dtype).name,
                                    [int(n) for n in indices.shape], np.dtype(indices.dtype).name, attrs,
                                    None if updates is None else [int(n) for n in updates.shape],
                                    tolerate=tolerate)
    except Exception:  # the FFI call raises the op's own error
        return None
    kind = "gather" if updates is None else "scatter"
    if info["kind"] != kind or "input" not in info or info.get("input_is_constant") or not info["axes"] \
            or (info["index_mode"] == "error" and not gradient):
        return None
    return info


class _Plans(NamedTuple):
    """A lowering's views, planned once from the shapes (``_views``)."""
    out_shape: list
    core_shape: list
    input: Any
    indices: Any
    updates: Any   # None for a gather
    base: Any      # a partial write's whole input (None without one)
    output: Any


def _plans(info: dict, input: Any, indices: Any, updates: Optional[Any] = None) -> Optional[_Plans]:
    """The views of lowering ``info`` on operands of these shapes, or None where one is not a
    view (the FFI call runs then): each operand's read, and the core output's write into the
    framework's output (write_view's own refusals: a broadcast output, or one that does not cover
    the framework's output without a base to start from)."""
    out_shape, core_shape = list(info["output_shape"]), list(info["core_output_shape"])
    try:
        plans = _Plans(out_shape, core_shape, plan_of(input.shape, info["input"]), plan_of(indices.shape, info["indices"]),
                       None if updates is None else plan_of(updates.shape, info["updates"]),
                       plan_of(input.shape, info["scatter_base"]) if info.get("has_scatter_base") else None,
                       plan_view(out_shape, core_shape, info["core_output_strides"], 0))
    except NotAView:
        return None
    if plans.output.broadcast_dims or (not plans.output.covers_source and plans.base is None):
        return None
    return plans


# "auto": an element gather (each lookup reads one element) of at least this many lookups is the
# FFI call: XLA's CPU gather loop took 1.2-3x its time there at 1 and 2 threads, with a fused
# elementwise consumer 1.4-2.1x; below it the two are within each other's noise (0.5-1.5) and
# XLA's keeps the fusion (bench/jax_ops.py --gather-sizes, bench/README.md).
_FFI_ELEMENT_GATHER_MIN_LOOKUPS = 1 << 14


def _large_element_gather(info: dict) -> bool:
    """Whether each lookup of a gather's lowering reads one element (no dimension after the
    indexed ones is taken whole: take_along_axis, a flat take, a column take) and there are at
    least _FFI_ELEMENT_GATHER_MIN_LOOKUPS of them."""
    x_shape, g_shape, axes = list(info["input"]["shape"]), list(info["core_output_shape"]), list(info["axes"])
    m = indexed_dims(x_shape, axes, g_shape, logical_shape(info["indices"]["shape"], axes))
    return math.prod(g_shape[m:]) == 1 and math.prod(g_shape) >= _FFI_ELEMENT_GATHER_MIN_LOOKUPS


def gather_function(op: str, input: Any, indices: Any, attrs: dict) -> Optional[Callable]:
    """Registry gather ``op`` on operands of these shapes as a function of (input, indices) in
    jax.numpy ops, or None when the FFI call should run."""
    info = _lowering(op, input, indices, None, attrs)
    if info is None or (_MODE == "auto" and _large_element_gather(info)):
        return None

    plans = _plans(info, input, indices)
    if plans is None:
        return None
    out_shape, core_shape = plans.out_shape, plans.core_shape

    def compute(input: Any, indices: Any) -> Any:
        import jax.numpy as jnp

        emit = _jax_emitter()
        x = read_view(emit, int_list, input, plans.input)
        ix = read_view(emit, int_list, indices, plans.indices)
        resolved = resolve(_Jnp(), list(x.shape), ix, info["axes"], core_shape, info["index_mode"],
                           info["negative_indices"])
        core = x.at[tuple(resolved.index)].get(mode="promise_in_bounds") if resolved.index else x
        core = jnp.broadcast_to(core, core_shape)
        if resolved.valid is not None:
            core = jnp.where(resolved.valid, core, jnp.asarray(_fill(info["fill_value"], x.dtype), x.dtype))
        return jnp.reshape(write_view(emit, int_list, core, plans.output), out_shape)

    return compute


# XLA's scatter on the CPU is one loop over the updates in row-major order, the combine of
# docs/spec.md section 3, so its bytes are the engine's (tests/python/test_jax_ops.py checks it);
# float min / max are left out (NaN payloads and signed-zero ties follow XLA's compare, not the
# spec's "first NaN met"), and so are bool combines and complex numbers.
_SCATTER_METHOD = {"none": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}
# "auto": XLA's scatter up to this many update positions (G's elements), where the FFI call's
# fixed cost (about 6 us) is most of the call, and XLA's loop is as fast or faster; beyond it the
# FFI call (bench/jax_ops.py --scatter-sizes: from about 1M update positions the engine is faster).
_XLA_SCATTER_MAX_UPDATES = 1 << 18


def scatter_function(op: str, input: Any, indices: Any, updates: Any, attrs: dict,
                     gradient: bool = False) -> Optional[Callable]:
    """Registry scatter ``op`` on operands of these shapes as a function of (input, indices,
    updates) in jax.numpy ops (XLA's scatter), or None when the FFI call should run.
    gradient: the function whose JAX derivative is the gradient of a mul / min / max scatter
    (``_jax_ffi``): any device, dtype, size or float min / max; index mode "error" reads the
    indices as in range (the forward call checked them); mul differentiable in the updates for
    repeated indices (``_scatter_multiply``)."""
    info = _lowering(op, input, indices, updates, attrs, gradient)
    if info is None or info["index_mode"] == "fill" or not info.get("include_input", True):
        return None
    reduction = info["reduction"]
    kind = np.dtype(input.dtype)
    if reduction not in _SCATTER_METHOD or np.dtype(updates.dtype) != kind or kind.kind == "c" or \
            (reduction != "none" and (kind == np.bool_ or
                                      (kind.kind == "f" and reduction in ("min", "max") and not gradient))):
        return None
    plans = _plans(info, input, indices, updates)
    if plans is None:
        return None
    out_shape = plans.out_shape
    # G: the gather's output shape (the index coordinates broadcast with the input's other
    # dimensions); the updates broadcast to it
    axes = list(info["axes"])
    logical = list(plans.indices.shape[:-1]) + [plans.indices.shape[-1] // max(len(axes), 1)]
    g_shape = list(np.broadcast_shapes(tuple(logical),
                                       tuple(1 if d in axes else n for d, n in enumerate(plans.input.shape))))
    if _MODE == "auto" and not gradient and math.prod(g_shape) > _XLA_SCATTER_MAX_UPDATES:
        return None

    def compute(input: Any, indices: Any, updates: Any) -> Any:
        import jax.numpy as jnp

        emit = _jax_emitter()
        x = read_view(emit, int_list, input, plans.input)
        ix = read_view(emit, int_list, indices, plans.indices)
        u = jnp.broadcast_to(read_view(emit, int_list, updates, plans.updates), g_shape)
        resolved = resolve(_Jnp(), list(x.shape), ix, axes, g_shape, info["index_mode"],
                           info["negative_indices"], wrap_negatives=True)
        lead = g_shape[:len(resolved.index)]
        index = [jnp.broadcast_to(t, lead) for t in resolved.index]  # one target per update, in order
        mode = "promise_in_bounds"
        if resolved.valid is not None:  # drop: an update with a coordinate out of range is skipped
            # valid has G's rank, size 1 in the dimensions taken whole (no coordinate varies there)
            valid = jnp.broadcast_to(resolved.valid, lead + [1] * (len(g_shape) - len(lead))).reshape(lead)
            first = min(resolved.axis_index)
            index[first] = jnp.where(valid, index[first], x.shape[first])
            mode = "drop"
        if gradient and reduction == "mul":
            core = _scatter_multiply(x, tuple(index), u, mode)
        else:
            core = getattr(x.at[tuple(index)], _SCATTER_METHOD[reduction])(u, mode=mode)
        base = None if plans.base is None else jnp.reshape(read_view(emit, int_list, input, plans.base), out_shape)
        return jnp.reshape(write_view(emit, int_list, core, plans.output, base=base), out_shape)

    return compute


def _scatter_multiply(x: Any, index: tuple, u: Any, mode: str) -> Any:
    """``x.at[index].multiply(u, mode=mode)`` differentiable in the updates for repeated indices
    too (JAX's own rule needs unique ones): the derivative of an element's product by one update
    is the product of everything else that element combined (its input and the other updates;
    TensorFlow's segment-product rule with the input as one more factor): the product over it
    where that update is not 0, the product of the others where it is the only 0, else 0. In
    the input: the product of the updates that reached it (JAX's rule)."""
    import jax
    import jax.numpy as jnp

    def at(a):
        return a.at[index]

    @jax.custom_vjp
    def multiply(x, u, *index):
        return at(x).multiply(u, mode=mode)

    def forward(x, u, *index):
        return multiply(x, u, *index), (x, u)

    def backward(residuals, cotangent):
        x, u = residuals
        cotangent = jnp.asarray(cotangent)
        zero = u == 0
        zeros = at(jnp.zeros(x.shape, jnp.int32)).add(zero.astype(jnp.int32), mode=mode)
        non_zero = at(x).multiply(jnp.where(zero, jnp.ones_like(u), u), mode=mode)  # x times the non-zero updates

        def get(a):  # at each update's element (a dropped update: 0)
            return at(a).get(mode="fill", fill_value=0)

        count, product = get(zeros), get(non_zero)
        others = jnp.where(zero, jnp.where(count == 1, product, 0),
                           jnp.where(count == 0, product / jnp.where(zero, jnp.ones_like(u), u), 0))
        grad_x = cotangent * at(jnp.ones_like(x)).multiply(u, mode=mode)
        return (grad_x, get(cotangent) * others) + (None,) * len(index)

    multiply.defvjp(forward, backward)
    return multiply(x, u, *index)


def function(op: str, input: Any, indices: Any, updates: Optional[Any] = None, *, attrs: dict) -> Optional[Callable]:
    """Registry op ``op`` on operands of these shapes as a function of its operands in
    jax.numpy ops (XLA's gather or scatter), or None when the FFI call should run."""
    if updates is None:
        return gather_function(op, input, indices, attrs)
    return scatter_function(op, input, indices, updates, attrs)
