"""The framework scatters against the real frameworks: onnx.ScatterElements / ScatterND against
ONNX Runtime one-node opset-18 models (every reduction; reduction "none" on unique indices, where
ONNX defines the result), torch.scatter / scatter_add / scatter_reduce / index_add against torch,
numpy.put_along_axis / add_at against numpy, on seeded random cases (exact comparisons: integer
data, or float data whose sums are exact), plus the ONNX node-test vectors of
tests/data/conformance/onnx_node_scatter_pb.json bit for bit, and the errors.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import multigather
from conftest import require

CONFORMANCE = os.path.join(os.path.dirname(__file__), "..", "data", "conformance")
SEEDS = range(40)


def small_ints(rng, shape, dtype=np.float32):
    """Integers in [-4, 4] as `dtype`: sums and products stay exact in float32."""
    return rng.randint(-4, 5, size=shape).astype(dtype)


def rand_shape(rng, rank, lo=1, hi=4):
    return tuple(int(s) for s in rng.randint(lo, hi + 1, size=rank))


# ---- ONNX Runtime --------------------------------------------------------------------------------

def run_ort(op, data, indices, updates, **attrs):
    onnx = require("onnx")
    ort = require("onnxruntime")
    from onnx import helper
    ort.set_default_logger_severity(4)
    elem = helper.np_dtype_to_tensor_dtype
    node = helper.make_node(op, ["data", "indices", "updates"], ["output"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", elem(data.dtype), data.shape),
         helper.make_tensor_value_info("indices", elem(indices.dtype), indices.shape),
         helper.make_tensor_value_info("updates", elem(updates.dtype), updates.shape)],
        [helper.make_tensor_value_info("output", elem(data.dtype), None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"data": data, "indices": indices, "updates": updates})[0]


REDUCTIONS = ["none", "add", "mul", "max", "min"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_elements_vs_onnxruntime(seed, reduction):
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    axis = int(rng.randint(-rank, rank))
    a = axis % rank
    ishape = list(shape)
    if reduction == "none":  # unique targets along the axis: a permutation prefix per line
        ishape[a] = int(rng.randint(1, shape[a] + 1))
        perm = np.argsort(rng.rand(*shape), axis=a)
        indices = np.take(perm, np.arange(ishape[a]), axis=a)
    else:
        ishape[a] = int(rng.randint(1, 6))
        indices = rng.randint(0, shape[a], size=ishape)
    indices = indices - shape[a] * rng.randint(0, 2, size=indices.shape)  # some negatives
    indices = indices.astype(rng.choice([np.int64, np.int32]))
    data = small_ints(rng, shape)
    updates = small_ints(rng, indices.shape)
    want = run_ort("ScatterElements", data, indices, updates, axis=axis, reduction=reduction)
    got = multigather.onnx.scatter_elements(data, indices, updates, axis=axis, reduction=reduction)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_scatter_nd_vs_onnxruntime(seed, reduction):
    rng = np.random.RandomState(seed)
    r = rng.randint(1, 4)
    shape = rand_shape(rng, r)
    k = int(rng.randint(1, r + 1))
    jshape = rand_shape(rng, int(rng.randint(0, 3)), 1, 3)
    n = int(np.prod(jshape))
    cells = int(np.prod(shape[:k]))
    if reduction == "none":  # unique targets
        if n > cells:
            jshape, n = (cells,), cells
        flat = rng.permutation(cells)[:n]
    else:
        flat = rng.randint(0, cells, size=n)
    coords = np.stack(np.unravel_index(flat, shape[:k]), axis=-1).reshape(jshape + (k,))
    coords = coords - np.array(shape[:k]) * rng.randint(0, 2, size=coords.shape)  # negatives
    indices = coords.astype(np.int64)
    data = small_ints(rng, shape)
    updates = small_ints(rng, jshape + shape[k:])
    want = run_ort("ScatterND", data, indices, updates, reduction=reduction)
    got = multigather.onnx.scatter_nd(data, indices, updates, reduction=reduction)
    np.testing.assert_array_equal(got, want)


def test_onnx_scatter_errors():
    data = np.zeros((2, 3), np.float32)
    with pytest.raises(IndexError, match=r"onnx.ScatterElements: indices\[0,0\] = 3 is out of range for axis 1"):
        multigather.onnx.scatter_elements(data, np.array([[3], [0]]), np.ones((2, 1), np.float32), axis=1)
    with pytest.raises(ValueError, match=r"updates shape \[2,2\] must equal indices shape \[2,1\]"):
        multigather.onnx.scatter_elements(data, np.array([[1], [0]]), np.ones((2, 2), np.float32), axis=1)
    with pytest.raises(TypeError, match="updates dtype float64 must equal data dtype float32"):
        multigather.onnx.scatter_elements(data, np.array([[1], [0]]), np.ones((2, 1)), axis=1)
    with pytest.raises(ValueError, match=r"must equal indices.shape\[:-1\] \+\+ data.shape\[k:\] = \[1,3\]"):
        multigather.onnx.scatter_nd(data, np.array([[1]]), np.ones((1, 2), np.float32))
    with pytest.raises(TypeError, match="indices dtype int32 is not supported"):
        multigather.onnx.scatter_nd(data, np.array([[1]], np.int32), np.ones((1, 3), np.float32))


SCATTER_CASES = [c for c in json.load(open(os.path.join(CONFORMANCE, "onnx_node_scatter_pb.json")))
                 if c["op"] != "onnx.Scatter"]  # deprecated opset-10 Scatter is not implemented


def array(t):
    return np.array(t["data"], dtype=t["dtype"]).reshape(t["shape"])


@pytest.mark.parametrize("case", SCATTER_CASES, ids=[c["name"] for c in SCATTER_CASES])
def test_onnx_node_scatter_vectors(case):
    got = multigather.run(case["op"], array(case["input"]), array(case["indices"]),
                          updates=array(case["updates"]), **case["attrs"])
    want = array(case["expected"])
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


# ---- torch ---------------------------------------------------------------------------------------

def element_case(rng, torch, same_src=False):
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    dim = int(rng.randint(-rank, rank))
    d = dim % rank
    ishape = list(shape)
    ishape[d] = int(rng.randint(1, 6))
    index = torch.from_numpy(rng.randint(0, shape[d], size=ishape).astype(np.int64))
    sshape = [s + (0 if same_src else int(rng.randint(0, 2))) for s in ishape]
    src = torch.from_numpy(small_ints(rng, sshape))
    x = torch.from_numpy(small_ints(rng, shape))
    return x, dim, index, src


MEAN_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
               "complex64"]


@pytest.mark.parametrize("seed", SEEDS)
def test_torch_scatter_reduce_mean(seed):
    """reduce="mean": sum / count (+1 with include_self), floor division for integers, as
    torch.scatter_reduce computes it; every dtype torch accepts."""
    torch = require("torch")
    rng = np.random.RandomState(seed)
    x, dim, index, src = element_case(rng, torch)
    for name in MEAN_DTYPES:
        dtype = getattr(torch, name)
        # uint8: non-negative values (torch's uint8 floor division of a wrapped sum is the same
        # rule, but small values keep the case readable)
        xs, ss = (x.abs(), src.abs()) if name == "uint8" else (x, src)
        xs, ss = xs.to(dtype), ss.to(dtype)
        if name.startswith("complex"):
            xs, ss = xs + 1j * xs.flip(0).to(dtype), ss - 0.5j * ss.to(dtype)
        for include_self in [True, False]:
            want = torch.scatter_reduce(xs, dim, index, ss, "mean", include_self=include_self)
            got = multigather.torch.scatter_reduce(xs, dim, index, ss, "mean", include_self=include_self)
            assert got.dtype == want.dtype
            assert torch.equal(got, want), (name, include_self, got, want)


def test_torch_scatter_reduce_mean_explained():
    text = multigather.explain("torch.scatter_reduce", [3, 2], [2, 2], updates_shape=[2, 2],
                               dim=0, reduce="mean", include_self=False)
    assert "divided by the count" in text


@pytest.mark.parametrize("seed", SEEDS)
def test_torch_scatter_add_and_reduce(seed):
    torch = require("torch")
    rng = np.random.RandomState(seed)
    x, dim, index, src = element_case(rng, torch)
    assert torch.equal(multigather.torch.scatter_add(x, dim, index, src), torch.scatter_add(x, dim, index, src))
    for reduce in ["sum", "prod", "amax", "amin"]:
        for include_self in [True, False]:
            want = torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)
            got = multigather.torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)
            assert torch.equal(got, want), (reduce, include_self)
    for reduce in ["add", "multiply"]:
        want = torch.scatter(x, dim, index, src, reduce=reduce)
        assert torch.equal(multigather.torch.scatter(x, dim, index, src, reduce=reduce), want)


@pytest.mark.parametrize("seed", SEEDS)
def test_torch_scatter_unique(seed):
    torch = require("torch")
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    dim = int(rng.randint(0, rank))
    perm = np.argsort(rng.rand(*shape), axis=dim)
    m = int(rng.randint(1, shape[dim] + 1))
    index = torch.from_numpy(np.take(perm, np.arange(m), axis=dim).astype(np.int64))
    src = torch.from_numpy(small_ints(rng, index.shape))
    x = torch.from_numpy(small_ints(rng, shape))
    assert torch.equal(multigather.torch.scatter(x, dim, index, src), torch.scatter(x, dim, index, src))


@pytest.mark.parametrize("seed", SEEDS)
def test_torch_index_add(seed):
    torch = require("torch")
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    dim = int(rng.randint(-rank, rank))
    n = int(rng.randint(0, 6))
    index = torch.from_numpy(rng.randint(0, shape[dim], size=n).astype(rng.choice([np.int64, np.int32])))
    sshape = list(shape)
    sshape[dim] = n
    source = torch.from_numpy(small_ints(rng, sshape))
    x = torch.from_numpy(small_ints(rng, shape))
    for alpha in [1, 2, -0.5]:
        want = torch.index_add(x, dim, index, source, alpha=alpha)
        assert torch.equal(multigather.torch.index_add(x, dim, index, source, alpha=alpha), want), alpha
    xi, si = x.long(), source.long()
    assert torch.equal(multigather.torch.index_add(xi, dim, index, si, alpha=3),
                       torch.index_add(xi, dim, index, si, alpha=3))
    # complex sources: alpha multiplies as the complex (alpha, 0), PyTorch's c10::complex product
    xc = torch.complex(x.double(), torch.from_numpy(small_ints(rng, shape)).double())
    sc = torch.complex(source.double(), -source.double())
    for alpha in [2, -0.5]:
        assert torch.equal(multigather.torch.index_add(xc, dim, index, sc, alpha=alpha),
                           torch.index_add(xc, dim, index, sc, alpha=alpha)), alpha


def test_torch_errors():
    torch = require("torch")
    x = torch.zeros(3, 2)
    with pytest.raises(IndexError, match=r"torch.scatter_add: index\[0,0\] = -1 is out of range for dim 0"):
        multigather.torch.scatter_add(x, 0, torch.tensor([[-1, 0]]), torch.ones(1, 2))
    with pytest.raises(ValueError, match=r"Expected index \[1,3\] to be no larger than self \[3,2\]"):
        multigather.torch.scatter_add(x, 0, torch.tensor([[1, 0, 0]]), torch.ones(1, 3))
    with pytest.raises(TypeError, match="reduce = 'mean' needs a dtype with division"):
        multigather.torch.scatter_reduce(x.bool(), 0, torch.tensor([[1, 0]]), torch.ones(1, 2).bool(), "mean")
    with pytest.raises(TypeError, match=r"self \(float32\) and source \(float64\) must have the same scalar type"):
        multigather.torch.index_add(x, 0, torch.tensor([0]), torch.ones(1, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"Number of indices \(2\) should be equal to source.size\(dim\): \(1\)"):
        multigather.torch.index_add(x, 0, torch.tensor([0, 1]), torch.ones(1, 2))


# ---- numpy ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_numpy_put_along_axis(seed):
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    axis = int(rng.randint(-rank, rank))
    a = axis % rank
    ishape = [s if rng.rand() < 0.7 else 1 for s in shape]
    ishape[a] = int(rng.randint(1, 5))
    indices = rng.randint(-shape[a], shape[a], size=ishape)
    arr = small_ints(rng, shape)
    fancy = np.broadcast_shapes(tuple(ishape), tuple(s if d != a else 1 for d, s in enumerate(shape)))
    vshape = fancy[int(rng.randint(0, len(fancy) + 1)):]
    values = small_ints(rng, vshape)
    want = arr.copy()
    np.put_along_axis(want, indices, values, axis)
    got = arr.copy()
    assert multigather.numpy.put_along_axis(got, indices, values, axis) is None
    np.testing.assert_array_equal(got, want)
    # axis=None on the flattened array (numpy 2 keeps the last duplicate).
    flat = rng.randint(-arr.size, arr.size, size=int(rng.randint(1, 6)))
    want, got = arr.copy(), arr.copy()
    np.put_along_axis(want, flat, 7, None)
    multigather.numpy.put_along_axis(got, flat, 7, None)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", SEEDS)
def test_numpy_add_at(seed):
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    idx = rng.randint(-shape[0], shape[0], size=rand_shape(rng, int(rng.randint(0, 3)), 1, 5))
    target = idx.shape + shape[1:]
    b = small_ints(rng, target[int(rng.randint(0, len(target) + 1)):])
    dtype = rng.choice([np.float32, np.int64])
    a = small_ints(rng, shape, dtype)
    want = a.copy()
    # The oracle gets b broadcast explicitly: numpy 2.4.6's add.at reads garbage when b has fewer
    # dimensions than a[idx] and idx is 2-D (np.add.at(np.zeros(3, np.float32),
    # [[2,-3,1],[1,-2,2],[1,2,-2],[0,-3,0],[1,2,0]], np.float32([2,-4,-4])) gives a[0] = 5080.6,
    # not -14); broadcasting b first is what ufunc.at documents.
    np.add.at(want, idx, np.broadcast_to(b.astype(dtype), target).copy())
    got = a.copy()
    assert multigather.numpy.add_at(got, idx, b.astype(dtype)) is None
    np.testing.assert_array_equal(got, want)


def test_numpy_errors_and_casting():
    a = np.zeros(3, np.float32)
    with pytest.raises(IndexError, match=r"numpy.add_at: indices\[0\] = 3 is out of range for axis 0 of size 3"):
        multigather.numpy.add_at(a, np.array([3]), 1.0)
    with pytest.raises(TypeError, match="cannot cast float64 to int64 with casting rule 'same_kind'"):
        multigather.numpy.add_at(np.zeros(3, np.int64), np.array([0]), np.ones(1))
    with pytest.raises(ValueError, match="could not be broadcast"):
        multigather.numpy.put_along_axis(np.zeros((2, 3)), np.zeros((2, 1), np.int64), np.ones(3), 1)
    # A Python scalar and float64 values are cast to arr's dtype, as numpy does.
    arr = np.zeros((2, 2), np.float32)
    multigather.numpy.put_along_axis(arr, np.array([[1], [0]]), np.array([[1.5], [2.5]]), 1)
    np.testing.assert_array_equal(arr, [[0, 1.5], [2.5, 0]])


def test_partial_writes_match_torch_and_onnxruntime():
    """An index smaller than the input on a dimension that is not scattered writes only its
    leading part (the rest keeps the input's values), in torch and in ONNX Runtime."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    for _ in range(20):
        x = rng.standard_normal((4, 6)).astype(np.float32)
        index = rng.integers(0, 4, (int(rng.integers(1, 4)), int(rng.integers(1, 6))))
        src = rng.standard_normal((index.shape[0] + 1, index.shape[1] + 2)).astype(np.float32)
        want = torch.from_numpy(x).scatter_add(0, torch.from_numpy(index), torch.from_numpy(src)).numpy()
        got = multigather.torch.scatter_add(torch.from_numpy(x), 0, torch.from_numpy(index), torch.from_numpy(src))
        np.testing.assert_array_equal(got.numpy(), want)
        inplace = torch.from_numpy(x.copy())
        multigather.run("torch.scatter_add", inplace, torch.from_numpy(index), updates=torch.from_numpy(src), dim=0,
                        out=inplace)
        np.testing.assert_array_equal(inplace.numpy(), want)
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    x = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[4, 0, 2]], np.int64)
    upd = rng.standard_normal((1, 3)).astype(np.float32)
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["out"], axis=1, reduction="add")
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 5]),
        helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 3]),
        helper.make_tensor_value_info("updates", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"data": x, "indices": idx, "updates": upd})[0]
    np.testing.assert_array_equal(multigather.onnx.scatter_elements(x, idx, upd, axis=1, reduction="add"), want)


# ---- webnn ---------------------------------------------------------------------------------------

def webnn_clamp(v, n):
    """WPT's index rule: wrap a negative once, then clamp to [0, n-1]."""
    v = np.where(v < 0, v + n, v)
    return np.clip(v, 0, n - 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_webnn_scatter_elements_vs_numpy(seed):
    """Against a numpy loop (last write wins, as documented for the unspecified duplicates)."""
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    axis = rng.randint(rank)
    ishape = list(shape)
    ishape[axis] = rng.randint(1, 5)
    x = small_ints(rng, shape)
    idx = rng.randint(-2 * shape[axis], 2 * shape[axis], size=ishape).astype(np.int32)
    upd = small_ints(rng, ishape)
    want = x.copy()
    for pos in np.ndindex(*ishape):
        tgt = list(pos)
        tgt[axis] = webnn_clamp(idx[pos], shape[axis])
        want[tuple(tgt)] = upd[pos]
    got = multigather.webnn.scatter_elements(x, idx, upd, axis=int(axis))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", SEEDS)
def test_webnn_scatter_nd_vs_numpy(seed):
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    k = rng.randint(1, rank + 1)
    outer = rand_shape(rng, rng.randint(0, 3))
    idx = np.stack([rng.randint(-2 * shape[d], 2 * shape[d], size=outer) for d in range(k)], axis=-1).astype(np.int64)
    x = small_ints(rng, shape)
    upd = small_ints(rng, outer + shape[k:])
    want = x.copy()
    for pos in np.ndindex(*outer):
        tgt = tuple(int(webnn_clamp(idx[pos][d], shape[d])) for d in range(k))
        want[tgt] = upd[pos]
    np.testing.assert_array_equal(multigather.webnn.scatter_nd(x, idx, upd), want)


def test_webnn_scatter_errors():
    x = np.zeros((3, 3), np.float32)
    with pytest.raises(ValueError, match=r"webnn.scatterElements: axis = 2 must be in \[0, 2\)"):
        multigather.webnn.scatter_elements(x, np.zeros((2, 3), np.int32), np.zeros((2, 3), np.float32), axis=2)
    with pytest.raises(TypeError, match="updates dtype float16 must equal input dtype float32"):
        multigather.webnn.scatter_nd(np.zeros((4, 4, 4), np.float32), np.zeros((2, 1), np.int32),
                                     np.zeros((2, 4, 4), np.float16))


# ---- tf ------------------------------------------------------------------------------------------

def nd_case(rng, unique=False, dtype=np.float32):
    """tensor, indices (int32/int64, in range), updates for a TF scatter_nd-style call."""
    rank = rng.randint(1, 4)
    shape = rand_shape(rng, rank)
    k = rng.randint(1, rank + 1)
    outer = rand_shape(rng, rng.randint(1, 3))
    n = int(np.prod(outer))
    if unique:
        cells = int(np.prod(shape[:k]))
        flat = rng.permutation(cells)[:min(n, cells)]
        outer = (len(flat),)
        idx = np.stack(np.unravel_index(flat, shape[:k]), axis=-1)
    else:
        idx = np.stack([rng.randint(0, shape[d], size=outer) for d in range(k)], axis=-1)
    idx = idx.astype(np.int32 if rng.randint(2) else np.int64)
    return small_ints(rng, shape, dtype), idx, small_ints(rng, tuple(outer) + shape[k:], dtype)


TF_KINDS = ["update", "add", "sub", "min", "max"]


@pytest.mark.parametrize("kind", TF_KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_tf_tensor_scatter_nd_vs_tensorflow(seed, kind):
    tf = require("tensorflow")
    rng = np.random.RandomState(seed)
    dtype = [np.float32, np.int32, np.float64][seed % 3]
    x, idx, upd = nd_case(rng, unique=(kind == "update" and seed % 2 == 0), dtype=dtype)
    want = getattr(tf, "tensor_scatter_nd_" + kind)(x, idx, upd).numpy()
    got = getattr(multigather.tf, "tensor_scatter_nd_" + kind)(x, idx, upd)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", SEEDS)
def test_tf_scatter_nd_vs_tensorflow(seed):
    tf = require("tensorflow")
    rng = np.random.RandomState(seed)
    x, idx, upd = nd_case(rng)
    want = tf.scatter_nd(idx, upd, x.shape).numpy()
    got = multigather.tf.scatter_nd(idx, upd, x.shape)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("tensor_shape,indices,updates_shape", [
    ((4, 4), [1], (4,)),        # passes TensorScatterOp's shape rule, not ScatterNd's
    ((4, 4, 2), [1, 1], (2,)),  # the same, failing ScatterNd's rank rule
    ((4,), [1], (1,)),
])
@pytest.mark.parametrize("kind", ["update", "add"])
def test_tf_tensor_scatter_nd_rank_1_indices_as_tensorflow(tensor_shape, indices, updates_shape, kind):
    """Rank-1 indices: whatever TensorFlow decides (an error, so far), multigather decides, in
    TensorFlow's words."""
    tf = require("tensorflow")
    x = np.zeros(tensor_shape, np.float32)
    i = np.array(indices, np.int32)
    u = np.ones(updates_shape, np.float32)
    try:
        want = getattr(tf, "tensor_scatter_nd_" + kind)(x, i, u).numpy()
    except tf.errors.InvalidArgumentError as e:
        tf_words = str(e).split("}} ", 1)[-1].split(" [Op:", 1)[0]
        with pytest.raises(ValueError) as ours:
            getattr(multigather.tf, "tensor_scatter_nd_" + kind)(x, i, u)
        assert str(ours.value) == f"tf.tensor_scatter_nd_{kind}: {tf_words}"
    else:
        np.testing.assert_array_equal(getattr(multigather.tf, "tensor_scatter_nd_" + kind)(x, i, u), want)


def test_tf_scatter_errors_and_drop():
    t = np.arange(8, dtype=np.float32)
    with pytest.raises(IndexError, match=r"indices\[0,0\] = 9 is out of range for tensor dimension 0 of size 8"):
        multigather.tf.tensor_scatter_nd_update(t, np.array([[9]], np.int32), np.ones(1, np.float32))
    with pytest.raises(IndexError, match=r"indices\[0,0\] = -1 is out of range"):
        multigather.tf.tensor_scatter_nd_add(t, np.array([[-1]], np.int32), np.ones(1, np.float32))
    with pytest.raises(ValueError, match="Outer dimensions of indices and update must match"):
        multigather.tf.tensor_scatter_nd_update(t, np.array([[1]], np.int32), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="cannot form exactly for dtype bool"):
        multigather.tf.tensor_scatter_nd_sub(np.zeros(2, bool), np.array([[1]], np.int32), np.ones(1, bool))
    # index_mode="drop": TF on GPU skips out-of-range updates.
    got = multigather.run("tf.tensor_scatter_nd_update", t, np.array([[9], [-1], [2]], np.int32),
                          updates=np.array([7, 7, 0], np.float32), index_mode="drop")
    np.testing.assert_array_equal(got, [0, 1, 0, 3, 4, 5, 6, 7])


# ---- coreml (no Core ML runtime here: numpy loops of the MIL definitions) ------------------------

COREML_F = {"update": lambda a, b: b, "add": np.add, "sub": np.subtract, "mul": np.multiply,
            "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("mode", sorted(COREML_F))
@pytest.mark.parametrize("seed", range(10))
def test_coreml_scatter_nd_and_along_axis_vs_numpy(seed, mode):
    rng = np.random.RandomState(seed)
    x, idx, upd = nd_case(rng, unique=(mode == "update"))
    want = x.copy()
    for pos in np.ndindex(*idx.shape[:-1]):
        tgt = tuple(int(v) for v in idx[pos])
        want[tgt] = COREML_F[mode](want[tgt], upd[pos])
    np.testing.assert_array_equal(multigather.coreml.scatter_nd(x, idx.astype(np.int32), upd, mode=mode), want)
    # scatter: block along axis 0 with 1-D indices.
    b = rng.randint(0, x.shape[0], size=3).astype(np.int32)
    u = small_ints(rng, (3,) + x.shape[1:])
    want = x.copy()
    for j, v in enumerate(b):
        want[v] = COREML_F[mode](want[v], u[j])
    if mode != "update":
        np.testing.assert_array_equal(multigather.coreml.scatter(x, b, u, mode=mode), want)
    with pytest.raises(ValueError, match="mode = 'div' is not supported"):
        multigather.coreml.scatter_nd(x, idx.astype(np.int32), upd, mode="div")


# ---- numpy multiply.at / minimum.at / maximum.at against numpy ---------------------------------

UFUNCS_AT = {"multiply_at": np.multiply, "minimum_at": np.minimum, "maximum_at": np.maximum}


@pytest.mark.parametrize("name", sorted(UFUNCS_AT))
@pytest.mark.parametrize("seed", range(20))
def test_numpy_ufunc_at(seed, name):
    rng = np.random.RandomState(seed)
    shape = rand_shape(rng, rng.randint(1, 4))
    idx = rng.randint(-shape[0], shape[0], size=rand_shape(rng, int(rng.randint(0, 3)), 1, 5))
    target = idx.shape + shape[1:]
    dtype = rng.choice([np.float32, np.int64])
    b = small_ints(rng, target[int(rng.randint(0, len(target) + 1)):], dtype)
    if name == "multiply_at":
        b = np.where(np.abs(b) > 2, 1, b).astype(dtype)  # products of a few factors stay exact
    a = small_ints(rng, shape, dtype)
    want = a.copy()
    UFUNCS_AT[name].at(want, idx, np.broadcast_to(b, target).copy())  # see test_numpy_add_at
    got = a.copy()
    assert getattr(multigather.numpy, name)(got, idx, b) is None
    np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError, match=rf"numpy.{name}: indices\[0\] = {shape[0]} is out of range"):
        getattr(multigather.numpy, name)(a.copy(), np.array([shape[0]]), np.ones(1, dtype))


# ---- tosa.scatter, dml.ScatterElements / ScatterND, tensor.scatter against numpy formulations ----

@pytest.mark.parametrize("seed", range(20))
def test_tosa_scatter_vs_numpy(seed):
    rng = np.random.RandomState(seed)
    n, k, c = (int(v) for v in rng.randint(1, 5, size=3))
    w = int(rng.randint(0, k + 1))
    values_in = small_ints(rng, (n, k, c))
    indices = np.stack([rng.permutation(k)[:w] for _ in range(n)]).reshape(n, w).astype(np.int32)
    inp = small_ints(rng, (n, w, c))
    want = values_in.copy()
    for b in range(n):
        for j in range(w):
            want[b, indices[b, j], :] = inp[b, j, :]
    got = multigather.tosa.scatter(values_in, indices, inp)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(values_in, values_in)  # not in place


def test_tosa_scatter_errors():
    v = np.zeros((1, 3, 2), np.float32)
    with pytest.raises(IndexError, match=r"tosa.scatter: indices\[0,0\] = 3 is out of range .*TOSA REQUIRE"):
        multigather.tosa.scatter(v, np.array([[3]], np.int32), np.ones((1, 1, 2), np.float32))
    with pytest.raises(IndexError, match=r"indices\[0,0\] = -1"):
        multigather.tosa.scatter(v, np.array([[-1]], np.int32), np.ones((1, 1, 2), np.float32))
    with pytest.raises(ValueError, match=r"must be \[N,W,C\] = \[1,1,2\]"):
        multigather.tosa.scatter(v, np.array([[0]], np.int32), np.ones((1, 2, 2), np.float32))
    with pytest.raises(TypeError, match="input dtype float64 must equal values_in dtype float32"):
        multigather.tosa.scatter(v, np.array([[0]], np.int32), np.ones((1, 1, 2)))


def dml_clamp(v, n):
    v = np.where(v < 0, v + n, v)
    return np.clip(v, 0, n - 1)


@pytest.mark.parametrize("seed", range(20))
def test_dml_scatter_elements_vs_numpy(seed):
    rng = np.random.RandomState(seed)
    shape = rand_shape(rng, rng.randint(1, 4))
    axis = int(rng.randint(0, len(shape)))
    n = shape[axis]
    m = int(rng.randint(0, n + 1))
    data = small_ints(rng, shape)
    # Unique positions along axis per line (duplicates are undefined); some given out of range
    # (clamped) or negative (wrapped) in a way that keeps them unique after the rule.
    perm = np.argsort(rng.rand(*shape), axis=axis)
    idx = np.take(perm, np.arange(m), axis=axis).astype(np.int64)
    raw = np.where(rng.rand(*idx.shape) < 0.3, idx - n, idx)
    raw = np.where((idx == n - 1) & (rng.rand(*idx.shape) < 0.5), n + 5, raw)
    upd = small_ints(rng, idx.shape)
    want = data.copy()
    np.put_along_axis(want, dml_clamp(raw, n), upd, axis)
    got = multigather.dml.scatter_elements(data, raw, upd, axis)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("seed", range(20))
def test_dml_scatter_nd_vs_numpy(seed):
    rng = np.random.RandomState(seed)
    r = int(rng.randint(1, 4))
    shape = rand_shape(rng, r)
    k = int(rng.randint(1, r + 1))
    cells = int(np.prod(shape[:k]))
    m = int(rng.randint(0, cells + 1))
    flat = rng.permutation(cells)[:m]
    coords = np.stack(np.unravel_index(flat, shape[:k]), -1).reshape(m, k).astype(np.int64)
    indices = coords[0] if (m == 1 and rng.rand() < 0.5) else coords  # [k] or [m, k]
    q = indices.ndim
    j = indices.shape[:-1]
    upd = small_ints(rng, j + shape[k:])
    data = small_ints(rng, shape)
    want = data.copy()
    for row, coord in enumerate(indices.reshape(-1, k)):
        want[tuple(coord)] = upd.reshape((-1,) + shape[k:])[row]
    n = max(r, q, len(upd.shape))
    pad = lambda x: x.reshape((1,) * (n - x.ndim) + x.shape)
    got = multigather.dml.scatter_nd(pad(data), pad(indices), pad(upd), input_dimension_count=r,
                                     indices_dimension_count=q)
    assert np.asarray(got).shape == pad(data).shape
    np.testing.assert_array_equal(np.asarray(got).reshape(shape), want)


def test_dml_scatter_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"UpdatesTensor.Sizes \[1,2\] must match IndicesTensor.Sizes \[1,3\]"):
        multigather.dml.scatter_elements(x, np.zeros((1, 3), np.int32), np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match="the index tuple size 3 must be <= InputDimensionCount = 2"):
        multigather.dml.scatter_nd(x, np.zeros((1, 3), np.int64), np.zeros((1, 1), np.float32))


@pytest.mark.parametrize("seed", range(20))
def test_tensor_scatter_vs_numpy(seed):
    rng = np.random.RandomState(seed)
    r = int(rng.randint(1, 4))
    shape = rand_shape(rng, r)
    dims = sorted(rng.choice(r, size=int(rng.randint(1, r + 1)), replace=False).tolist())
    cells = int(np.prod([shape[d] for d in dims]))
    m = int(rng.randint(0, cells + 1))
    flat = rng.permutation(cells)[:m]
    coords = np.stack(np.unravel_index(flat, [shape[d] for d in dims]), -1).reshape(m, len(dims))
    indices = coords.astype(rng.choice([np.int32, np.int64]))
    reduced = bool(rng.rand() < 0.5)
    slice_shape = tuple(s for d, s in enumerate(shape) if d not in dims)
    full_shape = tuple(1 if d in dims else s for d, s in enumerate(shape))
    source = small_ints(rng, (m,) + (slice_shape if reduced else full_shape))
    dest = small_ints(rng, shape)
    want = dest.copy()
    for row in range(m):
        sel = [slice(None)] * r
        for i, d in enumerate(dims):
            sel[d] = int(coords[row, i])
        want[tuple(sel)] = source[row].reshape(slice_shape)
    got = multigather.mlir.tensor_scatter(source, dest, indices, dims)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_tensor_scatter_errors():
    dest = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="requires 'unique' attribute to be set"):
        multigather.mlir.tensor_scatter(np.zeros((1, 3), np.float32), dest, np.zeros((1, 1), np.int64), [0],
                                        unique=False)
    with pytest.raises(IndexError, match="undefined behaviour in MLIR"):
        multigather.mlir.tensor_scatter(np.zeros((1, 3), np.float32), dest, np.full((1, 1), 2), [0])


# ---- torch.index_copy / index_fill / put against torch ------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_torch_index_copy_fill_put(seed):
    torch = require("torch")
    rng = np.random.RandomState(seed)
    shape = rand_shape(rng, rng.randint(1, 4))
    dim = int(rng.randint(-len(shape), len(shape)))
    n = shape[dim]
    x = torch.from_numpy(small_ints(rng, shape))
    m = int(rng.randint(0, n + 1))
    index = torch.from_numpy(rng.permutation(n)[:m].astype(np.int64))  # unique (copy is nondeterministic)
    src_shape = list(shape)
    src_shape[dim] = m
    source = torch.from_numpy(small_ints(rng, src_shape))
    got = multigather.torch.index_copy(x, dim, index, source)
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), x.index_copy(dim, index, source), rtol=0, atol=0)
    fill = torch.from_numpy(rng.randint(-n, n, size=int(rng.randint(0, 5))).astype(np.int64))
    got = multigather.torch.index_fill(x, dim, fill, 7.5)
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), x.index_fill(dim, fill, 7.5), rtol=0, atol=0)
    numel = x.numel()
    pidx = torch.from_numpy(rng.randint(-numel, numel, size=rand_shape(rng, int(rng.randint(0, 3)), 1, 4)))
    psrc = torch.from_numpy(small_ints(rng, tuple(pidx.shape)))
    got = multigather.torch.put(x, pidx, psrc, accumulate=True)
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), x.put(pidx, psrc, accumulate=True), rtol=0, atol=0)
    flat = pidx.flatten() % numel
    if len(set(flat.tolist())) == flat.numel():  # accumulate=False: PyTorch defines unique indices only
        got = multigather.torch.put(x, pidx, psrc)
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), x.put(pidx, psrc), rtol=0, atol=0)


def test_torch_index_copy_fill_put_errors():
    torch = require("torch")
    x = torch.zeros(3, 2)
    with pytest.raises(IndexError, match=r"index\[0\] = -1 is out of range for dim 0 of size 3"):
        multigather.torch.index_copy(x, 0, torch.tensor([-1]), torch.ones(1, 2))
    with pytest.raises(IndexError):
        x.index_copy(0, torch.tensor([-1]), torch.ones(1, 2))  # PyTorch rejects it too
    with pytest.raises(ValueError, match=r"Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"):
        multigather.torch.index_copy(x, 0, torch.tensor([0, 1]), torch.ones(3, 2))
    with pytest.raises(ValueError, match="only supports a 0-dimensional value tensor"):
        multigather.torch.index_fill(x, 0, torch.tensor([0]), torch.tensor([5.0]))
    got = multigather.torch.index_fill(x, 0, torch.tensor([0]), torch.tensor(5.0, dtype=torch.float64))
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), x.index_fill(0, torch.tensor([0]), 5.0))
    with pytest.raises(IndexError, match=r"index.flatten\(\)\[0\] = 6 is out of range"):
        multigather.torch.put(x, torch.tensor([6]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="Expected source and index to have the same number of elements"):
        multigather.torch.put(x, torch.tensor([0, 1]), torch.tensor([1.0, 2.0, 3.0]))


# ---- torch.index_put against torch -----------------------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_torch_index_put(seed):
    torch = require("torch")
    rng = np.random.RandomState(seed)
    r = int(rng.randint(1, 5))
    shape = rand_shape(rng, r, 1, 4)
    x = torch.from_numpy(small_ints(rng, shape))
    # a tuple of index tensors and None (full slices), adjacent or separated, broadcasting
    entries = [None] * int(rng.randint(1, r + 1))
    chosen = sorted(rng.choice(len(entries), size=int(rng.randint(1, len(entries) + 1)), replace=False))
    b_shape = rand_shape(rng, int(rng.randint(0, 3)), 1, 4)
    for j, d in enumerate(chosen):
        n = shape[d]
        ish = tuple(1 if (j % 2 and k == 0) else s for k, s in enumerate(b_shape))  # broadcast
        dtype = np.int32 if rng.rand() < 0.3 else np.int64
        entries[d] = torch.from_numpy(rng.randint(-n, n, size=ish).astype(dtype))
    indices = tuple(entries)
    # None is a full slice in index_put's tuple (torch.ops.aten.index_put takes Optional[Tensor]
    # entries; Tensor.index_put does not), a new axis in x[...]: the result shape from slices.
    result_shape = tuple(x[tuple(slice(None) if e is None else e for e in entries)].shape)
    values = torch.from_numpy(small_ints(rng, result_shape[int(rng.randint(0, len(result_shape) + 1)):]))

    def oracle(vals, accumulate):
        return torch.ops.aten.index_put(x, list(indices), vals, accumulate)

    got = multigather.torch.index_put(x, indices, values, accumulate=True)
    torch.testing.assert_close(got, oracle(values, True), rtol=0, atol=0)
    # accumulate=False: PyTorch defines unique targets only; compare on those, last-wins separately
    want = oracle(values, False)
    count = torch.ops.aten.index_put(torch.zeros_like(x), list(indices),
                                     torch.ones(result_shape, dtype=x.dtype), True)
    if bool((count <= 1).all()):
        torch.testing.assert_close(multigather.torch.index_put(x, indices, values), want, rtol=0, atol=0)


def test_torch_index_put_last_wins_and_errors():
    torch = require("torch")
    x = torch.zeros(3, 2)
    got = multigather.torch.index_put(x, (torch.tensor([1, 1]),), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    torch.testing.assert_close(got, torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]]))
    with pytest.raises(IndexError, match=r"indices\[0,0\] = 3 is out of range for axis 0 of size 3"):
        multigather.torch.index_put(x, (torch.tensor([3]),), torch.tensor(1.0))
    with pytest.raises(IndexError):
        x.index_put((torch.tensor([3]),), torch.tensor(1.0))  # PyTorch rejects it too
    with pytest.raises(ValueError, match="cannot be broadcast to indexing result of shape"):
        multigather.torch.index_put(x, (torch.tensor([0, 1]),), torch.ones(3))
    with pytest.raises(TypeError, match="source and destination dtypes match"):
        multigather.torch.index_put(x, (torch.tensor([0]),), torch.ones(2, dtype=torch.float64))
    with pytest.raises(IndexError, match=r"shape of the mask \[2\] at index 0 does not match"):
        multigather.torch.index_put(x, (torch.tensor([True, False]),), torch.tensor(1.0))
    with pytest.raises(IndexError, match="too many indices"):
        multigather.torch.index_put(x, (torch.tensor([0]),) * 3, torch.tensor(1.0))


@pytest.mark.parametrize("accumulate", [False, True])
def test_torch_index_put_boolean_masks_match_torch(accumulate):
    # A mask is its true positions, one index tensor per dimension it covers (aten.index_put).
    torch = require("torch")
    rng = np.random.RandomState(7)
    x = torch.from_numpy(rng.standard_normal((4, 3, 5)).astype(np.float32))
    m1 = torch.from_numpy(rng.rand(4) < 0.5)
    m2 = torch.from_numpy(rng.rand(4, 3) < 0.5)
    m3 = torch.from_numpy(rng.rand(3) < 0.6)
    cases = [
        ((m1,), torch.tensor(2.5)),                                        # rows, a scalar value
        ((m2,), torch.arange(5, dtype=torch.float32)),                     # a 2-D mask, a broadcast row
        ((None, m3), torch.tensor(-1.0)),                                  # a mask after a full slice
        ((m1, None, torch.tensor([4, 0, 4])[: int(m1.sum())] if int(m1.sum()) <= 3 else torch.tensor(0)),
         torch.tensor(9.0)),                                               # a mask beside an index
    ]
    for indices, values in cases:
        want = torch.ops.aten.index_put(x, list(indices), values, accumulate)
        got = multigather.torch.index_put(x, indices, values, accumulate=accumulate)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    with pytest.raises(TypeError, match="uint8 index is a deprecated mask"):
        multigather.torch.index_put(x, (m1.to(torch.uint8),), torch.tensor(3.0))


@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_torch_scatter_with_a_number_is_the_value_overload(reduce):
    torch = require("torch")
    rng = np.random.RandomState(3)
    for dtype in (torch.float32, torch.int64, torch.float16):
        x = torch.from_numpy(rng.randint(-5, 5, (4, 6))).to(dtype)
        index = torch.from_numpy(rng.randint(0, 6, (3, 2)))
        for value in (2, 1.5, -3):
            kwargs = {} if reduce is None else {"reduce": reduce}
            want = torch.scatter(x, 1, index, value, **kwargs)
            got = multigather.torch.scatter(x, 1, index, value, reduce)
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=0, atol=0)


# ---- numpy.put against numpy ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("seed", range(20))
def test_numpy_put(seed, mode):
    rng = np.random.RandomState(seed)
    a = small_ints(rng, rand_shape(rng, rng.randint(1, 4)))
    n = a.size
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    ind = rng.randint(lo, hi, size=rand_shape(rng, int(rng.randint(0, 3)), 1, 5))
    nv = [1, max(ind.size, 1), ind.size + 2, max(ind.size // 2, 1)][int(rng.randint(0, 4))]  # the last tiles
    v = small_ints(rng, (nv,))
    want, got = a.copy(), a.copy()
    np.put(want, ind, v, mode=mode)
    assert multigather.numpy.put(got, ind, v, mode=mode) is None
    np.testing.assert_array_equal(got, want)


def test_numpy_put_errors():
    a = np.zeros(3, np.float32)
    with pytest.raises(IndexError, match=r"numpy.put: ind\[0\] = 3 is out of range for the flattened a of size 3"):
        multigather.numpy.put(a, np.array([3]), 1.0)
    with pytest.raises(ValueError, match="numpy.put: attribute mode: 'x' is not one of raise, wrap, clip"):
        multigather.numpy.put(a, np.array([0]), 1.0, mode="x")
    b = np.zeros((2, 3), np.int64)
    multigather.numpy.put(b, np.array([[0, 5]]), np.array([1.7, 2.2]))  # unsafe cast, as numpy
    np.testing.assert_array_equal(b, [[1, 0, 0], [0, 0, 2]])


@pytest.mark.parametrize("name", ["minimum_at", "maximum_at"])
def test_numpy_minimum_maximum_at_propagate_nan_like_numpy(name):
    a = np.array([1.0, np.nan, 3.0, 4.0], np.float32)
    idx = np.array([0, 1, 2, 0, 3])
    b = np.array([np.nan, 0.0, 2.0, 5.0, 9.0], np.float32)
    want, got = a.copy(), a.copy()
    with np.errstate(invalid="ignore"):
        UFUNCS_AT[name].at(want, idx, b)
    getattr(multigather.numpy, name)(got, idx, b)
    np.testing.assert_array_equal(got, want)


def test_index_add_alpha_dtypes_are_the_ones_its_docstring_lists():
    # The Python docstring and the C++ rule (src/frontends/torch.cpp scale_step) must not drift:
    # alpha != 1 works exactly for the source dtypes the docstring lists.
    import re

    doc = " ".join(multigather.torch.index_add.__doc__.split())
    listed = set(re.findall(r"[a-z]+\d+", re.search(r"alpha != 1 .*?for (.*?) sources only", doc).group(1)))
    assert {"float32", "int64"} <= listed
    for dtype in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                  np.float16, np.float32, np.float64, np.complex64, np.complex128):
        x = np.zeros((3, 2), dtype)
        source = np.ones((1, 2), dtype)
        try:
            got = multigather.run("torch.index_add", x, np.array([1]), updates=source, dim=0, alpha=2)
        except TypeError as e:
            assert np.dtype(dtype).name not in listed, e
            assert "alpha = 2 != 1 is supported for" in str(e)
            continue
        assert np.dtype(dtype).name in listed
        np.testing.assert_array_equal(got[1], (2 * source[0]).astype(dtype))
