"""The framework adapters against the real frameworks on edge cases: empty inputs, empty indices,
empty non-axis dimensions, 0-d tensors, and every index dtype each framework accepts or rejects
(int8/16/32/64, uint8/16/32/64, bool, float32).

Each case runs the framework (PyTorch on the CPU, numpy, ONNX Runtime's CPU provider) and the
multigather adapter: both must compute the same shape, dtype and bytes, or both must fail, with
the framework's error mapped onto multigather's convention (tests/python/test_errors.py):
IndexError for an index out of range, ValueError for shapes, dims and axes (also where the
framework raises IndexError for them: torch's "Dimension out of range", numpy's AxisError and
"shape mismatch"), TypeError for dtypes (also numpy's IndexError "`indices` must be an integer
array"). The grids run case by case and report every mismatch at once. Each framework's part
skips when the framework is not installed.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import multigather

INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                np.bool_, np.float32]


def shapes(max_rank, sizes):
    for rank in range(max_rank + 1):
        yield from itertools.product(sizes, repeat=rank)


def index_values(rng, shape, dtype, size):
    """Values around [-size, size) (negative, in range, out of range) in ``dtype``."""
    n = max(size, 1)
    values = rng.integers(-n - 1, n + 1, size=shape)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(values % 2 == 1)
    if dtype.kind == "u":
        values = np.abs(values)
    return np.asarray(values).astype(dtype)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as error:  # noqa: BLE001 - any framework error is an outcome to compare
        return type(error), error


def check(case, expected, got, error_map, as_numpy, mismatches):
    """Compares one framework outcome with multigather's; appends a line per mismatch."""
    (ekind, evalue), (gkind, gvalue) = expected, got
    if ekind == "ok" and gkind == "ok":
        want, have = as_numpy(evalue), as_numpy(gvalue)
        if (want.shape, want.dtype, want.tobytes()) != (have.shape, have.dtype, have.tobytes()):
            mismatches.append(f"{case}: framework {want.shape} {want.dtype} {want.ravel()[:6]}, "
                              f"multigather {have.shape} {have.dtype} {have.ravel()[:6]}")
    elif ekind == "ok":
        mismatches.append(f"{case}: framework computes {as_numpy(evalue).shape}, multigather "
                          f"raises {gkind.__name__}: {gvalue}")
    elif gkind == "ok":
        mismatches.append(f"{case}: framework raises {ekind.__name__}: {evalue}, multigather "
                          f"computes {as_numpy(gvalue).shape}")
    elif gkind is not error_map(evalue):
        mismatches.append(f"{case}: framework {ekind.__name__}: {evalue} (expected "
                          f"{error_map(evalue).__name__}), multigather {gkind.__name__}: {gvalue}")


def assert_no_mismatch(mismatches, count):
    assert count > 0
    assert not mismatches, f"{len(mismatches)} of {count} cases differ:\n" + "\n".join(mismatches[:40])


# ---- PyTorch ---------------------------------------------------------------------------------


def torch_error(error):
    text = str(error).splitlines()[0].lower()
    if re.search(r"expected dtype|expected a long tensor|dtype of indices", text):
        return TypeError
    if re.search(r"out of bounds|out of range in self|out of data bounds|take from an empty|"
                 r"should be positive|zerodivision|tried to access index", text):
        return IndexError
    return ValueError  # sizes, ranks, dims ("Dimension out of range"), vector index


def torch_tensor(torch, array):
    return torch.from_numpy(np.ascontiguousarray(array))


def run_torch_grid(torch, ops):
    rng = np.random.default_rng(0)
    mismatches, count = [], 0
    to_numpy = lambda t: t.contiguous().numpy()  # noqa: E731
    for x_shape in shapes(2, (0, 1, 3)):
        x = torch_tensor(torch, np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape))
        for dtype, i_shape in itertools.product(INDEX_DTYPES, shapes(2, (0, 1, 2))):
            for name, torch_fn, mg_fn, dims in ops(x):
                for dim in dims:
                    in_range = dim is not None and -x.ndim <= dim < x.ndim
                    size = x.shape[dim] if in_range else (1 if x.ndim == 0 else x.numel())
                    index = torch_tensor(torch, index_values(rng, i_shape, dtype, size))
                    case = f"{name}(x{tuple(x.shape)}, dim={dim}, index{i_shape} {np.dtype(dtype)} " \
                           f"{index.flatten().tolist()})"
                    count += 1
                    check(case, outcome(lambda: torch_fn(x, dim, index)),
                          outcome(lambda: mg_fn(x, dim, index)), torch_error, to_numpy, mismatches)
    return mismatches, count


def all_dims(x, with_none=False):
    r = max(x.ndim, 1)
    return ([None] if with_none else []) + list(range(-r - 1, r + 1))  # one out of range each way


def test_torch_gather_and_take_edge_cases():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    mt = multigather.torch

    def ops(x):
        return [("gather", lambda a, d, i: torch.gather(a, d, i), lambda a, d, i: mt.gather(a, d, i),
                 all_dims(x)),
                ("take", lambda a, d, i: torch.take(a, i), lambda a, d, i: mt.take(a, i), [None])]

    assert_no_mismatch(*run_torch_grid(torch, ops))


def test_torch_take_along_dim_edge_cases():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    mt = multigather.torch

    def ops(x):
        return [("take_along_dim", lambda a, d, i: torch.take_along_dim(a, i, dim=d),
                 lambda a, d, i: mt.take_along_dim(a, i, dim=d), all_dims(x, with_none=True))]

    assert_no_mismatch(*run_torch_grid(torch, ops))


def test_torch_index_select_edge_cases():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    mt = multigather.torch

    def ops(x):
        return [("index_select", lambda a, d, i: torch.index_select(a, d, i),
                 lambda a, d, i: mt.index_select(a, d, i), all_dims(x))]

    assert_no_mismatch(*run_torch_grid(torch, ops))


def test_torch_known_cases():
    """The cases that first showed the differences (now fixed), spelled out."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    mt = multigather.torch
    scalar = torch.tensor(5.0)
    for index in (torch.tensor([0]), torch.tensor(0, dtype=torch.int32)):
        want = torch.index_select(scalar, 0, index)
        got = mt.index_select(scalar, 0, index)
        assert got.shape == want.shape == () and torch.equal(got, want)
    x = torch.arange(12.0).reshape(3, 4)
    for dtype in (torch.uint8, torch.bool, torch.float32):
        empty = torch.empty(0, 4, dtype=dtype)
        assert mt.gather(x, 0, empty).shape == torch.gather(x, 0, empty).shape == (0, 4)
        with pytest.raises(TypeError):
            mt.gather(x, 0, torch.zeros(1, 4, dtype=dtype))
    index = torch.tensor([[1, 2], [3, 11]], dtype=torch.int32)
    assert torch.equal(mt.take_along_dim(x, index), torch.take_along_dim(x, index))
    with pytest.raises(IndexError):
        mt.index_select(torch.zeros(3, 0), 0, torch.tensor([0, 5]))


# ---- numpy -----------------------------------------------------------------------------------


def numpy_error(error):
    text = str(error).lower()
    if isinstance(error, TypeError) or "must be an integer array" in text or \
            "used as indices must be of integer" in text:
        return TypeError
    if isinstance(error, np.exceptions.AxisError) or "shape mismatch" in text or \
            "too many indices" in text or "single dimension" in text or "same number" in text:
        return ValueError
    if "out of bounds" in text or "empty axes" in text:
        return IndexError
    return ValueError


def numpy_would_hang(a, indices, axis, mode):
    """numpy.take(mode='wrap') never returns when an empty axis is read by a non-empty outer row
    (its wrap loop subtracts the axis size, 0); multigather raises IndexError there."""
    a_shape = (a.size,) if axis is None else (a.shape or (1,))
    if mode != "wrap" or indices.size == 0 or not -len(a_shape) <= (axis or 0) < len(a_shape):
        return False
    ax = 0 if axis is None else axis % len(a_shape)
    return a_shape[ax] == 0 and int(np.prod(a_shape[:ax])) > 0


def test_numpy_take_edge_cases():
    rng = np.random.default_rng(1)
    mismatches, count = [], 0
    for a_shape in shapes(3, (0, 1, 3)):
        a = np.arange(1, 1 + int(np.prod(a_shape)), dtype=np.float32).reshape(a_shape)
        r = max(a.ndim, 1)
        for dtype, i_shape in itertools.product(INDEX_DTYPES, shapes(2, (0, 1, 2))):
            for axis in [None] + list(range(-r - 1, r + 1)):
                size = a.size if axis is None or not -r <= axis < r else (a.shape or (1,))[axis]
                indices = index_values(rng, i_shape, dtype, size)
                for mode in ("raise", "wrap", "clip"):
                    if numpy_would_hang(a, indices, axis, mode):
                        continue
                    count += 1
                    check(f"take(a{a_shape}, {indices.tolist()} {indices.dtype}, axis={axis}, {mode})",
                          outcome(lambda: np.take(a, indices, axis=axis, mode=mode)),
                          outcome(lambda: multigather.numpy.take(a, indices, axis=axis, mode=mode)),
                          numpy_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, count)


def test_numpy_take_along_axis_edge_cases():
    rng = np.random.default_rng(2)
    mismatches, count = [], 0
    for a_shape in shapes(3, (0, 1, 3)):
        a = np.arange(1, 1 + int(np.prod(a_shape)), dtype=np.float32).reshape(a_shape)
        for dtype, i_shape in itertools.product(INDEX_DTYPES, shapes(3, (0, 1, 2))):
            for axis in [None] + list(range(-a.ndim - 1, a.ndim + 1)):
                size = a.size if axis is None or not -a.ndim <= axis < a.ndim else a.shape[axis]
                indices = index_values(rng, i_shape, dtype, size)
                count += 1
                check(f"take_along_axis(a{a_shape}, {indices.tolist()} {indices.dtype}, axis={axis})",
                      outcome(lambda: np.take_along_axis(a, indices, axis=axis)),
                      outcome(lambda: multigather.numpy.take_along_axis(a, indices, axis=axis)),
                      numpy_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, count)


def test_numpy_advanced_index_edge_cases():
    """Integer index arrays only: a bool array in a[...] is a mask (another operation), which
    numpy.advanced_index rejects with TypeError, so bool is left out of this grid."""
    rng = np.random.default_rng(3)
    mismatches, count = [], 0
    for a_shape in shapes(3, (0, 1, 3)):
        a = np.arange(1, 1 + int(np.prod(a_shape)), dtype=np.float32).reshape(a_shape)
        for k in range(1, a.ndim + 1):
            for dims in itertools.combinations(range(a.ndim), k):
                for dtype, b_shape in itertools.product(INDEX_DTYPES[:8], shapes(2, (0, 1, 2))):
                    arrays = [index_values(rng, b_shape, dtype, a_shape[d]) for d in dims]
                    key = [slice(None)] * a.ndim
                    for d, array in zip(dims, arrays):
                        key[d] = array
                    stacked = np.stack(arrays, axis=-1)
                    count += 1
                    check(f"a{a_shape}[{dims}: {stacked.tolist()} {stacked.dtype}]",
                          outcome(lambda: a[tuple(key)]),
                          outcome(lambda: multigather.numpy.advanced_index(a, stacked, list(dims))),
                          numpy_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, count)


def test_numpy_known_cases():
    a = np.array([4.0, 3.0, 5.0, 7.0])
    big = np.array([2**64 - 1, 1], np.uint64)  # numpy casts to intp: -1, 1
    np.testing.assert_array_equal(multigather.numpy.take(a, big), np.take(a, big))
    np.testing.assert_array_equal(multigather.numpy.take(a, big, mode="clip"), np.take(a, big, mode="clip"))
    np.testing.assert_array_equal(multigather.numpy.take_along_axis(a, big, 0), np.take_along_axis(a, big, 0))
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(multigather.numpy.take(a, mask), np.take(a, mask))
    scalar = np.array(7.0)
    np.testing.assert_array_equal(multigather.numpy.take(scalar, [0, -1], axis=0),
                                  np.take(scalar, [0, -1], axis=0))
    with pytest.raises(IndexError):  # numpy: index 5 is out of bounds for axis 0 with size 3
        multigather.numpy.advanced_index(np.zeros((3, 0)), np.array([[5]]), [0])


# ---- ONNX Runtime ----------------------------------------------------------------------------


def onnx_runtime():
    onnx = pytest.importorskip("onnx", reason="onnx is not installed")
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    ort.set_default_logger_severity(4)
    from onnx import helper

    def run(op, data, indices, **attrs):
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

    del onnx
    return run


def onnx_error(error):
    text = str(error).lower()
    if "type error" in text and "indices" in text:
        return TypeError
    if re.search(r"out of (data )?bounds|out of range|invalid index", text):
        return IndexError
    return ValueError


ONNX_OPS = [("Gather", "gather", "axis"), ("GatherElements", "gather_elements", "axis")]


def test_onnx_gather_and_gather_elements_edge_cases():
    run = onnx_runtime()
    rng = np.random.default_rng(4)
    mismatches, count = [], 0
    for x_shape in shapes(2, (0, 1, 3)):
        x = np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
        r = max(x.ndim, 1)
        for (op, fn, attr), dtype, i_shape in itertools.product(ONNX_OPS, INDEX_DTYPES[:8],
                                                                 shapes(2, (0, 1, 2))):
            for axis in range(-r, r):
                indices = index_values(rng, i_shape, dtype, x_shape[axis] if x.ndim else 1)
                count += 1
                check(f"{op}(data{x_shape}, {indices.tolist()} {indices.dtype}, axis={axis})",
                      outcome(lambda: run(op, x, indices, axis=axis)),
                      outcome(lambda: getattr(multigather.onnx, fn)(x, indices, axis=axis)),
                      onnx_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, count)


def test_onnx_gather_nd_index_dtypes():
    """GatherND takes tensor(int64) only (ONNX Runtime refuses int32 when loading the model)."""
    run = onnx_runtime()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    mismatches = []
    for dtype in INDEX_DTYPES[:8]:
        indices = np.array([[2], [0]], dtype)
        check(f"GatherND(data(3, 4), {dtype.__name__})", outcome(lambda: run("GatherND", x, indices)),
              outcome(lambda: multigather.onnx.gather_nd(x, indices)), onnx_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, len(INDEX_DTYPES[:8]))


def test_onnx_gather_nd_empty_outputs():
    """GatherND on data with an empty dimension: ONNX Runtime 1.31 checks no index when the output
    is empty, and neither does multigather; out of range with a non-empty output fails in both.
    (ONNX Runtime also runs models that the ONNX spec calls invalid: indices.shape[-1] = 0,
    unequal batch dimensions, batch_dims >= rank; multigather rejects those as the spec says.)"""
    run = onnx_runtime()
    mismatches, count = [], 0
    for x_shape, i_values in [((3, 0), [[5]]), ((3, 0), [[-3]]), ((3, 3, 0), [[5, 1]]),
                              ((0, 3), [[0]]), ((0, 3), np.zeros((0, 1))), ((3, 0, 2), [[0, 1]])]:
        x = np.zeros(x_shape, np.float32)
        indices = np.asarray(i_values, np.int64)
        count += 1
        check(f"GatherND(data{x_shape}, {indices.tolist()})", outcome(lambda: run("GatherND", x, indices)),
              outcome(lambda: multigather.onnx.gather_nd(x, indices)), onnx_error, np.asarray, mismatches)
    assert_no_mismatch(mismatches, count)
