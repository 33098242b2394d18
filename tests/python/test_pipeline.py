"""The one pipeline from Python: lower_op -> execute, as python/src/op_bindings.cpp drives it.

- Typed attributes: Python values (bool, list, tuple, None, numpy integers and bools, floats)
  cross as typed values, no text; every result is checked against numpy.
- The overlap rule for ``out=``: an out that overlaps the input or the indices, or that
  addresses one element from several positions (a stride 0), is a ValueError and nothing is
  written.
- CUDA arrays (torch, cupy): every registry op family on the device equals the same call on
  host arrays (the CPU engine). Skipped without torch + a GPU + the CUDA engine; with
  MULTIGATHER_REQUIRE_GPU=1 on a machine where nvidia-smi lists a GPU, the skip is a failure.
- The wrappers (multigather.onnx, .torch, ...): each one runs a registry op and agrees with the
  op's registry row (parameter names = the framework's argument names in the row's signature,
  the docstring names the op or its source).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

import multigather
from multigather import _registry

OVERLAP = "out overlaps input or indices (gather cannot write into memory it reads)"
SENTINEL = -777.0


def floats(shape, seed=0):
    """Distinct float32 values (so a wrong element is never equal by chance)."""
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) * 10 + 0.5).reshape(shape)


# ---- typed attributes -----------------------------------------------------------------------


def test_int_list_and_tuple_attributes():
    # gather_multiaxis axes=[1, 0] on x [4,5,6]: coordinate 0 indexes dim 1, coordinate 1 dim 0,
    # so a pair (a, b) reads x[b, a, :]. Indices [1, 2, 2] (two pairs) -> output [1, 2, 6].
    x = floats((4, 5, 6))
    ids = np.array([[3, 1], [0, 2]], dtype=np.int64)
    want = np.stack([x[ids[p, 1], ids[p, 0], :] for p in range(2)])[None]
    for axes in ([1, 0], (1, 0), [np.int64(1), np.int32(0)], range(1, -1, -1)):
        got = multigather.run("gather_multiaxis", x, ids.reshape(1, 2, 2), axes=axes)
        assert got.shape == (1, 2, 6)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(multigather.gather_multiaxis(x, ids.reshape(1, 2, 2), axes), want)


def test_numpy_array_as_an_int_list_attribute():
    x = floats((4, 5, 6))
    ids = np.array([[3, 1], [0, 2]], dtype=np.int64).reshape(1, 2, 2)
    np.testing.assert_array_equal(multigather.run("gather_multiaxis", x, ids, axes=np.array([1, 0])),
                                  multigather.run("gather_multiaxis", x, ids, axes=[1, 0]))


def test_stablehlo_tuple_and_list_attributes_match_numpy():
    operand = floats((3, 4))
    starts = np.array([[2], [0], [5]], dtype=np.int32)  # 5 clamps to 2 (point gather: D - 1)
    want = operand[np.clip(starts[:, 0], 0, 2)]  # rows
    kw = dict(offset_dims=(1,), collapsed_slice_dims=[0], start_index_map=(0,), index_vector_dim=1,
              slice_sizes=[1, 4])
    np.testing.assert_array_equal(multigather.run("stablehlo.gather", operand, starts, **kw), want)
    np.testing.assert_array_equal(multigather.stablehlo.gather(operand, starts, **kw), want)


def test_none_means_the_default_or_absent():
    x = floats((3, 4))
    i = np.array([[5, 0], [11, -1]], dtype=np.int64)
    # numpy.take axis=None: flatten (an optional int: None is "absent").
    np.testing.assert_array_equal(multigather.run("numpy.take", x, i, axis=None), np.take(x, i))
    # onnx.Gather axis=None: the default, 0.
    j = np.array([2, 0], dtype=np.int64)
    np.testing.assert_array_equal(multigather.run("onnx.Gather", x, j, axis=None), np.take(x, j, axis=0))
    # jax.numpy.take mode=None, fill_value=None: jax's defaults (fill with NaN out of range).
    got = multigather.run("jax.numpy.take", x, np.array([1, 7], dtype=np.int64), axis=1, mode=None,
                          fill_value=None)
    want = np.stack([x[:, 1], np.full(3, np.nan, np.float32)], axis=1)
    np.testing.assert_array_equal(got, want)


def test_numpy_integer_and_bool_scalars():
    x = floats((3, 4))
    j = np.array([3, -1, 0], dtype=np.int64)
    for axis in (np.int64(1), np.int32(1), np.uint8(1), 1):
        np.testing.assert_array_equal(multigather.run("onnx.Gather", x, j, axis=axis),
                                      np.take(x, j, axis=1))
    np.testing.assert_array_equal(multigather.run("gather_multiaxis", x, j.reshape(1, 3),
                                                  axes=[np.int64(1)]), np.take(x, j, axis=1))
    # numpy bools where a bool is expected: negative_indices=np.False_ makes -1 out of range,
    # so clamp sends it to 0 (numpy: clip without the negative rule).
    got = multigather.run("gather_multiaxis", x, j.reshape(1, 3), axes=[1], index_mode="clamp",
                          negative_indices=np.False_)
    np.testing.assert_array_equal(got, np.take(x, np.clip(j, 0, 3), axis=1))
    got = multigather.run("gather_multiaxis", x, j.reshape(1, 3), axes=[1], index_mode="clamp",
                          negative_indices=np.True_)
    np.testing.assert_array_equal(got, np.take(x, j, axis=1))


def test_bool_attributes():
    x = floats((3, 4))
    bad = np.array([1, 9], dtype=np.int64)
    # tensor.gather rank_reduced: True drops the gathered dim, False keeps it as 1.
    src = floats((4, 5))
    ids = np.array([[3], [1]], dtype=np.int64)
    kept = multigather.run("tensor.gather", src, ids, gather_dims=[0], rank_reduced=False)
    dropped = multigather.run("tensor.gather", src, ids, gather_dims=[0], rank_reduced=True)
    np.testing.assert_array_equal(dropped, src[[3, 1]])
    np.testing.assert_array_equal(kept, src[[3, 1]][:, None, :])
    # coreml validate_indices=True: out of range is an error.
    with pytest.raises(IndexError):
        multigather.run("coreml.gather", x, bad, axis=1, validate_indices=True)
    with pytest.raises(IndexError):
        multigather.coreml.gather(x, bad, axis=1, validate_indices=np.True_)


def test_float_fill_value():
    x = floats((3, 4))
    i = np.array([[2, 7, -1]], dtype=np.int64)  # 7 is out of range
    got = multigather.run("gather_multiaxis", x, i, axes=[1], index_mode="fill", fill_value=-2.5)
    want = np.where(i[0] < 4, np.take(x, np.where(i[0] < 4, i[0], 0), axis=1), np.float32(-2.5))
    np.testing.assert_array_equal(got, want)
    got = multigather.run("jax.numpy.take", x, i[0], axis=1, mode="fill", fill_value=1.25)
    want = np.take(x, np.where(i[0] < 4, i[0], 0), axis=1)
    want[:, 1] = 1.25
    np.testing.assert_array_equal(got, want)
    # An int fill value where the dtype is float, a float where it is int: exact or refused.
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = multigather.run("gather_multiaxis", xi, i, axes=[1], index_mode="fill", fill_value=7)
    assert (got[:, 1] == 7).all() and got.dtype == np.int32
    with pytest.raises(ValueError, match="fill_value 1.5 is not representable in int32"):
        multigather.run("gather_multiaxis", xi, i, axes=[1], index_mode="fill", fill_value=1.5)


def test_wrong_types_are_type_errors_naming_the_attribute():
    x = floats((3, 4))
    j = np.array([0], dtype=np.int64)
    cases = [
        (dict(axis="1"), "onnx.Gather: attribute axis: expected int, got string '1'"),
        (dict(axis=True), "onnx.Gather: attribute axis: expected int, got bool true"),
        (dict(axis=np.True_), "onnx.Gather: attribute axis: expected int, got bool true"),
        (dict(axis=1.0), "onnx.Gather: attribute axis: expected int, got float 1"),
        (dict(axis=[1]), "onnx.Gather: attribute axis: expected int, got int list [1]"),
    ]
    for attrs, message in cases:
        with pytest.raises(TypeError) as e:
            multigather.run("onnx.Gather", x, j, **attrs)
        assert str(e.value) == message, attrs
        assert "--" not in str(e.value)
    with pytest.raises(TypeError, match=r"^attribute axes\[1\] must be an int, not str$"):
        multigather.run("gather_multiaxis", x, j.reshape(1, 1), axes=[0, "1"])
    with pytest.raises(TypeError, match=r"^numpy.take: attribute mode: expected enum, got int 1$"):
        multigather.run("numpy.take", x, j, mode=1)


def test_unknown_attribute_and_bad_choice_are_value_errors_naming_the_attribute():
    x = floats((3, 4))
    j = np.array([0], dtype=np.int64)
    with pytest.raises(ValueError) as e:
        multigather.run("onnx.Gather", x, j, dim=0)
    assert str(e.value) == "onnx.Gather has no attribute 'dim' (attributes: axis)"
    with pytest.raises(ValueError) as e:
        multigather.run("numpy.take", x, j, mode="clamp")
    assert str(e.value) == "numpy.take: attribute mode: 'clamp' is not one of raise, wrap, clip"
    with pytest.raises(ValueError) as e:
        multigather.run("tf.gather", x, j, batch_dims=0, **{"batch-dims": 0})
    assert str(e.value) == "tf.gather: attribute 'batch_dims' is given twice"
    for message in (str(e.value),):
        assert "--" not in message


# ---- the overlap rule -----------------------------------------------------------------------


def writable_broadcast(base, shape, strides_elems):
    """A writable view of ``base`` with element strides (np.broadcast_to is read-only)."""
    return np.lib.stride_tricks.as_strided(
        base, shape=shape, strides=[s * base.itemsize for s in strides_elems], writeable=True)


@pytest.mark.parametrize("call", ["run", "wrapper", "gather_multiaxis"])
def test_out_over_the_input_is_refused_and_nothing_is_written(call):
    x = floats((5, 3))
    before = x.copy()
    j = np.array([4, 0], dtype=np.int64)
    for out in (x[:2], x[3:], x[::-1][:2], x.T.T[1:3]):
        with pytest.raises(ValueError) as e:
            if call == "run":
                multigather.run("onnx.Gather", x, j, axis=0, out=out)
            elif call == "wrapper":
                multigather.numpy.take(x, j, axis=0, out=out)
            else:
                multigather.gather_multiaxis(x, j[:, None], [0], out=out)
        assert str(e.value) == OVERLAP
        np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("call", ["run", "gather_multiaxis"])
def test_out_over_the_indices_is_refused_and_nothing_is_written(call):
    storage = np.zeros(16, dtype=np.int64)
    storage[12:] = [4, 0, 1, 2]
    j = storage[12:]
    x = np.arange(15, dtype=np.int64).reshape(5, 3)
    out = storage[1:13].reshape(4, 3)  # its last element is j[0]
    with pytest.raises(ValueError) as e:
        if call == "run":
            multigather.run("onnx.Gather", x, j, axis=0, out=out)
        else:
            multigather.gather_multiaxis(x, j[:, None], [0], out=out)
    assert str(e.value) == OVERLAP
    np.testing.assert_array_equal(storage[12:], [4, 0, 1, 2])
    np.testing.assert_array_equal(storage[:12], 0)


@pytest.mark.parametrize("call", ["run", "stablehlo", "gather_multiaxis"])
def test_stride_zero_and_interleaved_out_is_refused_and_nothing_is_written(call):
    x = floats((5, 3))
    j = np.array([4, 0, 1, 2], dtype=np.int64)
    for strides in ((0, 1), (1, 0), (1, 1)):
        base = np.full(32, SENTINEL, dtype=np.float32)
        out = writable_broadcast(base[4:], (4, 3), strides)
        with pytest.raises(ValueError) as e:
            if call == "run":
                multigather.run("onnx.Gather", x, j, axis=0, out=out)
            elif call == "stablehlo":  # a permuted result: the staging path checks the caller's view
                multigather.run("stablehlo.gather", x.T.copy(), j[:, None], offset_dims=[1],
                                collapsed_slice_dims=[1], start_index_map=[1], index_vector_dim=1,
                                slice_sizes=[3, 1], out=out)
            else:
                multigather.gather_multiaxis(x, j[:, None], [0], out=out)
        assert "address one element from several positions" in str(e.value), str(e.value)
        np.testing.assert_array_equal(base, SENTINEL)


def test_stride_zero_out_message_names_the_callers_view():
    x = floats((5, 3))
    j = np.array([4, 0, 1, 2], dtype=np.int64)
    out = writable_broadcast(np.zeros(8, np.float32), (4, 3), (0, 1))
    with pytest.raises(ValueError) as e:
        multigather.run("onnx.Gather", x, j, axis=0, out=out)
    assert str(e.value) == ("out strides [0,1] with shape [4,3] address one element from several "
                            "positions (a stride 0 or interleaved strides): writes through it "
                            "would race and lose data")


def test_strided_out_equals_the_contiguous_result():
    x = floats((5, 3))
    j = np.array([4, 0, -1, 2], dtype=np.int64)
    want = np.take(x, j, axis=0)
    buf = np.full((3, 4), SENTINEL, dtype=np.float32)
    out = buf.T
    assert multigather.run("onnx.Gather", x, j, axis=0, out=out) is out
    np.testing.assert_array_equal(buf.T, want)
    buf = np.full((8, 3), SENTINEL, dtype=np.float32)
    multigather.run("onnx.Gather", x, j, axis=0, out=buf[::2])
    np.testing.assert_array_equal(buf[::2], want)
    np.testing.assert_array_equal(buf[1::2], SENTINEL)
    # A permuted core result (stablehlo offset_dims=[0]) into a transposed out: staged.
    operand = floats((3, 4))
    starts = np.array([[2], [0]], dtype=np.int64)
    buf = np.full((2, 4), SENTINEL, dtype=np.float32)
    multigather.run("stablehlo.gather", operand, starts, offset_dims=[0], collapsed_slice_dims=[0],
                    start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 4], out=buf.T)
    np.testing.assert_array_equal(buf, operand[[2, 0]])


# ---- CUDA arrays against the CPU engine -----------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _nvidia_smi_lists_a_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and "GPU" in r.stdout


def _cuda_unavailable_reason(framework: str) -> str | None:
    if not multigather._multigather.has_cuda:
        return "multigather was built without its CUDA engine"
    if framework == "torch":
        torch = _torch()
        if torch is None:
            return "torch is not installed"
        if not torch.cuda.is_available():
            return "torch sees no CUDA device"
    else:
        try:
            import cupy
        except ImportError:
            return "cupy is not installed"
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                return "cupy sees no CUDA device"
        except Exception as e:  # cupy without a driver raises here
            return f"cupy sees no CUDA device ({e})"
    return None


def require_cuda(framework: str):
    """Skips without a usable GPU; with MULTIGATHER_REQUIRE_GPU=1 on a machine whose nvidia-smi
    lists a GPU, fails instead (a GPU machine never silently skips the CUDA tests)."""
    reason = _cuda_unavailable_reason(framework)
    if reason is None:
        return
    if os.environ.get("MULTIGATHER_REQUIRE_GPU") == "1" and _nvidia_smi_lists_a_gpu():
        if framework == "cupy" and reason == "cupy is not installed":
            pytest.skip(reason)  # cupy is optional even on a GPU machine
        pytest.fail(f"MULTIGATHER_REQUIRE_GPU=1 and nvidia-smi lists a GPU, but: {reason}")
    pytest.skip(reason)


def test_require_gpu_turns_the_skip_into_a_failure(monkeypatch):
    # The rule itself, on any machine: with the variable set and a GPU listed, an unusable CUDA
    # setup fails; without the variable it skips.
    monkeypatch.setattr(multigather._multigather, "has_cuda", False, raising=False)
    monkeypatch.setitem(globals(), "_nvidia_smi_lists_a_gpu", lambda: True)
    monkeypatch.setenv("MULTIGATHER_REQUIRE_GPU", "1")
    with pytest.raises(pytest.fail.Exception, match="MULTIGATHER_REQUIRE_GPU=1"):
        require_cuda("torch")
    monkeypatch.delenv("MULTIGATHER_REQUIRE_GPU")
    with pytest.raises(pytest.skip.Exception):
        require_cuda("torch")


# (op, input shape, input maker, indices, attrs): one call per registry op family, indices valid
# under every rule (numpy arrays; moved to the device per test).
def _cuda_cases():
    rng = np.random.default_rng(11)
    x3 = rng.standard_normal((4, 5, 6)).astype(np.float32)
    return [
        ("onnx.Gather", x3, np.array([[3, -1], [0, 2]], np.int64), dict(axis=1)),
        ("onnx.GatherElements", x3, rng.integers(0, 5, (4, 3, 6)).astype(np.int64), dict(axis=1)),
        ("onnx.GatherND", x3, rng.integers(0, 4, (2, 3, 2)).astype(np.int64), dict(batch_dims=0)),
        ("onnx.GatherND", x3, rng.integers(0, 5, (4, 2, 1)).astype(np.int64), dict(batch_dims=1)),
        ("torch.gather", x3, rng.integers(0, 6, (4, 5, 2)).astype(np.int64), dict(dim=2)),
        ("torch.index_select", x3, np.array([4, 0, 4], np.int64), dict(dim=1)),
        ("numpy.take", x3, np.array([[5, -3], [2, 7]], np.int64), dict(axis=2, mode="wrap")),
        ("numpy.take", x3, np.array([1, 99], np.int64), dict(axis=None, mode="clip")),
        ("tf.gather_nd", x3, rng.integers(0, 4, (3, 1)).astype(np.int64), dict(batch_dims=0)),
        ("tf.gather_nd", x3, rng.integers(0, 5, (4, 2, 1)).astype(np.int32), dict(batch_dims=1)),
        ("stablehlo.gather", x3, np.array([[3, 9], [0, -2], [2, 4]], np.int64),
         dict(offset_dims=[1], collapsed_slice_dims=[0, 1], start_index_map=[0, 1],
              index_vector_dim=1, slice_sizes=[1, 1, 6])),
    ]


def _cases_ids():
    return [f"{op}-{i}" for i, (op, *_rest) in enumerate(_cuda_cases())]


def _wrapper_call(op, x, i, attrs):
    """The same call through the op's wrapper function (multigather.onnx.gather, ...)."""
    w = {"onnx.Gather": lambda: multigather.onnx.gather(x, i, **attrs),
         "onnx.GatherElements": lambda: multigather.onnx.gather_elements(x, i, **attrs),
         "onnx.GatherND": lambda: multigather.onnx.gather_nd(x, i, **attrs),
         "torch.gather": lambda: multigather.torch.gather(x, attrs["dim"], i),
         "torch.index_select": lambda: multigather.torch.index_select(x, attrs["dim"], i),
         "numpy.take": lambda: multigather.numpy.take(x, i, **attrs),
         "tf.gather_nd": lambda: multigather.tf.gather_nd(x, i, **attrs),
         "stablehlo.gather": lambda: multigather.stablehlo.gather(x, i, **attrs)}
    return w[op]()


@pytest.mark.parametrize("case", range(len(_cuda_cases())), ids=_cases_ids())
@pytest.mark.parametrize("through", ["run", "wrapper"])
def test_torch_cuda_equals_the_cpu_engine(case, through):
    require_cuda("torch")
    import torch
    op, x, i, attrs = _cuda_cases()[case]
    want = multigather.run(op, x, i, **attrs)  # the CPU engine on host arrays
    xd, id_ = torch.from_numpy(x).cuda(), torch.from_numpy(i).cuda()
    got = multigather.run(op, xd, id_, **attrs) if through == "run" else _wrapper_call(op, xd, id_, attrs)
    assert isinstance(got, torch.Tensor) and got.device == xd.device
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    # A device out=, then a transposed (non-contiguous) device view of the input, read in place
    # (not for numpy.take axis=None: flattening a non-contiguous input would copy on the host,
    # which a CUDA lowering refuses).
    out = torch.full(tuple(want.shape), SENTINEL, device="cuda")
    assert multigather.run(op, xd, id_, out=out, **attrs) is out
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    if attrs.get("axis", 0) is not None:
        xs = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 1, 0))).cuda().permute(2, 1, 0)
        assert not xs.is_contiguous()
        np.testing.assert_array_equal(multigather.run(op, xs, id_, **attrs).cpu().numpy(), want)


@pytest.mark.parametrize("case", range(len(_cuda_cases())), ids=_cases_ids())
def test_cupy_cuda_equals_the_cpu_engine(case):
    require_cuda("cupy")
    import cupy
    op, x, i, attrs = _cuda_cases()[case]
    want = multigather.run(op, x, i, **attrs)
    got = multigather.run(op, cupy.asarray(x), cupy.asarray(i), **attrs)
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), want)


def test_cuda_cases_match_numpy_on_the_cpu():
    # The CPU results the CUDA tests compare with, against numpy (runs on every machine).
    cases = _cuda_cases()
    x = cases[0][1]
    np.testing.assert_array_equal(multigather.run(*cases[0][:3], **cases[0][3]),
                                  np.take(x, cases[0][2], axis=1))
    np.testing.assert_array_equal(multigather.run(*cases[1][:3], **cases[1][3]),
                                  np.take_along_axis(x, cases[1][2], axis=1))
    i = cases[2][2]
    np.testing.assert_array_equal(multigather.run(*cases[2][:3], **cases[2][3]), x[i[..., 0], i[..., 1]])
    i = cases[3][2]
    np.testing.assert_array_equal(multigather.run(*cases[3][:3], **cases[3][3]),
                                  np.stack([x[b][i[b, :, 0]] for b in range(4)]))
    np.testing.assert_array_equal(multigather.run(*cases[4][:3], **cases[4][3]),
                                  np.take_along_axis(x, cases[4][2], axis=2))
    np.testing.assert_array_equal(multigather.run(*cases[5][:3], **cases[5][3]),
                                  np.take(x, cases[5][2], axis=1))
    np.testing.assert_array_equal(multigather.run(*cases[6][:3], **cases[6][3]),
                                  np.take(x, cases[6][2], axis=2, mode="wrap"))
    np.testing.assert_array_equal(multigather.run(*cases[7][:3], **cases[7][3]),
                                  np.take(x, cases[7][2], mode="clip"))
    i = cases[8][2]
    np.testing.assert_array_equal(multigather.run(*cases[8][:3], **cases[8][3]), x[i[:, 0]])
    i = cases[9][2]
    np.testing.assert_array_equal(multigather.run(*cases[9][:3], **cases[9][3]),
                                  np.stack([x[b][i[b, :, 0]] for b in range(4)]))
    s = cases[10][2]
    starts = np.stack([np.clip(s[:, 0], 0, 3), np.clip(s[:, 1], 0, 4)], axis=1)
    np.testing.assert_array_equal(multigather.run(*cases[10][:3], **cases[10][3]),
                                  x[starts[:, 0], starts[:, 1]])


# ---- the wrappers agree with the registry ---------------------------------------------------

WRAPPER_MODULES = ["onnx", "torch", "numpy", "tf", "jax", "coreml", "tosa", "mlir", "stablehlo",
                   "webnn", "dml", "torch_scatter"]

# Fields of a struct argument that a framework signature names as one parameter and the wrapper
# takes field by field (StableHLO's #stablehlo.gather dimension numbers, spec section "gather").
STRUCT_FIELDS = {
    "dimension_numbers": ["offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                          "start_indices_batching_dims", "start_index_map", "index_vector_dim"],
    "scatter_dimension_numbers": ["update_window_dims", "inserted_window_dims", "input_batching_dims",
                                  "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
                                  "index_vector_dim"],
}


def _fast_handles(module) -> dict[str, tuple[str, list[str]]]:
    """Module-level ``NAME = fast_op("op", "attr", ...)`` assignments: NAME -> (op, attrs),
    including the handles a module imports from a sibling (``from .torch import _GATHER``)."""
    handles = {}
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            sibling = _fast_handles(importlib.import_module(f"multigather.{node.module}"))
            handles.update({a.asname or a.name: sibling[a.name] for a in node.names if a.name in sibling})
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "fast_op"):
            values = [a.value for a in node.value.args if isinstance(a, ast.Constant)]
            for target in node.targets:
                if isinstance(target, ast.Name):
                    handles[target.id] = (values[0], values[1:])
    return handles


# Public adapter functions that are compositions, not one registry op: torch.embedding is
# index_select (registry op "torch.index_select", dim 0) of the flattened indices, reshaped; torch.index is one
# gather_multiaxis of a permuted view; torch.routing returns a torch function mode, torch.library_path a path;
# jax.at(x) returns JAX's x.at helper, whose methods run the jax.at_* wrappers; jax.set_jit_ops /
# jit_ops set and read how gathers and scatters run under jit.
COMPOSITE_WRAPPERS = {("torch", "embedding"), ("torch", "index"), ("torch", "routing"), ("torch", "library_path"),
                      ("jax", "at"), ("jax", "set_jit_ops"), ("jax", "jit_ops")}
# torch_scatter's aliases and fixed-reduction forms (scatter_max, segment_sum_csr, ...) call
# scatter / segment_coo / segment_csr, the module's three registry rows.
COMPOSITE_WRAPPERS |= {("torch_scatter", n) for n in importlib.import_module("multigather.torch_scatter")._COMPOSITES}
# multigather.onnx's whole-model tools (lower_model, ...) are no wrappers of one row.
COMPOSITE_WRAPPERS |= {("onnx", n) for n in importlib.import_module("multigather.onnx")._MODEL_TOOLS}
# Parameters a framework signature has that the row takes as ONE operand: torch.segment_reduce's
# lengths / offsets (the row's lengths, with the attribute lengths_are_offsets) and indices
# (refused, as PyTorch refuses it).
ALTERNATIVE_OPERANDS = {("torch", "segment_reduce"): {"offsets", "indices"}}
# Parameters of a framework signature that the wrapper refuses when given (NotImplementedError)
# instead of passing them on: F.embedding_bag's max_norm (it renormalizes the table in place),
# scale_grad_by_freq and sparse (gradient forms); norm_type only matters with max_norm.
REFUSED_PARAMETERS = {("torch", "embedding_bag"): {"max_norm", "norm_type", "scale_grad_by_freq", "sparse"}}
# Parameters of a framework signature that the wrapper implements itself around the row's call
# (its helper takes them by name; they are no registry attribute): jax.ops.segment_*'s
# bucket_size (sum / prod: a reduction per bucket of rows, then over the buckets; max / min: no
# effect) and out_sharding (None only, else NotImplementedError).
WRAPPER_PARAMETERS = {("jax", f"segment_{r}"): {"bucket_size", "out_sharding"} for r in ("sum", "prod", "max", "min")}


def _wrappers():
    """(module, function name, function, op, general call, fast calls) for every public wrapper
    function. The op is read from the wrapper's source: the registry op name passed as the first
    argument of its call into the registry (``run("onnx.Gather", ...)`` or
    ``run_general("onnx.Gather", ...)``); fast calls are its ``run_fast(HANDLE, ...)`` calls,
    each with the (op, attribute names) of the module-level ``HANDLE = fast_op(...)``."""
    found = []
    for mod_name in WRAPPER_MODULES:
        mod = importlib.import_module(f"multigather.{mod_name}")
        handles = _fast_handles(mod)
        for name in mod.__all__:
            if (mod_name, name) in COMPOSITE_WRAPPERS:
                continue
            fn = getattr(mod, name)
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
            calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
            general = [n for n in calls if n.args and isinstance(n.args[0], ast.Constant)
                       and n.args[0].value in _registry.OPS]
            ops = {n.args[0].value for n in general}
            assert len(ops) == 1, f"multigather.{mod_name}.{name} runs {sorted(ops)} (expected one op)"
            # A function made from its row (_registry.op_function) names its own handle.
            fn_handles = {**handles, **getattr(fn, "fast_handles", {})}
            fast = [(fn_handles.get(n.args[0].id) if isinstance(n.args[0], ast.Name) else None, n)
                    for n in calls if isinstance(n.func, ast.Name) and n.func.id == "run_fast"]
            found.append((mod_name, name, fn, ops.pop(), general[0], fast))
    return found


WRAPPERS = _wrappers()


def _snake(name: str) -> str:
    """InputTensor -> input_tensor, IndexDimensions -> index_dimensions, axis -> axis."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur] if cur.strip() else parts


def signature_params(signature: str) -> list[str] | None:
    """The argument names of a registry row's signature, in order, snake_case:
    "Gather(data, indices, axis=0)" -> [data, indices, axis]; "gather(input, indices, {axis=0})"
    -> [input, indices, axis]; MLIR assembly "tcp.gather %input, %indices {dim}" -> [input,
    indices, dim]; "DML_GATHER_OPERATOR_DESC{InputTensor, ...}" -> [input_tensor, ...]. None for
    a signature that is an expression, not a call (numpy.advanced_index: "a[idx_0, ...]")."""
    m = re.match(r"^\s*[\w.]+\s*([({])", signature)
    if m:
        close = {"(": ")", "{": "}"}[m.group(1)]
        depth, start = 0, m.end()
        for k in range(m.start(1), len(signature)):
            depth += signature[k] in "([{"
            depth -= signature[k] in ")]}"
            if depth == 0 and signature[k] == close:
                body = signature[start:k]
                break
        names = []
        for item in _split_top_level(body):
            item = item.strip().strip("{}").split("=")[0].strip()
            names.append(_snake(item))
        return names
    if "%" in signature:
        names = []
        for mm in re.finditer(r"%(\w+)|\{(\w+)\}|(\w+)\(", signature):
            names.append(next(g for g in mm.groups() if g))
        return names
    return None


def expected_params(op: str) -> list[str]:
    row = _registry.OPS[op]
    names = signature_params(row["signature"])
    if names is None:  # an expression: the row's operand names (updates too) and attributes
        names = [row["input_name"], row["indices_name"]]
        names += [row["updates_name"]] if row["kind"] == "scatter" else []
        names += [a["name"] for a in row["attrs"]]
    out = []
    for n in names:
        # Python's keyword-only marker (torch.index_add(..., *, alpha=1)) is not a name; ``out``
        # (torch.take_along_dim(..., *, out=None)) is the caller's buffer, as _params_for_check
        # leaves it out of the wrappers' names.
        if n in ("*", "out"):
            continue
        out.extend(STRUCT_FIELDS.get(n, [n]))
    return out


# Genuine, explained differences between a wrapper and its registry row (strict xfail: when the
# wrapper or the row changes so that they agree, the xfail must go).
KNOWN_DIFFERENCES = {
    ("torch", "segment_reduce"):
        "PyTorch's signature takes lengths, offsets and indices as keyword tensors; the row takes "
        "one operand, lengths, and the attribute lengths_are_offsets",
    ("mlir", "tensor_gather"):
        "rank_reduced is not an argument of MLIR's tensor.gather assembly form: it is the "
        "rank-reduced result TYPE; the wrapper takes it as a keyword, the row's signature "
        "cannot name it",
    ("dml", "gather"):
        "DirectML's descriptor fields are InputTensor / IndicesTensor (C structs); the wrapper "
        "names its operands input / indices, like every other framework module",
    ("dml", "gather_elements"):
        "DirectML's descriptor fields are InputTensor / IndicesTensor; the wrapper names its "
        "operands input / indices",
    ("dml", "gather_nd"):
        "DirectML's descriptor fields are InputTensor / IndicesTensor; the wrapper names its "
        "operands input / indices",
    ("dml", "scatter_elements"):
        "DirectML's descriptor fields are InputTensor / IndicesTensor / UpdatesTensor; the wrapper "
        "names its operands input / indices / updates",
    ("dml", "scatter_nd"):
        "DirectML's descriptor fields are InputTensor / IndicesTensor / UpdatesTensor; the wrapper "
        "names its operands input / indices / updates",
    ("mlir", "tensor_scatter"):
        "MLIR's assembly form puts the source first and dest second (tensor.scatter %source into "
        "%dest[%indices]); the wrapper follows it, while the row names dest as the input operand; "
        "unique is a unit attribute of the assembly form",
}


def _params_for_check(fn) -> tuple[list[str], set[str]]:
    """Positional-or-keyword parameter names in order, and keyword-only names, without ``out``
    (numpy.take's caller buffer: a run() argument, not an attribute of the op)."""
    ps = inspect.signature(fn).parameters.values()
    positional = [p.name for p in ps if p.kind is not p.KEYWORD_ONLY and p.name != "out"]
    keyword = {p.name for p in ps if p.kind is p.KEYWORD_ONLY and p.name != "out"}
    return positional, keyword


def test_every_registry_op_has_a_wrapper_and_every_wrapper_a_registry_op():
    ops = {w[3] for w in WRAPPERS}
    unknown = sorted(op for op in ops if op not in _registry.OPS)
    assert not unknown, f"wrappers run ops the registry does not have: {unknown}"
    missing = sorted(set(_registry.OPS) - ops - {"gather_multiaxis", "scatter_multiaxis"})
    assert not missing, f"registry ops without a wrapper function: {missing}"


@pytest.mark.parametrize("mod_name,name,fn,op,call,fast",
                         [pytest.param(*w, id=f"{w[0]}.{w[1]}",
                                       marks=([pytest.mark.xfail(strict=True,
                                                                 reason=KNOWN_DIFFERENCES[w[:2]])]
                                              if w[:2] in KNOWN_DIFFERENCES else []))
                          for w in WRAPPERS])
def test_wrapper_parameters_are_the_signature_arguments(mod_name, name, fn, op, call, fast):
    positional, keyword = _params_for_check(fn)
    want = expected_params(op)
    got = positional + sorted(keyword)
    # Positional parameters in the signature's order; keyword-only ones as a set.
    assert positional == want[:len(positional)], (positional, want)
    assert set(got) == set(want), f"wrapper {sorted(set(got) - set(want))} / signature {sorted(set(want) - set(got))}"


@pytest.mark.parametrize("mod_name,name,fn,op,call,fast", [pytest.param(*w, id=f"{w[0]}.{w[1]}") for w in WRAPPERS])
def test_wrapper_docstring_carries_its_registry_row(mod_name, name, fn, op, call, fast):
    # The row's facts (signature, formula, every attribute, source) reach the Python docstring
    # from the C++ row itself (_registry.document), not by hand: they cannot drift.
    row = _registry.OPS[op]
    doc = inspect.getdoc(fn)
    assert fn.registry_op == op
    assert f"Registry op {op!r}" in doc and row["signature"] in doc and row["formula"] in doc
    assert f"Source: {row['source']}" in doc
    assert row["rules"] and f"Rules: {row['rules']}." in " ".join(doc.split())
    assert f"Index rule: {row['index_rule']}." in " ".join(doc.split())
    for a in row["attrs"]:
        assert f"{a['name']}" in doc and a["help"] in doc, a["name"]


FACTORY_MADE = [w for w in WRAPPERS if getattr(w[2], "made_from_row", False)]


def test_the_one_factory_makes_the_pass_through_wrappers():
    made = {(w[0], w[1]) for w in FACTORY_MADE}
    assert {("onnx", n) for n in importlib.import_module("multigather.onnx").__all__} - COMPOSITE_WRAPPERS <= made
    assert len(made) >= 20, sorted(made)


@pytest.mark.parametrize("mod_name,name,fn,op,call,fast", [pytest.param(*w, id=f"{w[0]}.{w[1]}") for w in FACTORY_MADE])
def test_factory_function_is_its_row(mod_name, name, fn, op, call, fast):
    # Parameters: the row's operands, then its attributes with their typed defaults, in order,
    # all positional-or-keyword; the docstring is the row's, entirely.
    row = _registry.OPS[op]
    params = list(inspect.signature(fn).parameters.values())
    assert [(p.name, p.default) for p in params] == _registry.function_parameters(op)
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    operands = [row["input_name"], row["indices_name"]] + ([row["updates_name"]] if row["kind"] == "scatter" else [])
    assert [p.name for p in params] == operands + [a["name"] for a in row["attrs"]]
    for p, a in zip(params[len(operands):], row["attrs"]):
        # The default is the row's default text, typed: "0" -> 0, "none" -> None (an enum keeps
        # its text: onnx's reduction "none"), "false" -> False.
        if a["type"] == "enum":
            assert p.default == a["default"]
        elif a["default"] == "none":
            assert p.default is None
        elif a["type"] == "bool":
            assert p.default is (a["default"] == "true")
        elif a["type"] == "int":
            assert p.default == int(a["default"])
    assert fn.__doc__ == _registry.function_doc(op, name)
    assert _registry.row_doc(op) in fn.__doc__
    assert (fn.__name__, fn.__qualname__, fn.__module__) == (name, name, f"multigather.{mod_name}")
    assert fn.registry_op == op and _registry.registry_op_of(fn) == op


@pytest.mark.parametrize("mod_name,name,fn,op,call,fast", [pytest.param(*w, id=f"{w[0]}.{w[1]}") for w in WRAPPERS])
def test_wrapper_passes_its_parameters_to_the_registry_under_their_names(mod_name, name, fn, op,
                                                                          call, fast):
    row = _registry.OPS[op]
    params = set(inspect.signature(fn).parameters)
    attrs = [a["name"] for a in row["attrs"]]
    # The general call: run(op, <input>, <indices>[, out], name=name, ...): every keyword is a
    # registry attribute fed from the parameter of the same name; the operands are parameters.
    # A scatter's call is run_scatter(op, <input>, <indices>, <updates>[, out]); an in-place
    # scatter (numpy.put_along_axis, numpy.add_at) passes its input as out.
    scatter = isinstance(call.func, ast.Name) and call.func.id == "run_scatter"
    n_operands = 3 if scatter else 2
    assert 1 + n_operands <= len(call.args) <= 2 + n_operands, ast.dump(call)
    operands = [a.id for a in call.args[1:1 + n_operands]]
    assert all(o in params for o in operands), operands
    if len(call.args) == 2 + n_operands:
        last = call.args[-1]
        assert isinstance(last, ast.Name) and (last.id == "out" or (scatter and last.id == operands[0])), \
            ast.dump(call)
    for kw in call.keywords:
        if kw.arg == "out" or kw.arg in WRAPPER_PARAMETERS.get((mod_name, name), set()):
            continue
        assert kw.arg in attrs, f"{op} has no attribute {kw.arg} (attributes: {attrs})"
        assert isinstance(kw.value, ast.Name) and kw.value.id == kw.arg, ast.dump(kw)
    passed = {kw.arg for kw in call.keywords} | set(operands) | {"out"}
    passed |= ALTERNATIVE_OPERANDS.get((mod_name, name), set()) | REFUSED_PARAMETERS.get((mod_name, name), set())
    assert params <= passed, f"parameters not passed to the registry: {sorted(params - passed)}"
    # The fast path, if any: the same op and operands, the attributes positionally in the op's
    # declaration order, each from the parameter of the same name (or DEFAULT).
    for handle, node in fast:
        assert handle is not None, f"run_fast handle not found: {ast.dump(node.args[0])}"
        fast_op_name, fast_attrs = handle
        assert fast_op_name == op
        assert list(fast_attrs) == attrs[:len(fast_attrs)] and set(fast_attrs) <= set(attrs)
        assert [a.id for a in node.args[1:3]] == operands, ast.dump(node)
        out_arg = node.args[3]
        assert (isinstance(out_arg, ast.Constant) and out_arg.value is None) or \
            (isinstance(out_arg, ast.Name) and out_arg.id == "out"), ast.dump(out_arg)
        given = node.args[4:]
        assert len(given) == len(fast_attrs), (fast_attrs, ast.dump(node))
        for attr, arg in zip(fast_attrs, given):
            # The parameter of the same name, or DEFAULT (the registry default) for an
            # attribute the wrapper does not take (tf's index_mode).
            ok = isinstance(arg, ast.Name) and (arg.id == attr or (arg.id == "DEFAULT" and attr not in params))
            assert ok, f"{attr} <- {ast.dump(arg)}"
    # Registry attributes a wrapper does not take must not be arguments of the framework's
    # signature (they are multigather extensions, reachable through multigather.run).
    sig = set(expected_params(op))
    missing = (set(attrs) - passed) & sig
    assert not missing, sorted(missing)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@pytest.mark.parametrize("mod_name,name,fn,op,call,fast", [pytest.param(*w, id=f"{w[0]}.{w[1]}") for w in WRAPPERS])
def test_wrapper_docstring_names_the_op_or_its_source(mod_name, name, fn, op, call, fast):
    doc = inspect.getdoc(fn) or ""
    source = _registry.OPS[op]["source"]
    assert doc, f"multigather.{mod_name}.{name} has no docstring"
    names_op = _norm(op) in _norm(doc)  # "onnx.Gather", "coreml gather", "DML_GATHER_ND1"
    cites = source and (source in doc or source.split("#")[0] in doc)
    assert names_op or cites, f"docstring names neither {op} nor {source}: {doc[:120]!r}"


def test_signature_parser_on_hand_worked_rows():
    assert signature_params("Gather(data, indices, axis=0)") == ["data", "indices", "axis"]
    assert signature_params("gather(input, indices, {axis=0})") == ["input", "indices", "axis"]
    assert signature_params("numpy.take(a, indices, axis=None, mode='raise')") == [
        "a", "indices", "axis", "mode"]
    assert signature_params("tcp.gather %input, %indices {dim}") == ["input", "indices", "dim"]
    assert signature_params("tensor.gather %source[%indices] gather_dims([...])") == [
        "source", "indices", "gather_dims"]
    assert signature_params("DML_GATHER_OPERATOR_DESC{InputTensor, IndicesTensor, Axis, "
                            "IndexDimensions}") == [
        "input_tensor", "indices_tensor", "axis", "index_dimensions"]
    assert signature_params("a[idx_0, .., idx_{k-1}] (indices = stack(...))") is None
