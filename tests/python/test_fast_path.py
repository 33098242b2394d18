"""gather_multiaxis through the per-call fast path on numpy arrays (the NumPy C API reader,
python/src/numpy_fast.cpp, in the door's run_op_fast, python/src/op_fast.cpp) and set_num_threads.

Every result is compared with numpy fancy indexing (numpy_oracle.py) and with the door's call on
normalized operands (multigather._interop.call); the door answers NotImplemented only when no
reader takes an operand, and raises every other error itself, in the one wording.
"""

from __future__ import annotations

import numpy as np
import pytest

import multigather
import numpy_oracle
from multigather import _interop, _registry
from multigather import _multigather as core

RNG = np.random.default_rng(20261121)


def general(input, indices, axes, **kwargs):
    return _interop.call(input, indices, axes, **kwargs)


_GATHER = _registry.fast_op("gather_multiaxis", "axes", "index_mode", "negative_indices", "fill_value")


def fast_gather(input, indices, axes, index_mode, negative_indices, fill_value, out):
    """gather_multiaxis through the per-call fast path (multigather.gather_multiaxis' own call)."""
    return core.run_op_fast(_GATHER, input, indices, out, axes, index_mode, negative_indices, fill_value)


def test_the_build_has_the_fast_path():
    assert core.has_numpy_fast_path


CASES = [
    # input shape, indices (shape, high), axes, dtype, index dtype
    ((16, 16), ((4, 1), 16), [0], np.float32, np.int64),
    ((3, 5, 7), ((3, 4, 2), 5), [1, 2], np.float64, np.int32),
    ((4, 6), ((4, 3), 6), (1,), np.int16, np.uint8),
    ((2, 3, 4), ((1, 2, 1), 3), [-2], np.complex64, np.int8),
    ((5,), ((3,), 5), [0], np.bool_, np.uint64),
    ((6, 2), ((6, 1), 2), [1], np.float16, np.int16),
]


@pytest.mark.parametrize("input_shape,index_spec,axes,dtype,index_dtype", CASES)
def test_fast_path_equals_the_oracle_and_the_general_path(input_shape, index_spec, axes, dtype,
                                                          index_dtype):
    x = (RNG.standard_normal(input_shape) * 10).astype(dtype)
    shape, high = index_spec
    i = RNG.integers(0, high, shape).astype(index_dtype)
    fast = fast_gather(x, i, axes, "error", True, 0, None)
    assert fast is not NotImplemented
    expected = numpy_oracle.gather_multiaxis(x, i, list(axes))
    assert fast.dtype == x.dtype and fast.flags.c_contiguous
    np.testing.assert_array_equal(fast, expected)
    np.testing.assert_array_equal(fast, general(x, i, list(axes)))
    out = np.full(expected.shape, 1, dtype)
    assert fast_gather(x, i, axes, "error", True, 0, out) is out
    np.testing.assert_array_equal(out, expected)


def test_fast_path_reads_strided_and_broadcast_views():
    x = RNG.standard_normal((8, 10)).astype(np.float32)[::2, ::-3]  # [4, 4], negative strides
    i = np.broadcast_to(np.array([[3], [0], [2]]), (3, 4))  # stride 0 along dim 1
    fast = fast_gather(x, i, [0], "error", True, 0, None)
    np.testing.assert_array_equal(fast, numpy_oracle.gather_multiaxis(x, i, [0]))


@pytest.mark.parametrize("mode,negative", [("clamp", False), ("wrap", True), ("fill", True)])
def test_fast_path_index_modes(mode, negative):
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    i = np.array([[-7], [9], [2], [-1]])
    fast = fast_gather(x, i, [1], mode, negative, -5, None)
    expected = numpy_oracle.gather_multiaxis(x, i, [1], index_mode=mode, negative_indices=negative,
                                             fill_value=-5)
    np.testing.assert_array_equal(fast, expected)


def test_out_of_range_raises_the_core_message():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(IndexError, match=r"^indices\[1,0\] = 7 is out of range for axis 0 of size 3"):
        multigather.gather_multiaxis(x, np.array([[0], [7]]), [0])


@pytest.mark.parametrize("make_call", [
    lambda x, i: (memoryview(x), i, [0]),                             # the buffer protocol
    lambda x, i: (x.view(np.matrix), i, [0]),                         # an ndarray subclass: DLPack
    lambda x, i: (x, i, np.array([0])),                               # axes an ndarray
    lambda x, i: (x, i, [np.int64(0)]),                               # axes items numpy ints
])
def test_the_door_reads_other_arrays_and_attribute_types(make_call):
    # One door: another reader (DLPack / the buffer protocol) or the general attribute
    # conversion takes these calls in the same run_op_fast call, with the same result.
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[2], [0]])
    args = make_call(x, i)
    np.testing.assert_array_equal(np.asarray(fast_gather(*args, "error", True, 0, None)), x[[2, 0]])
    np.testing.assert_array_equal(np.asarray(multigather.gather_multiaxis(*args)), x[[2, 0]])


def test_not_taken_means_no_reader_takes_an_operand():
    # NotImplemented only where no reader takes an operand as is (the caller normalizes it);
    # a bad call of a readable operand raises in the door at once.
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[2], [0]])
    assert fast_gather(x.astype(">f4"), i, [0], "error", True, 0, None) is NotImplemented
    assert fast_gather(object(), i, [0], "error", True, 0, None) is NotImplemented
    with pytest.raises(ValueError, match=r"attribute index_mode: 'nearest' is not one of"):
        fast_gather(x, i, [0], "nearest", True, 0, None)
    with pytest.raises(IndexError, match=r"^indices\[0,0\] = 9 is out of range"):
        fast_gather(x, np.array([[9]]), [0], "error", True, 0, None)


def test_non_native_byte_order_gets_the_general_type_error():
    x = np.arange(12, dtype=">f4").reshape(3, 4)
    i = np.array([[2], [0]])
    assert fast_gather(x, i, [0], "error", True, 0, None) is NotImplemented
    with pytest.raises(TypeError, match=r"^input dtype >f4 is not supported \(non-native byte order\)"):
        multigather.gather_multiaxis(x, i, [0])


def test_bad_out_and_bad_operands_keep_the_general_messages():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[2], [0]])
    with pytest.raises(ValueError, match=r"^out shape \[3,4\] must equal the output shape \[2,4\]"):
        multigather.gather_multiaxis(x, i, [0], out=np.empty((3, 4), np.float32))
    with pytest.raises(TypeError, match=r"^out dtype float64 must equal the input dtype float32"):
        multigather.gather_multiaxis(x, i, [0], out=np.empty((2, 4), np.float64))
    with pytest.raises(ValueError, match="out overlaps input or indices"):
        multigather.gather_multiaxis(x, i, [0], out=x[:2])
    with pytest.raises(ValueError, match=r"^axes\[0\] = 2 is out of range \[-2, 2\) for input rank 2"):
        multigather.gather_multiaxis(x, i, [2])
    with pytest.raises(ValueError, match="attribute index_mode: 'nearest' is not one of"):
        multigather.gather_multiaxis(x, i, [0], index_mode="nearest")
    readonly = np.empty((2, 4), np.float32)
    readonly.flags.writeable = False
    with pytest.raises((ValueError, TypeError)):
        multigather.gather_multiaxis(x, i, [0], out=readonly)


def test_set_num_threads_round_trip_and_same_results():
    x = RNG.standard_normal((4096, 64)).astype(np.float32)
    i = RNG.integers(0, 4096, (8192, 1))
    expected = x[i[:, 0]]
    try:
        for threads in (1, 2, 0):
            multigather.set_num_threads(threads)
            assert multigather.get_num_threads() == threads
            np.testing.assert_array_equal(multigather.gather_multiaxis(x, i, [0]), expected)
        with pytest.raises(ValueError, match="num_threads -1 must be >= 0"):
            multigather.set_num_threads(-1)
    finally:
        multigather.set_num_threads(0)


NATIVE_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                 np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
INDEX_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_every_native_dtype_takes_the_fast_path(dtype, index_dtype):
    x = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    i = np.array([[3, 0], [1, 5], [0, 0], [2, 4]], dtype=index_dtype)
    fast = fast_gather(x, i, [1], "error", True, 0, None)
    assert fast is not NotImplemented
    assert fast.dtype == x.dtype
    np.testing.assert_array_equal(fast, np.take_along_axis(x, i.astype(np.int64), axis=1))
