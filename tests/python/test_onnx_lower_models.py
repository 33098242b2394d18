"""Exported models (onnx_models.py: torch.nn modules written here and transformers architectures
from tiny configs, exported by torch.onnx.export's dynamo exporter) rewritten onto the one
operator by multigather.onnx.lower_model: every gather / scatter node lowered, and the rewritten
model's outputs equal the original model's, bit for bit, in ONNX Runtime (function bodies, and
inlined) and in onnx's reference evaluator; with multigather's ONNX Runtime library too where it
is built. Also the ONNX-backend-layout node tests of the two ops (tools/onnx_node_tests.py).
"""

from __future__ import annotations

import filecmp
import os
import sys

import numpy as np
import pytest

from conftest import require

onnx = require("onnx")
ort = require("onnxruntime")
from onnx import numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import multigather.onnx as mgo  # noqa: E402
import onnx_models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_TESTS = os.path.join(ROOT, "tests", "data", "onnx_backend", "node")
CORE = {"GatherMultiaxis", "ScatterMultiaxis"}


_library = onnx_models.library
_session = onnx_models.session


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx_lower_models")


def _exported(name, export_dir):
    require("torch")
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")
    if name in onnx_models.TRANSFORMERS_MODELS:
        pytest.importorskip("transformers")
    path, feeds = onnx_models.export(name, export_dir)
    return onnx.load(path), feeds, onnx_models


MODELS = ["embedding_attention", "mixture_of_experts", "graph_layer", "indexing", "bert", "gpt2", "mixtral"]


@pytest.mark.onnx_models
@pytest.mark.parametrize("name", MODELS)
def test_an_exported_model_rewritten_gives_the_same_outputs(name, export_dir):
    model, feeds, onnx_models = _exported(name, export_dir)
    before = onnx_models.gather_scatter_counts(model)
    lowered = mgo.lower_model(model, report=True)
    assert all(r.lowered for r in lowered.nodes), [(r.node, r.reason) for r in lowered.nodes if not r.lowered]
    assert sum(before.values()) == len(lowered.nodes) > 0
    after = [n.op_type for n in onnx_models.all_nodes(lowered.model.graph.node)]
    assert not onnx_models.GATHER_SCATTER_OPS & set(after), after
    assert sum(o in CORE for o in after) == sum(before.values())
    # Nothing else changed: the other nodes, in their order, and the graph's interface and weights.
    kept = [n.SerializeToString() for n in model.graph.node if n.op_type not in onnx_models.GATHER_SCATTER_OPS]
    now = {n.SerializeToString(): i for i, n in enumerate(lowered.model.graph.node)}
    assert all(k in now for k in kept) and [now[k] for k in kept] == sorted(now[k] for k in kept)
    for field in ("input", "output", "initializer", "value_info"):
        assert [x.SerializeToString() for x in getattr(model.graph, field)] == \
            [x.SerializeToString() for x in getattr(lowered.model.graph, field)], field
    print(f"\n{name}: {lowered.summary()}")
    expected = _session(model).run(None, feeds)
    runs = {"ort bodies": _session(lowered.model),
            "ort inlined": _session(mgo.lower_model(model, inline=True))}
    library = _library()
    if library:
        runs["ort library, 1 thread"] = _session(lowered.model, library, 1)
        runs["ort library, 2 threads"] = _session(lowered.model, library, 2)
    for how, session in runs.items():
        for g, e in zip(session.run(None, feeds), expected):
            np.testing.assert_array_equal(g, e, err_msg=f"{name}: {how}")
    # onnx.reference keys model-local functions by (domain, name) and ignores the node's
    # overload (onnx 1.23, reference_evaluator.py), so a model with several variants runs there
    # inlined, and on the spec's numpy ops (new_ops) without its functions.
    ref = ReferenceEvaluator(model).run(None, feeds)
    without = onnx.ModelProto()
    without.CopyFrom(lowered.model)
    del without.functions[:]
    for how, evaluator in {"inlined": ReferenceEvaluator(mgo.lower_model(model, inline=True)),
                           "new_ops": ReferenceEvaluator(without, new_ops=mgo.reference_ops())}.items():
        for g, e in zip(evaluator.run(None, feeds), ref):
            np.testing.assert_array_equal(g, e, err_msg=f"{name}: reference evaluator, {how}")


@pytest.mark.onnx_models
def test_explain_model_summarises_a_transformer(export_dir):
    model, _, onnx_models = _exported("bert", export_dir)
    text = mgo.explain_model(model)
    counts = onnx_models.gather_scatter_counts(model)
    total = sum(counts.values())
    kinds = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()))
    assert f"gather / scatter nodes: {total} before ({kinds}); after: {total} on the one operator" in text
    assert text.count("-> multigather.GatherMultiaxis(") == total


# ---- The ops' node tests in ONNX's backend layout ------------------------------------------------


def _node_tests():
    return sorted(os.listdir(NODE_TESTS)) if os.path.isdir(NODE_TESTS) else []


def test_the_node_tests_are_the_generators_output(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import onnx_node_tests
    finally:
        sys.path.pop(0)
    count = onnx_node_tests.write(str(tmp_path))
    assert count == len(_node_tests()) >= 100
    compared = filecmp.dircmp(str(tmp_path / "node"), NODE_TESTS)
    assert not compared.left_only and not compared.right_only and not compared.diff_files
    for name in _node_tests()[:: max(1, len(_node_tests()) // 10)]:
        files = ["model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"]
        for f in files:
            assert filecmp.cmp(tmp_path / "node" / name / f, os.path.join(NODE_TESTS, name, f), shallow=False)


def _load_node_test(name):
    d = os.path.join(NODE_TESTS, name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    inputs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0", f"input_{k}.pb")))
              for k in range(len(model.graph.input))]
    output = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0", "output_0.pb")))
    return model, {v.name: a for v, a in zip(model.graph.input, inputs)}, output


@pytest.mark.parametrize("name", _node_tests())
def test_node_test(name):
    model, feeds, expected = _load_node_test(name)
    mgo.register_schemas()
    onnx.checker.check_model(model, full_check=True)
    got = ReferenceEvaluator(model, new_ops=mgo.reference_ops()).run(None, feeds)[0]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    library = _library()
    if library:
        np.testing.assert_array_equal(_session(model, library).run(None, feeds)[0], expected)
