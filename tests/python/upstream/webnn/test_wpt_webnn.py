"""WebNN's own web-platform-tests for gather, gatherElements, gatherND, scatterElements and
scatterND, run against multigather.webnn.

Upstream: web-platform-tests/wpt, webnn/conformance_tests/<op>.https.any.js and
webnn/validation_tests/<op>.https.any.js, read from the copies vendored by Chromium
(miaobin/chromium) and Firefox (marco-c/gecko-dev-comments-removed); repository, path, commit,
length and SHA-256 of every file are in wpt_webnn_cases.json ("files"), which
convert_wpt.py made from them mechanically (see its docstring). What changed against upstream:
the JavaScript harness (MLGraphBuilder, MLContext.dispatch, readTensor) is replaced by direct
calls of multigather.webnn.gather / gather_elements / gather_nd / scatter_elements /
scatter_nd on numpy arrays. Aspects of WebNN's graph builder with no counterpart here, skipped
as aspects (the case itself still runs):

* descriptors with dynamic dimensions ({name, maxSize}): the case runs with the concrete
  shapes its `shape` fields give (the arrays a compute() call would bind);
* `constant: true` operands (MLGraphBuilder.constant instead of input): same arrays either way;
* `label` in the options of a throwing validation call, whose message WPT checks for the
  label: multigather has no labels (the error type is checked, the label is not).

The multi-builder validation cases (an operand from another MLGraphBuilder) cannot run: they
are listed and skipped with that reason.

Conformance: inputs -> the expected output, compared as the test's tolerance says (every file
here uses getZeroULPTolerance: bit for bit), after the harness's typed-array conversion
(Float32Array / Float16Array / Int32Array / ... of the literals: numpy's astype rounding).
Validation: where WPT expects a throw, the call must raise TypeError (assert_throws_js /
assert_throws_with_label check TypeError); where it expects an output, the call must succeed
with that dataType and shape. Operand values in validation cases are zeros (WPT gives only
descriptors), which are in range for every index rule.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import multigather
import multigather.webnn as webnn

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "wpt_webnn_cases.json"), encoding="utf-8") as _f:
    CASES = json.load(_f)

CONFORMANCE = CASES["conformance"]
VALIDATION = CASES["validation"]
MULTI_BUILDER = CASES["multi_builder"]

FUNCTIONS = {"gather": webnn.gather, "gatherElements": webnn.gather_elements,
             "gatherND": webnn.gather_nd, "scatterElements": webnn.scatter_elements,
             "scatterND": webnn.scatter_nd}
# MLGatherOptions / MLScatterOptions member -> the Python keyword.
OPTIONS = {"axis": "axis"}


def array(operand: dict, data=None) -> np.ndarray:
    """An operand as the harness's typed array makes it: the literals converted to dataType
    (float16: numpy's float16, as Float16Array rounds), in the concrete shape."""
    values = operand["data"] if data is None else data
    return np.array(values, dtype=np.float64 if operand["dataType"].startswith("float") else None) \
        .astype(operand["dataType"]).reshape(operand["shape"])


def call(case: dict, operands: dict):
    kwargs = {OPTIONS[k]: v for k, v in case["options"].items()}
    return FUNCTIONS[case["op"]](*operands.values(), **kwargs)


def test_counts():
    """What convert_wpt.py found in the ten files (a changed file changes these)."""
    by_op = {op: sum(c["op"] == op for c in CONFORMANCE) for op in FUNCTIONS}
    assert by_op == {"gather": 46, "gatherElements": 13, "gatherND": 18, "scatterElements": 10,
                     "scatterND": 7}
    assert len(VALIDATION) == 37 and sum("error" in c["expect"] for c in VALIDATION) == 26
    assert len(MULTI_BUILDER) == 12
    assert {c["tolerance"] for c in CONFORMANCE} == {"getZeroULPTolerance"}


@pytest.mark.parametrize("case", CONFORMANCE, ids=[c["name"] for c in CONFORMANCE])
def test_conformance(case):
    operands = {role: array(spec) for role, spec in case["operands"].items()}
    expected = array(case["expected"])
    got = np.asarray(call(case, operands))
    assert got.dtype == expected.dtype, f"dataType {got.dtype}, WPT expects {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape}, WPT expects {expected.shape}"
    assert case["tolerance"] == "getZeroULPTolerance"
    # 0 ULP: the same bits (WPT compares the bit patterns of the typed arrays).
    assert got.tobytes() == expected.tobytes(), f"{got.ravel().tolist()} != {expected.ravel().tolist()}"
    # The operands are not modified (WebNN operands are immutable; a scatter writes a new tensor).
    for role, spec in case["operands"].items():
        assert operands[role].tobytes() == array(spec).tobytes(), f"{role} was modified"


@pytest.mark.parametrize("case", VALIDATION, ids=[c["name"] for c in VALIDATION])
def test_validation(case):
    operands = {role: np.zeros(spec["shape"], dtype=spec["dataType"])
                for role, spec in case["operands"].items()}
    if "error" in case["expect"]:
        assert case["expect"]["error"] == "TypeError"
        with pytest.raises(TypeError):
            call(case, operands)
        return
    got = np.asarray(call(case, operands))
    want = case["expect"]["output"]
    assert str(got.dtype) == want["dataType"] and list(got.shape) == want["shape"]


@pytest.mark.parametrize("case", MULTI_BUILDER, ids=[c["name"] for c in MULTI_BUILDER])
def test_multi_builder(case):
    pytest.skip(f"{case['name']}: {case['reason']}")


def test_validation_errors_are_also_value_errors():
    """multigather.ArgumentTypeError: the TypeError WebNN's builders throw, still caught by
    `except ValueError` as the other families' argument errors are; dtype errors are plain
    TypeError (every family)."""
    shape_errors = [c for c in VALIDATION if "error" in c["expect"]
                    and all(s["dataType"] in ("float32", "float16", "int32", "int64", "uint32")
                            for s in c["operands"].values())
                    and c["operands"]["indices"]["dataType"] in ("int32", "uint32", "int64")
                    and c["operands"].get("updates", c["operands"]["input"])["dataType"]
                    == c["operands"]["input"]["dataType"]]
    assert len(shape_errors) == 20
    for case in shape_errors:
        operands = {role: np.zeros(spec["shape"], dtype=spec["dataType"])
                    for role, spec in case["operands"].items()}
        with pytest.raises(multigather.ArgumentTypeError) as info:
            call(case, operands)
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
        assert str(info.value).startswith(f"webnn.{case['op']}: ")


# ---- The in-tree vectors of tests/data/conformance, transcribed independently -----------------

DATA = os.path.join(HERE, "..", "..", "..", "data", "conformance")


def _load(name: str) -> list:
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def test_agrees_with_tests_data_conformance():
    """tests/data/conformance/webnn_wpt*.json were transcribed by hand from the same files (no
    script); the mechanical conversion must give the same cases, names and values, so that either
    copy would show a slip in the other."""
    theirs = {c["name"]: c for c in _load("webnn_wpt.json") + _load("webnn_wpt_scatter.json")}
    ours = {c["name"]: c for c in CONFORMANCE}
    assert sorted(theirs) == sorted(ours)
    for name, c in ours.items():
        t = theirs[name]
        assert t["op"] == "webnn." + c["op"], name
        assert t["attrs"].get("axis", 0) == c["options"].get("axis", 0), name
        for role, key in (("input", "input"), ("indices", "indices"), ("updates", "updates")):
            if role in c["operands"]:
                spec = c["operands"][role]
                assert t[key]["dtype"] == spec["dataType"] and t[key]["shape"] == spec["shape"], (name, role)
                assert array(spec).tobytes() == array({"dataType": t[key]["dtype"], "shape": t[key]["shape"],
                                                       "data": t[key]["data"]}).tobytes(), (name, role)
        e = c["expected"]
        assert t["expected"]["shape"] == e["shape"] and t["expected"]["dtype"] == e["dataType"], name
        assert array(e).tobytes() == array({"dataType": t["expected"]["dtype"], "shape": t["expected"]["shape"],
                                            "data": t["expected"]["data"]}).tobytes(), name
    theirs_v = {c["name"]: c for c in _load("webnn_wpt_validation.json") + _load("webnn_wpt_scatter_validation.json")}
    ours_v = {c["name"]: c for c in VALIDATION}
    assert sorted(theirs_v) == sorted(ours_v)
    for name, c in ours_v.items():
        t = theirs_v[name]
        assert t["expect_error"] == ("error" in c["expect"]), name
        for role, spec in c["operands"].items():
            assert (t[role]["dtype"], t[role]["shape"]) == (spec["dataType"], spec["shape"]), (name, role)
        if not t["expect_error"]:
            assert t["expected"]["shape"] == c["expect"]["output"]["shape"], name
