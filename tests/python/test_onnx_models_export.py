"""The ONNX test models (onnx_models.py) export, check and run: each model exported by
torch.onnx.export (dynamo), passes onnx.checker, runs in ONNX Runtime (CPU execution provider)
with the torch eager outputs (float outputs to 1e-5, integer ones exactly) and holds at least one
gather/scatter node (Gather, GatherElements, GatherND, ScatterElements, ScatterND, Scatter): the
material of a model rewrite's tests. Skips without torch, onnxscript (the dynamo exporter),
onnxruntime or onnx; the transformers models skip without transformers.

    python3 -m pytest tests/python/test_onnx_models_export.py -s    (-s: the counts printed)
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import require

pytestmark = pytest.mark.onnx_models

torch = require("torch")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install onnxscript): "
                                         "torch.onnx.export(dynamo=True) needs it")
onnx = require("onnx")
ort = require("onnxruntime")

import onnx_models  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    """One folder per worker process for the module's exports (export caches by name there)."""
    return tmp_path_factory.mktemp("onnx_models")


def _require_for(name: str) -> None:
    if name in onnx_models.TRANSFORMERS_MODELS:
        pytest.importorskip("transformers", reason="transformers is not installed "
                                                   "(pip install transformers)")


@pytest.mark.parametrize("name", onnx_models.MODELS)
def test_export_check_run(name, export_dir):
    _require_for(name)
    path, feeds = onnx_models.export(name, export_dir)
    info = onnx_models.export_info(name, export_dir)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)

    counts = onnx_models.gather_scatter_counts(proto)
    print(f"\n{name}: exporter={info['exporter']} opset={info['opset']} "
          f"export={info['export_seconds']:.2f}s nodes={info['nodes']} gather/scatter={counts}"
          + (f" (dynamo failed: {info['fallback_reason']})" if info["fallback_reason"] else ""))
    assert sum(counts.values()) >= 1, f"{name}: no gather/scatter node in the export"
    assert counts == info["gather_scatter"]

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    assert sorted(i.name for i in session.get_inputs()) == sorted(feeds)
    got = session.run(None, feeds)

    model, args = onnx_models.build(name)
    for key, arg in zip(feeds, args):  # the cached feeds are the builder's input
        np.testing.assert_array_equal(feeds[key], arg.numpy())
    expected = onnx_models.eager_outputs(model, args)
    assert len(got) == len(expected)
    for index, (actual, wanted) in enumerate(zip(got, expected)):
        assert actual.dtype == wanted.dtype, (name, index)
        assert actual.shape == wanted.shape, (name, index)
        if np.issubdtype(wanted.dtype, np.floating):
            np.testing.assert_allclose(actual, wanted, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} output {index}")
        else:
            np.testing.assert_array_equal(actual, wanted, err_msg=f"{name} output {index}")


def test_export_is_cached(export_dir):
    name = "indexing"
    path, feeds = onnx_models.export(name, export_dir)
    stamp = os.stat(path).st_mtime_ns
    again, feeds_again = onnx_models.export(name, export_dir)
    assert again == path and os.stat(path).st_mtime_ns == stamp
    assert feeds.keys() == feeds_again.keys()
    for key in feeds:
        np.testing.assert_array_equal(feeds[key], feeds_again[key])


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown model"):
        onnx_models.build("no_such_model")


def test_counts_reach_subgraphs_and_functions():
    """gather_scatter_counts counts the nodes of If branches and Loop bodies (nested too) and of
    local functions; a node of another domain with a gather's name is not one."""
    def value(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)

    inner_then = helper.make_graph([helper.make_node("GatherND", ["d", "i"], ["t"])], "then", [],
                                   [value("t")])
    inner_else = helper.make_graph([helper.make_node("Gather", ["d", "i"], ["e"])], "else", [],
                                   [value("e")])
    nested_if = helper.make_node("If", ["c"], ["n"], then_branch=inner_then,
                                 else_branch=inner_else)
    body = helper.make_graph(
        [nested_if, helper.make_node("ScatterElements", ["d", "i", "u"], ["s"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), value("s")])
    nodes = [helper.make_node("Gather", ["d", "i"], ["g"]),
             helper.make_node("Loop", ["m", "cond0"], ["scan_s"], body=body),
             helper.make_node("Gather", ["d", "i"], ["x"], domain="custom.domain"),
             helper.make_node("Scatterer", ["d"], ["f"], domain="local")]
    graph = helper.make_graph(nodes, "main", [], [value("g")])
    function = helper.make_function("local", "Scatterer", ["d"], ["f"],
                                    [helper.make_node("ScatterND", ["d", "i", "u"], ["f"])],
                                    [helper.make_opsetid("", 18)])
    model = helper.make_model(graph, functions=[function])
    assert onnx_models.gather_scatter_counts(model) == {
        "Gather": 2, "GatherND": 1, "ScatterElements": 1, "ScatterND": 1}
