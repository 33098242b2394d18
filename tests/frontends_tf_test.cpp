// tf.gather / tf.gather_nd: golden values from the TensorFlow API docs examples (worked by hand),
// batch_dims (including the negative batch_dims idiom), negative indices as out of range, the
// GPU-style fill mode, exact errors.
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(TfGather, DocExamples) {
  // params = ['p0'..'p5']; tf.gather(params, [2, 0, 2, 5]) -> p2 p0 p2 p5
  expect_op("tf.gather", f32({6}, iota(6)), i32({4}, {2, 0, 2, 5}), {}, {4}, {2, 0, 2, 5});
  // params [4,3] of row*10+col; axis=1, indices [2, 0] -> columns 2 and 0
  const Tensor p = f32({4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  expect_op("tf.gather", p, i64({2}, {2, 0}), {{"axis", "1"}}, {4, 2}, {2, 0, 12, 10, 22, 20, 32, 30});
  // 0-D indices drop the axis.
  expect_op("tf.gather", p, i64({}, {1}), {{"axis", "0"}}, {3}, {10, 11, 12});
}

TEST(TfGather, BatchDims) {
  // output[b, i] = params[b, indices[b, i]]  (batch_dims=1, axis=1), docs/semantics.md 16.
  const Tensor p = f32({3, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24});
  const Tensor idx = i64({3, 2}, {2, 4, 1, 3, 0, 0});
  expect_op("tf.gather", p, idx, {{"axis", "1"}, {"batch_dims", "1"}}, {3, 2}, {2, 4, 11, 13, 20, 20});
  // axis=None means axis = batch_dims; batch_dims=-1 counts from rank(indices).
  expect_op("tf.gather", p, idx, {{"batch_dims", "-1"}}, {3, 2}, {2, 4, 11, 13, 20, 20});
  // ... the raw -1 becomes the axis, counted from rank(params) = 3: axis 2, batch_dims 1.
  expect_op("tf.gather", f32({2, 3, 2}, iota(12)), i64({2, 1}, {1, 0}), {{"batch_dims", "-1"}}, {2, 3, 1},
            {1, 3, 5, 6, 8, 10});
  const Lowering l = lower_shapes("tf.gather", {3, 5}, {3, 2}, {{"axis", "1"}, {"batch_dims", "1"}});
  EXPECT_EQ(to_string(l.input.shape), "[3,5,1]");
  EXPECT_EQ(to_string(l.indices.shape), "[3,1,2]");
  EXPECT_EQ(to_string(l.core_output_shape), "[3,1,2]");
  // batch_dims < axis: params [2,3,4], indices [2,5], batch_dims=1, axis=2 -> [2,3,5].
  const Lowering l2 = lower_shapes("tf.gather", {2, 3, 4}, {2, 5}, {{"axis", "2"}, {"batch_dims", "1"}});
  EXPECT_EQ(to_string(l2.output_shape), "[2,3,5]");
  expect_op("tf.gather", f32({2, 3, 2}, iota(12)), i64({2, 1}, {1, 0}), {{"axis", "2"}, {"batch_dims", "1"}}, {2, 3, 1},
            {1, 3, 5, 6, 8, 10});
}

TEST(TfGather, NegativeIndicesAreOutOfRange) {
  const Tensor p = f32({3}, {7, 8, 9});
  expect_error("tf.gather", p, i64({2}, {0, -1}), {}, StatusCode::kOutOfRange,
               "tf.gather: indices[1] = -1 is out of range for axis 0 of size 3 (valid range [0, 3)); "
               "TensorFlow indices must be in [0, D) (negative indices are not supported)");
  // index_mode=fill gives TF-GPU's zeros for every out-of-range index, negative ones included.
  expect_op("tf.gather", p, i64({3}, {-1, 2, 3}), {{"index_mode", "fill"}}, {3}, {0, 9, 0});
}

TEST(TfGather, Errors) {
  const Tensor p = f32({2, 3}, iota(6));
  expect_error("tf.gather", p, i64({3, 1}, {0, 0, 0}), {{"axis", "1"}, {"batch_dims", "1"}}, StatusCode::kInvalidArgument,
               "tf.gather: batch_dims = 1: params.shape[0] = 2 and indices.shape[0] = 3 must be equal (batch "
               "dimensions are not broadcast)");
  expect_error("tf.gather", p, i64({2, 1}, {0, 0}), {{"axis", "0"}, {"batch_dims", "1"}}, StatusCode::kInvalidArgument,
               "tf.gather: batch_dims (1) must be less than or equal to axis (0)");
  expect_error("tf.gather", p, i64({2}, {0, 0}), {{"batch_dims", "2"}}, StatusCode::kInvalidArgument,
               "tf.gather: batch_dims = 2 must be in [-1, 1] for indices rank 1");
  expect_error("tf.gather", p, make_tensor(DType::kUInt32, {1}, {0}), {}, StatusCode::kTypeError,
               "tf.gather: indices dtype uint32 is not supported (tf.gather accepts int32, int64)");
}

TEST(TfGatherNd, DocExamples) {
  // params = [['a', 'b'], ['c', 'd']] = [0, 1, 2, 3]
  const Tensor p = f32({2, 2}, {0, 1, 2, 3});
  expect_op("tf.gather_nd", p, i64({2, 2}, {0, 0, 1, 1}), {}, {2}, {0, 3});
  expect_op("tf.gather_nd", p, i64({2, 1}, {1, 0}), {}, {2, 2}, {2, 3, 0, 1});
  // batch_dims=1: params [[['a0','b0'],['c0','d0']],[['a1','b1'],['c1','d1']]], indices [[1],[0]]
  // -> [['c0','d0'], ['a1','b1']]
  expect_op("tf.gather_nd", f32({2, 2, 2}, iota(8)), i64({2, 1}, {1, 0}), {{"batch_dims", "1"}}, {2, 2}, {2, 3, 4, 5});
  // index_depth 0: whole slices (TF documents only index_depth <= rank).
  expect_op("tf.gather_nd", p, i64({3, 0}, {}), {}, {3, 2, 2}, {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3});
}

TEST(TfGatherNd, Errors) {
  const Tensor p = f32({2, 2}, {0, 1, 2, 3});
  expect_error("tf.gather_nd", p, i64({1, 2}, {1, 2}), {}, StatusCode::kOutOfRange,
               "tf.gather_nd: indices[0,1] = 2 is out of range for params dimension 1 of size 2 (valid range "
               "[0, 2)); TensorFlow indices must be in [0, D) (negative indices are not supported)");
  expect_error("tf.gather_nd", p, i64({1, 3}, {0, 0, 0}), {}, StatusCode::kInvalidArgument,
               "tf.gather_nd: index_depth = indices.shape[-1] = 3 must be <= rank(params) - batch_dims = 2");
  expect_error("tf.gather_nd", p, i64({}, {0}), {}, StatusCode::kInvalidArgument,
               "tf.gather_nd: indices must have rank >= 1 (index vectors on the last axis)");
}

}  // namespace
}  // namespace multigather
