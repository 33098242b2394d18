"""The third-party conformance vectors of tests/data/conformance through the Python surface:
77 WebNN web-platform-tests cases (gather, gatherElements, gatherND, with float16 data and
int32/uint32/int64 indices), 20 WebNN validation cases (shapes and dtypes only; 13 must be
rejected) and the 10 ONNX node tests as transcribed from the .py case files (the concrete .pb
data is in test_onnx_runtime.py). Every expected value must come out bit for bit."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import multigather

CONFORMANCE = os.path.join(os.path.dirname(__file__), "..", "data", "conformance")


def load(name: str) -> list:
    """A vector file of the in-tree copy; a missing file fails collection (never a silent skip)."""
    with open(os.path.join(CONFORMANCE, name)) as f:
        return json.load(f)


def array(tensor: dict) -> np.ndarray:
    return np.array(tensor["data"], dtype=tensor["dtype"]).reshape(tensor["shape"])


WPT = load("webnn_wpt.json")
VALIDATION = load("webnn_wpt_validation.json")
WPT_SCATTER = load("webnn_wpt_scatter.json")
SCATTER_VALIDATION = load("webnn_wpt_scatter_validation.json")
ONNX_NODE = [c for c in load("onnx_node.json") if c["input"]["data"] != "random"]


@pytest.mark.parametrize("case", WPT, ids=[c["name"] for c in WPT])
def test_webnn_wpt_vectors(case):
    got = multigather.run(case["op"], array(case["input"]), array(case["indices"]), **case["attrs"])
    expected = array(case["expected"])
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("case", VALIDATION, ids=[c["name"] for c in VALIDATION])
def test_webnn_wpt_validation(case):
    kwargs = dict(input_dtype=case["input"]["dtype"], indices_dtype=case["indices"]["dtype"],
                  **case["attrs"])
    if case["expect_error"]:
        assert case["error"] == "TypeError"
        # WebNN's builders throw TypeError for every invalid argument (shapes too).
        with pytest.raises(TypeError):
            multigather.output_shape(case["op"], case["input"]["shape"],
                                     case["indices"]["shape"], **kwargs)
        return
    shape = multigather.output_shape(case["op"], case["input"]["shape"],
                                     case["indices"]["shape"], **kwargs)
    assert list(shape) == case["expected"]["shape"]


@pytest.mark.parametrize("case", ONNX_NODE, ids=[c["name"] for c in ONNX_NODE])
def test_onnx_node_vectors(case):
    got = multigather.run(case["op"], array(case["input"]), array(case["indices"]), **case["attrs"])
    expected = array(case["expected"])
    assert got.shape == expected.shape
    assert got.tobytes() == expected.astype(got.dtype).tobytes()


@pytest.mark.parametrize("case", WPT_SCATTER, ids=[c["name"] for c in WPT_SCATTER])
def test_webnn_wpt_scatter_vectors(case):
    """17 WPT scatterElements / scatterND cases bit for bit (float32 literals rounded to float32,
    as the harness's Float32Array does), through the registry and the webnn wrappers."""
    assert len(WPT_SCATTER) == 17
    x, i, u = array(case["input"]), array(case["indices"]), array(case["updates"])
    expected = array(case["expected"])
    got = multigather.run(case["op"], x, i, updates=u, **case["attrs"])
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()
    if case["op"] == "webnn.scatterElements":
        wrapped = multigather.webnn.scatter_elements(x, i, u, **case["attrs"])
    else:
        wrapped = multigather.webnn.scatter_nd(x, i, u)
    assert wrapped.tobytes() == expected.tobytes()


@pytest.mark.parametrize("case", SCATTER_VALIDATION, ids=[c["name"] for c in SCATTER_VALIDATION])
def test_webnn_wpt_scatter_validation(case):
    """17 shape / dtype cases (13 must throw), run on zero-filled operands of the given shapes and
    dtypes (zero indices are in range, so only the shape and dtype rules decide)."""
    assert len(SCATTER_VALIDATION) == 17
    x, i, u = (np.zeros(case[k]["shape"], dtype=case[k]["dtype"]) for k in ("input", "indices", "updates"))
    if case["expect_error"]:
        assert case["error"] == "TypeError"
        with pytest.raises(TypeError):
            multigather.run(case["op"], x, i, updates=u, **case["attrs"])
        return
    got = multigather.run(case["op"], x, i, updates=u, **case["attrs"])
    assert list(got.shape) == case["expected"]["shape"] and got.dtype == np.dtype(case["expected"]["dtype"])
