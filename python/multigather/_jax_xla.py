"""A gather inside a JAX transformation as XLA's own gather (jax.numpy ops), which XLA fuses with
its producers and consumers, instead of the FFI call (``_jax_ffi``). Chosen per call site at trace
time by ``set_jit_gathers`` (docs/jax.md, "Under jax.jit: XLA's gather or the FFI call").

The row's Lowering as data (``_multigather.lowering_views``, from shapes) gives the core views,
written as reshape / slice / transpose / broadcast (``_views``); the core gather is advanced
indexing ``x[i0, i1, ...]`` with every coordinate resolved by the index mode first
(``_core_ops.resolve``: clamp, wrap, fill), so XLA gathers in bounds
(``mode="promise_in_bounds"``); fill selects the fill value; the core output is written back.
The gradient stays the FFI call's VJP (a jax.custom_vjp whose forward is XLA's gather): the
deterministic scatter-add of multigather, several times faster than XLA's on a large table
(bench/jax_ops.py S6). vmap is JAX's own for the forward.

Declines (the FFI call runs) for: scatters, index_mode "error" (XLA has no failing gather: the
FFI call raises the op's error), lowerings beyond views (segment ops, computed operands), an
operand that is empty, and a call the rule sends to the FFI.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import _multigather as _core
from ._core_ops import Namespace, fill_scalar, resolve
from ._views import NotAView, array_emitter, int_list, plan_of, plan_view, read_view, write_view

_MODE = "auto"


def set_jit_gathers(mode: str) -> None:
    """How a multigather gather traced by JAX (jit, grad, vmap) runs: ``"auto"`` (default: XLA's
    gather, except for float16 / bfloat16, whose gathers XLA's CPU backend runs an order of
    magnitude slower than the FFI call: bench/jax_ops.py case 8, and except in a process with
    several devices, where multigather's sharding rules keep sharded operands sharded and XLA's
    own may replicate them, and except on a GPU, where this path has not run), ``"xla"`` (XLA's
    gather whenever the lowering allows it), ``"ffi"`` (always the FFI call). Index mode "error",
    scatters and lowerings beyond views always take the FFI call. Applies to calls traced
    afterwards (a jitted function already compiled keeps its choice). Raises ValueError for
    another mode."""
    global _MODE
    if mode not in ("auto", "xla", "ffi"):
        raise ValueError(f"set_jit_gathers: mode {mode!r} is not 'auto', 'xla' or 'ffi'")
    _MODE = mode


def jit_gathers() -> str:
    """The mode set by ``set_jit_gathers``."""
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


def gather_function(op: str, input: Any, indices: Any, attrs: dict) -> Optional[Callable]:
    """Registry gather ``op`` on operands of these shapes as a function of (input, indices) in
    jax.numpy ops, or None when the FFI call should run."""
    if not _chosen(input.dtype) or input.size == 0 or indices.size == 0:
        return None
    try:
        info = _core.lowering_views(op, [int(n) for n in input.shape], np.dtype(input.dtype).name,
                                    [int(n) for n in indices.shape], np.dtype(indices.dtype).name, attrs)
    except Exception:  # the FFI call raises the op's own error
        return None
    if info["kind"] != "gather" or "input" not in info or info.get("input_is_constant") or not info["axes"] \
            or info["index_mode"] == "error":
        return None

    # The views, planned once from the shapes (a view that is not expressible: the FFI call).
    out_shape, core_shape = list(info["output_shape"]), list(info["core_output_shape"])
    try:
        input_plan = plan_of(input.shape, info["input"])
        indices_plan = plan_of(indices.shape, info["indices"])
        output_plan = plan_view(out_shape, core_shape, info["core_output_strides"], 0)
    except NotAView:
        return None
    if output_plan.broadcast_dims or not output_plan.covers_source:  # write_view's own refusals
        return None

    def compute(input: Any, indices: Any) -> Any:
        import jax.numpy as jnp

        emit = _jax_emitter()
        x = read_view(emit, int_list, input, input_plan)
        ix = read_view(emit, int_list, indices, indices_plan)
        resolved = resolve(_Jnp(), list(x.shape), ix, info["axes"], core_shape, info["index_mode"],
                           info["negative_indices"])
        core = x.at[tuple(resolved.index)].get(mode="promise_in_bounds") if resolved.index else x
        core = jnp.broadcast_to(core, core_shape)
        if resolved.valid is not None:
            core = jnp.where(resolved.valid, core, jnp.asarray(_fill(info["fill_value"], x.dtype), x.dtype))
        return jnp.reshape(write_view(emit, int_list, core, output_plan), out_shape)

    return compute
