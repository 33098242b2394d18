"""multigather's registry ops inside JAX transformations: jit, grad, vmap, checkpoint, shard_map.

When any operand of a multigather call is a JAX tracer (the call is being traced by ``jax.jit``,
``jax.grad``, ``jax.vmap``, ``jax.checkpoint``, ``jax.shard_map``, ...), the call becomes one
``jax.ffi.ffi_call`` of the XLA FFI handler ``multigather_op`` (python/src/jax_ffi.cpp), which
runs the one pipeline (lower_op -> execute) on XLA's buffers without a copy (a gather or scatter may
be XLA's own instead: ``_jax_xla``, ``multigather.jax.set_jit_ops``). Concrete jax arrays
outside any transformation keep the direct path (DLPack), with the same results.

- **Abstract evaluation**: the output shape comes from multigather's own shape inference (the
  op's lowering on shapes alone); lowering errors (bad axis, shapes) raise at trace time with
  the core's message.
- **Gradients** (``jax.custom_vjp``; multigather/transforms.hpp): a gather op's VJP is the
  scatter-add of the output cotangent through the same lowered view of the input (SPEC
  section 4's adjoint: fill becomes drop, broadcast input dimensions sum); a scatter op's
  (reduction none or add) passes the cotangent to the input where no update overwrote it and
  gathers it for the updates (under "none" only the winning update of each element gets it).
  Indices get no gradient (integers). Scatters with mul / min / max raise NotImplementedError
  when differentiated.
- **vmap**: ``vmap_method="expand_dims"`` for gathers (``"broadcast_all"`` for scatters, whose
  output aliases their input, so the input must have the batch size): the batch dimensions
  reach the handler as leading dimensions (size 1 where an operand is not batched), and the handler lifts the lowering so
  that they become leading broadcast / batch dimensions of ONE core call, no loop (only a
  lowering that copies an operand, such as StableHLO windows, runs example by example).
  Nested vmap adds more leading dimensions.
- **Sharding**: under ``jax.shard_map`` each device runs the op on its local shards (the
  caller's code decides what is sharded, e.g. offsetting indices into a row-sharded table and
  psum-ing, see docs/jax.md). Under plain ``jax.jit`` with sharded operands, every call is a
  custom_partitioning function (_jax_sharding.py): XLA's four strategies on the core call's
  dimensions keep sharded operands sharded (docs/distributed.md lists what replicates).
- **Errors at execution**: an out-of-range index under index_mode "error" fails the
  computation when it runs, with the core's message ("... indices[1,0] = 7 is out of range
  for axis 0 of size 5 ..."), raised by JAX as ``jax.errors.JaxRuntimeError``
  (``XlaRuntimeError``) when the result is used; the modes clamp / wrap / fill / drop never fail.
- **Devices**: the CPU handler always; a CUDA handler (gather and scatter ops and their
  gradients, on XLA's stream: execute_batched / execute_vjp on the CUDA engine) in a CUDA build
  of the extension.
- **Per call**: the handlers' instantiate stage gives each call site of a compiled executable a
  state (its decoded attributes and its lowering, kept for every later execution); the CPU
  handlers run the engine on XLA's intra-op thread pool; results of 4 MiB or more get
  transparent huge pages. docs/jax.md, "Per call".
"""

from __future__ import annotations

import functools
import operator
import sys
from typing import Any, Optional

import numpy as np

from . import _jax_sharding
from . import _multigather as _core

_REGISTERED = False


def traced(*arrays: Any) -> bool:
    """Whether any of ``arrays`` is a JAX tracer (never imports jax)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return False
    tracer = jax.core.Tracer
    return any(isinstance(a, tracer) for a in arrays)


def _register() -> None:
    """Registers the handlers' state type, then the handlers, on every platform whose JAX backend
    exists, in that order.

    XLA refuses a handler whose state type it does not know yet ("Types used by FFI handlers
    must be registered before the handler registration"), and JAX queues registrations made
    before a platform's backend exists and replays the queued handlers BEFORE the queued types
    when it creates the backend. So the backends are created first (``jax.devices(platform)``);
    then each registration reaches XLA at once, the type before its handlers. A platform whose
    backend cannot be created (CUDA handlers in a process without a GPU) is skipped: nothing can
    run there. Each platform has its own state type id and name (each platform's XLA keeps its
    own type registry)."""
    global _REGISTERED
    if _REGISTERED:
        return
    import jax

    handlers = _core.jax_ffi_handlers()
    if not handlers:
        raise RuntimeError("this build of multigather has no XLA FFI handlers (it was built "
                           "without the XLA FFI headers), so it cannot run inside jax.jit / "
                           "grad / vmap")
    for platform, targets in handlers.items():
        try:
            jax.devices(platform.lower())
        except RuntimeError:
            continue  # no such backend in this process (CUDA handlers without a GPU, JAX_PLATFORMS)
        jax.ffi.register_ffi_type(f"multigather_call_site.{platform.lower()}",
                                  _core.jax_ffi_state_type(platform), platform=platform)
        for name, stages in targets.items():
            jax.ffi.register_ffi_target(name, stages, platform=platform)
    _REGISTERED = True


def _key(value: Any) -> Any:
    """A hashable form of one Python attribute value (lists become tuples)."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return value
    if hasattr(value, "__iter__"):
        return tuple(_key(v) for v in value)
    return value


def _ffi_attr(name: str, value: Any) -> Any:
    """One attribute as a typed FFI attribute (jax_ffi.cpp decodes them): bool -> bool, int ->
    int64, float -> float64, str -> string, a sequence of ints -> int64 array. (None travels in
    the names of ``mg_none``.)"""
    if isinstance(value, (bool, np.bool_)):
        return np.bool_(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return np.int64(value)
    if isinstance(value, (float, np.floating)):
        return np.float64(value)
    if isinstance(value, tuple):
        try:
            return np.asarray([operator.index(v) for v in value], dtype=np.int64)
        except TypeError:
            pass
    raise TypeError(f"attribute {name} must be None, a bool, int, float, str or a sequence of "
                    f"ints (a static value, not a traced array) inside a JAX transformation, "
                    f"not {type(value).__name__}")


def _dtype_name(array: Any) -> str:
    return np.dtype(array.dtype).name


def _info(op: str, operands: tuple, attrs: dict) -> dict:
    input, indices = operands[0], operands[1]
    updates_shape = None if len(operands) < 3 else [int(s) for s in operands[2].shape]
    return _core.lower_op_info(op, [int(s) for s in input.shape], _dtype_name(input),
                               [int(s) for s in indices.shape], _dtype_name(indices), attrs,
                               updates_shape)


def _varying(*arrays: Any) -> frozenset:
    """The manual mesh axes (jax.shard_map) along which any of ``arrays`` varies."""
    import jax

    out: frozenset = frozenset()
    for a in arrays:
        mat = getattr(jax.typeof(a), "manual_axis_type", None)
        out |= getattr(mat, "varying", frozenset())
    return out


def _result(shape: Any, dtype: Any, varying: frozenset, like: Any) -> Any:
    """The ShapeDtypeStruct of an FFI result that varies along ``varying`` (under shard_map a
    result varies wherever an operand does)."""
    import jax

    if not varying:
        return jax.ShapeDtypeStruct(shape, dtype)
    aval = jax.typeof(like)
    mat = type(aval.manual_axis_type)(varying=varying)
    sharding = jax.sharding.NamedSharding(aval.sharding.mesh, jax.sharding.PartitionSpec())
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding, manual_axis_type=mat)


def _partitioned(op: str, attrs: dict, target: str, call: Any, info: dict, operands: tuple,
                 results: list, many: bool) -> Any:
    """``call`` as a custom_partitioning function (_jax_sharding): partitioned under jit with
    sharded operands by the call's sharding factors."""
    input, indices = operands[0], operands[1]
    updates = operands[2] if info["kind"] == "scatter" else None
    factors = _core.sharding_factors(op, [int(s) for s in input.shape], _dtype_name(input),
                                     [int(s) for s in indices.shape], _dtype_name(indices), attrs,
                                     None if updates is None else [int(s) for s in updates.shape])
    plan = dict(factors)
    plan["copies_input"] = info["copies_input"]
    _jax_sharding.ensure_batching()
    return _jax_sharding.partitioned(op, target, call, plan, factors["factors"], operands, results, many)


def _invariant_along(grad: Any, primal: Any, varying: frozenset) -> Any:
    """A cotangent computed varying along ``varying``, made to vary like ``primal``: summed
    over the mesh axes along which the primal is invariant (the transpose of the implicit
    broadcast that made it vary)."""
    import jax

    extra = varying - _varying(primal)
    return jax.lax.psum(grad, tuple(sorted(extra))) if extra else grad


def _reduction_vjp(op: str, attrs: dict, reduction: str, residuals: tuple, grad_output: Any) -> tuple:
    """The gradient of a mul / min / max scatter: JAX's own rule (jax.lax's scatter_max /
    scatter_min derivative: the cotangent of an element is shared equally among the input element
    and the updates equal to the result; scatter_mul's, whose updates JAX differentiates only for
    unique indices, extended to repeated ones: ``_jax_xla._scatter_multiply``), taken by
    differentiating the call written in jax.numpy (``_jax_xla``). Raises NotImplementedError
    where the call is not views (or fills, or starts without its input)."""
    import jax

    from . import _jax_xla

    input, indices, updates = residuals
    f = _jax_xla.scatter_function(op, input, indices, updates, attrs, gradient=True)
    if f is None:
        raise NotImplementedError(
            f"{op}: the gradient of a scatter with reduction {reduction} is not implemented for "
            f"this call (its lowering is more than views, or it starts without its input, or fills; "
            f"see multigather.explain('{op}', ...)); reductions none and add are differentiable, "
            f"and mul, min and max through their views")
    _, pullback = jax.vjp(lambda x, u: f(x, indices, u), input, updates)
    grad_input, grad_updates = pullback(grad_output)
    return grad_input, None, grad_updates


@functools.lru_cache(maxsize=None)
def _differentiable(op: str, attrs_key: tuple) -> Any:
    """The jax.custom_vjp function of one (op, attributes): f(input, indices[, updates])."""
    import jax

    attrs = dict(attrs_key)
    ffi_attrs = {name: _ffi_attr(name, value) for name, value in attrs.items()
                 if value is not None}
    none = ",".join(name for name, value in attrs.items() if value is None)
    if none:
        ffi_attrs["mg_none"] = none

    def ffi(target: str, operands: list, shapes: Any, shard: Any, alias: Optional[dict]) -> Any:
        """One FFI call (``shard``: None, or a piece of a split call: _jax_sharding). ``alias``:
        the operand a scatter's result starts from ({operand: result}); aliasing needs equal
        shapes under vmap too, so such calls broadcast unbatched operands."""
        extra = {} if shard is None else {"mg_shard": shard[0]}
        rank = np.int64(operands[0].ndim)
        operands = list(operands) + ([] if shard is None else [shard[1]])
        if alias:
            call = jax.ffi.ffi_call(target, shapes, vmap_method="broadcast_all", input_output_aliases=alias)
        else:
            call = jax.ffi.ffi_call(target, shapes, vmap_method="expand_dims")
        return call(*operands, mg_op=op, mg_rank=rank, **ffi_attrs, **extra)

    def call_op(operands: list, shapes: list, shard: Any) -> Any:
        # A scatter's output is its input updated: XLA hands the input's buffer over (or a copy
        # of it, when the input is still used) and the handler scatters in place.
        return ffi("multigather_op", operands, shapes[0], shard, {0: 0} if len(operands) == 3 else None)

    def call_vjp(operands: list, shapes: list, shard: Any) -> Any:
        # A scatter's grad_input starts as grad_output (same shape): aliased, masked in place.
        return ffi("multigather_vjp", operands, shapes, shard, {3: 0} if len(operands) == 4 else None)

    def primal(*operands: Any) -> Any:
        input = operands[0]
        info = _info(op, operands, attrs)
        varying = _varying(*operands)
        result = _result(info["output_shape"], input.dtype, varying, input)
        if varying or not _jax_sharding.enabled():
            return call_op(list(operands), [result], None)
        return _partitioned(op, attrs, "op", call_op, info, operands, [result], many=False)(*operands)

    def forward(*operands: Any) -> tuple:
        return primal(*operands), operands

    def backward(residuals: tuple, grad_output: Any) -> tuple:
        input = residuals[0]
        scatter = len(residuals) == 3
        info = _info(op, residuals, attrs)
        if scatter and info["reduction"] not in ("none", "add"):
            return _reduction_vjp(op, attrs, info["reduction"], residuals, grad_output)
        if not scatter and info["copies_input"]:
            raise NotImplementedError(
                f"{op}: no gradient for this call: its lowering copies the input (see "
                f"multigather.explain('{op}', ...))")
        if scatter and info["copies_updates"]:
            raise NotImplementedError(
                f"{op}: no gradient for this call: its lowering computes the updates it "
                f"scatters (negated or scaled: x - values, alpha), so no gradient flows back "
                f"to them; write it with an add of -values (or values * alpha) instead")
        varying = _varying(*residuals, grad_output)
        shapes = [_result(input.shape, input.dtype, varying, input)]
        if scatter:
            shapes.append(_result(residuals[2].shape, residuals[2].dtype, varying, input))
        operands = (*residuals, grad_output)
        if varying or not _jax_sharding.enabled():
            grads = call_vjp(list(operands), shapes, None)
        else:
            grads = _partitioned(op, attrs, "vjp", call_vjp, info, operands, shapes, many=True)(*operands)
        grad_input = _invariant_along(grads[0], input, varying)
        if scatter:
            return grad_input, None, _invariant_along(grads[1], residuals[2], varying)
        return grad_input, None

    function = jax.custom_vjp(primal)
    function.defvjp(forward, backward)
    return function


def run(op: str, input: Any, indices: Any, updates: Optional[Any] = None, out: Any = None,
        attrs: Optional[dict] = None) -> Any:
    """Registry op ``op`` on JAX values inside a transformation (see the module docstring):
    a jax array of the op's output shape and input's dtype. Raises TypeError for ``out`` (jax
    arrays are immutable) and for traced attribute values; the lowering's errors (ValueError,
    TypeError) at trace time."""
    if out is not None:
        raise TypeError("out cannot be used inside a JAX transformation: jax arrays are immutable")
    _register()
    import jax.numpy as jnp

    input = jnp.asarray(input)
    indices = jnp.asarray(indices)
    attrs = {name: value for name, value in (attrs or {}).items()}
    key = tuple(sorted((name, _key(value)) for name, value in attrs.items()))
    for name, value in key:
        if value is not None:
            _ffi_attr(name, value)  # a clear TypeError now for an attribute that cannot travel
    function = _differentiable(op, key)
    from . import _jax_xla

    operands = (input, indices) if updates is None else (input, indices, jnp.asarray(updates))
    xla = _jax_xla.function(op, *operands, attrs=attrs)  # XLA's own gather / scatter, where chosen
    if xla is None:
        return function(*operands)
    # forward: XLA's op (fused with its neighbours); gradient: the FFI call's VJP
    import jax

    fused = jax.custom_vjp(xla)
    fused.defvjp(lambda *args: (xla(*args), args), function.bwd)
    return fused(*operands)
