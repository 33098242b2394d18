"""multigather.explain(..., format="svg"): the picture of a gather (src/frontends/explain_svg.cpp).

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


def index_dtype(op: str) -> str:
    return "int32" if op == "tosa.gather" else "int64"


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
    colour of the input cell the picture links it to, and that colour is not white."""
    inputs = {r.get("data-input"): r for r in root.iter(SVG + "rect") if r.get("class") == "input"}
    def samples(rect):  # pixels along the lower and upper edges, inside the border
        x, y = float(rect.get("x")), float(rect.get("y"))
        w, h = float(rect.get("width")), float(rect.get("height"))
        return [tuple(int(v) for v in pixels[int(yy), int(xx)])
                for yy in (y + h - 5, y + 5) for xx in np.arange(x + 5, x + w - 4, 2)]

    checked = 0
    for r in output_cells(root):
        if int(r.get("data-input")) < 0:
            continue
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


GALLERY = sorted((ROOT / "docs" / "gallery").glob("*.svg"))


def test_gallery_has_a_picture_per_equivalence_class():
    names = {p.stem for p in GALLERY}
    for cls in ("multiaxis", "element", "flat", "block", "nd", "advanced", "windowed"):
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
