"""multigather.explain(..., format="svg"): the picture of a gather or a scatter
(src/explain/explain_svg.cpp).

Every picture is parsed by an XML parser; the mapping it encodes (each output cell's
data-input) is checked against the kernel's own result on an input that holds its own flat
positions (np.arange), and against numpy for real values; pictures are rendered to PNG by
rsvg-convert (librsvg2-bin, installed by scripts/setup.sh) and the pixels of every output cell
are checked to carry the colour of the input cell the picture says it takes.
"""

from __future__ import annotations

import pathlib
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import multigather as mg

SVG = "{http://www.w3.org/2000/svg}"
ROOT = pathlib.Path(__file__).resolve().parents[2]

# One call per registry op (tests/op_test_support.hpp explain_cases): (op, input, indices, attrs).
CASES = [
    ("gather_multiaxis", (4, 2, 1, 2), (1, 3, 2, 2), {"axes": [1]}),
    ("onnx.Gather", (4, 3), (2, 2), {"axis": 1}),
    ("onnx.GatherElements", (4, 3), (2, 3), {}),
    ("onnx.GatherND", (2, 2, 2), (2, 1), {"batch_dims": 1}),
    ("torch.gather", (3, 4), (1, 2), {"dim": 1}),
    ("torch.take", (3, 4), (5,), {}),
    ("torch.take_along_dim", (3, 4), (1, 2), {"dim": 1}),
    ("torch.index_select", (3, 4), (2,), {"dim": 1}),
    ("numpy.take", (3, 4), (2,), {"axis": 1, "mode": "clip"}),
    ("numpy.take_along_axis", (3, 4), (3, 1), {}),
    ("numpy.advanced_index", (3, 4, 5), (2, 2), {"index_dims": [0, 2]}),
    ("tf.gather", (3, 5), (3, 2), {"axis": 1, "batch_dims": 1}),
    ("tf.gather_nd", (2, 2, 2), (2, 1), {"batch_dims": 1}),
    ("jax.numpy.take", (3, 4), (2,), {"axis": 0}),
    ("jax.numpy.take_along_axis", (3, 4), (3, 2), {}),
    ("coreml.gather", (3, 4), (3, 2), {"axis": 1, "batch_dims": 1}),
    ("coreml.gather_along_axis", (3, 4), (3, 2), {"axis": 1}),
    ("coreml.gather_nd", (3, 4), (2, 2), {}),
    ("tosa.gather", (2, 3, 4), (2, 5), {}),
    ("tensor.gather", (4, 5, 6), (1, 2, 3, 2), {"gather_dims": [1, 2]}),
    ("tcp.gather", (3, 4), (2, 2), {"dim": 1}),
    ("tcp.gather_nd", (3, 4), (2, 1), {}),
    ("stablehlo.gather", (3, 4, 2), (2, 3, 2),
     {"offset_dims": [2, 3], "collapsed_slice_dims": [0], "start_index_map": [1, 0],
      "index_vector_dim": 2, "slice_sizes": [1, 2, 2]}),
    ("webnn.gather", (3, 4), (2,), {"axis": 1}),
    ("webnn.gatherElements", (3, 4), (3, 2), {"axis": 1}),
    ("webnn.gatherND", (3, 4), (2, 2), {}),
    ("dml.Gather", (1, 4, 3), (1, 1, 2), {"axis": 1}),
    ("dml.GatherElements", (1, 4, 3), (1, 2, 3), {"axis": 1}),
    ("dml.GatherND", (1, 4, 3), (1, 2, 1),
     {"input_dimension_count": 2, "indices_dimension_count": 2}),
]


# One call per registry scatter (tests/op_test_support.hpp scatter_explain_cases):
# (op, input, indices, updates, attrs).
SCATTER_CASES = [
    ("scatter_multiaxis", (4, 3), (2, 1), (2, 3), {"axes": [0], "reduction": "add"}),
    ("onnx.ScatterElements", (4, 3), (2, 3), (2, 3), {"reduction": "add"}),
    ("onnx.ScatterND", (4, 3), (2, 1), (2, 3), {"reduction": "max"}),
    ("torch.scatter", (4, 3), (2, 3), (3, 3), {"dim": 0}),
    ("torch.scatter_add", (4, 3), (4, 2), (4, 2), {"dim": 1}),
    ("torch.scatter_reduce", (4, 3), (2, 3), (2, 3), {"reduce": "amax", "include_self": False}),
    ("torch.index_add", (4, 3), (2,), (2, 3), {"alpha": 2}),
    ("numpy.put_along_axis", (4, 3), (4, 1), (1,), {"axis": 1}),
    ("numpy.add_at", (4, 3), (5,), (3,), {}),
    ("webnn.scatterElements", (4, 3), (4, 2), (4, 2), {"axis": 1}),
    ("webnn.scatterND", (4, 3), (2, 1), (2, 3), {}),
    ("tf.tensor_scatter_nd_update", (4, 3), (2, 1), (2, 3), {}),
    ("tf.tensor_scatter_nd_add", (4, 3), (2, 2), (2,), {}),
    ("tf.tensor_scatter_nd_sub", (4, 3), (2, 1), (2, 3), {}),
    ("tf.tensor_scatter_nd_min", (4, 3), (2, 1), (2, 3), {}),
    ("tf.tensor_scatter_nd_max", (4, 3), (2, 1), (2, 3), {"index_mode": "drop"}),
    ("tf.scatter_nd", (4, 3), (2, 1), (2, 3), {}),
    ("coreml.scatter", (4, 3), (2,), (4, 2), {"axis": 1, "mode": "sub"}),
    ("coreml.scatter_along_axis", (4, 3), (4, 2), (4, 2), {"axis": 1}),
    ("coreml.scatter_nd", (4, 3), (2, 1), (2, 3), {"mode": "update"}),
    ("tosa.scatter", (2, 4, 3), (2, 2), (2, 2, 3), {}),
    ("dml.ScatterElements", (4, 3), (4, 2), (4, 2), {"axis": 1}),
    ("dml.ScatterND", (1, 4, 3), (1, 2, 1), (1, 2, 3),
     {"input_dimension_count": 2, "indices_dimension_count": 2}),
    ("tensor.scatter", (4, 3), (2, 1), (2, 1, 3), {"scatter_dims": [0]}),
    ("numpy.multiply_at", (4, 3), (5,), (3,), {}),
    ("numpy.minimum_at", (4, 3), (5,), (5, 3), {}),
    ("numpy.maximum_at", (4, 3), (2, 2), (1,), {}),
    ("torch.index_copy", (4, 3), (2,), (4, 2), {"dim": 1}),
    ("torch.index_fill", (4, 3), (2,), (), {}),
    ("torch.put", (4, 3), (2, 2), (4,), {"accumulate": True}),
    ("torch.index_put", (4, 3, 2), (5, 2), (5, 3), {"index_dims": [0, 2], "accumulate": True}),
    ("numpy.put", (4, 3), (5,), (5,), {"mode": "wrap"}),
    ("jax.at.set", (4, 3), (2, 1), (1,), {}),
    ("jax.at.add", (4, 3, 2), (5, 2), (5, 3), {"index_dims": [0, 2]}),
    ("jax.at.subtract", (4, 3), (2, 2), (2,), {"index_dims": [0, 1], "mode": "clip"}),
    ("jax.at.multiply", (4, 3), (2, 1), (4, 2), {"index_dims": [1]}),
    ("jax.at.min", (4, 3), (2, 1), (2, 3), {"wrap_negative_indices": False}),
    ("jax.at.max", (4, 3), (2, 1), (2, 3), {"mode": "promise_in_bounds"}),
    ("stablehlo.scatter", (4, 3), (2, 1), (2, 2),
     {"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0],
      "index_vector_dim": 1, "update_computation": "add"}),
]


# (op, data shape, segment_ids shape, attributes): every segment op, called as a gather.
SEGMENT_CASES = [(f"jax.ops.segment_{r}", (5, 2), (5,), {"num_segments": 3}) for r in ("sum", "prod", "max", "min")] + [
    (f"tf.math.unsorted_segment_{r}", (5, 2), (5,), {"num_segments": 3})
    for r in ("sum", "prod", "max", "min", "mean", "sqrt_n")] + [
    (f"tf.math.segment_{r}", (5, 2), (5,), {}) for r in ("sum", "prod", "max", "min", "mean")] + [
    ("torch.segment_reduce", (5, 2), (3,), {"reduce": "max", "unsafe": True}),
    ("torch_scatter.scatter", (5, 2), (5,), {"dim": 0, "dim_size": 3, "reduce": "mean"}),
    ("torch_scatter.segment_coo", (5, 2), (5,), {"dim_size": 3, "reduce": "min"}),
    ("torch_scatter.segment_csr", (5, 2), (4,), {"reduce": "sum"}),
    ("torch.nn.functional.embedding_bag", (6, 2), (3, 2), {"mode": "sum"})]


def index_dtype(op: str) -> str:
    return "int32" if op in ("tosa.gather", "tosa.scatter") else "int64"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())  # raises on malformed XML


def output_cells(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(SVG + "rect") if r.get("class") == "output"]


def indices_from_picture(root: ET.Element, shape, dtype) -> np.ndarray:
    """The framework indices a positions-mode picture used, read back from its indices cells."""
    idx = np.zeros(shape, dtype=dtype)
    for r in root.iter(SVG + "rect"):
        if r.get("class") == "indices" and int(r.get("data-offset")) >= 0 and r.get("data-value"):
            idx.flat[int(r.get("data-offset"))] = int(r.get("data-value"))
    return idx


def test_every_registry_op_is_covered():
    gathers = [op for op in mg.ops() if mg._registry.OPS[op]["kind"] == "gather"]
    assert sorted(c[0] for c in CASES) == gathers
    segments = [op for op in mg.ops() if mg._registry.OPS[op]["kind"] == "segment"]
    assert sorted(c[0] for c in SEGMENT_CASES) == sorted(segments)


def test_every_registry_op_draws():
    """Each registry op, gather and scatter, draws a well-formed picture with output cells."""
    gathers = {c[0]: c for c in CASES + SEGMENT_CASES}
    scatters = {c[0]: c for c in SCATTER_CASES}
    for op in mg.ops():
        if mg._registry.is_scatter(op):
            assert op in scatters, f"{op}: no scatter picture case"
            _, xs, is_, us, attrs = scatters[op]
            svg = mg.explain(op, xs, is_, updates_shape=us, indices_dtype=index_dtype(op),
                             format="svg", **attrs)
        else:
            assert op in gathers, f"{op}: no gather picture case"
            _, xs, is_, attrs = gathers[op]
            svg = mg.explain(op, xs, is_, indices_dtype=index_dtype(op), format="svg", **attrs)
        assert isinstance(svg, mg.Svg), op
        assert output_cells(parse(svg)), op


@pytest.mark.parametrize("op", ["jax.ops.segment_sum", "tf.math.unsorted_segment_max", "tf.math.segment_mean"])
def test_segment_picture_shows_which_updates_land_in_which_segment(op):
    """Each output cell of a segment picture lists the data elements that reach it: exactly the
    rows whose id is the cell's segment, in row-major order; a dropped id reaches none."""
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 0, 2, 2, 2, 3]) if op.startswith("tf.math.segment") else np.array([2, -1, 0, 2, 3, 0])
    attrs = {} if op.startswith("tf.math.segment") else {"num_segments": 4}
    svg = mg.explain(op, input=data, indices=ids, format="svg", **attrs)
    cells = {int(r.get("data-output")): r for r in output_cells(parse(svg))}
    assert sorted(cells) == list(range(8))
    for s in range(4):
        for f in range(2):
            reaching = cells[s * 2 + f].get("data-updates") or ""
            got = [int(v) for v in reaching.replace(",", " ").split()]
            assert got == [i * 2 + f for i in range(6) if ids[i] == s], (s, f, reaching)
    result = mg.run(op, data, ids, **attrs)
    assert result.shape == (4, 2)


@pytest.mark.parametrize("op,bounds,attrs", [
    ("torch.segment_reduce", np.array([2, 0, 3, 1]), {"reduce": "sum"}),
    ("torch.segment_reduce", np.array([0, 2, 2, 5]), {"reduce": "mean", "lengths_are_offsets": True}),
    ("torch_scatter.segment_csr", np.array([1, 3, 3, 6]), {"reduce": "max"})])
def test_lengths_and_offsets_pictures_show_each_segments_rows(op, bounds, attrs):
    """A segment given by lengths / offsets / indptr: each output cell lists exactly its rows."""
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    if op == "torch.segment_reduce" and not attrs.get("lengths_are_offsets"):
        starts = np.concatenate([[0], np.cumsum(bounds)])
    else:
        starts = bounds
    svg = mg.explain(op, input=data, indices=bounds, format="svg", **attrs)
    cells = {int(r.get("data-output")): r for r in output_cells(parse(svg))}
    segments = len(starts) - 1
    assert sorted(cells) == list(range(segments * 2))
    for s in range(segments):
        for f in range(2):
            got = [int(v) for v in (cells[s * 2 + f].get("data-updates") or "").replace(",", " ").split()]
            assert got == [i * 2 + f for i in range(starts[s], starts[s + 1])], (s, f)


@pytest.mark.parametrize("op,xs,is_,attrs", CASES, ids=[c[0] for c in CASES])
def test_picture_mapping_agrees_with_the_kernel(op, xs, is_, attrs):
    svg = mg.explain(op, xs, is_, indices_dtype=index_dtype(op), format="svg", **attrs)
    assert isinstance(svg, mg.Svg) and svg._repr_svg_() == str(svg)
    root = parse(svg)
    x = np.arange(int(np.prod(xs)), dtype=np.int64).reshape(xs)
    idx = indices_from_picture(root, is_, index_dtype(op))
    out = mg.run(op, x, idx, **attrs)
    cells = output_cells(root)
    assert len(cells) == out.size > 0
    seen = set()
    for r in cells:
        f, src = int(r.get("data-output")), int(r.get("data-input"))
        seen.add(f)
        assert src == out.flat[f], (op, f)  # the kernel wrote input element `src` there
    assert seen == set(range(out.size))
    # The same arrays given: values mode draws the same mapping.
    root2 = parse(mg.explain(op, input=x, indices=idx, format="svg", **attrs))
    assert [(r.get("data-output"), r.get("data-input")) for r in output_cells(root2)] == \
           [(r.get("data-output"), r.get("data-input")) for r in cells]


def scatter_state(root: ET.Element):
    g = [e for e in root.iter(SVG + "g") if e.get("id") == "scatter"]
    assert len(g) == 1
    return g[0]


def combine(reduction: str, a: np.float32, b: np.float32) -> np.float32:
    return {"none": lambda: b, "add": lambda: a + b, "mul": lambda: a * b,
            "min": lambda: np.fmin(a, b), "max": lambda: np.fmax(a, b)}[reduction]()


@pytest.mark.parametrize("op,xs,is_,us,attrs", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
def test_scatter_picture_agrees_with_the_kernel(op, xs, is_, us, attrs):
    """The picture's mapping (which updates reach each output cell, in which order), combined
    by the drawn reduction from the drawn values, is what the kernel writes, bit for bit."""
    svg = mg.explain(op, xs, is_, updates_shape=us, indices_dtype=index_dtype(op), format="svg",
                     **attrs)
    assert isinstance(svg, mg.Svg)
    root = parse(svg)
    x = (np.arange(int(np.prod(xs))) + 1).astype(np.float32).reshape(xs)
    u = ((np.arange(int(np.prod(us))) + 1) * 10).astype(np.float32).reshape(us)
    idx = indices_from_picture(root, is_, index_dtype(op))
    out = mg.run(op, x, idx, updates=u, **attrs)
    root = parse(mg.explain(op, input=x, indices=idx, updates=u, format="svg", **attrs))
    state = scatter_state(root)
    reduction, include_input = state.get("data-reduction"), state.get("data-include-input") == "true"
    inputs = {r.get("data-input"): float(r.get("data-value")) for r in root.iter(SVG + "rect")
              if r.get("class") == "input"}
    updates = {r.get("id")[4:]: float(r.get("data-value")) for r in root.iter(SVG + "rect")
               if r.get("class") == "update"}
    drawn = set()
    for r in output_cells(root):
        f = int(r.get("data-output"))
        drawn.add(f)
        terms = [np.float32(updates[c]) for c in r.get("data-update-cells").split(",") if c]
        want = np.float32(inputs[r.get("data-input")])
        for i, v in enumerate(terms):
            want = v if i == 0 and not include_input and reduction != "none" else combine(reduction, want, v)
        assert r.get("data-combine") == (reduction if terms else "kept")
        assert out.flat[f].tobytes() == want.tobytes(), (op, f, out.flat[f], want)
    for f in set(range(out.size)) - drawn:  # a partial write's rest keeps the input
        assert out.flat[f] == x.flat[f]


def test_scatter_duplicates_last_wins_and_dropped_against_numpy():
    x = np.arange(5, dtype=np.float32)
    idx = np.array([4, 7, 2, 2, 0, -9])
    u = np.array([10, 20, 30, 40, 50, 60], dtype=np.float32)
    root = parse(mg.explain("scatter_multiaxis", input=x, indices=idx, updates=u, axes=[0],
                            index_mode="drop", format="svg"))
    assert scatter_state(root).get("data-dropped") == "1,5"
    want = x.copy()
    want[[4, 2, 2, 0]] = [10, 30, 40, 50]  # numpy assignment: the last duplicate wins
    status = {r.get("id"): r.get("data-status") for r in root.iter(SVG + "rect") if r.get("class") == "update"}
    assert status == {"upd-0": "applied", "upd-1": "dropped", "upd-2": "overwritten",
                      "upd-3": "applied", "upd-4": "applied", "upd-5": "dropped"}
    values = {r.get("id")[4:]: float(r.get("data-value")) for r in root.iter(SVG + "rect")
              if r.get("class") == "update"}
    for r in output_cells(root):
        cells = r.get("data-update-cells").split(",") if r.get("data-update-cells") else []
        got = values[cells[-1]] if cells else x.flat[int(r.get("data-input"))]
        assert got == want[int(r.get("data-output"))]
    cell2 = [r for r in output_cells(root) if r.get("data-output") == "2"][0]
    assert cell2.get("data-updates") == "2,3" and cell2.get("stroke") == "#c0392b"
    np.testing.assert_array_equal(
        mg.scatter_multiaxis(x, idx, u, [0], index_mode="drop"), want)


def test_scatter_svg_arguments():
    with pytest.raises(ValueError, match=r"updates_shape is required: onnx.ScatterND is a scatter"):
        mg.explain("onnx.ScatterND", (4, 3), (2, 1), format="svg")
    with pytest.raises(ValueError, match=r"onnx.Gather is a gather: it takes no updates"):
        mg.explain("onnx.Gather", (4, 3), (2,), updates_shape=(2,), format="svg")
    with pytest.raises(ValueError, match=r"updates= is an argument of format='svg'"):
        mg.explain("onnx.ScatterND", (4, 3), (2, 1), updates_shape=(2, 3), updates=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"cells: position 6 is outside G"):
        mg.explain("onnx.ScatterND", (4, 3), (2, 1), updates_shape=(2, 3), cells=[6], format="svg")


@pytest.mark.parametrize("mode", ["wrap", "clip", "raise"])
def test_numpy_take_values_against_numpy(mode):
    x = np.arange(12).reshape(3, 4) * 10
    idx = np.array([-1, 5, 2, 7, 0]) if mode != "raise" else np.array([-1, 3, 2, -4, 0])
    root = parse(mg.explain("numpy.take", input=x, indices=idx, axis=1, mode=mode, format="svg"))
    want = np.take(x, idx, axis=1, mode=mode)
    got = np.empty(want.size, dtype=np.int64)
    marks = {}
    for r in output_cells(root):
        f = int(r.get("data-output"))
        got[f] = x.flat[int(r.get("data-input"))]
        marks[f] = r.get("data-resolution")
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    # Lookup 0 (index -1) of every row: wrapped (mode wrap: floor modulo), clamped (clip), or
    # negative (raise: -1 + 4).
    assert marks[0] == {"wrap": "wrapped", "clip": "clamped", "raise": "negative"}[mode]
    assert marks[2] == "in-range"


def test_fill_cells_are_marked_and_take_no_input():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[2, -1, 0, 5, -6]])
    root = parse(mg.explain("gather_multiaxis", input=x, indices=idx, axes=[1],
                            index_mode="fill", fill_value=-1, format="svg"))
    out = mg.gather_multiaxis(x, idx, [1], index_mode="fill", fill_value=-1)
    for r in output_cells(root):
        f, src = int(r.get("data-output")), int(r.get("data-input"))
        if src < 0:
            assert r.get("data-resolution") == "filled" and r.get("fill") == "url(#filled)"
            assert out.flat[f] == -1
        else:
            assert out.flat[f] == x.flat[src]
    assert sum(int(r.get("data-input")) < 0 for r in output_cells(root)) == 6  # 5 and -6, 3 rows


def test_errors_name_the_argument_and_the_rule():
    with pytest.raises(ValueError, match=r"format='svg': the output has 4096 cells; pictures are drawn up to 400 cells"):
        mg.explain("gather_multiaxis", (64, 1), (1, 64), axes=[], format="svg")
    with pytest.raises(ValueError, match=r"format: 'png' is not one of 'text', 'svg'"):
        mg.explain("onnx.Gather", (3, 4), (2,), format="png")
    with pytest.raises(ValueError, match=r"input= is an argument of format='svg'"):
        mg.explain("onnx.Gather", (3, 4), (2,), input=np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"cells: output cell 9 is outside the output, which has 8 cells"):
        mg.explain("onnx.Gather", (4, 4), (2,), axis=1, format="svg", cells=[9])
    with pytest.raises(IndexError, match=r"onnx.Gather: indices\[1\] = 9 is out of range"):
        mg.explain("onnx.Gather", input=np.zeros((4, 4)), indices=np.array([1, 9]), axis=1,
                   format="svg")
    # The text form is unchanged.
    assert mg.explain("onnx.Gather", (3, 4), (2,), axis=1).startswith("op:                 onnx.Gather")


# ---- PNG rendering -----------------------------------------------------------------------------

RSVG = shutil.which("rsvg-convert")
needs_rsvg = pytest.mark.skipif(RSVG is None, reason="rsvg-convert not found (Debian package "
                                "librsvg2-bin; scripts/setup.sh installs it)")


def decode_png(data: bytes) -> np.ndarray:
    """8-bit RGB / RGBA, non-interlaced PNG (what rsvg-convert writes) -> array [h, w, channels]."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    w, h, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    ch = 4 if colour == 6 else 3
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * ch)
    out = np.zeros((h, w * ch), dtype=np.int32)
    prev = np.zeros(w * ch, dtype=np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 1:  # Sub: a running sum per channel
            cur = (np.cumsum(line.reshape(w, ch), axis=0) & 0xFF).reshape(-1)
        elif f == 2:  # Up
            cur = (line + prev) & 0xFF
        else:  # Average, Paeth: element by element
            cur = np.zeros(w * ch, dtype=np.int32)
            for i in range(w * ch):
                a = int(cur[i - ch]) if i >= ch else 0
                b = int(prev[i])
                c = int(prev[i - ch]) if i >= ch else 0
                if f == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[i] = (int(line[i]) + p) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(h, w, ch)[:, :, :3]


def render(svg_path: pathlib.Path, png_path: pathlib.Path) -> np.ndarray:
    subprocess.run([RSVG, str(svg_path), "-o", str(png_path)], check=True)
    return decode_png(png_path.read_bytes())


def check_colours(root: ET.Element, pixels: np.ndarray) -> int:
    """Every non-filled output cell shows, at one of three points along its lower edge, the
    colour of the input cell the picture links it to (a scatter: of the last update cell that
    reaches it; a kept cell is white), and that colour is not white."""
    inputs = {r.get("data-input"): r for r in root.iter(SVG + "rect") if r.get("class") == "input"}
    updates = {r.get("id")[4:]: r for r in root.iter(SVG + "rect") if r.get("class") == "update"}
    def samples(rect):  # pixels along the lower and upper edges, inside the border
        x, y = float(rect.get("x")), float(rect.get("y"))
        w, h = float(rect.get("width")), float(rect.get("height"))
        return [tuple(int(v) for v in pixels[int(yy), int(xx)])
                for yy in (y + h - 5, y + 5) for xx in np.arange(x + 5, x + w - 4, 2)]

    checked = 0
    for r in output_cells(root):
        if updates:  # a scatter
            cells = r.get("data-update-cells")
            if not cells:
                assert (255, 255, 255) in samples(r), r.get("id")  # kept: white
                continue
            src = samples(updates[cells.split(",")[-1]])
        elif int(r.get("data-input")) < 0:
            continue
        else:
            src = samples(inputs[r.get("data-input")])
        colour = max(set(src), key=src.count)  # the input cell's fill (most of its pixels)
        assert colour != (255, 255, 255), r.get("id")
        assert colour in samples(r), (r.get("id"), colour)
        checked += 1
    return checked


@needs_rsvg
def test_png_rendering_shows_linked_colours(tmp_path):
    svg = mg.explain("onnx.Gather", (3, 4), (2, 2), axis=1, format="svg", cells=[5])
    (tmp_path / "g.svg").write_text(svg)
    pixels = render(tmp_path / "g.svg", tmp_path / "g.png")
    root = parse(svg)
    assert pixels.shape[1] == int(float(root.get("width")))
    assert check_colours(root, pixels) == 12
    # The caption is drawn: dark pixels in the first caption line's band.
    assert (pixels[14:30, 20:400].sum(axis=2) < 200).any()


@needs_rsvg
def test_png_rendering_of_a_scatter(tmp_path):
    svg = mg.explain("numpy.add_at", (4, 3), (5,), updates_shape=(3,), format="svg")
    (tmp_path / "s.svg").write_text(svg)
    pixels = render(tmp_path / "s.svg", tmp_path / "s.png")
    root = parse(svg)
    assert pixels.shape[1] == int(float(root.get("width")))
    assert check_colours(root, pixels) == 12  # 5 indices into 4 rows: every row reached
    # The duplicate's red frame (#c0392b) is drawn around the cell two updates reach.
    dup = [r for r in output_cells(root) if r.get("stroke") == "#c0392b"]
    assert dup
    x, y = int(float(dup[0].get("x"))), int(float(dup[0].get("y")))
    assert (np.abs(pixels[y - 1:y + 2, x + 8:x + 20] - [0xc0, 0x39, 0x2b]).sum(axis=2) < 40).any()


GALLERY = sorted((ROOT / "docs" / "gallery").glob("*.svg"))


def test_gallery_has_a_picture_per_equivalence_class():
    names = {p.stem for p in GALLERY}
    for cls in ("multiaxis", "element", "flat", "block", "nd", "advanced", "windowed",
                "scatter", "scatter_element", "scatter_block", "scatter_nd"):
        assert cls in names
    readme = (ROOT / "docs" / "gallery" / "README.md").read_text()
    for p in GALLERY:
        assert f"]({p.name})" in readme


@needs_rsvg
@pytest.mark.parametrize("path", GALLERY, ids=[p.stem for p in GALLERY])
def test_gallery_pictures_parse_and_render(path, tmp_path):
    root = parse(path.read_text())
    pixels = render(path, tmp_path / (path.stem + ".png"))
    assert check_colours(root, pixels) > 0
