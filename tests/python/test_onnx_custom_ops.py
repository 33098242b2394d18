"""libmultigather_onnxruntime in ONNX Runtime: one-node models of multigather.GatherMultiaxis /
ScatterMultiaxis run in onnxruntime and compared with (a) numpy written as the ONNX op each case
stands for (Gather, GatherElements, GatherND, ScatterElements with reductions) and (b)
multigather.gather_multiaxis / scatter_multiaxis over random shapes, dtypes, index modes and
broadcasting; errors carry multigather's message; the result does not depend on ORT's threads.
Skipped without onnxruntime / onnx, or when the package was built without the library."""

from __future__ import annotations

import os

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, TensorProto, helper  # noqa: E402

import multigather  # noqa: E402
from multigather._onnx_runtime import DOMAIN, OPSET_VERSION, custom_ops_library  # noqa: E402

try:
    LIBRARY = custom_ops_library()
except FileNotFoundError as error:  # built without ONNX Runtime's header
    # scripts/test-python.sh fetches the header and sets MULTIGATHER_EXPECT_ORT_LIBRARY=1, so that
    # a build without the library fails here instead of skipping
    if os.environ.get("MULTIGATHER_EXPECT_ORT_LIBRARY") == "1":
        raise
    pytest.skip(str(error), allow_module_level=True)

# What onnxruntime 1.31 loads (onnx 1.23 writes IR 14 by default).
IR_VERSION = min(onnx.IR_VERSION, 10)

STRING_ATTRS = {"index_mode", "reduction"}


def make_attr(name, value):
    if name == "axes" or name.endswith("_shape"):
        return helper.make_attribute(name, list(value), attr_type=AttributeProto.INTS)
    if isinstance(value, str):
        return helper.make_attribute(name, value, attr_type=AttributeProto.STRING)
    if isinstance(value, float):
        return helper.make_attribute(name, value, attr_type=AttributeProto.FLOAT)
    return helper.make_attribute(name, value)


def make_session(op, inputs, attrs, threads=None):
    names = list(inputs)
    node = helper.make_node(op, names, ["output"], domain=DOMAIN)
    node.attribute.extend(make_attr(k, v) for k, v in attrs.items())
    out_type = helper.np_dtype_to_tensor_dtype(inputs[names[0]].dtype)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), None)
            for n, a in inputs.items()
        ],
        [helper.make_tensor_value_info("output", out_type, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, OPSET_VERSION)],
        ir_version=IR_VERSION,
    )
    options = ort.SessionOptions()
    options.register_custom_ops_library(LIBRARY)
    options.log_severity_level = 4  # the expected failures below need no log lines
    if threads is not None:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def run(op, inputs, threads=None, **attrs):
    return make_session(op, inputs, attrs, threads).run(None, inputs)[0]


def gather(x, i, **attrs):
    return run("GatherMultiaxis", {"input": x, "indices": i}, **attrs)


def scatter(x, i, u, threads=None, **attrs):
    return run("ScatterMultiaxis", {"input": x, "indices": i, "updates": u}, threads, **attrs)


def same(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


# ---- (a) numpy as the ONNX op ------------------------------------------------------------------

RNG = np.random.default_rng(20261129)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_gather_is_onnx_gather(axis, index_dtype):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    n = x.shape[axis]
    idx = RNG.integers(-n, n, size=7).astype(index_dtype)
    shape = [1, 1, 1]
    shape[axis] = idx.size
    got = gather(x, idx.reshape(shape), axes=[axis])
    same(got, np.take(x, idx, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_is_onnx_gather_elements(axis):
    x = RNG.integers(-100, 100, size=(3, 4, 5)).astype(np.int64)
    shape = list(x.shape)
    shape[axis] = 6
    idx = RNG.integers(0, x.shape[axis], size=shape).astype(np.int64)
    same(gather(x, idx, axes=[axis]), np.take_along_axis(x, idx, axis=axis))


def test_gather_is_onnx_gather_nd():
    x = RNG.standard_normal((3, 4, 5))
    idx = np.stack([RNG.integers(0, 3, 6), RNG.integers(0, 4, 6)], axis=-1)  # [6, 2]
    got = gather(x, idx.reshape(6, 1, 2), axes=[0, 1])
    same(got.reshape(6, 5), x[idx[:, 0], idx[:, 1]])


def test_gather_no_axes_broadcasts_input():
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    same(gather(x, np.zeros((1, 4), np.int64), axes=[]), np.broadcast_to(x, (3, 4)))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_scatter_add_is_np_add_at(dtype):
    x = RNG.integers(0, 10, size=(5, 3)).astype(dtype)
    idx = RNG.integers(0, 5, size=(9, 1))  # duplicates
    upd = RNG.integers(0, 10, size=(9, 3)).astype(dtype)
    want = x.copy()
    np.add.at(want, idx[:, 0], upd)
    same(scatter(x, idx, upd, axes=[0], reduction="add"), want)


@pytest.mark.parametrize("reduction, ufunc", [("mul", np.multiply), ("min", np.minimum),
                                              ("max", np.maximum)])
def test_scatter_reductions_are_ufunc_at(reduction, ufunc):
    x = RNG.integers(-5, 5, size=(4, 6)).astype(np.int64)
    idx = RNG.integers(0, 6, size=(4, 10))
    upd = RNG.integers(-5, 5, size=(4, 10)).astype(np.int64)
    want = x.copy()
    ufunc.at(want, (np.arange(4)[:, None], idx), upd)
    same(scatter(x, idx, upd, axes=[1], reduction=reduction), want)


def test_scatter_none_unique_is_assignment():
    x = RNG.standard_normal((6, 2)).astype(np.float32)
    idx = RNG.permutation(6)[:4].reshape(4, 1)
    upd = RNG.standard_normal((4, 2)).astype(np.float32)
    want = x.copy()
    want[idx[:, 0]] = upd
    same(scatter(x, idx, upd, axes=[0]), want)


def test_scatter_include_input_0_starts_from_the_updates():
    x = np.full(5, 100.0)
    idx = np.array([[1], [3], [1], [1]])
    upd = np.array([[2.0], [7.0], [5.0], [3.0]])
    got = scatter(x.reshape(5, 1), idx, upd, axes=[0], reduction="max", include_input=0)
    same(got.reshape(5), [100.0, 5.0, 100.0, 7.0, 100.0])
    got = scatter(x.reshape(5, 1), idx, upd, axes=[0], reduction="add", include_input=0)
    same(got.reshape(5), [100.0, 10.0, 100.0, 7.0, 100.0])


# ---- (b) multigather's Python functions over random cases --------------------------------------

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.bool_, np.uint8, np.int8,
          np.uint16]
INDEX_DTYPES = [np.int64, np.int32, np.int16, np.uint8, np.uint32]


def random_values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50), size=shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def random_case(rng, scatter_case):
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    k = int(rng.integers(0, min(r, 3) + 1))
    axes = [int(a) for a in rng.permutation(r)[:k]]
    axes = [a - r if rng.random() < 0.3 else a for a in axes]
    normalized = [a % r for a in axes]
    logical = []
    for d in range(r):
        if d in normalized:
            logical.append(int(rng.integers(0, 5)) if rng.random() < 0.9 else 0)
        elif shape[d] == 1:
            logical.append(int(rng.integers(1, 4)))  # input broadcast along d
        else:
            logical.append(shape[d] if rng.random() < 0.7 else 1)  # indices broadcast
    if scatter_case:  # the scatter writes input's shape: no input broadcasting
        logical = [shape[d] if (d not in normalized and shape[d] == 1) else v
                   for d, v in enumerate(logical)]
    c = max(k, 1)
    ind_shape = logical[:-1] + [logical[-1] * c]
    index_dtype = INDEX_DTYPES[int(rng.integers(len(INDEX_DTYPES)))]
    modes = ["error", "clamp", "wrap", "drop"] if scatter_case else ["error", "clamp", "wrap",
                                                                       "fill"]
    mode = modes[int(rng.integers(len(modes)))]
    negative = bool(rng.integers(2))
    signed = np.issubdtype(index_dtype, np.signedinteger)
    # coordinate j of every tuple addresses axes[j]: values per axis size
    n_per_coordinate = [shape[a] for a in normalized] or [1]
    sizes = np.array(n_per_coordinate * (int(np.prod(ind_shape)) // c if c else 0))
    if mode == "error":
        lo = -sizes if (signed and negative) else np.zeros_like(sizes)
        values = rng.integers(lo, sizes) if sizes.size else np.zeros(0)
    else:
        lo = -2 * sizes if signed else np.zeros_like(sizes)
        values = rng.integers(lo, 2 * sizes + 1) if sizes.size else np.zeros(0)
    if k == 0:
        values = np.zeros(int(np.prod(ind_shape)))
    indices = values.astype(index_dtype).reshape(ind_shape)
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    x = random_values(rng, shape, dtype)
    return x, indices, axes, mode, negative, logical


@pytest.mark.parametrize("seed", range(150))
def test_gather_matches_multigather(seed):
    rng = np.random.default_rng(seed)
    x, indices, axes, mode, negative, _ = random_case(rng, scatter_case=False)
    fill = float(rng.integers(-3, 4)) if x.dtype != np.bool_ else 1.0
    if np.issubdtype(x.dtype, np.unsignedinteger):
        fill = abs(fill)
    want = multigather.gather_multiaxis(x, indices, axes, index_mode=mode,
                                        negative_indices=negative,
                                        fill_value=bool(fill) if x.dtype == np.bool_ else fill)
    got = gather(x, indices, axes=axes, index_mode=mode, negative_indices=int(negative),
                 fill_value=fill)
    same(got, want)


@pytest.mark.parametrize("seed", range(150))
def test_scatter_matches_multigather(seed):
    rng = np.random.default_rng(1000 + seed)
    x, indices, axes, mode, negative, logical = random_case(rng, scatter_case=True)
    g = multigather.gather_multiaxis(x, indices, axes, index_mode="clamp").shape
    upd_shape = [1 if rng.random() < 0.25 else n for n in g]
    updates = random_values(rng, upd_shape, x.dtype)
    reduction = ["none", "add", "mul", "min", "max"][int(rng.integers(5))]
    include = bool(rng.integers(2))
    want = multigather.scatter_multiaxis(x, indices, updates, axes, reduction=reduction,
                                         index_mode=mode, negative_indices=negative,
                                         include_input=include)
    got = scatter(x, indices, updates, axes=axes, reduction=reduction, index_mode=mode,
                  negative_indices=int(negative), include_input=int(include))
    same(got, want)


def test_fill_value_is_cast_to_t():
    x = np.arange(4, dtype=np.int16)
    same(gather(x, np.array([1, 9, -9], np.int64), axes=[0], index_mode="fill",
                fill_value=-7.0), np.array([1, -7, -7], np.int16))


# ---- errors ------------------------------------------------------------------------------------

def error_text(call):
    with pytest.raises(Exception) as info:
        call()
    return str(info.value)


def test_index_out_of_range_carries_multigathers_message():
    x = np.zeros((3, 4), np.float32)
    idx = np.array([[0], [7]], np.int64)
    with pytest.raises(IndexError) as expected:
        multigather.gather_multiaxis(x, idx, [0])
    text = error_text(lambda: gather(x, idx, axes=[0]))
    assert str(expected.value) in text
    assert "= 7" in text and "axis 0" in text
    upd = np.ones((2, 4), np.float32)
    with pytest.raises(IndexError) as expected:
        multigather.scatter_multiaxis(x, idx, upd, [0])
    assert str(expected.value) in error_text(lambda: scatter(x, idx, upd, axes=[0]))


@pytest.mark.parametrize("op, attrs, needle", [
    ("GatherMultiaxis", {"axes": [0], "index_mode": "bogus"}, "index_mode = 'bogus'"),
    ("GatherMultiaxis", {"axes": [0], "index_mode": "drop"}, "index_mode = 'drop'"),
    ("ScatterMultiaxis", {"axes": [0], "index_mode": "fill"}, "index_mode = 'fill'"),
    ("ScatterMultiaxis", {"axes": [0], "reduction": "mean"}, "reduction = 'mean'"),
    ("GatherMultiaxis", {}, "needs the attribute axes"),
    ("GatherMultiaxis", {"axes": [0], "negative_indices": 2}, "negative_indices = 2"),
    ("GatherMultiaxis", {"axes": [0], "index_mode": 3}, "index_mode must be of type STRING"),
    ("ScatterMultiaxis", {"axes": [0], "include_input": 1.0}, "include_input must be of type INT"),
])
def test_bad_attribute_fails_the_session(op, attrs, needle):
    inputs = {"input": np.zeros((3, 2), np.float32), "indices": np.zeros((1, 1), np.int64)}
    if op == "ScatterMultiaxis":
        inputs["updates"] = np.zeros((1, 2), np.float32)
    text = error_text(lambda: make_session(op, inputs, attrs))
    assert op in text and needle in text


def test_wrong_rank_and_shapes_carry_multigathers_message():
    x = np.zeros((3, 4), np.float32)
    idx = np.zeros(2, np.int64)
    with pytest.raises(ValueError) as expected:
        multigather.gather_multiaxis(x, idx, [0])
    assert str(expected.value) in error_text(lambda: gather(x, idx, axes=[0]))
    with pytest.raises(ValueError) as expected:
        multigather.gather_multiaxis(x, idx.reshape(1, 2), [5])
    assert str(expected.value) in error_text(lambda: gather(x, idx.reshape(1, 2), axes=[5]))
    upd = np.zeros((2, 5), np.float32)
    with pytest.raises(ValueError) as expected:
        multigather.scatter_multiaxis(x, idx.reshape(2, 1), upd, [0])
    assert str(expected.value) in error_text(lambda: scatter(x, idx.reshape(2, 1), upd, axes=[0]))


def test_updates_of_another_dtype_and_unrepresentable_fill():
    x = np.zeros((3, 2), np.float32)
    idx = np.zeros((1, 1), np.int64)
    upd = np.zeros((1, 2), np.float64)
    with pytest.raises(TypeError) as expected:
        multigather.scatter_multiaxis(x, idx, upd, [0])
    assert str(expected.value) in error_text(lambda: scatter(x, idx, upd, axes=[0]))
    xi = np.zeros(3, np.int32)
    text = error_text(lambda: gather(xi, np.array([5], np.int64), axes=[0], index_mode="fill",
                                     fill_value=1.5))
    assert "fill_value" in text


def test_float_indices_find_no_kernel():
    x = np.zeros(3, np.float32)
    text = error_text(lambda: gather(x, np.zeros(1, np.float32), axes=[0]))
    assert "GatherMultiaxis" in text


# ---- threads and the library itself ------------------------------------------------------------

def test_thread_count_does_not_change_a_float_scatter_add():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    idx = rng.integers(0, 64, size=(200_000, 1))  # many duplicates per row
    upd = rng.standard_normal((200_000, 256)).astype(np.float32)
    one = scatter(x, idx, upd, threads=1, axes=[0], reduction="add")
    two = scatter(x, idx, upd, threads=2, axes=[0], reduction="add")
    assert one.tobytes() == two.tobytes()
    same(one, multigather.scatter_multiaxis(x, idx, upd, [0], reduction="add"))


def test_library_does_not_link_onnxruntime():
    with open(LIBRARY, "rb") as f:
        assert b"libonnxruntime" not in f.read()


def test_shape_attributes_read_and_write_reshaped_operands():
    # onnx.Gather(x [6, 4], i [2, 3], axis=0) as the rewrite writes it: the core reads x as
    # [6, 1, 1, 4] and i as [1, 2, 3, 1] and writes the framework's [2, 3, 4] directly.
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    i = np.array([[5, 0, -1], [2, 2, 3]], np.int64)
    got = gather(x, i, axes=[0], input_shape=[6, 1, 1, 4], indices_shape=[1, 2, 3, 1], output_shape=[2, 3, 4])
    same(got, np.take(x, i, axis=0))
    u = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    want = x.copy()
    np.add.at(want, np.where(i < 0, i + 6, i), u)
    got = scatter(x, i, u, axes=[0], reduction="add", input_shape=[6, 1, 1, 4], indices_shape=[1, 2, 3, 1],
                  updates_shape=[1, 2, 3, 4], output_shape=[6, 4])
    same(got, want)
    text = error_text(lambda: gather(x, i, axes=[0], input_shape=[5, 1, 1, 4]))
    assert "input_shape [5,1,1,4] has 20 elements, but input input of shape [6,4] has 24" in text
    text = error_text(lambda: gather(x, i, axes=[0], input_shape=[6, 1, 1, 4], indices_shape=[1, 2, 3, 1],
                                     output_shape=[7]))
    assert "output_shape [7] has 7 elements, but the output of shape [1,2,3,4] has 24" in text
