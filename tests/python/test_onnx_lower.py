"""multigather.onnx.lower_model: whole ONNX models onto GatherMultiaxis / ScatterMultiaxis.

Oracles: ONNX's own backend node tests of the gather and scatter family (models and expected
outputs from the installed onnx package, onnx/backend/test/case/node), ONNX Runtime running the
ORIGINAL node, and onnx's reference evaluator. The rewritten model runs with its standard-ONNX
function bodies, inlined (--inline), and on the spec's numpy reference (new_ops).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import multigather.onnx as mgo  # noqa: E402
import onnx_models  # noqa: E402

FAMILY = {"Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Scatter"}


def _backend_cases():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    # TensorScatter (opset 24, a KV-cache update op) is another op family: not lowered.
    return {c.name: c for c in cases
            if any(op in c.model.graph.node[0].op_type for op in FAMILY) and c.model.graph.node[0].op_type in FAMILY}


BACKEND = _backend_cases()


_library = onnx_models.library
_session = onnx_models.session


def _ops(graph):
    return [n.op_type for n in graph.node]


def _without_functions(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.functions[:]
    for n in m.graph.node:
        n.overload = ""
    return m


def test_the_backend_suite_holds_the_family():
    assert len(BACKEND) >= 26, sorted(BACKEND)
    assert {c.model.graph.node[0].op_type for c in BACKEND.values()} == FAMILY


@pytest.mark.parametrize("name", sorted(BACKEND))
def test_backend_node_test_rewritten_equals_its_expected_outputs(name):
    case = BACKEND[name]
    lowered = mgo.lower_model(case.model, report=True)
    m = lowered.model
    assert [r.lowered for r in lowered.nodes] == [True], lowered.nodes
    ops = _ops(m.graph)
    assert not FAMILY & set(ops), ops
    assert sum(o in ("GatherMultiaxis", "ScatterMultiaxis") for o in ops) == 1
    inlined = mgo.lower_model(case.model, inline=True)
    assert not {"GatherMultiaxis", "ScatterMultiaxis"} & set(_ops(inlined.graph))
    mgo.register_schemas()
    onnx.checker.check_model(m, full_check=True)
    runs = {
        "ort bodies": _session(m),
        "ort inlined": _session(inlined),
        "reference bodies": ReferenceEvaluator(m),
        "reference new_ops": ReferenceEvaluator(_without_functions(m), new_ops=mgo.reference_ops()),
    }
    if _library():
        runs["ort library"] = _session(m, _library())
        runs["ort library, 2 threads"] = _session(m, _library(), 2)
    for inputs, expected in case.data_sets:
        feeds = {i.name: v for i, v in zip(m.graph.input, inputs)}
        for how, runner in runs.items():
            got = runner.run(None, feeds)
            for g, e in zip(got, expected):
                assert g.dtype == e.dtype and g.shape == e.shape, how
                np.testing.assert_array_equal(g, e, err_msg=how)


# ---- Random single-node models against ONNX Runtime's own op --------------------------------------


def _model(op_type, inputs, attrs, opset=18):
    """inputs: list of (name, numpy array); every input is a graph input of static shape."""
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs]
    node = helper.make_node(op_type, [n for n, _ in inputs], ["y"], name=f"the_{op_type}", **attrs)
    graph = helper.make_graph([node], "g", vis, [helper.make_tensor_value_info("y", vis[0].type.tensor_type.elem_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _random_case(rng, op_type):
    rank = int(rng.integers(1, 5))
    shape = [int(s) for s in rng.integers(1, 5, size=rank)]
    dtype = rng.choice([np.float32, np.int64, np.float16, np.int32, np.uint8, np.float64])
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    axis = int(rng.integers(-rank, rank))
    a = axis % rank
    index_dtype = rng.choice([np.int64, np.int32])
    if op_type == "Gather":
        ishape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        idx = rng.integers(-shape[a], shape[a], size=ishape).astype(index_dtype)
        return [("data", data), ("indices", idx)], {"axis": axis}
    if op_type == "GatherElements":
        ishape = [int(rng.integers(1, s + 1)) for s in shape]
        ishape[a] = int(rng.integers(1, 5))
        idx = rng.integers(-shape[a], shape[a], size=ishape).astype(index_dtype)
        return [("data", data), ("indices", idx)], {"axis": axis}
    if op_type == "GatherND":
        b = int(rng.integers(0, rank))
        q = int(rng.integers(1, rank - b + 1))
        lead = [int(s) for s in rng.integers(1, 3, size=int(rng.integers(0, 2)))]
        ishape = shape[:b] + lead + [q]
        idx = np.stack([rng.integers(-shape[b + j], shape[b + j], size=shape[:b] + lead) for j in range(q)], -1)
        return [("data", data), ("indices", idx.astype(np.int64))], {"batch_dims": b}
    reduction = str(rng.choice(["none", "add", "mul", "max", "min"]))
    if op_type == "ScatterElements":
        ishape = [int(rng.integers(1, s + 1)) for s in shape]  # partial writes: smaller off the axis
        if reduction == "none":  # unique targets along the axis: ONNX leaves duplicates open
            ishape[a] = int(rng.integers(1, shape[a] + 1))
            idx = np.argsort(rng.random(shape[a:a + 1] + [int(np.prod(ishape)) // ishape[a]]), axis=0)[:ishape[a]]
            idx = np.moveaxis(idx.reshape([ishape[a]] + ishape[:a] + ishape[a + 1:]), 0, a) - shape[a] * rng.integers(0, 2)
        else:
            ishape[a] = int(rng.integers(1, 5))
            idx = rng.integers(-shape[a], shape[a], size=ishape)
        updates = (rng.standard_normal(ishape) * 10).astype(dtype)
        return [("data", data), ("indices", idx.astype(index_dtype)), ("updates", updates)], \
            {"axis": axis, "reduction": reduction}
    q = int(rng.integers(1, rank + 1))
    if reduction == "none":
        flat = rng.permutation(int(np.prod(shape[:q])))[: int(rng.integers(1, np.prod(shape[:q]) + 1))]
        idx = np.stack(np.unravel_index(flat, shape[:q]), -1)
    else:
        count = int(rng.integers(1, 6))
        idx = np.stack([rng.integers(-shape[j], shape[j], size=count) for j in range(q)], -1)
    updates = (rng.standard_normal(list(idx.shape[:-1]) + shape[q:]) * 10).astype(dtype)
    return [("data", data), ("indices", idx.astype(np.int64)), ("updates", updates)], {"reduction": reduction}


@pytest.mark.parametrize("op_type", ["Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND"])
def test_random_nodes_rewritten_equal_onnxruntimes_own_op(op_type):
    rng = np.random.default_rng(1234 + len(op_type))
    checked = 0
    for _ in range(40):
        inputs, attrs = _random_case(rng, op_type)
        if op_type.startswith("Scatter") and attrs["reduction"] in ("mul", "add") and inputs[0][1].dtype == np.float16:
            continue  # ORT's own float16 add / mul rounds per step in float32 or float16: not bytes
        model = _model(op_type, inputs, attrs)
        feeds = dict(inputs)
        try:
            expected = _session(model).run(None, feeds)[0]
        except Exception:  # noqa: BLE001 - a case ORT itself has no kernel for (a dtype, a reduction)
            continue
        lowered = mgo.lower_model(model, report=True)
        assert [r.lowered for r in lowered.nodes] == [True], (attrs, [r.reason for r in lowered.nodes])
        what = f"{op_type} {attrs} {[(n, a.shape, a.dtype) for n, a in inputs]}"
        np.testing.assert_array_equal(_session(lowered.model).run(None, feeds)[0], expected, err_msg=what)
        if _library():
            np.testing.assert_array_equal(_session(lowered.model, _library()).run(None, feeds)[0], expected,
                                          err_msg=f"{what}, library")
        checked += 1
    assert checked >= 20


def test_an_out_of_range_index_still_fails_in_the_rewritten_model():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _model("Gather", [("data", data), ("indices", np.array([0, 4], np.int64))], {"axis": 1})
    with pytest.raises(Exception, match="out of"):
        _session(model).run(None, {"data": data, "indices": np.array([0, 4], np.int64)})
    lowered = mgo.lower_model(model)
    with pytest.raises(Exception, match="out of"):  # the runtime's own bounds check
        _session(lowered).run(None, {"data": data, "indices": np.array([0, 4], np.int64)})
    with pytest.raises(IndexError):
        ReferenceEvaluator(_without_functions(lowered), new_ops=mgo.reference_ops()).run(
            None, {"data": data, "indices": np.array([0, 4], np.int64)})
    if _library():  # with the library, ONNX Runtime runs the node's kernel, not its body: multigather's words
        session = _session(lowered, _library())
        with pytest.raises(Exception, match=r"GatherMultiaxis node.*= 4 is out of range for axis 1 of size 4"):
            session.run(None, {"data": data, "indices": np.array([0, 4], np.int64)})
    ok = _session(lowered).run(None, {"data": data, "indices": np.array([-1, 3], np.int64)})[0]
    np.testing.assert_array_equal(ok, data[:, [3, 3]])


def test_subgraphs_are_rewritten_too():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, [2])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    def branch(axis, name):
        out = helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node("Gather", ["x", "i"], [f"{name}_y"], axis=axis, name=name)],
                                 name, [], [out])

    node = helper.make_node("If", ["c"], ["y"], then_branch=branch(0, "rows"), else_branch=branch(1, "cols"))
    model = helper.make_model(helper.make_graph([node], "g", [x, i, c], [y]),
                              opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    lowered = mgo.lower_model(model, report=True)
    assert [r.lowered for r in lowered.nodes] == [True, True]
    assert {r.graph for r in lowered.nodes} == {"main/If.then_branch", "main/If.else_branch"}
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    for cond in (True, False):
        feeds = {"x": xs, "i": np.array([2, -1]), "c": np.array(cond)}
        np.testing.assert_array_equal(_session(lowered.model).run(None, feeds)[0],
                                      _session(model).run(None, feeds)[0])


def test_a_node_of_unknown_shape_is_left_and_the_report_says_why():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph([helper.make_node("Gather", ["x", "i"], ["y"], axis=1, name="g1")],
                                                "g", [x, i], [y]), opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    lowered = mgo.lower_model(model, report=True)
    (r,) = lowered.nodes
    assert not r.lowered and "'x'" in r.reason and "not known" in r.reason
    assert _ops(lowered.model.graph) == ["Gather"]
    assert "left as they were: 1 Gather" in lowered.summary()


def test_bad_models_get_a_message_naming_the_node():
    data = np.zeros((3, 4), np.float32)
    idx = np.array([0], np.int64)
    bad_attr = _model("Gather", [("data", data), ("indices", idx)], {"axis": 1})
    bad_attr.graph.node[0].attribute.append(helper.make_attribute("mode", 2))
    with pytest.raises(mgo.ModelError, match="the_Gather.*no attribute 'mode'"):
        mgo.lower_model(bad_attr)
    bad_axis = _model("Gather", [("data", data), ("indices", idx)], {"axis": 7})
    with pytest.raises(mgo.ModelError, match="the_Gather.*axis = 7"):
        mgo.lower_model(bad_axis)
    dangling = _model("Gather", [("data", data), ("indices", idx)], {"axis": 1})
    dangling.graph.node[0].input[1] = "nowhere"
    with pytest.raises(mgo.ModelError, match="the_Gather.*'nowhere' is produced by no node"):
        mgo.lower_model(dangling)


def test_the_spec_reference_equals_the_engine():
    rng = np.random.default_rng(7)
    for _ in range(200):
        r = int(rng.integers(1, 4))
        shape = [int(s) for s in rng.integers(1, 4, size=r)]
        x = rng.standard_normal(shape).astype(np.float32)
        k = int(rng.integers(0, r + 1))
        axes = [int(a) for a in rng.permutation(r)[:k]]
        c = max(k, 1)
        ishape = [int(rng.choice([1, s])) for s in shape]
        ishape[-1] *= c
        mode = str(rng.choice(["clamp", "wrap", "fill", "error"]))
        hi = min(shape[a] for a in axes) if axes else 1
        idx = rng.integers(-hi, hi, size=ishape) if mode == "error" else rng.integers(-5, 6, size=ishape)
        got = mgo.gather_multiaxis_reference(x, idx, axes, mode, True, 1.5)
        import multigather
        want = multigather.gather_multiaxis(x, idx, axes=axes, index_mode=mode, fill_value=1.5)
        np.testing.assert_array_equal(got, want)
        u = rng.standard_normal(got.shape).astype(np.float32)
        smode = {"fill": "drop"}.get(mode, mode)
        for reduction in ("none", "add", "max"):
            s_got = mgo.scatter_multiaxis_reference(x, idx, u, axes, reduction, smode, True, reduction != "max")
            s_want = multigather.scatter_multiaxis(x, idx, u, axes=axes, reduction=reduction, index_mode=smode,
                                                   include_input=reduction != "max")
            np.testing.assert_array_equal(s_got, s_want)


def _tool():
    tool = shutil.which("multigather")
    if tool is None:
        pytest.skip("the multigather command is not on PATH (pip install . installs it)")
    return tool


def test_the_command_lowers_and_explains_a_model(tmp_path):
    tool = _tool()
    case = BACKEND["test_gathernd_example_int32_batch_dim1"]
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(case.model, src)
    run = subprocess.run([tool, "lower", str(src), "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "1 before (1 GatherND); after: 1 on the one operator" in run.stdout
    lowered = onnx.load(out)
    inputs, expected = case.data_sets[0]
    np.testing.assert_array_equal(_session(lowered).run(None, dict(zip([i.name for i in lowered.graph.input], inputs)))[0],
                                  expected[0])
    text = subprocess.run([tool, "explain", str(src), "--svg", str(tmp_path / "svg")], capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "-> multigather.GatherMultiaxis(" in text.stdout and "onnx.GatherND" in text.stdout
    assert len(os.listdir(tmp_path / "svg")) == 1


def test_the_command_writes_nothing_for_a_bad_model(tmp_path):
    tool = _tool()
    data = np.zeros((3, 4), np.float32)
    bad = _model("Gather", [("data", data), ("indices", np.array([0], np.int64))], {"axis": 1})
    bad.graph.node[0].attribute.append(helper.make_attribute("mode", 2))
    src, out = tmp_path / "bad.onnx", tmp_path / "out.onnx"
    onnx.save(bad, src)
    run = subprocess.run([tool, "lower", str(src), "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 2 and "the_Gather" in run.stderr and "'mode'" in run.stderr
    assert not out.exists() and os.listdir(tmp_path) == ["bad.onnx"]
    missing = subprocess.run([tool, "lower", str(tmp_path / "no.onnx"), "-o", str(out)], capture_output=True, text=True)
    assert missing.returncode == 3 and "no such file" in missing.stderr
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    junk = subprocess.run([tool, "explain", str(tmp_path / "junk.onnx")], capture_output=True, text=True)
    assert junk.returncode == 3 and "not an ONNX model" in junk.stderr


def test_a_scatter_add_with_duplicates_is_np_add_at_at_every_thread_count():
    # ONNX Runtime 1.31.1's own CPU ScatterND (reduction add) with repeated indices, at 2 intra-op
    # threads, loses updates (measured: 18 distinct results in 20 runs, off by up to 3.4); the
    # rewritten model, with its body (one flat ScatterElements) or the library, gives numpy's
    # in-order float32 np.add.at bytes at 1 and 2 threads.
    rng = np.random.default_rng(0)
    data = np.zeros((1024, 256), np.float32)
    idx = rng.integers(0, 1024, (1024, 1)).astype(np.int64)
    upd = rng.standard_normal((1024, 256)).astype(np.float32)
    model = _model("ScatterND", [("data", data), ("indices", idx), ("updates", upd)], {"reduction": "add"})
    want = data.copy()
    np.add.at(want, idx[:, 0], upd)
    lowered = mgo.lower_model(model)
    for threads in (1, 2):
        for library in (None, _library()) if _library() else (None,):
            session = _session(lowered, library, threads)
            for _ in range(3):
                got = session.run(None, {"data": data, "indices": idx, "updates": upd})[0]
                np.testing.assert_array_equal(got, want, err_msg=f"{threads} threads, library {library}")
