// torch.gather / take / take_along_dim / index_select: golden values from the PyTorch docs
// examples (worked by hand), the size-1 "index <= input" rule, negative-index rejection, 0-D and
// empty tensors, index dtypes.
#include "multigather/frontends/torch.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(TorchGather, DocExample) {
  // t = [[1, 2], [3, 4]]; torch.gather(t, 1, [[0, 0], [1, 0]]) -> [[1, 1], [4, 3]]
  expect_op("torch.gather", f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0}), {{"dim", "1"}}, {2, 2}, {1, 1, 4, 3});
  expect_op("torch.gather", f32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {0, 0, 1, 0}), {{"dim", "1"}}, {2, 2}, {1, 1, 4, 3});
}

TEST(TorchGather, SizeOneIndexDimReadsRowZeroWhileTakeAlongDimBroadcasts) {
  // docs/semantics.md 4.3: gather(x[3,4], 1, idx[1,2]) -> [1,2]; take_along_dim -> [3,2].
  const Tensor x = f32({3, 4}, iota(12));
  const Tensor idx = i64({1, 2}, {3, 1});
  expect_op("torch.gather", x, idx, {{"dim", "1"}}, {1, 2}, {3, 1});
  expect_op("torch.take_along_dim", x, idx, {{"dim", "1"}}, {3, 2}, {3, 1, 7, 5, 11, 9});
}

TEST(TorchGather, ScalarAndEmpty) {
  expect_op("torch.gather", f32({}, {5}), i64({}, {0}), {}, {}, {5});
  expect_op("torch.gather", f32({3}, {7, 8, 9}), i64({}, {2}), {}, {}, {9});  // 0-D index = 1-D of size 1
  // An empty index returns an empty output of its shape without further checks.
  expect_op("torch.gather", f32({3, 4}, iota(12)), i64({0, 7}, {}), {}, {0, 7}, {});
}

TEST(TorchGather, Errors) {
  expect_error("torch.gather", f32({3, 4}, iota(12)), i64({1, 2}, {0, -1}), {{"dim", "1"}}, StatusCode::kOutOfRange,
               "torch.gather: index[0,1] = -1 is out of range for dim 1 of size 4 (valid range [0, 4)); "
               "torch.gather rejects negative indices (pytorch#55143)");
  expect_error("torch.gather", f32({3, 4}, iota(12)), i64({1, 2}, {0, 4}), {{"dim", "1"}}, StatusCode::kOutOfRange,
               "torch.gather: index[0,1] = 4 is out of range for dim 1 of size 4 (valid range [0, 4))");
  expect_error("torch.gather", f32({3, 4}, iota(12)), i64({4, 1}, {0, 0, 0, 0}), {{"dim", "1"}},
               StatusCode::kInvalidArgument,
               "torch.gather: index.shape[0] = 4 and input.shape[0] = 3: the index size must not exceed the "
               "input size on every dimension but 1");
  expect_error("torch.gather", f32({3, 4}, iota(12)), i64({4}, {0, 0, 0, 0}), {}, StatusCode::kInvalidArgument,
               "torch.gather: Index tensor must have the same number of dimensions as input tensor (index rank 1, "
               "input rank 2)");
  expect_error("torch.gather", f32({3}, iota(3)), make_tensor(DType::kInt16, {1}, {0}), {}, StatusCode::kTypeError,
               "torch.gather: index dtype int16 is not supported (torch.gather accepts int64, int32)");
}

TEST(TorchTake, DocExample) {
  // src = [[4, 3, 5], [6, 7, 8]]; torch.take(src, [0, 2, 5]) -> [4, 5, 8]
  const Tensor src = f32({2, 3}, {4, 3, 5, 6, 7, 8});
  expect_op("torch.take", src, i64({3}, {0, 2, 5}), {}, {3}, {4, 5, 8});
  expect_op("torch.take", src, i64({2, 2}, {-1, 0, 1, -6}), {}, {2, 2}, {8, 4, 3, 4});
  expect_op("torch.take", src, i64({}, {4}), {}, {}, {7});
}

TEST(TorchTake, NonContiguousInputIsCopiedOnce) {
  const Tensor src = f32({2, 3}, {4, 3, 5, 6, 7, 8});
  const TensorView t(src.data(), DType::kFloat32, Dims{3, 2}, Dims{1, 3});  // src.T = [[4,6],[3,7],[5,8]]
  const Tensor idx = i64({2}, {1, 4});
  Lowering l;
  ASSERT_TRUE(torch::take(t, idx.view(), &l).ok());
  ASSERT_NE(l.owned_input, nullptr);
  EXPECT_EQ(values_f32(execute(l)), as_f32({6, 5}));
}

TEST(TorchTake, Errors) {
  expect_error("torch.take", f32({0, 3}, {}), i64({1}, {0}), {}, StatusCode::kOutOfRange,
               "torch.take: out of range: tried to take from an empty tensor (input shape [0,3], index shape [1])");
  expect_error("torch.take", f32({2, 3}, iota(6)), i32({1}, {0}), {}, StatusCode::kTypeError,
               "torch.take: index dtype int32 is not supported (torch.take accepts int64)");
  expect_error("torch.take", f32({2, 3}, iota(6)), i64({2}, {0, 6}), {}, StatusCode::kOutOfRange,
               "torch.take: index[1] = 6 is out of range for the flattened input of size 6 (valid range [-6, 6))");
  expect_op("torch.take", f32({0, 3}, {}), i64({0}, {}), {}, {0}, {});
}

TEST(TorchTakeAlongDim, DocExamples) {
  // t = [[10, 30, 20], [60, 40, 50]]; max_idx = argmax(t) = 3 -> take_along_dim(t, max_idx) = [60]
  const Tensor t = f32({2, 3}, {10, 30, 20, 60, 40, 50});
  expect_op("torch.take_along_dim", t, i64({1}, {3}), {}, {1}, {60});
  // sorted_idx = argsort(t, dim=1) = [[0, 2, 1], [1, 2, 0]] -> [[10, 20, 30], [40, 50, 60]]
  expect_op("torch.take_along_dim", t, i64({2, 3}, {0, 2, 1, 1, 2, 0}), {{"dim", "1"}}, {2, 3}, {10, 20, 30, 40, 50, 60});
  // dim=None flattens the indices too.
  expect_op("torch.take_along_dim", t, i64({2, 1}, {5, 0}), {}, {2}, {50, 10});
  // Bidirectional broadcasting: input [1,3] with indices [2,2] on dim 1.
  expect_op("torch.take_along_dim", f32({1, 3}, {7, 8, 9}), i64({2, 2}, {2, 0, 1, 1}), {{"dim", "1"}}, {2, 2}, {9, 7, 8, 8});
}

TEST(TorchTakeAlongDim, DimTakesIndicesModuloItsSize) {
  // PyTorch 2.15: take_along_dim(t, [[0], [-1]], dim=1) on t = [[0,1,2],[3,4,5]] gives
  // [[0], [5]]; 4 % 3 = 1 and -4 % 3 = 2 (floor modulo).
  const Tensor t = f32({2, 3}, iota(6));
  expect_op("torch.take_along_dim", t, i64({2, 1}, {0, -1}), {{"dim", "1"}}, {2, 1}, {0, 5});
  expect_op("torch.take_along_dim", t, i64({2, 2}, {4, -4, 7, 3}), {{"dim", "1"}}, {2, 2}, {1, 2, 4, 3});
}

TEST(TorchTakeAlongDim, Errors) {
  const Tensor t = f32({2, 3}, iota(6));
  expect_error("torch.take_along_dim", t, i64({3, 1}, {0, 0, 0}), {{"dim", "1"}}, StatusCode::kInvalidArgument,
               "torch.take_along_dim: indices.shape[0] = 3 and input.shape[0] = 2 are not broadcastable "
               "(dimension 0 is not the gather axis)");
  expect_error("torch.take_along_dim", t, i64({3}, {0, 0, 0}), {{"dim", "0"}}, StatusCode::kInvalidArgument,
               "torch.take_along_dim: input and indices should have the same number of dimensions, but got 2 "
               "dimensions for input, and 1 dimensions for indices");
  expect_error("torch.take_along_dim", t, i32({1, 1}, {0}), {{"dim", "0"}}, StatusCode::kTypeError,
               "torch.take_along_dim: indices dtype int32 is not supported (torch.take_along_dim accepts int64)");
}

TEST(TorchIndexSelect, DocExample) {
  const Tensor x = f32({3, 4}, iota(12));
  const Tensor indices = i64({2}, {0, 2});
  expect_op("torch.index_select", x, indices, {{"dim", "0"}}, {2, 4}, {0, 1, 2, 3, 8, 9, 10, 11});
  expect_op("torch.index_select", x, indices, {{"dim", "1"}}, {3, 2}, {0, 2, 4, 6, 8, 10});
  expect_op("torch.index_select", x, i32({}, {1}), {{"dim", "-1"}}, {3, 1}, {1, 5, 9});  // 0-D index keeps the dim
  expect_op("torch.index_select", x, i64({0}, {}), {{"dim", "0"}}, {0, 4}, {});
  const Lowering l = lower_shapes("torch.index_select", {3, 4, 5}, {6}, {{"dim", "1"}});
  EXPECT_EQ(to_string(l.indices.shape), "[1,6,1]");
  EXPECT_EQ(to_string(l.output_shape), "[3,6,5]");
}

TEST(TorchIndexSelect, Errors) {
  const Tensor x = f32({3, 4}, iota(12));
  expect_error("torch.index_select", x, i64({2}, {0, -1}), {}, StatusCode::kOutOfRange,
               "torch.index_select: index[1] = -1 is out of range for dim 0 of size 3 (valid range [0, 3)); "
               "torch.index_select rejects negative indices (pytorch#55143)");
  expect_error("torch.index_select", x, i64({1, 2}, {0, 1}), {}, StatusCode::kInvalidArgument,
               "torch.index_select: index_select(): Index is supposed to be a vector (got index shape [1,2])");
}

}  // namespace
}  // namespace multigather
