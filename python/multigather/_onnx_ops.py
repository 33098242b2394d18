"""The one operator as an ONNX op, written as a new op would be proposed: its schemas
(``register_schemas``: ``onnx.checker`` and ``onnx.defs`` know ``multigather.GatherMultiaxis``
and ``multigather.ScatterMultiaxis``), and a reference implementation for
``onnx.reference.ReferenceEvaluator(model, new_ops=reference_ops())``: numpy written from
docs/spec.md sections 1 and 4, independent of multigather's engine.
"""

from __future__ import annotations

import numpy as np

from ._onnx_runtime import DOMAIN, OPSET_VERSION

_TYPES = ["tensor(bool)", "tensor(int8)", "tensor(int16)", "tensor(int32)", "tensor(int64)",
          "tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(float16)",
          "tensor(bfloat16)", "tensor(float)", "tensor(double)", "tensor(complex64)",
          "tensor(complex128)"]

GATHER_DOC = """output = gather_multiaxis(input, indices, axes) (docs/spec.md section 1).
indices has input's rank r; with k = len(axes) and c = max(k, 1), its last dimension holds the
coordinates (a multiple of c). Every dimension not in axes broadcasts between input and the
logical indices (1 against n); output[o] = input[i] with i[d] = o[d] (0 where input's size is 1)
off the axes and i[axes[j]] = resolve(indices[q.., q_last * c + j], input.shape[axes[j]]).
index_mode: error (an index outside [-n, n) fails), clamp, wrap, fill (the element is
fill_value); negative_indices: v < 0 counts from the end first (not in wrap mode)."""

SCATTER_DOC = """output = scatter_multiaxis(input, indices, updates, axes) (docs/spec.md section 4).
output starts as input; for every position o of G (the shape gather_multiaxis(input, indices,
axes) has), in row-major order, output[i(o)] = combine(output[i(o)], updates[o]) where i(o) is
the position the gather reads and updates broadcasts to G. reduction: none (the last update
wins), add, mul, min, max; include_input=0 starts each reached element from its first update.
index_mode: error, clamp, wrap, drop (an out-of-range update is skipped). Deterministic."""


def _schemas():
    from onnx.defs import OpSchema
    from onnx.helper import make_attribute
    P = OpSchema.FormalParameter

    def A(name, default, description):  # noqa: N802 - OpSchema.Attribute's spelling
        if isinstance(default, OpSchema.AttrType):
            return OpSchema.Attribute(name, default, description)
        return OpSchema.Attribute(name, make_attribute(name, default), description)

    T = ("T", _TYPES, "any element type")
    Tind = ("Tind", ["tensor(int32)", "tensor(int64)"], "index type")
    def shape(role):
        return OpSchema.Attribute(f"{role}_shape", OpSchema.AttrType.INTS,
                                  f"optional: {role} is read (written) as a C-contiguous tensor of this "
                                  f"shape, of as many elements (a reshape inside the node)", required=False)

    common = [
        A("axes", OpSchema.AttrType.INTS, "the input dimensions the coordinates address, in order"),
        A("negative_indices", 1, "1: an index v < 0 counts from the end (v + n)"),
        shape("input"), shape("indices"), shape("output"),
    ]
    gather = OpSchema(
        "GatherMultiaxis", DOMAIN, OPSET_VERSION, GATHER_DOC,
        inputs=[P("input", "T", "the tensor read, rank r"),
                P("indices", "Tind", "rank r; coordinates folded into the last dimension")],
        outputs=[P("output", "T", "input's dtype; shape by the broadcasting rule")],
        type_constraints=[T, Tind],
        attributes=common + [A("index_mode", "error", "error | clamp | wrap | fill"),
                             A("fill_value", 0.0, "the element index_mode=fill writes")],
        node_determinism=OpSchema.NodeDeterminism.Deterministic)
    scatter = OpSchema(
        "ScatterMultiaxis", DOMAIN, OPSET_VERSION, SCATTER_DOC,
        inputs=[P("input", "T", "the tensor written, rank r"),
                P("indices", "Tind", "rank r; coordinates folded into the last dimension"),
                P("updates", "T", "rank r, broadcasts to G")],
        outputs=[P("output", "T", "input's shape and dtype")],
        type_constraints=[T, Tind],
        attributes=common + [A("index_mode", "error", "error | clamp | wrap | drop"),
                             A("reduction", "none", "none | add | mul | min | max"),
                             A("include_input", 1, "0: a reached element starts from its first update"),
                             shape("updates")],
        node_determinism=OpSchema.NodeDeterminism.Deterministic)
    return gather, scatter


def register_schemas() -> None:
    """Registers the two schemas with onnx (``onnx.defs.register_schema``) once per process, so
    that ``onnx.checker.check_model(model, full_check=True)`` and ``onnx.defs.get_schema``
    know them."""
    import onnx.defs
    if onnx.defs.has("GatherMultiaxis", DOMAIN):
        return
    for s in _schemas():
        onnx.defs.register_schema(s)


# ---- Reference implementation (numpy, from the spec) --------------------------------------------


def _positions(shape, indices, axes, index_mode, negative_indices):
    """Per input dimension, the index array (broadcast to G) that the gather reads, G and the
    in-range mask (docs/spec.md section 1)."""
    r, k = len(shape), len(axes)
    c = max(k, 1)
    axes = [a + r if a < 0 else a for a in axes]
    if r != indices.ndim:
        raise ValueError(f"indices rank {indices.ndim} differs from input rank {r}")
    if r and indices.shape[-1] % c:
        raise ValueError(f"indices' last dimension {indices.shape[-1]} is not a multiple of {c}")
    logical = indices.shape[:-1] + (indices.shape[-1] // c,) if r else ()
    g = []
    for d in range(r):
        if d in axes:
            g.append(logical[d])
        elif shape[d] == logical[d] or 1 in (shape[d], logical[d]):
            g.append(logical[d] if shape[d] == 1 else shape[d])
        else:
            raise ValueError(f"dimension {d}: input size {shape[d]} and indices size {logical[d]} "
                             f"do not broadcast")
    coords = indices.reshape(logical + (c,)) if r else indices
    ok = np.ones(g, dtype=bool)
    pos = []
    for d in range(r):
        if d in axes:
            v = coords[..., axes.index(d)].astype(np.int64)
            n = shape[d]
            if negative_indices and index_mode != "wrap":
                v = np.where(v < 0, v + n, v)
            if index_mode == "clamp":
                v = np.clip(v, 0, n - 1)
            elif index_mode == "wrap":
                v = np.mod(v, n) if n else v
            inside = (v >= 0) & (v < n)
            ok &= np.broadcast_to(inside, g)
            v = np.where(inside, v, 0)
        else:
            v = np.arange(g[d]) if shape[d] > 1 else np.zeros(g[d], dtype=np.int64)
            v = v.reshape([g[d] if e == d else 1 for e in range(r)])
        pos.append(np.broadcast_to(v, g))
    return pos, g, ok


def gather_multiaxis_reference(input, indices, axes, index_mode="error", negative_indices=True,
                               fill_value=0):
    """gather_multiaxis of docs/spec.md section 1, in numpy. IndexError for an index out of
    range in error mode."""
    input, indices = np.asarray(input), np.asarray(indices)
    if not axes:
        pos, g, _ = _positions(input.shape, indices, [], index_mode, negative_indices)
        return np.broadcast_to(input, g).copy() if input.ndim else input.copy()
    pos, g, ok = _positions(input.shape, indices, list(axes), index_mode, negative_indices)
    if index_mode == "error" and not ok.all():
        bad = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise IndexError(f"GatherMultiaxis: the lookup of output position {bad} lies outside its axis")
    out = input[tuple(pos)]
    if index_mode == "fill":
        out = np.where(ok, out, np.array(fill_value).astype(input.dtype))
    return out


def scatter_multiaxis_reference(input, indices, updates, axes, reduction="none", index_mode="error",
                                negative_indices=True, include_input=True):
    """scatter_multiaxis of docs/spec.md section 4, in numpy: the updates combine one by one in
    row-major order of G. IndexError for an index out of range in error mode."""
    input, indices, updates = np.asarray(input), np.asarray(indices), np.asarray(updates)
    pos, g, ok = _positions(input.shape, indices, list(axes), "error" if index_mode == "drop" else index_mode,
                            negative_indices)
    if index_mode == "error" and not ok.all():
        bad = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise IndexError(f"ScatterMultiaxis: the update at position {bad} of G targets a position outside its axis")
    u = np.broadcast_to(updates, g)
    out = input.copy()
    reached = np.zeros(input.shape, dtype=bool)
    combine = {"add": np.add, "mul": np.multiply, "min": np.minimum,
               "max": np.maximum}.get(reduction)
    for o in np.ndindex(*g):
        if not ok[o]:
            continue
        i = tuple(int(p[o]) for p in pos)
        value = u[o]
        if reduction == "none" or (not include_input and not reached[i]):
            out[i] = value
        elif input.dtype == np.bool_:
            out[i] = {"add": np.logical_or, "max": np.logical_or, "mul": np.logical_and,
                      "min": np.logical_and}[reduction](out[i], value)
        else:
            out[i] = combine(out[i], value)
        reached[i] = True
    return out


def reference_ops():
    """The OpRun classes of the two ops, for ``ReferenceEvaluator(model, new_ops=...)``."""
    from onnx.reference.op_run import OpRun

    def reshaped(array, shape):
        return array if shape is None else np.asarray(array).reshape(list(shape))

    class GatherMultiaxis(OpRun):
        op_domain = DOMAIN

        def _run(self, input, indices, axes=None, index_mode=None, negative_indices=None, fill_value=None,
                 input_shape=None, indices_shape=None, output_shape=None):
            mode = index_mode.decode() if isinstance(index_mode, bytes) else (index_mode or "error")
            out = gather_multiaxis_reference(reshaped(input, input_shape), reshaped(indices, indices_shape),
                                             list(axes or []), mode,
                                             bool(1 if negative_indices is None else negative_indices),
                                             0.0 if fill_value is None else fill_value)
            return (reshaped(out, output_shape),)

    class ScatterMultiaxis(OpRun):
        op_domain = DOMAIN

        def _run(self, input, indices, updates, axes=None, reduction=None, index_mode=None,
                 negative_indices=None, include_input=None, input_shape=None, indices_shape=None,
                 updates_shape=None, output_shape=None):
            text = lambda v, d: v.decode() if isinstance(v, bytes) else (v or d)  # noqa: E731
            out = scatter_multiaxis_reference(
                reshaped(input, input_shape), reshaped(indices, indices_shape), reshaped(updates, updates_shape),
                list(axes or []), text(reduction, "none"), text(index_mode, "error"),
                bool(1 if negative_indices is None else negative_indices),
                bool(1 if include_input is None else include_input))
            return (reshaped(out, output_shape),)

    return [GatherMultiaxis, ScatterMultiaxis]
