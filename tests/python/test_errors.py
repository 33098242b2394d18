"""Error types and exact messages of the Python surface, and fill-value conversion.

The messages are the core's (SPEC section 1 "Errors"): IndexError for an index out of range,
ValueError for shapes, axes and attributes, TypeError for dtypes. Messages are part of the API,
so every test asserts the whole text.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import multigather

X = np.arange(12).reshape(3, 4)


def raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


@pytest.mark.parametrize(
    "indices, kwargs, message",
    [
        ([[2], [0], [7]], {}, "indices[2,0] = 7 is out of range for axis 1 of size 4 "
                              "(valid range [-4, 4))"),
        ([[2], [-5], [0]], {}, "indices[1,0] = -5 is out of range for axis 1 of size 4 "
                               "(valid range [-4, 4))"),
        ([[2], [0], [-1]], {"negative_indices": False},
         "indices[2,0] = -1 is out of range for axis 1 of size 4 (valid range [0, 4))"),
    ],
)
def test_index_out_of_range_is_index_error(indices, kwargs, message):
    with raises(IndexError, message):
        multigather.gather_multiaxis(X, np.array(indices), [1], **kwargs)


def test_empty_axis_in_clamp_mode_is_index_error():
    with raises(IndexError, "indices[0,0] = 0 is out of range for axis 0 of size 0 (the axis is "
                            "empty: index_mode clamp has no index to resolve to)"):
        multigather.gather_multiaxis(np.zeros((0, 2)), np.zeros((1, 1), np.int64), [0],
                                     index_mode="clamp")


def test_empty_output_reads_no_index():
    got = multigather.gather_multiaxis(np.zeros((0, 2)), np.full((0, 1), 99), [1])
    assert got.shape == (0, 1)


@pytest.mark.parametrize(
    "input, indices, axes, kwargs, message",
    [
        (X, np.array([2]), [1], {}, "indices rank 1 must equal input rank 2"),
        (X, np.array([[2]]), [2], {}, "axes[0] = 2 is out of range [-2, 2) for input rank 2"),
        (X, np.array([[2, 1]]), [0, -2], {}, "axes[1] = -2 repeats axis 0 (axes must be distinct)"),
        (X, np.array([[2, 1, 1]]), [0, 1], {},
         "indices.shape[1] = 3 is not a multiple of the coordinate size 2 (len(axes))"),
        (X, np.zeros((2, 1), np.int64), [1], {},
         "input.shape[0] = 3 and logical indices shape[0] = 2 are not broadcastable: dimension 0 "
         "is not in axes, so the sizes must be equal or one of them 1"),
        (np.zeros([1] * 17), np.zeros([1] * 17, np.int64), [0], {},
         "input rank 17 exceeds the maximum rank 16"),
        (X, np.zeros((3, 1), np.int64), [1], {"index_mode": "nearest"},
         "gather_multiaxis: attribute index_mode: 'nearest' is not one of error, clamp, wrap, fill"),
        (X, np.full((3, 1), 9), [1], {"index_mode": "fill", "fill_value": 1.5},
         "fill_value 1.5 is not representable in int64"),
        (X.astype(np.uint8), np.full((3, 1), 9), [1], {"index_mode": "fill", "fill_value": 300},
         "fill_value 300 is not representable in uint8"),
        (X, np.full((3, 1), 1), [1], {"out": np.zeros((3, 2), np.int64)},
         "out shape [3,2] must equal the output shape [3,1]"),
        (X, np.full((3, 1), 1), [1], {"out": X[:, :1]},
         "out overlaps input or indices (gather cannot write into memory it reads)"),
        (X, np.full((3, 1), 1), [1], {"out": np.broadcast_to(np.zeros(1, np.int64), (3, 1))},
         "out is read-only"),
    ],
)
def test_shapes_axes_and_attributes_are_value_errors(input, indices, axes, kwargs, message):
    with raises(ValueError, message):
        multigather.gather_multiaxis(input, indices, axes, **kwargs)


@pytest.mark.parametrize(
    "input, indices, axes, kwargs, message",
    [
        (X, np.zeros((3, 1)), [1], {},
         "indices dtype float64 is not an integer type (expected int8, int16, int32, int64, "
         "uint8, uint16, uint32 or uint64)"),
        (X, np.zeros((3, 1), bool), [1], {},
         "indices dtype bool is not an integer type (expected int8, int16, int32, int64, "
         "uint8, uint16, uint32 or uint64)"),
        (np.array(["a"]), np.zeros(1, np.int64), [0], {}, "input dtype <U1 is not supported"),
        (np.array([object()]), np.zeros(1, np.int64), [0], {},
         "input dtype object is not supported"),
        (X.astype(">i8"), np.zeros((3, 1), np.int64), [1], {},
         "input dtype >i8 is not supported (non-native byte order)"),
        (X, np.full((3, 1), 1), [1], {"out": np.zeros((3, 1), np.int32)},
         "out dtype int32 must equal the input dtype int64"),
        (X, np.full((3, 1), 9), [1], {"index_mode": "fill", "fill_value": "a"},
         "gather_multiaxis: attribute fill_value: expected scalar, got string 'a'"),
        (X, np.zeros((3, 1), np.int64), 1, {}, "gather_multiaxis: attribute axes: expected int list, got int 1"),
        (X, np.zeros((3, 1), np.int64), [1.0], {}, "attribute axes[0] must be an int, not float"),
        (X, np.zeros((3, 1), np.int64), [1], {"out": 5}, "out must be a writable array, not int"),
    ],
)
def test_dtypes_are_type_errors(input, indices, axes, kwargs, message):
    with raises(TypeError, message):
        multigather.gather_multiaxis(input, indices, axes, **kwargs)


@pytest.mark.parametrize(
    "dtype, fill_value",
    [
        (np.float16, 0.1), (np.float16, 65519.0), (np.float32, 0.1), (np.float64, 0.1),
        (np.complex64, -2.5), (np.int64, 2**63 - 1), (np.int64, -(2**63)),
        (np.uint64, 2**64 - 1), (np.int8, -128), (np.bool_, True), (np.float32, float("inf")),
        (np.float64, np.float64(1e300)), (np.int32, np.int32(-7)),
    ],
)
def test_fill_value_is_converted_like_numpy(dtype, fill_value):
    """fill_value becomes one element of the input dtype exactly as numpy converts it."""
    got = multigather.gather_multiaxis(np.zeros(3, dtype), np.array([5]), [0],
                                       index_mode="fill", fill_value=fill_value)
    assert got.tobytes() == np.array([fill_value]).astype(dtype).tobytes()


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("fill_value", [0.1, -3.3, 1e-3, 250.0])
def test_fill_value_rounds_like_ml_dtypes(name, fill_value):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    dtype = np.dtype(getattr(ml_dtypes, name))
    got = multigather.gather_multiaxis(np.zeros(3, dtype), np.array([5]), [0],
                                       index_mode="fill", fill_value=fill_value)
    assert got.dtype == dtype
    assert got.tobytes() == np.array([fill_value], np.float32).astype(dtype).tobytes()


def test_output_shape_and_explain_raise_the_call_errors():
    with raises(ValueError, "axes[0] = 2 is out of range [-2, 2) for input rank 2"):
        multigather.output_shape("gather_multiaxis", (3, 4), (3, 1), axes=[2])
    with raises(ValueError, "axes[0] = 2 is out of range [-2, 2) for input rank 2"):
        multigather.explain("gather_multiaxis", (3, 4), (3, 1), axes=[2])


# ---- WebNN: every invalid argument is a TypeError (the registry row's argument_error) ----------
# WebNN's MLGraphBuilder methods throw TypeError for every invalid argument (the spec's
# "throw a TypeError" steps; WPT's validation tests assert_throws_js(TypeError, ...)). multigather
# raises multigather.ArgumentTypeError there, a subclass of TypeError and of ValueError; every
# other family keeps ValueError for shapes, axes and attributes.

WX = np.zeros((2, 3), np.float32)
WI = np.zeros((2,), np.int32)
import multigather.webnn as _webnn  # noqa: E402

WEBNN_ARGUMENT_ERRORS = [
    (lambda: _webnn.gather(WX, WI, axis=2),
     "webnn.gather: axis = 2 must be in [0, 2) (an unsigned long less than the input rank 2)"),
    (lambda: _webnn.gather(WX, WI, axis=-1),
     "webnn.gather: axis = -1 must be in [0, 2) (an unsigned long less than the input rank 2)"),
    (lambda: _webnn.gather(np.float32(1), WI), "webnn.gather: input must have rank >= 1 (got a scalar)"),
    (lambda: _webnn.gather(WX, WI, axis=2**70),
     "attribute axis = 1180591620717411303424 is outside the 64-bit integer range"),
    (lambda: _webnn.gather_nd(WX, np.zeros((2, 3), np.int32)),
     "webnn.gatherND: indices.shape[-1] = 3 is greater than the input rank 2"),
    (lambda: _webnn.gather_elements(WX, WI), "webnn.gatherElements: indices rank 1 must equal input rank 2"),
    (lambda: _webnn.scatter_nd(WX, np.zeros((1, 1), np.int32), np.zeros((2,), np.float32)),
     "webnn.scatterND: updates shape [2] must equal indices.shape[:-1] ++ input.shape[c:] = [1,3] "
     "(c = indices.shape[-1] = 1)"),
    (lambda: _webnn.scatter_elements(WX, np.zeros((2, 3), np.int32), np.zeros((2, 2), np.float32)),
     "webnn.scatterElements: updates shape [2,2] must equal indices shape [2,3]"),
    # The same through every entry point: the door by name, shapes alone, explain.
    (lambda: multigather.run("webnn.gather", WX, WI, axis=5),
     "webnn.gather: axis = 5 must be in [0, 2) (an unsigned long less than the input rank 2)"),
    (lambda: multigather.run("webnn.gather", WX, WI, dim=0), "webnn.gather has no attribute 'dim' (attributes: axis)"),
    (lambda: multigather.run("webnn.scatterElements", WX, np.zeros((2, 3), np.int32), updates=np.zeros((2, 2), np.float32)),
     "webnn.scatterElements: updates shape [2,2] must equal indices shape [2,3]"),
    (lambda: multigather.output_shape("webnn.gather", (2, 3), (2,), axis=5, indices_dtype="int32"),
     "webnn.gather: axis = 5 must be in [0, 2) (an unsigned long less than the input rank 2)"),
    (lambda: multigather.explain("webnn.gatherND", (2, 3), (2, 3), indices_dtype="int32"),
     "webnn.gatherND: indices.shape[-1] = 3 is greater than the input rank 2"),
]


@pytest.mark.parametrize("call, message", WEBNN_ARGUMENT_ERRORS, ids=range(len(WEBNN_ARGUMENT_ERRORS)))
def test_webnn_argument_errors_are_type_errors(call, message):
    with raises(multigather.ArgumentTypeError, message) as info:
        call()
    # A TypeError, as WebNN throws; still a ValueError, as every other family's argument error.
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert type(info.value) is multigather.ArgumentTypeError


def test_argument_type_error_class():
    assert issubclass(multigather.ArgumentTypeError, TypeError)
    assert issubclass(multigather.ArgumentTypeError, ValueError)
    assert multigather.ArgumentTypeError.__module__ == "multigather"
    assert "ArgumentTypeError" in multigather.__all__
    rows = multigather._registry.OPS
    assert {op for op, row in rows.items() if row["argument_error"] == "ArgumentTypeError"} == {
        "webnn.gather", "webnn.gatherElements", "webnn.gatherND", "webnn.scatterElements", "webnn.scatterND"}
    assert "multigather.ArgumentTypeError" in _webnn.gather.__doc__


def test_webnn_dtype_errors_stay_plain_type_errors():
    with raises(TypeError, "webnn.gather: indices dtype float32 is not supported "
                           "(webnn.gather accepts int32, uint32, int64)") as info:
        _webnn.gather(WX, np.zeros(2, np.float32))
    assert type(info.value) is TypeError


def test_other_families_keep_value_error():
    with raises(ValueError, "onnx.Gather: axis = 2 is out of range [-2, 1] for input rank 2") as info:
        multigather.onnx.gather(WX, WI.astype(np.int64), axis=2)
    assert type(info.value) is ValueError and not isinstance(info.value, TypeError)
    assert "multigather.ArgumentTypeError" not in multigather.onnx.gather.__doc__


def test_webnn_out_of_range_indices_clamp_not_raise():
    """Not a builder error: WebNN clamps out-of-range indices at run time (the row's index rule)."""
    got = _webnn.gather(np.arange(4.0, dtype=np.float32), np.array([9, -9], np.int32))
    assert got.tolist() == [3.0, 0.0]


def test_webnn_argument_errors_under_jax_jit():
    """A traced call (XLA FFI path, _jax_ffi: lower_op_info at trace time) raises the same."""
    jax = pytest.importorskip("jax", reason="jax is not installed")
    x, i = jax.numpy.zeros((2, 3), jax.numpy.float32), jax.numpy.zeros((2,), jax.numpy.int32)
    message = "webnn.gather: axis = 2 must be in [0, 2) (an unsigned long less than the input rank 2)"
    # JAX may append its traceback-filtering note to the message: match the start.
    with pytest.raises(multigather.ArgumentTypeError, match="^" + re.escape(message)):
        jax.jit(lambda a, b: _webnn.gather(a, b, axis=2))(x, i)
