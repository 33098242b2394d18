"""multigather.tf against TensorFlow (CPU) on random cases: tf.gather with axis and batch_dims
(negative batch_dims included) and tf.gather_nd with batch_dims. Arrays go in as tf.Tensor and
must come back as tf.Tensor. Out-of-range and negative indices must fail in both
(TensorFlow: InvalidArgumentError; multigather: IndexError)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import multigather
from conftest import require
from framework_cases import framework_settings, nd_indices, random_data, random_indices, seeds

tf = require("tensorflow")
tf.config.set_visible_devices([], "GPU")

TF_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.uint8, np.bool_, np.complex64)]


def compare(tf_fn, mg_fn, params, indices, **attrs):
    p, i = tf.constant(params), tf.constant(indices)
    try:
        expected = tf_fn(p, i, **attrs)
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        bad_index = "does not index into" in str(error) or "not in [0" in str(error)
        event("both raise IndexError" if bad_index else "both raise ValueError")
        with pytest.raises(IndexError if bad_index else ValueError):
            mg_fn(p, i, **attrs)
        return
    event("both compute")
    got = mg_fn(p, i, **attrs)
    assert isinstance(got, tf.Tensor)
    assert got.dtype == expected.dtype and tuple(got.shape) == tuple(expected.shape)
    assert got.numpy().tobytes() == expected.numpy().tobytes()


@framework_settings
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple), st.data(),
       st.sampled_from(TF_DTYPES), st.sampled_from([np.int32, np.int64]), st.booleans(), seeds)
def test_gather_matches_tensorflow(x_shape, data, dtype, index_dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, dtype)
    r = x.ndim
    b = data.draw(st.integers(0, r - 1))
    axis = data.draw(st.integers(b, r - 1))
    extra = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    indices = random_indices(rng, x_shape[:b] + extra, x_shape[axis], index_dtype,
                             negative=oob, out_of_range=oob)
    q = len(indices.shape)
    batch_dims = b - q if data.draw(st.booleans()) and q else b  # negative spelling
    axis_arg = axis - r if data.draw(st.booleans()) else axis
    if axis == b and data.draw(st.booleans()):
        axis_arg = None  # tf default: axis = batch_dims
    compare(tf.gather, multigather.tf.gather, x, indices, axis=axis_arg, batch_dims=batch_dims)


@framework_settings
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple), st.data(),
       st.sampled_from(TF_DTYPES), st.sampled_from([np.int32, np.int64]), st.booleans(), seeds)
def test_gather_nd_matches_tensorflow(x_shape, data, dtype, index_dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, dtype)
    b, indices = nd_indices(data, rng, x_shape, index_dtype, negative=oob, out_of_range=oob)
    compare(tf.gather_nd, multigather.tf.gather_nd, x, indices, batch_dims=b)


def test_tf_doc_examples():
    """Examples of the tf.gather page: batch_dims=1 on [3,5] with [3,2] indices."""
    params = tf.constant([[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0],
                          [30.0, 31.0, 32.0]])
    np.testing.assert_array_equal(multigather.tf.gather(params, [3, 1]).numpy(),
                                  [[30, 31, 32], [10, 11, 12]])
    np.testing.assert_array_equal(multigather.tf.gather(params, [2, 1], axis=1).numpy(),
                                  [[2, 1], [12, 11], [22, 21], [32, 31]])
    p = tf.constant(np.arange(15).reshape(3, 5))
    i = tf.constant([[0, 4], [1, 3], [2, 2]])
    np.testing.assert_array_equal(multigather.tf.gather(p, i, axis=1, batch_dims=1).numpy(),
                                  [[0, 4], [6, 8], [12, 12]])


def test_negative_indices_are_out_of_range_like_tensorflow_cpu():
    with pytest.raises(IndexError, match=r"indices\[1\] = -1 is out of range for axis 0 of "
                                         r"size 3 \(valid range \[0, 3\)\)"):
        multigather.tf.gather(tf.constant([1, 2, 3]), tf.constant([0, -1]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.gather(tf.constant([1, 2, 3]), tf.constant([0, -1]))


def test_batch_dims_must_match_exactly():
    with pytest.raises(ValueError, match=r"params\.shape.*3.*indices\.shape.*1"):
        multigather.tf.gather(tf.zeros((3, 5)), tf.zeros((1, 2), tf.int32), axis=1, batch_dims=1)
