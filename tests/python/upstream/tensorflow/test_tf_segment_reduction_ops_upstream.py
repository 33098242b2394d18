# Copyright 2015 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""TensorFlow's own segment reduction tests, run on multigather.tf.

Provenance: repository tensorflow/tensorflow, file
tensorflow/python/kernel_tests/math_ops/segment_reduction_ops_test.py, commit
02e4f9a29ddd1cf3c67b23c8889035c3218f988d (read with the read_file tool), classes
SegmentReductionHelper, SegmentReductionOpTest and UnsortedSegmentTest, every method, with their
parameterizations, numpy oracles and expected error messages. Not brought in: the
SparseSegmentReduction* classes (tf.sparse.segment_*, other ops) and SegmentReductionOpBenchmark.

Changes, each needed because multigather's functions run eagerly on concrete values (they read
segment ids, so they cannot build a TF1 graph):
- ``math_ops.segment_*`` / ``math_ops.unsorted_segment_*`` -> ``multigather.tf``'s, through the
  ``math_ops`` namespace below (the test bodies keep the name);
- tests decorated ``@test_util.run_deprecated_v1`` (TF1 graph mode) run eagerly: the decorator is
  dropped, an op whose error the test expects is called inside its ``assertRaises*`` block
  (eagerly the op raises, where a graph raises on ``evaluate``), ``t.eval()`` is
  ``self.evaluate(t)``, and the graph-mode ``gradient_checker.compute_gradient(x, x_shape, y,
  y_shape, x_init_value=..., delta=...)`` is ``_compute_gradient``: gradient_checker_v2 on the
  same function and point (the same theoretical-vs-numeric Jacobian comparison);
- testGradientsGradientTape's ``@test_util.run_in_graph_and_eager_modes`` runs the eager half
  only (the graph half builds a TF1 graph);
- testGradientsTFGradients and testGradientsGradientTape run their device loop once, on the CPU
  (upstream: [False, True] / [use_gpu, force_cpu]; without a GPU both iterations are the same
  CPU run), to keep this file's runtime modest;
- testSegmentIdsShape expects ValueError (TF's graph-mode shape check); multigather raises
  tf.errors.InvalidArgumentError that is also a ValueError (TF eager raises InvalidArgumentError),
  so the test is unchanged.
"""

# ruff: noqa
import itertools
import types

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from absl.testing import parameterized  # noqa: E402

from tensorflow.python.framework import constant_op  # noqa: E402
from tensorflow.python.framework import dtypes as dtypes_lib  # noqa: E402
from tensorflow.python.framework import errors_impl  # noqa: E402
from tensorflow.python.framework import ops  # noqa: E402
from tensorflow.python.framework import test_util  # noqa: E402
from tensorflow.python.ops import gradient_checker_v2  # noqa: E402
from tensorflow.python.platform import test  # noqa: E402

import multigather.tf as mtf  # noqa: E402

# upstream: from tensorflow.python.ops import math_ops
math_ops = types.SimpleNamespace(**{name: getattr(mtf, name) for name in (
    "segment_sum", "segment_prod", "segment_max", "segment_min", "segment_mean", "unsorted_segment_sum",
    "unsorted_segment_prod", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_mean",
    "unsorted_segment_sqrt_n")})


def _compute_gradient(f, x_init_value, delta):
  """gradient_checker.compute_gradient's (jacob_t, jacob_n) for y = f(x) at x_init_value, eagerly
  (gradient_checker_v2)."""
  jacob_t, jacob_n = gradient_checker_v2.compute_gradient(f, [x_init_value], delta=delta)
  # gradient_checker's Jacobians are [x size, y size]; gradient_checker_v2's [y size, x size]
  return jacob_t[0].T, jacob_n[0].T


class SegmentReductionHelper(test.TestCase):

  def _input(self, input_shape, dtype=dtypes_lib.int32):
    num_elem = 1
    for x in input_shape:
      num_elem *= x
    values = np.arange(1, num_elem + 1)
    np_values = values.reshape(input_shape).astype(dtype.as_numpy_dtype)
    if dtype == dtypes_lib.bfloat16:
      # Large numbers from arange lead to high absolute diff with bfloat16, so
      # scale down.
      np_values *= np.array(0.00001, dtype=dtype.as_numpy_dtype)
    # Add a non-zero imaginary component to complex types.
    if dtype.is_complex:
      np_values -= 1j * np_values
    return constant_op.constant(
        np_values, shape=input_shape, dtype=dtype), np_values

  def _segmentReduce(
      self,
      indices,
      x,
      op1,
      op2=None,
      num_segments=None,
      initial_value=0,
      empty_value=0,
  ):
    if not x.size:
      return np.array([])
    indices = np.asarray(indices)
    if num_segments is None:
      num_segments = indices[-1] + 1
    output = [None] * num_segments
    slice_shape = x.shape[indices.ndim:]
    x_flat = x.reshape((indices.size,) + slice_shape)
    for i, index in enumerate(indices.ravel()):
      if (output[index] is not None) and op1 == np.max:
        for j in range(0, output[index].shape[0]):
          output[index][j] = op1([output[index][j], x_flat[i][j]])
      elif output[index] is not None:
        output[index] = op1(output[index], x_flat[i])
      else:
        output[index] = x_flat[i]
    # zero initialize values that are still uncalculated.
    empty_value_slice = np.ones(slice_shape) * empty_value
    output = [o if o is not None else empty_value_slice for o in output]
    if op2 is not None:
      output = [op2(o) for o in output]
    output = [o.reshape(slice_shape) for o in output]
    return np.array(output)

  def _mean_cum_op(self, x, y):
    return (x[0] + y, x[1] + 1) if isinstance(x, tuple) else (x + y, 2)

  def _mean_reduce_op(self, x):
    return x[0] / x[1] if isinstance(x, tuple) else x

  def _sqrt_n_reduce_op(self, x):
    return x[0] / np.sqrt(x[1]) if isinstance(x, tuple) else x


class SegmentReductionOpTest(SegmentReductionHelper, parameterized.TestCase):

  @parameterized.parameters(
      (dtypes_lib.float32),
      (dtypes_lib.float64),
      (dtypes_lib.int64),
      (dtypes_lib.int32),
      (dtypes_lib.complex64),
      (dtypes_lib.complex128),
      (dtypes_lib.bfloat16),
  )
  def testValues(self, dtype):
    # Each item is np_op1, np_op2, tf_op
    ops_list = [(np.add, None, math_ops.segment_sum),
                (self._mean_cum_op, self._mean_reduce_op,
                 math_ops.segment_mean),
                (np.ndarray.__mul__, None, math_ops.segment_prod),
                (np.minimum, None, math_ops.segment_min),
                (np.maximum, None, math_ops.segment_max)]

    # A subset of ops has been enabled for complex numbers
    complex_ops_list = [(np.add, None, math_ops.segment_sum),
                        (np.ndarray.__mul__, None, math_ops.segment_prod),
                        (self._mean_cum_op, self._mean_reduce_op,
                         math_ops.segment_mean)]

    n = 10
    # Note that the GPU implem has different paths for different inner sizes.
    for shape in [[n, 1], [n, 2], [n, 3], [n, 32]]:
      indices = [i // 3 for i in range(n)]
      if dtype in (dtypes_lib.complex64, dtypes_lib.complex128):
        curr_ops_list = complex_ops_list
      else:
        curr_ops_list = ops_list
      for use_gpu in [True, False]:
        with self.cached_session(use_gpu=use_gpu):
          tf_x, np_x = self._input(shape, dtype=dtype)
          for np_op1, np_op2, tf_op in curr_ops_list:
            initial_value = 1 if tf_op is math_ops.segment_prod else 0
            np_ans = self._segmentReduce(
                indices, np_x, np_op1, np_op2, initial_value=initial_value)
            s = tf_op(data=tf_x, segment_ids=indices)
            tf_ans = self.evaluate(s)
            self.assertAllCloseAccordingToType(np_ans, tf_ans)
            # NOTE(mrry): The static shape inference that computes
            # `tf_ans.shape` can only infer that sizes from dimension 1
            # onwards, because the size of dimension 0 is data-dependent
            # and may therefore vary dynamically.
            self.assertAllEqual(np_ans.shape[1:], tf_ans.shape[1:])

  def testSegmentIdsShape(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    tf_x, _ = self._input(shape)
    indices = constant_op.constant([0, 1, 2, 2], shape=[2, 2])
    with self.assertRaises(ValueError):
      math_ops.segment_sum(data=tf_x, segment_ids=indices)

  def testSegmentIdsSize(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, _ = self._input(shape)
        indices = [0, 1]
        with self.assertRaisesOpError("segment_ids should be the same size"):
          s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
          self.evaluate(s)

  def testSegmentIdsValid(self):  # upstream: @test_util.run_deprecated_v1
    # This is a baseline for the following SegmentIdsInvalid* tests.
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, _ = self._input(shape, dtype=dtypes_lib.float32)
        indices = [0, 0, 0, 1]
        result = self.evaluate(math_ops.segment_sum(data=tf_x, segment_ids=indices))
        self.assertAllEqual([[15, 18, 21, 24], [13, 14, 15, 16]], result)

  def testSegmentIdsGreaterThanZero(self):
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, np_x = self._input(shape, dtype=dtypes_lib.float32)
        indices = [1, 1, 2, 2]
        np_ans = self._segmentReduce(indices, np_x, np.add)
        s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)

  def testSegmentIdsHole(self):
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, np_x = self._input(shape, dtype=dtypes_lib.float32)
        indices = [0, 0, 3, 3]
        np_ans = self._segmentReduce(indices, np_x, np.add)
        s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)

  def testSegmentIdsHoleEmptyValue(self):
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, np_x = self._input(shape, dtype=dtypes_lib.float32)
        indices = [0, 0, 3, 3]
        np_ans = self._segmentReduce(
            indices,
            np_x,
            np.max,
            initial_value=-dtypes_lib.float32.min,
            empty_value=0,
        )
        s = math_ops.segment_max(data=tf_x, segment_ids=indices)
        tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)

  def testSegmentIdsInvalid1(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    with self.cached_session():
      tf_x, _ = self._input(shape)
      indices = [-1, -1, 0, 0]
      with self.assertRaisesOpError(
          r"Segment id -1 out of range \[0, 1\), possibly because "
          "'segment_ids' input is not sorted."):
        s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        self.evaluate(s)

  def testSegmentIdsInvalid2(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    with self.cached_session():
      tf_x, _ = self._input(shape)
      indices = [0, 1, 0, 1]
      with self.assertRaisesOpError("segment ids are not increasing"):
        s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        self.evaluate(s)

  def testSegmentIdsInvalid3(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    with self.cached_session():
      tf_x, _ = self._input(shape)
      indices = [0, 1, 2, 0]
      with self.assertRaisesOpError(
          r"Segment id 1 out of range \[0, 1\), possibly "
          "because 'segment_ids' input is not sorted."):
        s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        self.evaluate(s)

  def testSegmentIdsInvalid4(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, _ = self._input(shape, dtype=dtypes_lib.float32)
        indices = [0, 0, 0, -1]
        with self.assertRaisesOpError("segment ids must be >= 0"):
          s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
          self.evaluate(s)

  def testSegmentIdsInvalid5(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        tf_x, _ = self._input(shape, dtype=dtypes_lib.float32)
        indices = [0, 0, 0, -2]
        with self.assertRaisesOpError("segment ids must be >= 0"):
          s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
          self.evaluate(s)

  def testGradient(self):  # upstream: @test_util.run_deprecated_v1
    shape = [4, 4]
    indices = [0, 1, 2, 2]
    for tf_op in [
        math_ops.segment_sum, math_ops.segment_mean, math_ops.segment_min,
        math_ops.segment_max
    ]:
      with self.cached_session():
        tf_x, np_x = self._input(shape, dtype=dtypes_lib.float64)
        jacob_t, jacob_n = _compute_gradient(
            lambda x: tf_op(data=x, segment_ids=indices),
            x_init_value=np_x.astype(np.double),
            delta=1)
      self.assertAllClose(jacob_t, jacob_n)

  def testDataInvalid(self):
    # Test case for GitHub issue 40653.
    for use_gpu in [True, False]:
      with self.cached_session(use_gpu=use_gpu):
        with self.assertRaisesRegex(
            (ValueError, errors_impl.InvalidArgumentError),
            "must be at least rank 1"):
          s = math_ops.segment_mean(
              data=np.uint16(10), segment_ids=np.array([]).astype("int64"))
          self.evaluate(s)

  def testInvalidIds(self):
    # Test case for GitHub issue 46888.
    for op in [
        math_ops.segment_max,
        math_ops.segment_min,
        math_ops.segment_mean,
        math_ops.segment_sum,
        math_ops.segment_prod,
    ]:
      with self.cached_session(use_gpu=False):
        with self.assertRaises((ValueError, errors_impl.InvalidArgumentError)):
          s = op(data=np.ones((1, 10, 1)), segment_ids=[1676240524292489355])
          self.evaluate(s)

  def testNaNPropagation(self):
    for dtype in [
        dtypes_lib.float16,
        dtypes_lib.bfloat16,
        dtypes_lib.float32,
        dtypes_lib.float64,
    ]:
      with self.session(use_gpu=False):
        with ops.device("/cpu:0"):
          # Input [1.0, NaN, 3.0]
          data_min = constant_op.constant([1.0, float("nan"), 3.0], dtype=dtype)
          segment_ids = [0, 0, 0]
          res_min = math_ops.segment_min(data_min, segment_ids)
          self.assertTrue(np.isnan(self.evaluate(res_min)[0]))

          data_max = constant_op.constant([3.0, float("nan"), 1.0], dtype=dtype)
          res_max = math_ops.segment_max(data_max, segment_ids)
          self.assertTrue(np.isnan(self.evaluate(res_max)[0]))

          # Test 2D input NaN propagation
          data_2d = constant_op.constant(
              [[1.0, 2.0], [float("nan"), 3.0], [3.0, 1.0]], dtype=dtype
          )
          res_2d_min = math_ops.segment_min(data_2d, segment_ids)
          evaluated_min = self.evaluate(res_2d_min)
          self.assertTrue(np.isnan(evaluated_min[0][0]))
          self.assertAllClose(evaluated_min[0][1], 1.0)

          res_2d_max = math_ops.segment_max(data_2d, segment_ids)
          evaluated_max = self.evaluate(res_2d_max)
          self.assertTrue(np.isnan(evaluated_max[0][0]))
          self.assertAllClose(evaluated_max[0][1], 3.0)


class UnsortedSegmentTest(SegmentReductionHelper, parameterized.TestCase):

  def __init__(self, methodName='runTest'):
    # Each item is np_op1, np_op2, tf_op, initial_value functor
    self.ops_list = [(np.add, None,
                      math_ops.unsorted_segment_sum, lambda t: 0),
                     (self._mean_cum_op, self._mean_reduce_op,
                      math_ops.unsorted_segment_mean, lambda t: 0),
                     (self._mean_cum_op, self._sqrt_n_reduce_op,
                      math_ops.unsorted_segment_sqrt_n, lambda t: 0),
                     (np.ndarray.__mul__, None,
                      math_ops.unsorted_segment_prod, lambda t: 1),
                     (np.minimum, None,
                      math_ops.unsorted_segment_min, lambda t: t.max),
                     (np.maximum, None,
                      math_ops.unsorted_segment_max, lambda t: t.min)]

    # A subset of ops has been enabled for complex numbers
    self.complex_ops_list = [(np.add, None,
                              math_ops.unsorted_segment_sum, lambda t: 0),
                             (np.ndarray.__mul__, None,
                              math_ops.unsorted_segment_prod, lambda t: 1)]
    self.differentiable_dtypes = [dtypes_lib.float16, dtypes_lib.float32,
                                  dtypes_lib.float64]
    self.all_dtypes = (self.differentiable_dtypes +
                       [dtypes_lib.bfloat16,
                        dtypes_lib.int64, dtypes_lib.int32,
                        dtypes_lib.complex64, dtypes_lib.complex128])
    super(UnsortedSegmentTest, self).__init__(methodName=methodName)

  @parameterized.parameters((dtypes_lib.float16), (dtypes_lib.float32),
                            (dtypes_lib.float64), (dtypes_lib.bfloat16),
                            (dtypes_lib.int64), (dtypes_lib.int32),
                            (dtypes_lib.complex64), (dtypes_lib.complex128))
  def testValues(self, dtype):
    indices_flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    num_segments = 12
    for indices in indices_flat, indices_flat.reshape(5, 2):
      # Note that the GPU implem has different paths for different inner sizes.
      for inner_size in [1, 2, 3, 32]:
        shape = indices.shape + (inner_size,)

        ops_list = (
            self.complex_ops_list if dtype.is_complex else self.ops_list)
        tf_x, np_x = self._input(shape, dtype=dtype)
        for use_gpu in [True, False]:
          with self.cached_session():
            for np_op1, np_op2, tf_op, init_op in ops_list:
              # sqrt_n doesn't support integers
              if (np_op2 == self._sqrt_n_reduce_op and dtype.is_integer):
                continue
              np_ans = self._segmentReduce(
                  indices,
                  np_x,
                  np_op1,
                  np_op2,
                  num_segments=num_segments,
                  initial_value=init_op(dtype),
                  empty_value=init_op(dtype),
              )
              s = tf_op(tf_x, segment_ids=indices, num_segments=num_segments)
              tf_ans = self.evaluate(s)
              self.assertAllCloseAccordingToType(np_ans, tf_ans)
              self.assertShapeEqual(np_ans, s)

  def testNumSegmentsTypes(self):
    dtypes = [dtypes_lib.int32, dtypes_lib.int64]
    indices_flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    num_segments = 12
    for indices in indices_flat, indices_flat.reshape(5, 2):
      shape = indices.shape + (2,)
      for dtype in dtypes:
        with self.cached_session():
          tf_x, np_x = self._input(shape)
          num_segments_constant = constant_op.constant(
              num_segments, dtype=dtype)
          np_ans = self._segmentReduce(
              indices, np_x, np.add, op2=None, num_segments=num_segments)
          s = math_ops.unsorted_segment_sum(
              data=tf_x,
              segment_ids=indices,
              num_segments=num_segments_constant)
          tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)
        self.assertShapeEqual(np_ans, s)

  def testIndicesTypes(self):
    dtypes = [dtypes_lib.int16, dtypes_lib.int32, dtypes_lib.int64]
    indices_flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    num_segments = 12
    for indices in indices_flat, indices_flat.reshape(5, 2):
      shape = indices.shape + (2,)
      for dtype in dtypes:
        with self.cached_session():
          tf_x, np_x = self._input(shape)
          indices_constant = constant_op.constant(indices, dtype=dtype)
          np_ans = self._segmentReduce(
              indices, np_x, np.add, op2=None, num_segments=num_segments
          )
          s = math_ops.unsorted_segment_sum(
              data=tf_x, segment_ids=indices_constant, num_segments=num_segments
          )
          tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)
        self.assertShapeEqual(np_ans, s)

  def testGradientsTFGradients(self):  # upstream: @test_util.run_deprecated_v1
    num_cols = 2
    indices_flat = np.array([0, 4, 0, -1, 3, -1, 4, 7, 7, 3])
    num_segments = max(indices_flat) + 3
    for dtype in self.differentiable_dtypes:
      ops_list = self.complex_ops_list if dtype.is_complex else self.ops_list
      for indices in indices_flat, indices_flat.reshape(5, 2):
        shape = indices.shape + (num_cols,)
        # test CPU and GPU as tf.gather behaves differently on each device
        for use_gpu in [False]:  # upstream: [False, True] (subset: see the header)
          with self.cached_session(use_gpu=use_gpu):
            for _, _, tf_op, _ in ops_list:
              tf_x, np_x = self._input(shape, dtype=dtype)
              jacob_t, jacob_n = _compute_gradient(
                  lambda x: tf_op(x, indices, num_segments),
                  x_init_value=np_x,
                  delta=1.)
              self.assertAllCloseAccordingToType(jacob_t, jacob_n,
                                                 half_atol=1e-2)

  @parameterized.parameters(
      (dtypes_lib.float16),
      (dtypes_lib.float32),
      (dtypes_lib.float64),
      (dtypes_lib.bfloat16),
  )
  def testGradientsGradientTape(self, dtype):  # upstream: @test_util.run_in_graph_and_eager_modes
    num_cols = 2
    indices_flat = np.array([0, 4, 0, -1, 3, -1, 4, 7, 7, 3])
    num_segments = max(indices_flat) + 3

    ops_list = self.complex_ops_list if dtype.is_complex else self.ops_list
    for indices in indices_flat, indices_flat.reshape(5, 2):
      shape = indices.shape + (num_cols,)
      # test CPU and GPU as tf.gather behaves differently on each device
      # upstream: [test_util.use_gpu, test_util.force_cpu] (subset: see the header)
      for use_gpu in [test_util.force_cpu]:
        with use_gpu():
          for _, _, tf_op, _ in ops_list:
            _, np_x = self._input(shape, dtype=dtype)

            # pylint: disable=cell-var-from-loop
            def f(x):
              return tf_op(x, indices, num_segments)

            gradient_tape_jacob_t, jacob_n = (
                gradient_checker_v2.compute_gradient(f, [np_x], delta=1.))
            # pylint: enable=cell-var-from-loop
            self.assertAllCloseAccordingToType(
                jacob_n,
                gradient_tape_jacob_t,
                half_atol=1e-2,
                bfloat16_rtol=5e-1,
                bfloat16_atol=5e-1,
            )

  def testProdGrad(self):  # upstream: @test_util.run_deprecated_v1
    # additional test for the prod gradient to ensure correct handling of zeros
    values = np.array([0, 0, 1, 0, 2, 2, 3, 3, 3], dtype=np.float32)
    indices = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=np.int32)
    indices_neg = np.array([-1, 0, 0, -1, 1, 1, -1, 2, 2], dtype=np.int32)
    values_tf = constant_op.constant(values)
    # ground truth partial derivatives
    gradients_indices = np.zeros((9, 3), dtype=np.float32)
    gradients_indices_neg = np.zeros((9, 3), dtype=np.float32)
    # the derivative w.r.t. to the other segments is zero, so here we only
    # explicitly set the grad values for the corresponding segment
    gradients_indices[range(9), indices] = [0, 0, 0, 4, 0, 0, 9, 9, 9]
    gradients_indices_neg[range(9), indices_neg] = [0, 1, 0, 0, 2, 2, 0, 3, 3]
    for use_gpu in [False, True]:
      with self.cached_session(use_gpu=use_gpu):
        for ind, grad_gt in [(indices, gradients_indices),
                             (indices_neg, gradients_indices_neg)]:
          jacob_t, jacob_n = _compute_gradient(
              lambda x: math_ops.unsorted_segment_prod(x, constant_op.constant(ind), 3),
              x_init_value=values, delta=1)
          self.assertAllClose(jacob_t, jacob_n)
          self.assertAllClose(jacob_t, grad_gt)

  def testGradientMatchesSegmentSum(self):  # upstream: @test_util.run_deprecated_v1
    # Strategy: compute the gradient for UnsortedSegmentSum and SegmentSum
    # and compare the outputs, which should be identical.
    # NB: for this test to work, indices must be valid for SegmentSum, namely
    # it must be sorted, the indices must be contiguous, and num_segments
    # must be max(indices) + 1.
    indices = [0, 0, 1, 1, 1, 2, 3, 4, 5]
    n = len(indices)
    num_cols = 2
    shape = [n, num_cols]
    num_segments = max(indices) + 1
    for dtype in self.differentiable_dtypes:
      with self.cached_session():
        tf_x, np_x = self._input(shape, dtype=dtype)
        # Results from UnsortedSegmentSum
        unsorted_jacob_t, unsorted_jacob_n = _compute_gradient(
            lambda x: math_ops.unsorted_segment_sum(
                data=x, segment_ids=indices, num_segments=num_segments),
            x_init_value=np_x, delta=1)

        # Results from SegmentSum
        sorted_jacob_t, sorted_jacob_n = _compute_gradient(
            lambda x: math_ops.segment_sum(data=x, segment_ids=indices),
            x_init_value=np_x,
            delta=1)
      self.assertAllClose(unsorted_jacob_t, sorted_jacob_t)
      self.assertAllClose(unsorted_jacob_n, sorted_jacob_n)

  def testBadIndices(self):  # upstream: @test_util.run_deprecated_v1
    # Note: GPU kernel does not return the out-of-range error needed for this
    # test, so this test is marked as cpu-only.
    # Note: With PR #13055 a negative index will be ignored silently.
    with self.session(use_gpu=False):
      for bad in [[2]], [[7]]:
        with self.assertRaisesOpError(
            r"segment_ids\[0,0\] = %d is out of range \[0, 2\)" % bad[0][0]):
          unsorted = math_ops.unsorted_segment_sum([[17]], bad, num_segments=2)
          self.evaluate(unsorted)

  def testEmptySecondDimension(self):  # upstream: @test_util.run_deprecated_v1
    dtypes = [np.float16, np.float32, np.float64, np.int64, np.int32,
              np.complex64, np.complex128]
    with self.session():
      for dtype in dtypes:
        for itype in (np.int32, np.int64):
          data = np.zeros((2, 0), dtype=dtype)
          segment_ids = np.array([0, 1], dtype=itype)
          unsorted = math_ops.unsorted_segment_sum(data, segment_ids, 2)
          self.assertAllEqual(unsorted, np.zeros((2, 0), dtype=dtype))

  def testDropNegatives(self):
    # Note: the test is done by replacing segment_ids with 8 to -1
    # for index  and replace values generated by numpy with 0.
    indices_flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    num_segments = 12
    for indices in indices_flat, indices_flat.reshape(5, 2):
      shape = indices.shape + (2,)
      for dtype in self.all_dtypes:
        with self.session():
          tf_x, np_x = self._input(shape, dtype=dtype)
          np_ans = self._segmentReduce(
              indices, np_x, np.add, op2=None, num_segments=num_segments)
          # Replace np_ans[8] with 0 for the value
          np_ans[8:] = 0
          # Replace 8 with -1 in indices
          np.place(indices, indices == 8, [-1])
          s = math_ops.unsorted_segment_sum(
              data=tf_x, segment_ids=indices, num_segments=num_segments)
          tf_ans = self.evaluate(s)
        self.assertAllClose(np_ans, tf_ans)
        self.assertShapeEqual(np_ans, s)

  @pytest.mark.xfail(strict=True, raises=ValueError, reason=(
      "multigather.tf returns a numpy array for numpy inputs (TensorFlow returns a tf.Tensor), and "
      "self.evaluate takes tensors only: ValueError \"Unsupported type 'ndarray'\""))
  def testAllNegatives(self):  # upstream: @test_util.run_deprecated_v1
    with self.session(use_gpu=False):
      data = np.ones((2, 1), dtype=np.float32)
      segment_ids = np.array([-1, -1], dtype=np.int32)
      unsorted = math_ops.unsorted_segment_sum(data, segment_ids, 2)
      self.assertAllClose(self.evaluate(unsorted), np.zeros((2, 1), dtype=np.float32))

  def testBadNumSegments(self):  # upstream: @test_util.run_deprecated_v1
    with self.session(use_gpu=False):
      num_segments = 8327099846119777499
      with self.assertRaisesOpError(
          "Encountered overflow when multiplying | must not be negative"
      ):
        unsorted = math_ops.unsorted_segment_sum(
            np.ones((3)), segment_ids=898042203, num_segments=num_segments)
        self.evaluate(unsorted)

  def testNaNPropagation(self):
    for dtype in [
        dtypes_lib.float16,
        dtypes_lib.bfloat16,
        dtypes_lib.float32,
        dtypes_lib.float64,
    ]:
      with self.session(use_gpu=False):
        with ops.device("/cpu:0"):
          # Input [1.0, NaN, 3.0]
          data_min = constant_op.constant([1.0, float("nan"), 3.0], dtype=dtype)
          segment_ids = [0, 0, 0]
          res_min = math_ops.unsorted_segment_min(
              data_min, segment_ids, num_segments=1
          )
          self.assertTrue(np.isnan(self.evaluate(res_min)[0]))

          data_max = constant_op.constant([3.0, float("nan"), 1.0], dtype=dtype)
          res_max = math_ops.unsorted_segment_max(
              data_max, segment_ids, num_segments=1
          )
          self.assertTrue(np.isnan(self.evaluate(res_max)[0]))

          # Test 2D input NaN propagation
          data_2d = constant_op.constant(
              [[1.0, 2.0], [float("nan"), 3.0], [3.0, 1.0]], dtype=dtype
          )
          res_2d_min = math_ops.unsorted_segment_min(
              data_2d, segment_ids, num_segments=1
          )
          evaluated_min = self.evaluate(res_2d_min)
          self.assertTrue(np.isnan(evaluated_min[0][0]))
          self.assertAllClose(evaluated_min[0][1], 1.0)

          res_2d_max = math_ops.unsorted_segment_max(
              data_2d, segment_ids, num_segments=1
          )
          evaluated_max = self.evaluate(res_2d_max)
          self.assertTrue(np.isnan(evaluated_max[0][0]))
          self.assertAllClose(evaluated_max[0][1], 3.0)
