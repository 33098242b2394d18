"""multigather's PyTorch ops under DTensor (torch.distributed.tensor): sharding strategies.

``register()`` (called by ``multigather.torch_ops`` when ``torch.distributed.tensor`` is
importable) gives every ``torch.ops.multigather.<op>`` and ``<op>_backward`` a DTensor sharding
strategy, so that a call on DTensors runs on each rank's local shards instead of failing
("does not have a sharding strategy registered"). The strategies are decided on the CORE
call's dimensions, the same way for every registry row: ``multigather._multigather.
sharding_factors(row, shapes, dtypes, attrs)`` (include/multigather/sharding.hpp) names the
factor of each framework dimension, and a placement on a dimension is read off its factor:

- batch / operand / index / lookup factor (pass-through): a ``Shard(d)`` of one operand's
  dimension shards the same factor's dimensions of the others (operands without the factor
  are replicated, as they broadcast along it); the output is sharded on its dimension of the
  factor. No communication.
- gathered factor of a gather (the input split along its only gathered axis: a row-sharded
  embedding table, ``index_select`` / ``gather`` along a sharded dimension): the indices are
  resolved against the WHOLE axis by the op's own rule (negatives, clamp, wrap; index_mode
  error raises IndexError as the unsplit call would), shifted to this rank's rows and masked
  where they fall elsewhere; each rank gathers its rows and zeroes the masked elements, and
  the output is ``Partial("sum")`` (one rank holds each element; summing is exact). That is
  DTensor's vocabulary-parallel embedding (``_MaskPartial``), except that the mask is applied
  by the local call itself: the output is a plain ``Partial``, any number of such outputs may
  be alive at once (DTensor's own MaskBuffer raises "materialized with conflicting data"), and
  views, sums and other linear ops of it stay partial.
- scatter-add into an input split along its gathered axis (``index_add`` into a row-sharded
  table), indices replicated: each rank adds the updates of its rows, the others' masked to
  -0.0 (which adds nothing); the output keeps the input's ``Shard``.
- scatter along an index or lookup factor (updates split): ``Partial("sum")`` output, input
  partitioned, only for reduction add including the input, on floating dtypes (the other
  reductions do not sum).
- a segment op (``torch_scatter.scatter*``, ``segment_coo``, ``torch.segment_reduce``): its
  data's feature dimensions pass through; its rows with the ids (a GNN's edges split) give a
  ``Partial("sum")`` output for a sum, the data's gradient sharded like the data; other
  reductions and computed ids (lengths, indptr) replicate the rows, with a ReplicationWarning
  (``_segment_strategy``). ``embedding_bag`` replicates its table, with the warning.
- coordinate and other factors (the index-vector dimension; dimensions the lowering merged,
  split or copied), any other scatter's gathered factor, ``batch_rank > 0`` (vmap of DTensors) and any
  call whose factors cannot be read: every operand is REPLICATED (DTensor all-gathers the
  sharded ones; ``CommDebugMode`` shows it). docs/distributed_torch.md has the table.

Gradients: ``<op>_backward`` of a gather (a scatter-add of grad_output) keeps the pass-through
factors, gives ``Partial`` for index / lookup factors and for a ``Partial`` grad_output (as
DTensor's own ``embedding_dense_backward``); for the row-sharded input, grad_output and the
indices come replicated and grad_input is computed whole on every rank: REPLICATED, with no
communication, as DTensor's own embedding gives it (the backward does not know the forward's
placement). A scatter's backward: pass-through batch / operand factors,
index / lookup factors for reduction add, else replicated. ``scatter_reduce_values_backward``
(prod / amax / amin gradients) replicates.

Source: torch/distributed/tensor/_ops/_embedding_ops.py and _tensor_ops.py (DTensor's own
embedding and gather strategies); XLA's gather_scatter_handler.cc (the four strategies).
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import torch
from torch.utils import _pytree as pytree

from . import _registry

_REGISTERED = False


def available() -> bool:
    """Whether DTensor can be used here (torch.distributed with its tensor package)."""
    try:
        import torch.distributed as dist

        if not dist.is_available():
            return False
        import torch.distributed.tensor  # noqa: F401
    except Exception:  # ImportError, or a torch built without distributed pieces
        return False
    return True


# ---- factors ---------------------------------------------------------------------------------

def _hashable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, torch.Tensor):  # a 0-d attribute tensor: not part of the key
        return None
    return value


@functools.lru_cache(maxsize=4096)
def _factors_cached(row: str, input_shape: tuple, input_dtype: str, indices_shape: tuple,
                    indices_dtype: str, attrs: tuple, updates_shape: Optional[tuple]) -> Optional[dict]:
    attr_dict = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs}
    try:
        return _registry._core.sharding_factors(
            row, list(input_shape), input_dtype, list(indices_shape), indices_dtype, attr_dict,
            None if updates_shape is None else list(updates_shape))
    except Exception:  # the call itself is invalid: let the local call raise its own error
        return None


def _dtype_name(dtype: torch.dtype) -> Optional[str]:
    """multigather's name of a torch dtype (torch.float32 -> "float32": torch's own names); one
    multigather does not know makes sharding_factors fail, and then the call replicates."""
    name = str(dtype)
    return name[len("torch."):] if name.startswith("torch.") else None


def factors(row: str, input_shape, input_dtype, indices_shape, indices_dtype, attrs: dict,
            updates_shape=None) -> Optional[dict]:
    """``multigather._multigather.sharding_factors`` for torch shapes and dtypes (cached); None
    when the call cannot be lowered (then only replication is offered and the local call
    raises the registry's error)."""
    names = (_dtype_name(input_dtype), _dtype_name(indices_dtype))
    if None in names:
        return None
    key = tuple(sorted((k, _hashable(v)) for k, v in attrs.items()))
    return _factors_cached(row, tuple(int(s) for s in input_shape), names[0],
                           tuple(int(s) for s in indices_shape), names[1], key,
                           None if updates_shape is None else tuple(int(s) for s in updates_shape))


# ---- the row-sharded gather: indices resolved, shifted and masked --------------------------------

def _output_mask(mask: torch.Tensor, out_dims: tuple, out_rank: int) -> torch.Tensor:
    """``mask`` (indices-shaped) laid on the output's dimensions: indices dimension d on output
    dimension out_dims[d] (-1: a dimension of size 1), size 1 elsewhere (broadcast)."""
    keep = [d for d in range(mask.dim()) if out_dims[d] >= 0]
    m = mask.reshape([mask.shape[d] for d in keep])
    order = sorted(range(len(keep)), key=lambda j: out_dims[keep[j]])
    m = m.permute(order)
    shape = [1] * out_rank
    for j in order:
        shape[out_dims[keep[j]]] = mask.shape[keep[j]]
    return m.reshape(shape)


class _MaskedIndices(torch.Tensor):
    """A rank's indices of a row-sharded gather: shifted to its rows (0 where masked) and the
    mask. The multigather op it reaches zeroes the masked elements of its output after the
    local call; any other op sees the plain tensor."""

    @staticmethod
    def __new__(cls, local: torch.Tensor, mask: torch.Tensor, out_dims: tuple,
                updates_name: Optional[str] = None):
        t = torch.Tensor._make_subclass(cls, local)
        t._mg_mask = (mask, out_dims, updates_name)
        t._mg_plain = local  # (as_subclass would dispatch back here)
        return t

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        info = []

        def unwrap(x):
            if isinstance(x, _MaskedIndices):
                info.append(x._mg_mask)
                return x._mg_plain
            return x

        args, kwargs = pytree.tree_map(unwrap, (args, kwargs or {}))
        if not info or getattr(func, "namespace", "") != "multigather":
            return func(*args, **kwargs)
        mask, out_dims, updates_name = info[0]
        if updates_name is not None:
            # a scatter-add on this rank's rows: the masked updates (other ranks' rows, pointed
            # at row 0) become -0.0, which adds nothing, -0.0 included
            names = [a.name for a in func._schema.arguments]
            j = names.index(updates_name)
            args, kwargs = list(args), dict(kwargs)
            updates = args[j] if j < len(args) else kwargs[updates_name]
            updates = updates.masked_fill(_output_mask(mask, out_dims, updates.dim()), -0.0)
            if j < len(args):
                args[j] = updates
            else:
                kwargs[updates_name] = updates
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        return out.masked_fill_(_output_mask(mask, out_dims, out.dim()), 0)


def _positions_of(indices: torch.Tensor, n: int, mode: str, negatives: bool, op: str) -> torch.Tensor:
    """Every index against the whole axis of n elements, by the row's rule, as the core resolves
    it (docs/spec.md section 1; no resolver of this module's own): gather_multiaxis of the
    positions 0..n-1 with the row's index_mode and negative rule gives each index's position,
    -1 for an index out of range under "fill" (masked everywhere, i.e. the fill value 0), and
    the core's IndexError under "error", prefixed with the op."""
    # positions [n, 1, ..., 1] and indices [..., 1] of equal rank: the error names the index's
    # own position (and its one coordinate, a trailing 0).
    positions = torch.arange(n, device=indices.device).reshape([n] + [1] * indices.dim())
    try:
        resolved = torch.ops.multigather.gather_multiaxis(positions, indices.unsqueeze(-1), [0], mode, negatives, -1)
        return resolved.reshape(indices.shape)
    except IndexError as error:
        raise IndexError(f"{op}: {error} (the input is sharded along this axis under DTensor)") from None


def _make_placements():
    from torch.distributed.tensor.placement_types import Partial, Shard

    class _AxisShardIndices(Partial):
        """The placement of the indices of a gather whose input is sharded along its gathered
        axis (an op's internal placement, as DTensor's _MaskPartial): from Replicate, each rank
        keeps the indices resolved against the whole axis, shifted to its rows and masked
        (``_MaskedIndices``)."""

        def __init__(self, axis_size: int, index_mode: str, negatives: bool, out_dims: tuple, op: str,
                     updates_name: Optional[str] = None):
            super().__init__("sum")
            object.__setattr__(self, "updates_name", updates_name)
            object.__setattr__(self, "axis_size", int(axis_size))
            object.__setattr__(self, "index_mode", index_mode)
            object.__setattr__(self, "negatives", bool(negatives))
            object.__setattr__(self, "out_dims", tuple(out_dims))
            object.__setattr__(self, "op", op)

        def _key(self):
            return (self.axis_size, self.index_mode, self.negatives, self.out_dims, self.updates_name)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, _AxisShardIndices) and self._key() == other._key()

        def __hash__(self) -> int:
            return hash(("multigather.axis_shard_indices",) + self._key())

        def __repr__(self) -> str:
            return f"_AxisShardIndices(axis_size={self.axis_size}, index_mode={self.index_mode!r})"

        __str__ = __repr__

        def _partition_value(self, tensor, mesh, mesh_dim):
            size, offset = Shard.local_shard_size_and_offset(
                self.axis_size, mesh.size(mesh_dim), mesh._sym_get_coordinate(mesh_dim))
            if isinstance(tensor, _MaskedIndices):  # a second mesh dimension: not expressible
                raise NotImplementedError("multigather: an input sharded along its gathered axis "
                                          "on two mesh dimensions")
            idx = _positions_of(tensor, self.axis_size, self.index_mode, self.negatives, self.op)
            mask = (idx < offset) | (idx >= offset + size)
            local = torch.where(mask, 0, idx - offset).to(tensor.dtype)
            return _MaskedIndices(local, mask, self.out_dims, self.updates_name)

        def _reduce_value(self, tensor, mesh, mesh_dim):
            raise RuntimeError("multigather: indices placed for a row-sharded gather are internal "
                               "to one call and are never reduced")

        _reduce_shard_value = _reduce_value

    return _AxisShardIndices


# ---- strategies ---------------------------------------------------------------------------------
# Which factors may stay split, and whether the devices' results are slices or partial sums, is
# the core's rule (each factor's "call" and "gradient" strategy, ShardingFactor in
# multigather/sharding.hpp); the functions below map it to DTensor's placements.


class _Call:
    """One call's operands, read from an OpSchema by the op's argument names."""

    def __init__(self, op_schema, names: list, defaults: dict):
        from torch.distributed.tensor._op_schema import OpStrategy

        self.bound = dict(defaults)
        self.bound.update(zip(names, op_schema.args_schema))
        self.bound.update(op_schema.kwargs_schema)
        # the tensor arguments, in the order DTensor lists their strategies
        self.tensors = [n for n in names if isinstance(self.bound.get(n), OpStrategy)]

    def shape(self, name: str) -> list:
        return list(self.bound[name].shape)

    def dtype(self, name: str) -> torch.dtype:
        return self.bound[name].strategies[0].output_spec.tensor_meta.dtype


def _placements(strategy: dict, outputs: list, tensors: list) -> list:
    from torch.distributed.tensor.placement_types import Replicate

    return ([strategy.get(o, Replicate()) for o in outputs] +
            [strategy.get(t, Replicate()) for t in tensors])


def _shard(dim: int):
    from torch.distributed.tensor.placement_types import Replicate, Shard

    return Shard(dim) if dim >= 0 else Replicate()


def _row_shard_case(info: dict, attrs: dict, idx_rank: int, idx_dtype: torch.dtype) -> Optional[tuple]:
    """(gathered factor, out_dims, index_mode, negatives) when a gather's (or a scatter-add's)
    input may be split along its gathered axis with masked indices; out_dims: the output's (the
    updates') dimension of each indices dimension. None otherwise (then it replicates)."""
    fs = info["factors"]
    gathered = [f for f in fs if f["role"] == "gathered"]
    scatter = info["kind"] == "scatter"
    if len(gathered) != 1 or gathered[0]["call"] != "piece" or any(f["role"] == "coordinate" for f in fs):
        return None
    # A scatter's pieces are masked updates summed into the rows: they must combine as sums.
    if scatter and not (info["updates_sum"] and gathered[0]["output"] >= 0):
        return None
    if idx_dtype not in (torch.int32, torch.int64):
        return None
    mode = info["index_mode"]
    if mode not in (("error", "clamp", "wrap") if scatter else ("error", "clamp", "wrap", "fill")):
        return None
    if mode == "fill" and attrs.get("fill_value", 0) not in (0, 0.0, None):
        return None
    # a gather masks its output, a scatter-add its updates: each indices dimension must lie on
    # one of theirs (an update broadcast over masked and kept lookups cannot be masked)
    target = "updates" if scatter else "output"
    out_dims = [-1] * idx_rank
    for f in fs:
        if f["indices"] >= 0:
            if f["role"] not in ("batch", "index", "lookup") or f[target] < 0:
                return None
            out_dims[f["indices"]] = f[target]
    return gathered[0], tuple(out_dims), mode, bool(info["negative_indices"])


def _gather_strategies(info, row, attrs, call, input_n, indices_n, backward):
    """Single-mesh-dimension strategies of a gather (forward: {out, input, indices}; backward:
    {grad_input, grad_output, indices})."""
    from torch.distributed.tensor.placement_types import Partial

    out = "grad_output" if backward else "out"
    inp = "grad_input" if backward else input_n
    strategies = []
    for f in info["factors"]:
        if f["call"] != "split" or f["output"] < 0:
            continue
        s = {out: _shard(f["output"]), indices_n: _shard(f["indices"])}
        if f["input"] >= 0:
            s[inp] = _shard(f["input"])
        elif backward:  # the input broadcasts along it: the pieces of its gradient sum
            s[inp] = Partial()
        strategies.append(s)
    if backward:
        strategies.append({"grad_input": Partial(), "grad_output": Partial()})
    if backward:
        # The row-sharded input's gradient: DTensor's own embedding_dense_backward has no
        # row-wise strategy, and neither has this (the backward does not know the forward's
        # placement): grad_output and indices are replicated there (as they come from the
        # forward's reduced output), so grad_input is computed whole on every rank, REPLICATED,
        # with no communication, as for aten.embedding.
        return strategies
    idx_shape = call.shape(indices_n)
    in_shape = call.shape(input_n)
    case = _row_shard_case(info, attrs, len(idx_shape), call.dtype(indices_n))
    # Offered for replicated indices only: DTensor has no path from a sharded placement to the
    # indices' internal one (and its cost model would fail on it).
    replicated = all(p.is_replicate() for p in call.bound[indices_n].strategies[0].output_spec.placements)
    if case is not None and replicated:
        g, out_dims, mode, negatives = case
        axis_indices = _make_placements()(g["size"], mode, negatives, out_dims, row)
        strategies.append({"out": Partial(), input_n: _shard(g["input"]), indices_n: axis_indices})
    return strategies


def _scatter_strategies(info, row, attrs, call, input_n, indices_n, updates_n, backward, floating):
    """Single-mesh-dimension strategies of a scatter (forward: {out, input, indices, updates};
    backward: {grad_input, grad_updates, grad_output, indices})."""
    from torch.distributed.tensor.placement_types import Partial, Replicate

    strategies = []
    for f in info["factors"]:
        if f["call"] == "split":
            if backward:
                s = {"grad_output": _shard(f["output"]), indices_n: _shard(f["indices"]),
                     "grad_input": _shard(f["input"]),
                     "grad_updates": _shard(f["updates"]) if f["updates"] >= 0 else Partial()}
            else:
                s = {"out": _shard(f["output"]), input_n: _shard(f["input"]),
                     indices_n: _shard(f["indices"]), updates_n: _shard(f["updates"])}
            strategies.append(s)
        elif f["call"] == "sum":
            if backward:  # grad_input is grad_output; grad_updates its gather at the indices
                strategies.append({"grad_output": Replicate(), indices_n: _shard(f["indices"]),
                                   "grad_input": Replicate(),
                                   "grad_updates": _shard(f["updates"]) if f["updates"] >= 0 else Partial()})
            elif floating:
                strategies.append({"out": Partial(), input_n: Partial(), indices_n: _shard(f["indices"]),
                                   updates_n: _shard(f["updates"])})
    if not backward and floating:
        # A scatter-add into an input split along its scattered axis (index_add_ into a
        # row-sharded table): each rank adds the updates of its rows, the others' masked to -0.0.
        idx_shape, in_shape = call.shape(indices_n), call.shape(input_n)
        case = _row_shard_case(info, attrs, len(idx_shape), call.dtype(indices_n))
        replicated = all(p.is_replicate() for p in call.bound[indices_n].strategies[0].output_spec.placements)
        if case is not None and replicated:
            g, upd_dims, mode, negatives = case
            axis_indices = _make_placements()(g["size"], mode, negatives, upd_dims, row, updates_n)
            strategies.append({"out": _shard(g["output"]), input_n: _shard(g["input"]), indices_n: axis_indices,
                               updates_n: Replicate()})
    return strategies


def _strategy(op_schema, *, row: str, names: list, defaults: dict, operands: tuple,
              scatter: bool, backward: bool):
    """The OpStrategy of one call of a multigather op or its backward on DTensors."""
    from torch.distributed.tensor._ops.utils import expand_to_full_mesh_op_strategy

    mesh = op_schema.get_mesh_from_args()
    call = _Call(op_schema, names, defaults)
    input_n, indices_n, updates_n = operands
    if backward:
        outputs = ["grad_input", "grad_updates"] if scatter else ["grad_input"]
        in_shape = list(call.bound[input_n + "_size"])
        out_shape = call.shape("grad_output")
        dtype = call.dtype("grad_output")
        upd_shape = list(call.bound[updates_n + "_size"]) if scatter else None
        skip = {"grad_output", input_n + "_size", indices_n, "batch_rank", "input_grad",
                "updates_grad"} | ({updates_n + "_size"} if scatter else set())
    else:
        outputs = ["out"]
        in_shape = call.shape(input_n)
        dtype = call.dtype(input_n)
        upd_shape = call.shape(updates_n) if scatter else None
        skip = {input_n, indices_n, updates_n, "batch_rank"}
    attrs = {k: v for k, v in call.bound.items() if k not in skip}
    strategies: list = [{}]  # every operand replicated: always possible
    info = None
    if call.bound.get("batch_rank", 0) == 0:
        info = factors(row, in_shape, dtype, call.shape(indices_n), call.dtype(indices_n), attrs, upd_shape)
    if info is not None and not backward:
        if [int(s) for s in info["output_shape"]] != [int(s) for s in (in_shape if scatter else info["output_shape"])]:
            info = None
    if info is not None and backward and [int(s) for s in info["output_shape"]] != [int(s) for s in out_shape]:
        info = None
    if info is not None:
        if scatter:
            strategies += _scatter_strategies(info, row, attrs, call, input_n, indices_n, updates_n, backward,
                                              dtype.is_floating_point or dtype.is_complex)
            if backward:  # a gradient not asked for is an empty tensor: replicated
                for s in strategies:
                    if not call.bound.get("input_grad", True):
                        s["grad_input"] = None
                    if not call.bound.get("updates_grad", True):
                        s["grad_updates"] = None
        else:
            strategies += _gather_strategies(info, row, attrs, call, input_n, indices_n, backward)
    from torch.distributed.tensor.placement_types import Replicate

    lists = []
    for s in strategies:
        s = {k: (Replicate() if v is None else v) for k, v in s.items()}
        lists.append(_placements(s, outputs, call.tensors))
    return expand_to_full_mesh_op_strategy(mesh, op_schema, lists, input_index=len(outputs))


def _local_sizes_adjuster(row: str, names: list, defaults: dict, operands: tuple):
    """A scatter backward's input_size / updates_size arguments as this rank's local sizes
    (DTensor passes them as given, global): each sharded grad_output / indices dimension shards
    the input and updates dimensions of its factor."""

    def adjust(expected_input_specs, op_schema):
        from torch.distributed.tensor._op_schema import OpSchema
        from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
        from torch.distributed.tensor.placement_types import Replicate, Shard

        input_n, indices_n, updates_n = operands
        args = list(op_schema.args_schema)
        pos = {n: j for j, n in enumerate(names)}
        go_spec, idx_spec = expected_input_specs[0], expected_input_specs[1]
        in_size = list(args[pos[input_n + "_size"]])
        upd_size = list(args[pos[updates_n + "_size"]])
        attrs = {n: args[pos[n]] if pos[n] < len(args) else defaults.get(n)
                 for n in names if n not in ("grad_output", input_n + "_size", indices_n,
                                             updates_n + "_size", "input_grad", "updates_grad",
                                             "batch_rank")}
        attrs.update({k: v for k, v in op_schema.kwargs_schema.items() if k in attrs})
        info = factors(row, in_size, go_spec.tensor_meta.dtype, idx_spec.tensor_meta.shape,
                       idx_spec.tensor_meta.dtype, attrs, upd_size)
        if info is None:
            return op_schema
        mesh = go_spec.mesh
        in_pl, upd_pl = [Replicate()] * mesh.ndim, [Replicate()] * mesh.ndim
        for i in range(mesh.ndim):
            for spec, key in ((go_spec, "output"), (idx_spec, "indices")):
                p = spec.placements[i]
                if not isinstance(p, Shard):
                    continue
                for f in info["factors"]:
                    if f[key] == p.dim:
                        if f["input"] >= 0:
                            in_pl[i] = Shard(f["input"])
                        if f["updates"] >= 0:
                            upd_pl[i] = Shard(f["updates"])
        local_in, _ = compute_local_shape_and_global_offset(in_size, mesh, in_pl)
        local_upd, _ = compute_local_shape_and_global_offset(upd_size, mesh, upd_pl)
        args[pos[input_n + "_size"]] = list(local_in)
        args[pos[updates_n + "_size"]] = list(local_upd)
        return OpSchema(op_schema.op, tuple(args), op_schema.kwargs_schema)

    return adjust


def _warn_replicated(op_schema, row: str, kept: dict) -> None:
    """A ReplicationWarning for each operand that arrives sharded or partial on a mesh dimension
    where no offered strategy keeps it so (DTensor then replicates it: never silently)."""
    import warnings

    from torch.distributed.tensor._op_schema import OpStrategy

    from ._jax_sharding import ReplicationWarning

    names = [a.name for a in op_schema.op._schema.arguments]
    for name, arg in zip(names, op_schema.args_schema):
        if not isinstance(arg, OpStrategy):
            continue
        placements = arg.strategies[0].output_spec.placements
        if all(p.is_replicate() or p in kept.get(name, ()) for p in placements):
            continue
        warnings.warn(f"{row}: {name} arrives as {placements} and is replicated (a segment op keeps its data's "
                      f"features split, and its rows with the ids for a sum only; docs/distributed.md)",
                      ReplicationWarning, stacklevel=3)


def _segment_strategies(info: dict, data_n: str, ids_n: str, backward: bool, floating: bool) -> list:
    """Single-mesh-dimension strategies of a segment op (forward: {out, data, ids}; backward:
    {grad_input, grad_output, data, ids}), as multigather.jax partitions it (the core's
    strategies): the data's features (operand factors) pass through; its rows with the ids
    (index factor) give a Partial("sum") output for a sum, whose gradient is split like the data
    (grad_output read at each row's segment)."""
    from torch.distributed.tensor.placement_types import Partial, Replicate

    out = "grad_output" if backward else "out"
    strategies = []
    for f in info["factors"]:
        if f["call"] == "split" and f["input"] >= 0 and f["output"] >= 0:
            s = {out: _shard(f["output"]), data_n: _shard(f["input"]), ids_n: _shard(f["indices"])}
            if backward:
                s["grad_input"] = _shard(f["input"])
            strategies.append(s)
        elif f["call"] == "sum" and f["input"] >= 0 and f["indices"] >= 0:
            if backward:
                strategies.append({"grad_output": Replicate(), data_n: _shard(f["input"]),
                                   ids_n: _shard(f["indices"]), "grad_input": _shard(f["input"])})
            elif floating:
                strategies.append({"out": Partial(), data_n: _shard(f["input"]), ids_n: _shard(f["indices"])})
    return strategies


def _segment_strategy(op_schema, *, row: str, names: list, defaults: dict, backward: bool):
    """The OpStrategy of one call of a segment op or its backward on DTensors
    (_segment_strategies); every operand replicated is always offered, and an operand that
    arrives sharded where no strategy keeps it gets a ReplicationWarning."""
    from torch.distributed.tensor._ops.utils import expand_to_full_mesh_op_strategy
    from torch.distributed.tensor.placement_types import Replicate

    mesh = op_schema.get_mesh_from_args()
    call = _Call(op_schema, names, defaults)
    data_n, ids_n = call.tensors[1:3] if backward else call.tensors[0:2]
    outputs = ["grad_input"] if backward else ["out"]
    attrs = {n: v for n, v in call.bound.items() if n not in call.tensors and n != "batch_rank"}
    strategies: list = [{}]
    info = None
    if call.bound.get("batch_rank", 0) == 0:
        info = factors(row, call.shape(data_n), call.dtype(data_n), call.shape(ids_n), call.dtype(ids_n), attrs)
    if info is not None:
        dtype = call.dtype(data_n)
        strategies += _segment_strategies(info, data_n, ids_n, backward, dtype.is_floating_point or dtype.is_complex)
    kept: dict = {}
    for s in strategies:
        for name, placement in s.items():
            kept.setdefault(name, []).append(placement)
    _warn_replicated(op_schema, row, kept)
    lists = [_placements({k: (Replicate() if v is None else v) for k, v in s.items()}, outputs, call.tensors)
             for s in strategies]
    return expand_to_full_mesh_op_strategy(mesh, op_schema, lists, input_index=len(outputs))


def _replicated_strategy(op_schema, *, row: str):
    """Every operand replicated (embedding_bag's custom ops: the gathered rows map none of the
    table's dimensions), with a ReplicationWarning for each that arrives sharded or partial."""
    from torch.distributed.tensor._ops.utils import replicate_op_strategy

    _warn_replicated(op_schema, row, {})
    return replicate_op_strategy(op_schema)


def register() -> bool:
    """Registers the DTensor strategies of every ``torch.ops.multigather`` op (idempotent).
    Returns False when DTensor is not available (torch without distributed)."""
    global _REGISTERED
    if _REGISTERED:
        return True
    if not available():
        return False
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._op_schema import RuntimeSchemaInfo
    from torch.distributed.tensor._ops.utils import replicate_op_strategy

    propagator = DTensor._op_dispatcher.sharding_propagator
    ops = torch.ops.multigather
    for name, static in (("embedding_bag", 3), ("embedding_bag_backward", 4)):  # torch_ops' custom_ops
        if hasattr(ops, name):  # replicated, with the warning
            propagator.register_op_strategy(getattr(ops, name).default, functools.partial(
                _replicated_strategy, row="torch.nn.functional.embedding_bag"), RuntimeSchemaInfo(static_argnum=static))
    for row_name, row in _registry.OPS.items():
        op_name = _registry.torch_op_name(row_name)
        packet = getattr(ops, op_name, None) if op_name is not None else None
        if packet is None:
            continue
        if row["kind"] == "segment":
            for backward, overload in ((False, packet.default), (True, getattr(ops, op_name + "_backward").default)):
                args = overload._schema.arguments
                first = next((j for j, a in enumerate(args) if not isinstance(a.type, torch.TensorType)), 1)
                kw = [a.name for a in args if a.kwarg_only]
                propagator.register_op_strategy(overload, functools.partial(
                    _segment_strategy, row=row_name, names=[a.name for a in args],
                    defaults={a.name: a.default_value for a in args if a.has_default_value()}, backward=backward),
                    RuntimeSchemaInfo(static_argnum=first, static_kwargkey=kw or None))
            continue
        scatter = row["kind"] == "scatter"
        operands = (row["input_name"], row["indices_name"], row["updates_name"])
        for backward, overload in ((False, packet.default), (True, getattr(ops, op_name + "_backward").default)):
            args = overload._schema.arguments
            names = [a.name for a in args]
            defaults = {a.name: a.default_value for a in args if a.has_default_value()}
            # every non-tensor argument is static (shapes, dims, modes key the cached strategy)
            first = next((j for j, a in enumerate(args) if not isinstance(a.type, torch.TensorType)), len(args))
            kw = [a.name for a in args if a.kwarg_only]
            info = RuntimeSchemaInfo(static_argnum=first, static_kwargkey=kw or None)
            propagator.register_op_strategy(
                overload,
                functools.partial(_strategy, row=row_name, names=names, defaults=defaults,
                                  operands=operands, scatter=scatter, backward=backward),
                info)
            if backward and not scatter:  # input_size -> the local grad_input's shape
                propagator.op_to_shape_and_stride_idx[overload] = names.index(operands[0] + "_size")
            elif backward:
                propagator.op_to_scalar_shape_adjuster[overload] = _local_sizes_adjuster(
                    row_name, names, defaults, operands)
    propagator.register_op_strategy(ops.scatter_reduce_values_backward.default, replicate_op_strategy,
                                    RuntimeSchemaInfo(static_argnum=2))
    _REGISTERED = True
    return True
