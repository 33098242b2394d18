#!/usr/bin/env python3
"""Writes ONNX backend node tests of multigather.GatherMultiaxis / ScatterMultiaxis, in ONNX's
own layout (``node/test_NAME/model.onnx`` and ``test_data_set_0/{input,output}_N.pb``, as
``onnx.backend.test.loader.load_model_tests(data_dir, kind="node")`` reads), from the
third-party conformance vectors in tests/data/conformance (ONNX's and WebNN's WPT cases).

Each vector's framework op is lowered by its registry row (``_multigather.lowering_views``);
the node test's inputs are the core views of the vector's operands, and its expected output is
the core output's view of the vector's EXPECTED output (the values nobody on the team wrote).
A runtime that implements the two ops runs them as it runs ONNX's node tests.

    python3 tools/onnx_node_tests.py [OUT_DIR]     (default tests/data/onnx_backend)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = ["onnx_node_pb.json", "onnx_node_scatter_pb.json", "webnn_wpt.json", "webnn_wpt_scatter.json"]


def _array(t):
    dtype = np.dtype(t["dtype"])
    return np.array(t["data"], dtype=np.float64 if dtype.kind == "f" else None).astype(dtype).reshape(t["shape"])


def _view(array, v):
    flat = np.ascontiguousarray(array).reshape(-1)
    item = flat.itemsize
    view = np.lib.stride_tricks.as_strided(flat[v["offset"]:], shape=v["shape"],
                                           strides=[s * item for s in v["strides"]])
    return np.ascontiguousarray(view)


def node_tests():
    """(name, model, inputs, output, source) for every vector the two ops can state."""
    import onnx
    from onnx import helper

    from multigather import _multigather as mg
    out = []
    for file in VECTORS:
        with open(os.path.join(ROOT, "tests", "data", "conformance", file)) as f:
            vectors = json.load(f)
        for v in vectors:
            if v["expect_error"] or not isinstance(v["input"].get("data"), list) or \
                    not isinstance((v.get("expected") or {}).get("data"), list):
                continue
            if v["indices"]["dtype"] not in ("int32", "int64"):
                continue  # the nodes take int32 / int64 indices (WebNN's uint32 cases are not stated)
            row = "onnx.ScatterElements" if v["op"] == "onnx.Scatter" else v["op"]
            x, i, y = _array(v["input"]), _array(v["indices"]), _array(v["expected"])
            u = _array(v["updates"]) if v.get("updates") else None
            views = mg.lowering_views(row, x.shape, str(x.dtype), i.shape, str(i.dtype), v["attrs"],
                                      None if u is None else u.shape)
            if views["beyond_views"]:
                continue
            core_y = _view(y, {"shape": views["core_output_shape"], "strides": views["core_output_strides"],
                               "offset": 0})
            inputs = [("input", _view(x, views["input"])), ("indices", _view(i, views["indices"]))]
            common = dict(axes=[int(a) for a in views["axes"]], index_mode=views["index_mode"],
                          negative_indices=int(views["negative_indices"]))
            if u is None:
                op, attrs = "GatherMultiaxis", dict(common, fill_value=float(views["fill_value"]))
            else:
                inputs.append(("updates", _view(u, views["updates"])))
                op, attrs = "ScatterMultiaxis", dict(common, reduction=views["reduction"],
                                                     include_input=int(views["include_input"]))
            node = helper.make_node(op, [n for n, _ in inputs], ["output"], domain="multigather", **attrs)
            vi = lambda n, a: helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)  # noqa: E731
            graph = helper.make_graph([node], f"{op}_from_{row}", [vi(n, a) for n, a in inputs],
                                      [vi("output", core_y)])
            model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("multigather", 1)],
                                      producer_name="multigather tools/onnx_node_tests.py")
            model.doc_string = (f"{v['suite']}: {v['name']} ({v['op']} {json.dumps(v['attrs'])}), "
                                f"source {json.dumps(v['source'], sort_keys=True)}")
            slug = re.sub(r"[^a-z0-9]+", "_", f"{v['suite']}_{v['name']}".lower()).strip("_")
            name = f"test_{'gather' if u is None else 'scatter'}_multiaxis_{slug}"
            out.append((name, model, [a for _, a in inputs], core_y, onnx))
    return out


def write(directory: str) -> int:
    from onnx import numpy_helper
    node_dir = os.path.join(directory, "node")
    if os.path.isdir(node_dir):
        shutil.rmtree(node_dir)
    tests = node_tests()
    for name, model, inputs, output, onnx in tests:
        d = os.path.join(node_dir, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(model, os.path.join(d, "model.onnx"))
        for k, (value, a) in enumerate(zip(model.graph.input, inputs)):
            with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, value.name).SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(output, "output").SerializeToString())
    return len(tests)


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "onnx_backend")
    print(f"wrote {write(target)} node tests into {target}/node")
