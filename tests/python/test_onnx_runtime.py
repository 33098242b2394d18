"""multigather.onnx against ONNX Runtime (CPU execution provider) on random cases, and against the
ONNX backend node test data.

Each random case builds a one-node opset-13 model with onnx.helper (Gather, GatherElements or
GatherND), runs it in an onnxruntime.InferenceSession, and compares the output with
multigather's bit for bit; an out-of-range index must fail in both (ONNX Runtime: a run-time
error; multigather: IndexError). The node test data comes from the installed onnx package when it
ships onnx/backend/test/data/node (onnx <= 1.22), else from tests/data/conformance/onnx_node_pb.json
(the same .pb files, decoded).
"""

from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import multigather
from conftest import require
from framework_cases import (framework_settings, nd_indices, nonempty_shape, random_data,
                             random_indices, seeds, shape_dims)

onnx = require("onnx")
ort = require("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ort.set_default_logger_severity(4)  # expected run-time errors are not log noise

ORT_DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8,
                                    np.int32, np.int64, np.bool_)]
CONFORMANCE = os.path.join(os.path.dirname(__file__), "..", "data", "conformance")


def run_onnx_runtime(op: str, data: np.ndarray, indices: np.ndarray, **attrs) -> np.ndarray:
    """One-node model ``op(data, indices, **attrs)``, run by ONNX Runtime on the CPU."""
    elem = helper.np_dtype_to_tensor_dtype
    node = helper.make_node(op, ["data", "indices"], ["output"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", elem(data.dtype), data.shape),
         helper.make_tensor_value_info("indices", elem(indices.dtype), indices.shape)],
        [helper.make_tensor_value_info("output", elem(data.dtype), None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"data": data, "indices": indices})[0]


def compare(op: str, fn, data, indices, **attrs):
    try:
        expected = run_onnx_runtime(op, data, indices, **attrs)
    except Exception as error:  # ORT's InvalidArgument / RuntimeException
        text = str(error).lower()
        if not any(word in text for word in ("out of bounds", "out of range", "invalid")):
            raise
        event(f"{op}: both raise")
        with pytest.raises(IndexError):
            fn(data, indices, **attrs)
        return "error"
    event(f"{op}: both compute")
    got = fn(data, indices, **attrs)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()
    return "ok"


@framework_settings
@given(nonempty_shape, shape_dims, st.sampled_from(ORT_DTYPES), st.data(),
       st.sampled_from([np.int32, np.int64]), st.booleans(), seeds)
def test_gather_matches_onnx_runtime(x_shape, i_shape, dtype, data, index_dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, dtype)
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    indices = random_indices(rng, i_shape, x_shape[axis], index_dtype, out_of_range=oob)
    compare("Gather", multigather.onnx.gather, x, indices, axis=axis)


@framework_settings
@given(nonempty_shape, st.data(), st.sampled_from(ORT_DTYPES),
       st.sampled_from([np.int32, np.int64]), st.booleans(), seeds)
def test_gather_elements_matches_onnx_runtime(x_shape, data, dtype, index_dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, dtype)
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    # ONNX Runtime's rule: indices dims other than axis may be smaller (leading part read).
    i_shape = tuple(data.draw(st.integers(1, 4)) if d == axis % x.ndim
                    else data.draw(st.integers(1, n)) for d, n in enumerate(x_shape))
    indices = random_indices(rng, i_shape, x_shape[axis], index_dtype, out_of_range=oob)
    compare("GatherElements", multigather.onnx.gather_elements, x, indices, axis=axis)


@framework_settings
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple), st.data(),
       st.sampled_from(ORT_DTYPES), st.booleans(), seeds)
def test_gather_nd_matches_onnx_runtime(x_shape, data, dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, dtype)
    b, indices = nd_indices(data, rng, x_shape, np.int64, out_of_range=oob)  # int64 only
    compare("GatherND", multigather.onnx.gather_nd, x, indices, batch_dims=b)


def node_test_cases():
    """(name, op, attrs, input, indices, expected) of the ONNX backend node tests."""
    node_dir = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    cases = []
    dirs = sorted(glob.glob(os.path.join(node_dir, "test_gather*")))
    if dirs:
        for d in dirs:
            model = onnx.load(os.path.join(d, "model.onnx"))
            node = model.graph.node[0]
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            tensors = []
            for name in ("input_0", "input_1", "output_0"):
                t = TensorProto()
                with open(os.path.join(d, "test_data_set_0", name + ".pb"), "rb") as f:
                    t.ParseFromString(f.read())
                tensors.append(numpy_helper.to_array(t))
            cases.append((os.path.basename(d), "onnx." + node.op_type, attrs, *tensors))
        return cases
    with open(os.path.join(CONFORMANCE, "onnx_node_pb.json")) as f:
        vectors = json.load(f)
    for case in vectors:
        def array(t):
            return np.array(t["data"], dtype=t["dtype"]).reshape(t["shape"])
        cases.append((case["name"], case["op"], case["attrs"], array(case["input"]),
                      array(case["indices"]), array(case["expected"])))
    return cases


NODE_CASES = node_test_cases()


@pytest.mark.parametrize("name, op, attrs, data, indices, expected", NODE_CASES,
                         ids=[c[0] for c in NODE_CASES])
def test_onnx_backend_node_tests(name, op, attrs, data, indices, expected):
    got = multigather.run(op, data, indices, **attrs)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()
    ort_got = run_onnx_runtime(op.split(".")[1], data, indices, **attrs)
    assert ort_got.tobytes() == expected.tobytes()  # the data itself is what ORT computes
