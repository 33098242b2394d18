"""multigather's FFI calls under plain ``jax.jit`` with sharded operands: XLA's four gather and
scatter strategies, decided on the core call's dimensions (docs/distributed.md).

Every ``multigather_op`` / ``multigather_vjp`` FFI call that ``_jax_ffi`` makes outside
``shard_map`` and ``vmap`` goes through ``jax.experimental.custom_partitioning``:

- a **Shardy sharding rule** (``SdyShardingRule``) built from the call's factors
  (``multigather._multigather.sharding_factors``: each framework dimension of each operand and
  result is a batch, operand, index, lookup, gathered, coordinate or other factor of the core
  call), so that the partitioner propagates shardings through the op instead of replicating it;
- a **partition callback** that picks, per factor, the mesh axes its operands arrive with, and
  runs the same FFI call on the local shards:

  ============  ===========================  ==============================================
  factor        strategy (XLA's name)         on the local shards
  ============  ===========================  ==============================================
  batch         index-parallel                split alike in input, indices, output
  operand       operand pass-through          split in input and output (and updates)
  index/lookup  index pass-through            a gather's output split like the indices; a
                                              scatter add sums the devices' updates (psum)
  gathered      trivially sliced operand      each device resolves every index against the
                                              whole axis (error, clamp, wrap, fill exactly as
                                              unsplit) and takes its own rows; a gather sums
                                              the pieces (psum), a scatter keeps its rows
  coordinate,   replicated                    gathered onto every device first
  other
  ============  ===========================  ==============================================

  In index_mode 'error' a call (not its gradient) replicates its batch, index and lookup
  factors, the ones that split the indices, with a ReplicationWarning: every device then checks
  every index, so an out-of-range index fails every device with the unsplit call's message
  (split, it failed one device, and the others waited for it at their next collective until XLA
  aborted the process). The other index modes never fail and keep them split.

  The gathered strategy runs ``execute_shard`` (multigather/sharding.hpp); on GPUs a gathered
  factor is still replicated: the engine runs a piece on the device, but no multi-GPU mesh has
  run the strategy yet. Which factors may stay split, and how the devices' results
  combine, is the core's rule (each factor's ``call`` and ``gradient`` strategy,
  ShardingFactor in multigather/sharding.hpp; ``_kind`` maps it): a segment op (data,
  segment_ids) keeps its features split, and its rows with the ids for a sum (partial sums,
  psum); scatters with reduction none / mul / min / max / mean, and add without the input,
  replicate their index and lookup factors (the devices' updates could not be combined
  exactly). Under ``jax.vmap`` the batched call is partitioned with vmap's dimension as one
  more batch factor (``_batched``).

An operand that arrives split along a dimension the call cannot keep split is replicated by
XLA; the partition callback says so with a ReplicationWarning (op, operand, dimension, mesh
axes, reason), so no all-gather is silent.

Caveats (JAX's, documented in docs/distributed.md): custom_partitioning puts a pointer in the
compiled module, so the persistent compilation cache misses (jax#21159; JAX's flag
``jax_remove_custom_partitioning_ptr_from_cache_key`` keeps it); the callbacks see Explicit-mode
meshes as Auto (jax#34811), which changes nothing here; a Python error in a callback could end
the process, so the callback catches every error, warns, and runs the call replicated.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np

# The tensors of each FFI call, operands then results, and the call side each one takes its
# dimensions from (input / indices / updates / output of the framework op).
_TENSORS = {
    ("op", "gather"): (("input", "indices"), ("output",)),
    ("op", "scatter"): (("input", "indices", "updates"), ("output",)),
    ("vjp", "gather"): (("input", "indices", "output"), ("input",)),
    ("vjp", "scatter"): (("input", "indices", "updates", "output"), ("input", "updates")),
    # a segment op is called as a gather (data, segment_ids)
    ("op", "segment"): (("input", "indices"), ("output",)),
    ("vjp", "segment"): (("input", "indices", "output"), ("input",)),
}

_PASS, _SPLIT, _SUM, _REPLICATE = "pass", "split", "sum", "replicate"


def _checks_on_every_device(target: str, info: dict) -> bool:
    """Whether this FFI call must see every index on every device: a call (not a gradient,
    whose call already checked them) in index_mode 'error', or whose lowering checks index
    values itself (tf.math.unsorted_segment_*: an id >= num_segments is an error). An
    out-of-range index in one device's shard would fail that device alone, and the others would
    wait for it at their next collective until XLA aborts the process; replicated, every device
    finds it and every device raises, with the unsplit call's message."""
    return target == "op" and (info.get("index_mode") == "error" or bool(info.get("reads_index_values")))


def _kind(f: dict, target: str, info: dict, cpu: bool) -> str:
    """How factor ``f`` is partitioned in this FFI call: the core's strategy for the call or
    its VJP (ShardingFactor::call / ::gradient, multigather/sharding.hpp) mapped to Shardy's
    terms, with two policies of this partitioner's own: a call that checks index values
    replicates the factors that split its indices (_checks_on_every_device), and a gathered
    axis stays split on CPUs only (execute_shard's device pieces have not run on a GPU mesh)."""
    if f["role"] in ("batch", "index", "lookup") and _checks_on_every_device(target, info):
        return _REPLICATE  # the indices are split along it
    strategy = f["call" if target == "op" else "gradient"]
    if strategy == "piece":
        return _SPLIT if cpu else _REPLICATE
    return {"split": _PASS, "sum": _SUM}.get(strategy, _REPLICATE)


# Why a factor of each role is never split (the warning of a replicated operand says it).
_WHY = {
    "other": "the lowering merges, splits or copies this dimension",
    "coordinate": "it holds the coordinates of several axes",
    "gathered": "a piece split along a gathered axis is not run on GPUs until a multi-GPU mesh has verified it",
    "index": "the devices' updates along it do not combine exactly under this reduction",
    "lookup": "the devices' updates along it do not combine exactly under this reduction",
}


class ReplicationWarning(UserWarning):
    """A multigather call under jax.jit replicates an operand that arrives sharded (XLA
    all-gathers it): the message names the op, the operand, its dimension and why."""


class _Plan:
    """The factors of one FFI call: for each operand and result, the factor of each dimension
    (None for a dimension of size 1), and each factor's kind and size."""

    def __init__(self, target: str, info: dict, factors: list, operand_ranks: Sequence[int],
                 result_ranks: Sequence[int], cpu: bool, batch: Optional[tuple] = None):
        sides_in, sides_out = _TENSORS[(target, info["kind"])]
        self.kinds: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.axis: dict[str, int] = {}
        # jax.vmap's batch dimension (batch: its size and which operands carry it, leading):
        # a batch factor of every batched operand and every result.
        size, batched = batch if batch is not None else (0, [False] * len(operand_ranks))

        def dims(side: str, rank: int, lead: bool) -> list:
            out: list = [None] * (rank - lead)
            for n, f in enumerate(factors):
                d = f[side]
                if d >= 0:
                    out[d] = f"f{n}"
            return (["vb"] if lead else []) + out

        self.roles: dict[str, str] = {"vb": "batch"}
        for n, f in enumerate(factors):
            name = f"f{n}"
            self.roles[name] = f["role"]
            self.kinds[name] = _kind(f, target, info, cpu)
            self.sizes[name] = int(f["size"])
            self.axis[name] = int(f["axis"])
        self.checks_every_index = _checks_on_every_device(target, info)
        if batch is not None:
            self.kinds["vb"] = _REPLICATE if self.checks_every_index else _PASS
            self.sizes["vb"], self.axis["vb"] = int(size), -1
        self.operands = [dims(s, r, b) for s, r, b in zip(sides_in, operand_ranks, batched)]
        self.results = [dims(s, r, batch is not None) for s, r in zip(sides_out, result_ranks)]
        # The results each split or summed factor psums when it is sharded: those that lack it,
        # but a scatter VJP's grad_input (grad_output itself) for its index and lookup factors.
        self.psum: dict[str, set] = {}
        for n, f in enumerate(factors):
            name = f"f{n}"
            if self.kinds[name] not in (_SPLIT, _SUM):
                continue
            lacking = {r for r, dims in enumerate(self.results) if name not in dims}
            if (target, info["kind"]) == ("vjp", "scatter") and f["role"] in ("index", "lookup"):
                lacking.discard(0)
            self.psum[name] = lacking

    def rule(self) -> Any:
        """The Shardy rule: size-1 dimensions get factors of their own."""
        from jax.experimental.custom_partitioning import ArrayMapping, SdyShardingRule

        count = [0]

        def mapping(dims: list) -> Any:
            names = []
            for d in dims:
                if d is None:
                    count[0] += 1
                    d = f"u{count[0]}"
                names.append(d)
            return ArrayMapping(*names)

        operands = tuple(mapping(d) for d in self.operands)
        results = tuple(mapping(d) for d in self.results)
        # Shardy numbers factors in their order of appearance and wants special ones sorted so.
        order = [f for m in operands + results for f in m]
        order = sorted(set(order), key=order.index)
        in_results = {d for r in self.results for d in r if d is not None}
        reduction = tuple(f for f in order if self.kinds.get(f) in (_SPLIT, _SUM) and f not in in_results)
        replicate = tuple(f for f in order if self.kinds.get(f) == _REPLICATE)
        return SdyShardingRule(operands, results, reduction_factors=reduction,
                               need_replication_factors=replicate)


def _spec_axes(spec: Any, dim: int) -> tuple:
    """The mesh axes of dimension ``dim`` in a PartitionSpec, as a tuple."""
    entries = tuple(spec)
    if dim >= len(entries) or entries[dim] is None:
        return ()
    e = entries[dim]
    return tuple(e) if isinstance(e, (tuple, list)) else (e,)


def _choose(plan: _Plan, mesh: Any, arg_shapes: Sequence[Any]) -> dict:
    """Each factor's mesh axes: the first operand that arrives split along it names them; a mesh
    axis serves one factor; a factor whose size the axes do not divide stays whole."""
    chosen: dict[str, tuple] = {}
    used: set = set()
    for n, dims in enumerate(plan.operands):
        sharding = getattr(arg_shapes[n], "sharding", None)
        spec = getattr(sharding, "spec", None)
        if spec is None:
            continue
        for d, factor in enumerate(dims):
            if factor is None or factor in chosen or plan.kinds[factor] == _REPLICATE:
                continue
            axes = _spec_axes(spec, d)
            if not axes or any(a in used for a in axes):
                continue
            count = math.prod(int(mesh.shape[a]) for a in axes)
            if count <= 1 or plan.sizes[factor] % count:
                continue
            chosen[factor] = axes
            used.update(axes)
    return chosen


def _warn_replicated(op: str, target: str, kind: str, plan: _Plan, mesh: Any,
                     arg_shapes: Sequence[Any], chosen: dict) -> None:
    """A ReplicationWarning for every operand dimension that arrives split but is not kept
    split (no silent all-gather)."""
    names = ["grad_output" if side == "output" else side for side in _TENSORS[(target, kind)][0]]
    for n, dims in enumerate(plan.operands):
        spec = getattr(getattr(arg_shapes[n], "sharding", None), "spec", None)
        for d, factor in enumerate(dims):
            axes = _spec_axes(spec, d) if spec is not None else ()
            if not axes or (factor is not None and chosen.get(factor) == axes):
                continue
            if factor is None:
                why = "it has size 1"
            elif (plan.kinds[factor] == _REPLICATE and plan.checks_every_index and
                  plan.roles[factor] in ("batch", "index", "lookup")):
                why = ("index_mode 'error' (or the op's own check of index values) checks every "
                       "index on every device (an out-of-range index in one device's shard would "
                       "fail that device alone and stall the others at their next collective); "
                       "index modes clamp, wrap, fill or drop keep it split")
            elif plan.kinds[factor] == _REPLICATE and kind == "segment" and plan.roles[factor] == "gathered":
                why = "a segment op's result is not split along its segments"
            elif plan.kinds[factor] == _REPLICATE and kind == "segment" and plan.roles[factor] in ("index", "lookup"):
                why = ("a segment op's rows split across devices combine for a sum only (max, min, prod, "
                       "mean and their gradients need all of a segment's rows)")
            elif plan.kinds[factor] == _REPLICATE:
                why = _WHY.get(plan.roles[factor], "it cannot be split")
            elif factor in chosen:
                why = f"its factor is split along {chosen[factor]} by another operand"
            elif plan.sizes[factor] % math.prod(int(mesh.shape[a]) for a in axes):
                why = f"its size {plan.sizes[factor]} is not a multiple of the devices along {axes}"
            else:
                why = "the mesh axes serve another dimension of this call"
            warnings.warn(f"multigather: {op} ({'gradient' if target == 'vjp' else 'call'}) replicates "
                          f"{names[n]} along its dimension {d}, which arrives split along mesh axes "
                          f"{axes}: {why} (docs/distributed.md)", ReplicationWarning, stacklevel=1)


def _sharding(mesh: Any, dims: list, chosen: dict) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    entries = []
    for d in dims:
        axes = chosen.get(d, ()) if d is not None else ()
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return NamedSharding(mesh, PartitionSpec(*entries))


def _linear_index(mesh: Any, axes: tuple) -> Any:
    """This device's position along ``axes`` (the first one slowest), as a traced int32."""
    import jax

    index = None
    for a in axes:
        i = jax.lax.axis_index(a)
        index = i if index is None else index * int(mesh.shape[a]) + i
    return index


def _local_shape(shape: Sequence[int], dims: list, chosen: dict, mesh: Any) -> tuple:
    out = []
    for s, d in zip(shape, dims):
        axes = chosen.get(d, ()) if d is not None else ()
        out.append(int(s) // math.prod(int(mesh.shape[a]) for a in axes) if axes else int(s))
    return tuple(out)


def enabled() -> bool:
    """Whether calls are partitioned (``MULTIGATHER_JAX_SHARDING=0`` turns it off: the calls
    then replicate their operands, for comparisons)."""
    import os

    return os.environ.get("MULTIGATHER_JAX_SHARDING", "1") != "0"


def partitioned(op: str, target: str, local_call: Callable, info: dict, factors: list,
                operands: Sequence[Any], results: list, many: bool,
                batch: Optional[tuple] = None) -> Callable:
    """The FFI call ``local_call(operands, result_shapes, shard)`` as a custom_partitioning
    function of the operands: on whole operands (one device, or what the partitioner cannot
    split) it runs with ``shard`` None; the partition callback runs it on the local shards, with
    ``shard`` = (sizes, offsets) of the core call's axes when the input is split along them.
    ``results``: the whole results' ShapeDtypeStructs; ``many``: the call returns a list;
    ``batch``: (size, batched per operand) of a call jax.vmap batched (the batching rule).
    An operand dimension that arrives split and is not kept split gets a ReplicationWarning
    naming registry op ``op``."""

    def impl(*whole: Any) -> Any:
        return local_call(list(whole), results, None)

    from jax.experimental.custom_partitioning import custom_partitioning

    operand_ranks = [len(o.shape) for o in operands]
    result_ranks = [len(r.shape) for r in results]
    plans: dict[bool, _Plan] = {}

    def plan_for(cpu: bool) -> _Plan:
        if cpu not in plans:
            plans[cpu] = _Plan(target, info, factors, operand_ranks, result_ranks, cpu, batch)
        return plans[cpu]

    function = custom_partitioning(impl)

    def partition(mesh: Any, arg_shapes: Any, result_shape: Any) -> tuple:
        try:
            return _partition(mesh, arg_shapes, result_shape)
        except Exception as error:  # a Python error here could end the process
            warnings.warn(f"multigather: the sharding callback failed ({type(error).__name__}: "
                          f"{error}); this call runs replicated", RuntimeWarning, stacklevel=1)
            return _replicated(mesh)

    def _replicated(mesh: Any) -> tuple:
        from jax.sharding import NamedSharding, PartitionSpec

        full = NamedSharding(mesh, PartitionSpec())
        out = [full] * len(results)
        return mesh, impl, (out if many else out[0]), (full,) * len(operands)

    def _partition(mesh: Any, arg_shapes: Any, result_shape: Any) -> tuple:
        import jax
        import jax.numpy as jnp

        cpu = all(d.platform == "cpu" for d in mesh.devices.flat)
        plan = plan_for(cpu)
        chosen = _choose(plan, mesh, arg_shapes)
        _warn_replicated(op, target, info["kind"], plan, mesh, arg_shapes, chosen)
        arg_shardings = [_sharding(mesh, dims, chosen) for dims in plan.operands]
        result_shardings = [_sharding(mesh, dims, chosen) for dims in plan.results]
        in_results = {d for r in plan.results for d in r if d is not None}
        # psum: a result over the axes of every split / summed factor it does not carry.
        psum_axes = [tuple(a for f, axes in chosen.items() if r in plan.psum.get(f, ()) for a in axes)
                     for r in range(len(plan.results))]
        split = {plan.axis[f]: (plan.sizes[f], axes) for f, axes in chosen.items()
                 if plan.kinds[f] == _SPLIT}
        summed = any(plan.kinds[f] == _SUM and f not in in_results for f in chosen)
        local_results = [jax.ShapeDtypeStruct(_local_shape(r.shape, dims, chosen, mesh), r.dtype)
                         for r, dims in zip(results, plan.results)]
        scatter_op = target == "op" and info["kind"] == "scatter"
        k = len(info["axes"])

        def lower_fn(*local: Any) -> Any:
            shard = None
            if split:
                sizes, offsets = [], []
                for j in range(k):
                    if j in split:
                        size, axes = split[j]
                        piece = size // math.prod(int(mesh.shape[a]) for a in axes)
                        sizes.append(size)
                        offsets.append(_linear_index(mesh, axes) * piece)
                    else:  # not split: the handler takes the local size
                        sizes.append(-1)
                        offsets.append(jnp.int32(0))
                shard = (np.asarray(sizes, dtype=np.int64),
                         jnp.stack([jnp.asarray(o, jnp.int32) for o in offsets]))
            local = list(local)
            if scatter_op and summed:
                # Each device adds its updates into zeros; the sums, plus the input once.
                base = local[0]
                local[0] = jnp.zeros_like(base)
                out = local_call(local, local_results, shard)
                return base + jax.lax.psum(out, psum_axes[0])
            out = local_call(local, local_results, shard)
            outs = list(out) if many else [out]
            outs = [jax.lax.psum(o, axes) if axes else o for o, axes in zip(outs, psum_axes)]
            return outs if many else outs[0]

        return mesh, lower_fn, (result_shardings if many else result_shardings[0]), tuple(arg_shardings)

    # the batching rule (_register_batching) recognizes it, and batches the call
    partition._multigather_call = (op, target, local_call, info, factors, results, many)

    def rule(mesh: Any, value_types: Any, result_types: Any) -> Any:
        return plan_for(all(d.platform == "cpu" for d in mesh.devices.flat)).rule()

    function.def_partition(partition=partition, sharding_rule=rule)
    return function


def _batched(call: tuple, size: int, args: Sequence[Any], dims: Sequence[Any]) -> list:
    """One multigather call that jax.vmap batched, as a partitioned call of its own: the batch
    dimension (moved first) is one more batch factor, so a batch split over devices stays
    split; the FFI call runs with ffi_call's vmap_method on each device's examples (a split
    gathered axis too: the handler lifts its piece by the batch dimensions)."""
    import jax
    import jax.numpy as jnp

    op, target, local_call, info, factors, results, many = call
    batched = [d is not None for d in dims]
    operands = [jnp.moveaxis(a, d, 0) if d is not None else a for a, d in zip(args, dims)]
    in_axes = tuple(0 if b else None for b in batched)

    def call_batched(ops: list, shapes: list, shard: Any) -> Any:
        example = [jax.ShapeDtypeStruct(tuple(s.shape[1:]), s.dtype) for s in shapes]
        return jax.vmap(lambda *o: local_call(list(o), example, shard), in_axes=in_axes)(*ops)

    whole = [jax.ShapeDtypeStruct((size,) + tuple(r.shape), r.dtype) for r in results]
    out = partitioned(op, target, call_batched, info, factors, operands, whole, many,
                      batch=(size, batched))(*operands)
    return list(out) if many else [out]


def _register_batching() -> None:
    """custom_partitioning has no batching rule: one for multigather's calls (_batched), any
    other call keeps JAX's error."""
    from jax._src.custom_partitioning import custom_partitioning_p
    from jax._src.interpreters import batching

    previous = batching.fancy_primitive_batchers.get(custom_partitioning_p)

    def rule(axis_data: Any, args: Any, dims: Any, **params: Any) -> Any:
        call = getattr(params.get("partition"), "_multigather_call", None)
        if call is None:
            if previous is not None:
                return previous(axis_data, args, dims, **params)
            raise NotImplementedError("Batching rule for 'custom_partitioning' not implemented")
        if all(d is None for d in dims):
            outs = custom_partitioning_p.bind(*args, **params)
            return outs, [None] * len(outs)
        outs = _batched(call, axis_data.size, args, dims)
        return outs, [0] * len(outs)

    batching.fancy_primitive_batchers[custom_partitioning_p] = rule


_BATCHING = False


def ensure_batching() -> None:
    global _BATCHING
    if not _BATCHING:
        _register_batching()
        _BATCHING = True
