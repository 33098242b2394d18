"""Whole ONNX models on the one operator: the rewrite of a model's gathers and scatters onto
``multigather.GatherMultiaxis`` / ``multigather.ScatterMultiaxis`` nodes (``lower_model``), the
standard-ONNX function body each such node carries, and the report ``explain_model`` prints.

The rewrite walks the graph and its subgraphs (If / Loop / Scan) with onnx's own helpers. Each
node of the family (Gather, GatherElements, GatherND, ScatterElements, ScatterND, and the
deprecated Scatter, which is ScatterElements) is lowered by its registry row
(``onnx.<op_type>``, attributes passed by their ONNX names) from the shapes that ONNX shape
inference gives; the Lowering's views become Reshape / Slice / Transpose / Expand / Concat
nodes around one core node (``_views``). Nothing else in the model changes.

Each core node refers (by ``overload``, ONNX IR 10) to a model-local function whose body is
standard ONNX for its shapes, dtype and attributes: the flat offsets of the SPEC formula
(docs/spec.md sections 1 and 4) computed with Add / Mul / Where / Clip / Mod, then one Gather
of whole rows or one ScatterElements on the flattened input. A runtime without multigather's
library inlines it; with
the library (``multigather.onnx.custom_ops_library()``) ONNX Runtime runs the node on
multigather's engine.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import _multigather as _mg
from ._onnx_runtime import DOMAIN
from ._views import NotAView, is_reshape, plan_view, read_view, write_view

GATHER_OP = "GatherMultiaxis"
SCATTER_OP = "ScatterMultiaxis"

# ONNX op_type -> the registry row that states it (the deprecated Scatter is ScatterElements).
ROWS = {
    "Gather": "onnx.Gather",
    "GatherElements": "onnx.GatherElements",
    "GatherND": "onnx.GatherND",
    "ScatterElements": "onnx.ScatterElements",
    "ScatterND": "onnx.ScatterND",
    "Scatter": "onnx.ScatterElements",
}
_SCATTERS = {"ScatterElements", "ScatterND", "Scatter"}
_MIN_OPSET = 13  # the rewrite's own nodes; functions import the model's opset

_DTYPES = {  # onnx.TensorProto element type -> multigather's dtype name
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64",
    15: "complex128", 16: "bfloat16",
}


class ModelError(ValueError):
    """A model the rewrite refuses (a malformed graph, an unsupported attribute): the message
    names the node."""


@dataclass
class NodeReport:
    """One gather / scatter node of the model and what the rewrite made of it."""

    graph: str
    node: str
    op_type: str
    lowered: bool
    reason: str = ""  # why it was left as is
    core: str = ""  # the core call, one line
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    row: str = ""  # the registry row that lowers it
    dtypes: tuple[str, str] = ("", "")  # data's and indices' multigather dtype names

    def explain(self, format: str = "text") -> str:
        """``multigather explain``'s text (format="svg": its picture) of the row on these shapes
        and dtypes."""
        args = (self.row, list(self.shapes["data"]), self.dtypes[0], list(self.shapes["indices"]),
                self.dtypes[1], self.attributes)
        updates = self.shapes.get("updates")
        updates = None if updates is None else list(updates)
        if format == "svg":
            return _mg.explain_svg(*args, updates_shape=updates)
        return _mg.explain_op(*args, updates)


@dataclass
class LoweredModel:
    model: Any  # onnx.ModelProto
    nodes: list[NodeReport]
    notes: list[str]

    def summary(self) -> str:
        """A line counting the gather-family ops before (by type) and after."""
        before = Counter(r.op_type for r in self.nodes)
        left = Counter(r.op_type for r in self.nodes if not r.lowered)
        lowered = len(self.nodes) - sum(left.values())
        text = ", ".join(f"{n} {t}" for t, n in sorted(before.items())) or "none"
        after = f"{lowered} on the one operator ({DOMAIN}.{GATHER_OP} / {SCATTER_OP})"
        if left:
            after += ", left as they were: " + ", ".join(f"{n} {t}" for t, n in sorted(left.items()))
        return f"gather / scatter nodes: {len(self.nodes)} before ({text}); after: {after}"


def _onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the rewrite needs onnx
        raise ImportError("multigather.onnx's model rewrite needs the onnx package "
                          "(python3 -m pip install onnx)") from e
    return onnx


class _Builder:
    """Nodes appended to one list, with fresh value names (prefix) and int64 constants."""

    def __init__(self, prefix: str, taken: set[str]):
        self.onnx = _onnx()
        self.prefix = prefix
        self.taken = taken
        self.nodes: list[Any] = []
        self._consts: dict[tuple[int, ...], str] = {}

    def fresh(self, base: str) -> str:
        i = 0
        while True:
            name = f"{self.prefix}/{base}_{i}"
            if name not in self.taken:
                self.taken.add(name)
                return name
            i += 1

    def emit(self, op_type: str, inputs: Sequence[str], domain: str = "", overload: str = "",
             **attributes: Any) -> str:
        out = self.fresh(op_type.lower())
        empty = [k for k, v in attributes.items() if isinstance(v, (list, tuple)) and not v]
        node = self.onnx.helper.make_node(op_type, list(inputs), [out], name=out, domain=domain,
                                          **{k: v for k, v in attributes.items() if k not in empty})
        for k in empty:  # an empty list has no element to tell its type: shapes and axes are INTS
            node.attribute.append(self.onnx.helper.make_attribute(k, [], attr_type=self.onnx.AttributeProto.INTS))
        if overload:
            node.overload = overload
        self.nodes.append(node)
        return out

    def const(self, values: Sequence[int]) -> str:
        key = tuple(int(v) for v in values)
        if key not in self._consts:
            self._consts[key] = self.tensor(np.array(key, dtype=np.int64).reshape(len(key)))
        return self._consts[key]

    def scalar(self, value: Any, dtype: np.dtype | None = None) -> str:
        array = np.array(value, dtype=dtype if dtype is not None else np.int64)
        return self.emit("Constant", [], value=self.onnx.numpy_helper.from_array(array))

    def tensor(self, array: np.ndarray) -> str:
        return self.emit("Constant", [], value=self.onnx.numpy_helper.from_array(array))


# ---- The core ops' bodies in standard ONNX -----------------------------------------------------


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _gather_shape(input_shape, indices_shape, axes):
    r = len(input_shape)
    c = max(len(axes), 1)
    logical = list(indices_shape[:-1]) + [indices_shape[-1] // c] if r else []
    out = []
    for d in range(r):
        out.append(logical[d] if d in axes else max(input_shape[d], logical[d])
                   if 1 in (input_shape[d], logical[d]) else input_shape[d])
    return logical, out


def _row_start(x_shape, i_shape, axes) -> int:
    """The first of the trailing dimensions that a gather copies whole for every lookup (off
    the axes, not broadcast, the indices broadcast along them): one row of the flattened input."""
    logical, g = _gather_shape(x_shape, i_shape, axes)
    start = len(x_shape)
    while start > 0 and (start - 1) not in axes and x_shape[start - 1] == g[start - 1] and logical[start - 1] == 1:
        start -= 1
    return start


def _flat_offsets(b: _Builder, x_shape, i_shape, index_dtype: int, axes, index_mode: str,
                  negative_indices: bool, indices: str, row_start: int | None = None):
    """The flat input offset of every position of G (the gather's output shape), and the name
    of the in-range mask (None when the mode needs none). With row_start, the offsets are of
    rows (the dimensions from row_start on are one row; their positions are size 1)."""
    r = len(x_shape)
    c = max(len(axes), 1)
    logical, g = _gather_shape(x_shape, i_shape, axes)
    row_start = r if row_start is None else row_start
    row = math.prod(x_shape[row_start:])
    strides = [math.prod(x_shape[d + 1:]) // row if d < row_start else 0 for d in range(r)]
    folded = b.emit("Reshape", [indices, b.const(logical + [c])]) if c > 1 else \
        (b.emit("Reshape", [indices, b.const(logical)]) if list(i_shape) != logical else indices)
    terms, masks = [], []
    for j, axis in enumerate(axes):
        v = b.emit("Gather", [folded, b.scalar(j)], axis=r) if c > 1 else folded
        if index_dtype != 7:
            v = b.emit("Cast", [v], to=7)
        n = x_shape[axis]
        if negative_indices and index_mode != "wrap":
            v = b.emit("Where", [b.emit("Less", [v, b.scalar(0)]), b.emit("Add", [v, b.scalar(n)]), v])
        if index_mode == "clamp":
            v = b.emit("Clip", [v, b.scalar(0), b.scalar(n - 1)])
        elif index_mode == "wrap":
            v = b.emit("Mod", [v, b.scalar(n)])
        else:
            ok = b.emit("And", [b.emit("GreaterOrEqual", [v, b.scalar(0)]), b.emit("Less", [v, b.scalar(n)])])
            masks.append(ok)
            if index_mode == "fill":
                v = b.emit("Where", [ok, v, b.scalar(0)])
        terms.append(b.emit("Mul", [v, b.scalar(strides[axis])]) if strides[axis] != 1 else v)
    for d in range(row_start):
        if d not in axes and x_shape[d] > 1:
            shape = [1] * r
            shape[d] = g[d]
            terms.append(b.tensor((np.arange(g[d], dtype=np.int64) * strides[d]).reshape(shape)))
    flat = terms[0]
    for t in terms[1:]:
        flat = b.emit("Add", [flat, t])
    mask = masks[0] if masks else None
    for m in masks[1:]:
        mask = b.emit("And", [mask, m])
    return flat, mask, g


def gather_body(b: _Builder, x: str, indices: str, x_shape, i_shape, dtype: str, index_dtype: int,
                axes, index_mode: str, negative_indices: bool, fill_value: str) -> str:
    """gather_multiaxis (docs/spec.md section 1) in standard ONNX for these shapes."""
    if not axes:
        _, g = _gather_shape(x_shape, i_shape, axes)
        return b.emit("Expand", [x, b.const(g)]) if list(g) != list(x_shape) else b.emit("Identity", [x])
    start = _row_start(x_shape, i_shape, axes)  # whole rows: one lookup each, not one per element
    row = math.prod(x_shape[start:])
    n = math.prod(x_shape) // row
    flat, mask, g = _flat_offsets(b, x_shape, i_shape, index_dtype, axes, index_mode, negative_indices,
                                  indices, start)
    if index_mode == "error":  # an out-of-range offset: the runtime's own bounds check raises
        flat = b.emit("Where", [mask, flat, b.scalar(-n - 1)])
    if row > 1:
        rows = b.emit("Reshape", [x, b.const([n, row])])
        flat = b.emit("Expand", [flat, b.const(list(g[:start]) + [1] * (len(g) - start))])
        flat = b.emit("Reshape", [flat, b.const(list(g[:start]))])
        y = b.emit("Reshape", [b.emit("Gather", [rows, flat], axis=0), b.const(list(g))])
    else:
        y = b.emit("Gather", [b.emit("Reshape", [x, b.const([n])]), flat], axis=0)
    if index_mode == "fill":
        value = float(fill_value) if dtype.startswith(("float", "bfloat", "complex")) else int(fill_value)
        y = b.emit("Where", [mask, y, b.scalar(value, _np_dtype(dtype))])
    return y


def scatter_body(b: _Builder, x: str, indices: str, updates: str, x_shape, i_shape, u_shape,
                 dtype: str, index_dtype: int, axes, index_mode: str, negative_indices: bool,
                 reduction: str, include_input: bool) -> str:
    """scatter_multiaxis (docs/spec.md section 4) in standard ONNX for these shapes: one
    ScatterElements on the flattened input and the flattened G, in the order of G (duplicates:
    ScatterElements' own rule; ONNX Runtime's CPU kernel applies them in order)."""
    n = math.prod(x_shape)
    r = len(x_shape)
    if axes:
        flat, mask, g = _flat_offsets(b, x_shape, i_shape, index_dtype, axes, index_mode,
                                      negative_indices, indices)
    else:
        _, g = _gather_shape(x_shape, i_shape, axes)
        strides = [math.prod(x_shape[d + 1:]) for d in range(r)]
        flat = b.tensor(sum((np.arange(g[d], dtype=np.int64) * (strides[d] if x_shape[d] > 1 else 0)
                             ).reshape([g[d] if e == d else 1 for e in range(r)]) for d in range(r))
                        if r else np.zeros((), np.int64))
        mask = None
    if mask is not None:  # drop: a scratch element past the end; error: out of range, raises
        flat = b.emit("Where", [mask, flat, b.scalar(n)])
    m = math.prod(g)
    target = b.emit("Reshape", [b.emit("Expand", [flat, b.const(g)]), b.const([m])])
    xf = b.emit("Reshape", [x, b.const([n])])
    if index_mode == "drop":
        xf = b.emit("Concat", [xf, b.emit("Slice", [xf, b.const([0]), b.const([1])])], axis=0)
    u = b.emit("Reshape", [b.emit("Expand", [updates, b.const(g)]) if list(u_shape) != list(g) else updates,
                           b.const([m])])
    if not include_input and reduction != "none":
        if reduction in ("add", "mul"):
            start = b.emit("Expand", [b.scalar(0 if reduction == "add" else 1, _np_dtype(dtype)), b.const([m])])
        else:
            start = u
        xf = b.emit("ScatterElements", [xf, target, start], axis=0)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    y = b.emit("ScatterElements", [xf, target, u], axis=0, **attrs)
    if index_mode == "drop":
        y = b.emit("Slice", [y, b.const([0]), b.const([n])])
    return b.emit("Reshape", [y, b.const(list(x_shape))])


def _key(kind: str, body: dict) -> tuple:
    return (kind,) + tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in body.items()))


def _function(key: tuple, kind: str, body_args: dict, read_shapes: dict, opset: int):
    """The standard-ONNX body of one node variant: its operands read as the core's shapes
    (``*_shape`` attributes: a Reshape), the core op, the output written as ``output_shape``."""
    onnx = _onnx()
    b = _Builder("f", set())
    names = ["input", "indices"] + (["updates"] if kind == "scatter" else [])
    read = [b.emit("Reshape", [n, b.const(read_shapes[f"{n}_shape"])]) if f"{n}_shape" in read_shapes else n
            for n in names]
    if kind == "gather":
        out = gather_body(b, *read, **body_args)
        attrs = ["axes", "index_mode", "negative_indices", "fill_value"]
    else:
        out = scatter_body(b, *read, **body_args)
        attrs = ["axes", "reduction", "index_mode", "negative_indices", "include_input"]
    attrs += sorted(read_shapes)  # the node's own; the body is written for them
    if "output_shape" in read_shapes:
        out = b.emit("Reshape", [out, b.const(read_shapes["output_shape"])])
    b.nodes.append(onnx.helper.make_node("Identity", [out], ["output"], name="output"))
    return onnx.helper.make_function(
        DOMAIN, GATHER_OP if kind == "gather" else SCATTER_OP, names, ["output"], b.nodes,
        [onnx.helper.make_opsetid("", opset)], attrs, doc_string=f"{kind}_multiaxis for {key}")


# ---- The rewrite --------------------------------------------------------------------------------


def _attributes(node) -> dict[str, Any]:
    onnx = _onnx()
    out = {}
    for a in node.attribute:
        value = onnx.helper.get_attribute_value(a)
        out[a.name] = value.decode() if isinstance(value, bytes) else value
    return out


def _subgraphs(node):
    """(label, graph) of each subgraph a node holds (If's branches, Loop's and Scan's bodies)."""
    onnx = _onnx()
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for i, g in enumerate(a.graphs):
                yield f"{a.name}[{i}]", g


def _value_types(graph, outer: dict) -> dict:
    """name -> (elem_type, shape or None) for every value the graph knows (outer scope first)."""
    types = dict(outer)
    for init in graph.initializer:
        types[init.name] = (init.data_type, tuple(init.dims))
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            continue
        shape = None
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            shape = tuple(d.dim_value for d in t.shape.dim)
        if vi.name not in types or types[vi.name][1] is None:
            types[vi.name] = (t.elem_type, shape)
    return types


class _Rewriter:
    def __init__(self, opset: int):
        self.onnx = _onnx()
        self.opset = opset
        self.functions: dict[tuple, str] = {}  # key -> overload
        self.function_protos: list[Any] = []
        self.reports: list[NodeReport] = []

    def overload(self, key: tuple, kind: str, body_args: dict, read_shapes: dict) -> str:
        if key not in self.functions:
            name = f"v{len(self.functions)}"
            self.functions[key] = name
            f = _function(key, kind, body_args, read_shapes, self.opset)
            f.overload = name
            self.function_protos.append(f)
        return self.functions[key]

    def graph(self, graph, outer: dict, path: str) -> None:
        types = _value_types(graph, outer)
        taken = set(types)
        for n in graph.node:
            taken.update(n.output)
        new_nodes = []
        for node in graph.node:
            for label, g in _subgraphs(node):  # subgraphs first: If / Loop / Scan bodies
                self.graph(g, types, f"{path}/{node.name or node.op_type}.{label}")
            if node.domain in ("", "ai.onnx") and node.op_type in ROWS:
                new_nodes.extend(self.node(node, types, taken, path))
            else:
                new_nodes.append(node)
        del graph.node[:]
        graph.node.extend(new_nodes)

    def node(self, node, types: dict, taken: set, path: str) -> list:
        name = node.name or f"{node.op_type}({', '.join(node.input)})"
        scatter = node.op_type in _SCATTERS
        report = NodeReport(path, name, node.op_type, False, attributes=_attributes(node))
        self.reports.append(report)
        want = 3 if scatter else 2
        if len(node.input) != want or len(node.output) != 1 or not all(node.input):
            raise ModelError(f"node {name!r} ({node.op_type}) has {len(node.input)} inputs and "
                             f"{len(node.output)} outputs; ONNX's {node.op_type} takes {want} and gives 1")
        roles = ["data", "indices", "updates"][:want]
        known = []
        for role, value in zip(roles, node.input):
            if value not in types:
                raise ModelError(f"node {name!r} ({node.op_type}): its {role} {value!r} is produced "
                                 f"by no node, initializer or graph input")
            elem, shape = types[value]
            if shape is None:
                report.reason = (f"the shape of its {role} {value!r} is not known (ONNX shape inference "
                                 f"gives {'a symbolic dimension' if elem else 'nothing'}); the rewrite "
                                 f"lowers from static shapes")
                return [node]
            known.append((elem, shape))
        (x_elem, x_shape), (i_elem, i_shape) = known[0], known[1]
        u_shape = known[2][1] if scatter else None
        report.shapes = {r: s for r, (_, s) in zip(roles, known)}
        dtype = _DTYPES.get(x_elem)
        if dtype is None or i_elem not in (6, 7):
            report.reason = f"element types {x_elem} / {i_elem} (onnx.TensorProto) are not lowered"
            return [node]
        row = report.row = ROWS[node.op_type]
        report.dtypes = (dtype, _DTYPES[i_elem])
        try:
            views = _mg.lowering_views(row, x_shape, dtype, i_shape, _DTYPES[i_elem], report.attributes, u_shape)
        except (ValueError, TypeError, IndexError) as e:
            raise ModelError(f"node {name!r} ({node.op_type}, {row}): {e}") from e
        if views["beyond_views"]:
            report.reason = "its lowering " + " and ".join(views["beyond_views"]) + \
                "; the rewrite writes views only"
            return [node]
        b = _Builder(node.name or node.op_type, taken)
        try:
            out = self.core(b, node, views, x_shape, i_shape, u_shape, dtype, i_elem)
        except NotAView as e:
            report.reason = f"a view of its lowering is not a reshape / slice / transpose: {e}"
            return [node]
        self._rename(b.nodes, out, node.output[0])
        report.lowered = True
        return b.nodes

    def core(self, b: _Builder, node, views, x_shape, i_shape, u_shape, dtype, i_elem) -> str:
        """Emits the core node and the views around it; returns the name of the node's result.
        A view that is its operand reshaped is the node's ``*_shape`` attribute, not a node."""
        report = self.reports[-1]
        kind = views["kind"]
        roles = [("input", x_shape), ("indices", i_shape)] + ([("updates", u_shape)] if kind == "scatter" else [])
        operands, read_shapes = [], {}
        for (role, shape), source in zip(roles, node.input):
            plan = plan_view(shape, **views[role])
            if is_reshape(plan):
                operands.append(source)
                if tuple(plan.shape) != tuple(shape):
                    read_shapes[f"{role}_shape"] = list(plan.shape)
            else:
                operands.append(read_view(b.emit, b.const, source, plan))
        out_plan = plan_view(views["output_shape"], views["core_output_shape"], views["core_output_strides"])
        base = node.input[0] if views["has_scatter_base"] else None
        if base is not None and not plan_view(x_shape, **views["scatter_base"]).covers_source:
            raise NotAView("the scatter's base is not its whole input")
        direct = base is None and is_reshape(out_plan)
        if direct and tuple(out_plan.shape) != tuple(views["output_shape"]):
            read_shapes["output_shape"] = list(views["output_shape"])
        axes = [int(a) for a in views["axes"]]
        common = dict(axes=axes, index_mode=views["index_mode"], negative_indices=int(views["negative_indices"]))
        core_shapes = {role: tuple(views[role]["shape"]) for role, _ in roles}
        body = dict(x_shape=core_shapes["input"], i_shape=core_shapes["indices"], dtype=dtype,
                    index_dtype=i_elem, axes=axes, index_mode=views["index_mode"],
                    negative_indices=bool(views["negative_indices"]))
        if kind == "gather":
            body["fill_value"] = views["fill_value"]
            op, extra = GATHER_OP, dict(fill_value=float(views["fill_value"]))
        else:
            body.update(u_shape=core_shapes["updates"], reduction=views["reduction"],
                        include_input=bool(views["include_input"]))
            op, extra = SCATTER_OP, dict(reduction=views["reduction"], include_input=int(views["include_input"]))
        key = _key(kind, {**body, **read_shapes})
        core = b.emit(op, operands, domain=DOMAIN, overload=self.overload(key, kind, body, read_shapes),
                      **common, **extra, **read_shapes)
        report.core = f"{op}(" + ", ".join(f"{r} {core_shapes[r]}" for r, _ in roles) + f", axes={axes}"
        report.core += (f", reduction={views['reduction']}" if kind == "scatter" else "") + \
            f", index_mode={views['index_mode']})"
        return core if direct else write_view(b.emit, b.const, core, out_plan, base)

    @staticmethod
    def _rename(nodes: list, old: str, new: str) -> None:
        for n in nodes:
            for i, o in enumerate(n.output):
                if o == old:
                    n.output[i] = new
            for i, v in enumerate(n.input):
                if v == old:
                    n.input[i] = new
        if old != new and not any(new in n.output for n in nodes):
            raise AssertionError("the rewrite lost the node's output")  # pragma: no cover


def _all_graphs(graph):
    """The graph and its subgraphs, in node order (the rewrite keeps that order)."""
    yield graph
    for n in graph.node:
        for _, g in _subgraphs(n):
            yield from _all_graphs(g)


def _all_nodes(graph):
    for g in _all_graphs(graph):
        yield from g.node


def lower_model(model, *, inline: bool = False, report: bool = False):
    """Rewrites every gather and scatter node of an ONNX model onto the one operator.

    model: an ``onnx.ModelProto`` (or a path). Each Gather, GatherElements, GatherND,
    ScatterElements, ScatterND (and Scatter) node, in the main graph and in every subgraph,
    becomes one ``multigather.GatherMultiaxis`` / ``ScatterMultiaxis`` node with the Reshape /
    Slice / Transpose / Expand / Concat nodes its lowering needs (the registry row
    ``onnx.<op_type>``, docs/spec.md section 2 and 5), from the static shapes ONNX shape
    inference gives. A node whose shapes are not static, or whose lowering is more than views
    (an empty operand), is left as is, and the report says why. Each core node carries a
    model-local function (standard ONNX, the model's opset; a model below opset 13 is converted to 13 first) that any runtime can inline; ``inline=True``
    writes the bodies in place of the nodes, for runtimes without function support.

    Returns the new ``onnx.ModelProto`` (the input is not modified), or with ``report=True`` a
    ``LoweredModel`` (model, per-node reports, notes; ``.summary()``).
    Raises ``ModelError`` (a ValueError) naming the node for a malformed graph or an attribute
    the op's row does not take; ``onnx.checker.ValidationError`` for a model onnx rejects.
    """
    onnx = _onnx()
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        model = onnx.load(model)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    notes: list[str] = []
    try:  # a model onnx's checker accepts gives a rewritten model it accepts (checked below)
        onnx.checker.check_model(m)
        checked = True
    except onnx.checker.ValidationError as e:
        checked = False
        notes.append(f"onnx.checker rejects the input model ({str(e).splitlines()[0]}); "
                     f"the rewritten model is not checked either")
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise ModelError("the model imports no version of the default ONNX domain")
    if opset < _MIN_OPSET and any(n.op_type in ROWS for n in _all_nodes(m.graph)):
        # the rewrite's nodes (Constant value_ints, Unsqueeze's axes input) need opset 13, and a
        # model-local function imports the model's own opset; Scatter is ScatterElements there
        m = onnx.version_converter.convert_version(m, _MIN_OPSET)
        notes.append(f"the model's opset {opset} was converted to {_MIN_OPSET} (onnx.version_converter)"
                     f": the rewrite's nodes need it")
        opset = _MIN_OPSET
    declared = [{vi.name for vi in g.value_info} for g in _all_graphs(m.graph)]
    m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=False, data_prop=True)
    r = _Rewriter(opset)
    r.graph(m.graph, {}, "main")
    for g, names in zip(_all_graphs(m.graph), declared):  # shape inference's additions go again
        kept_info = [vi for vi in g.value_info if vi.name in names]
        del g.value_info[:]
        g.value_info.extend(kept_info)
    if r.functions:
        if all(o.domain != DOMAIN for o in m.opset_import):
            m.opset_import.append(onnx.helper.make_opsetid(DOMAIN, 1))
        m.functions.extend(r.function_protos)
        m.ir_version = max(m.ir_version, 10)  # node overloads
        if inline:
            import onnx.inliner
            m = onnx.inliner.inline_local_functions(m)
            kept = [o for o in m.opset_import if o.domain != DOMAIN]
            del m.opset_import[:]
            m.opset_import.extend(kept)
    if checked:
        onnx.checker.check_model(m)
    if report:
        return LoweredModel(m, r.reports, notes)
    return m


def explain_model(model) -> str:
    """The text of ``multigather explain model.onnx``: for each gather / scatter node, the node,
    its lowering onto the one operator and the index rule (``multigather explain``'s text of the
    row), or why it is left; then the summary line. ``model``: an ``onnx.ModelProto``, a path, or
    the ``LoweredModel`` of ``lower_model(model, report=True)``."""
    lowered = model if isinstance(model, LoweredModel) else lower_model(model, report=True)
    parts = []
    for r in lowered.nodes:
        head = f"== {r.graph}: {r.node} ({r.op_type}"
        head += ", " + ", ".join(f"{k}={v}" for k, v in r.attributes.items()) if r.attributes else ""
        head += ") " + " ".join(f"{k} {list(v)}" for k, v in r.shapes.items())
        parts.append(head)
        if r.lowered:
            parts.append(f"   -> {DOMAIN}.{r.core}")
            parts.append("\n".join("   " + line for line in r.explain().rstrip().splitlines()))
        else:
            parts.append(f"   left as is: {r.reason}")
    parts.extend(f"note: {n}" for n in lowered.notes)
    parts.append(lowered.summary())
    return "\n".join(parts) + "\n"
