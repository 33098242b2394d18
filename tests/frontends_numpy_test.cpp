// numpy.take / take_along_axis / advanced_index: golden values from the NumPy docs examples and
// the indexing guide (worked by hand), the three take modes, and the encoding of advanced
// indexing (index arrays stacked on a last dimension + index_dims), adjacent and separated.
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(NumpyTake, DocExamples) {
  // a = [4, 3, 5, 7, 6, 8]; np.take(a, [0, 1, 4]) -> [4, 3, 6]; [[0, 1], [2, 3]] -> [[4, 3], [5, 7]]
  const Tensor a = f32({6}, {4, 3, 5, 7, 6, 8});
  expect_op("numpy.take", a, i64({3}, {0, 1, 4}), {}, {3}, {4, 3, 6});
  expect_op("numpy.take", a, i64({2, 2}, {0, 1, 2, 3}), {}, {2, 2}, {4, 3, 5, 7});
  // axis=None flattens; axis=1 keeps the leading dims.
  const Tensor b = f32({2, 3}, iota(6));
  expect_op("numpy.take", b, i64({2}, {5, -6}), {{"axis", "none"}}, {2}, {5, 0});
  expect_op("numpy.take", b, i64({2}, {2, 0}), {{"axis", "1"}}, {2, 2}, {2, 0, 5, 3});
  expect_op("numpy.take", b, make_tensor(DType::kUInt8, {}, {1}), {{"axis", "0"}}, {3}, {3, 4, 5});
}

TEST(NumpyTake, Modes) {
  const Tensor a = f32({3}, {4, 3, 5});
  // clip: clamp WITHOUT negative wrap (-1 -> 0); wrap: modulo; raise: wrap once.
  expect_op("numpy.take", a, i64({3}, {-1, 5, 1}), {{"mode", "clip"}}, {3}, {4, 5, 3});
  expect_op("numpy.take", a, i64({3}, {-1, 4, -7}), {{"mode", "wrap"}}, {3}, {5, 3, 5});
  expect_op("numpy.take", a, i64({2}, {-1, -3}), {{"mode", "raise"}}, {2}, {5, 4});
  const Lowering clip = lower_shapes("numpy.take", {3}, {3}, {{"mode", "clip"}});
  EXPECT_EQ(clip.options.index_mode, IndexMode::kClamp);
  EXPECT_FALSE(clip.options.negative_indices);
}

TEST(NumpyTake, Errors) {
  expect_error("numpy.take", f32({3}, iota(3)), i64({1}, {-4}), {}, StatusCode::kOutOfRange,
               "numpy.take: indices[0] = -4 is out of range for the flattened input of size 3 (valid range [-3, 3))");
  expect_error("numpy.take", f32({2, 0}, {}), i64({1}, {0}), {{"axis", "1"}}, StatusCode::kOutOfRange,
               "numpy.take: cannot do a non-empty take from an empty axes (axis 1 has size 0, indices shape [1])");
  expect_error("numpy.take", f32({3}, iota(3)), i64({1}, {0}), {{"mode", "fill"}}, StatusCode::kInvalidArgument,
               "numpy.take: attribute mode: 'fill' is not one of raise, wrap, clip");
  expect_error("numpy.take", f32({3}, iota(3)), f32({1}, {0}), {}, StatusCode::kTypeError,
               "numpy.take: indices dtype float32 is not an integer type");
}

TEST(NumpyTakeAlongAxis, DocExamples) {
  // a = [[10, 30, 20], [60, 40, 50]]; ai = argsort(a, axis=1) = [[0, 2, 1], [1, 2, 0]]
  const Tensor a = f32({2, 3}, {10, 30, 20, 60, 40, 50});
  expect_op("numpy.take_along_axis", a, i64({2, 3}, {0, 2, 1, 1, 2, 0}), {{"axis", "1"}}, {2, 3}, {10, 20, 30, 40, 50, 60});
  // ai = expand_dims(argmax(a, axis=1), axis=1) = [[1], [0]] -> [[30], [60]]
  expect_op("numpy.take_along_axis", a, i64({2, 1}, {1, 0}), {{"axis", "1"}}, {2, 1}, {30, 60});
  // axis=None: 1-D indices into the flattened array.
  expect_op("numpy.take_along_axis", a, i64({2}, {3, -1}), {{"axis", "none"}}, {2}, {60, 50});
  // Broadcasting both ways: arr [1,3] with indices [2,1] on axis 1 -> [2,1]; indices [1,1] on axis 0 -> [1,3].
  expect_op("numpy.take_along_axis", f32({1, 3}, {7, 8, 9}), i64({2, 1}, {2, 0}), {{"axis", "1"}}, {2, 1}, {9, 7});
  expect_op("numpy.take_along_axis", a, i64({1, 1}, {1}), {{"axis", "0"}}, {1, 3}, {60, 40, 50});
}

TEST(NumpyTakeAlongAxis, Errors) {
  const Tensor a = f32({2, 3}, iota(6));
  expect_error("numpy.take_along_axis", a, i64({2}, {0, 0}), {}, StatusCode::kInvalidArgument,
               "numpy.take_along_axis: `indices` and `arr` must have the same number of dimensions (1 and 2)");
  expect_error("numpy.take_along_axis", a, i64({2, 2}, {0, 0, 0, 0}), {{"axis", "none"}}, StatusCode::kInvalidArgument,
               "numpy.take_along_axis: when axis=None, `indices` must have a single dimension (got shape [2,2])");
  expect_error("numpy.take_along_axis", a, i64({1, 1}, {3}), {{"axis", "1"}}, StatusCode::kOutOfRange,
               "numpy.take_along_axis: indices[0,0] = 3 is out of range for axis 1 of size 3 (valid range [-3, 3))");
}

TEST(NumpyAdvancedIndex, AdjacentAndSeparated) {
  const Tensor x = f32({3, 4, 5}, iota(60));
  // x[:, [0, 2], [1, 3]]: adjacent (dims 1, 2) -> shape [3, 2]: x[i,0,1], x[i,2,3].
  expect_op("numpy.advanced_index", x, i64({2, 2}, {0, 1, 2, 3}), {{"index_dims", "1,2"}}, {3, 2},
            {1, 13, 21, 33, 41, 53});
  // x[[0, 2], :, [1, 3]]: separated (dims 0, 2) -> the index shape goes first: [2, 4].
  expect_op("numpy.advanced_index", x, i64({2, 2}, {0, 1, 2, 3}), {{"index_dims", "0,2"}}, {2, 4},
            {1, 6, 11, 16, 43, 48, 53, 58});
  // x[[[1], [2]], [0, 3]] (index arrays broadcast to [2,2] by the caller): dims 0, 1 -> [2, 2, 5].
  expect_op("numpy.advanced_index", f32({3, 4}, iota(12)), i64({2, 2, 2}, {1, 0, 1, 3, 2, 0, 2, 3}),
            {{"index_dims", "0,1"}}, {2, 2}, {4, 7, 8, 11});
  // A single index array is x[idx] (or x[:, idx]).
  expect_op("numpy.advanced_index", f32({3, 2}, iota(6)), i64({2, 1}, {2, -3}), {}, {2, 2}, {4, 5, 0, 1});
}

TEST(NumpyAdvancedIndex, LoweringShapes) {
  // docs/semantics.md section 16 worked check: x[i0, :, i1] with X=[4,5,6], B=[7].
  const Lowering sep = lower_shapes("numpy.advanced_index", {4, 5, 6}, {7, 2}, {{"index_dims", "0,2"}});
  EXPECT_EQ(to_string(sep.input.shape), "[1,4,5,6]");
  EXPECT_EQ(to_string(sep.logical_indices_shape), "[7,1,1,1]");
  EXPECT_EQ(to_string(sep.indices.shape), "[7,1,1,2]");
  EXPECT_EQ(sep.axes, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(to_string(sep.output_shape), "[7,5]");
  const Lowering adj = lower_shapes("numpy.advanced_index", {4, 5, 6}, {7, 8, 2}, {{"index_dims", "1,2"}});
  EXPECT_EQ(to_string(adj.input.shape), "[4,5,6,1,1]");
  EXPECT_EQ(to_string(adj.logical_indices_shape), "[1,1,1,7,8]");
  EXPECT_EQ(to_string(adj.output_shape), "[4,7,8]");
}

TEST(NumpyAdvancedIndex, Errors) {
  const Tensor x = f32({3, 4}, iota(12));
  expect_error("numpy.advanced_index", x, i64({1, 2}, {0, 0}), {{"index_dims", "1,0"}}, StatusCode::kInvalidArgument,
               "numpy.advanced_index: index_dims [1,0] must be strictly increasing (the order of the index arrays in a[...])");
  expect_error("numpy.advanced_index", x, i64({1, 3}, {0, 0, 0}), {{"index_dims", "0,1"}}, StatusCode::kInvalidArgument,
               "numpy.advanced_index: indices shape [1,3] must be B ++ [2] (the 2 broadcast index arrays stacked on the last dimension)");
  expect_error("numpy.advanced_index", x, i64({1, 2}, {0, 4}), {{"index_dims", "0,1"}}, StatusCode::kOutOfRange,
               "numpy.advanced_index: indices[0,1] = 4 is out of range for axis 1 of size 4 (valid range [-4, 4))");
}

}  // namespace
}  // namespace multigather
