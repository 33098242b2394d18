// coreml.gather / gather_along_axis / gather_nd, tosa.gather, tensor.gather, tcp.gather /
// gather_nd: golden values from each documented formula (worked by hand), shapes from the MLIR
// docs example, validation with the framework's reason.
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

// ---- Core ML ------------------------------------------------------------------------------

TEST(CoremlGather, AxisBatchDimsAndIndexPolicy) {
  const Tensor x = f32({2, 3}, {0, 1, 2, 10, 11, 12});
  expect_op("coreml.gather", x, i32({2}, {1, -1}), {{"axis", "1"}}, {2, 2}, {1, 2, 11, 12});
  // batch_dims=1: out[b, i] = x[b, indices[b, i]]
  expect_op("coreml.gather", x, make_tensor(DType::kUInt16, {2, 2}, {2, 0, 1, 1}), {{"axis", "1"}, {"batch_dims", "1"}},
            {2, 2}, {2, 0, 11, 11});
  // validate_indices=False (default): memory safe, multigather clamps; True: an error.
  expect_op("coreml.gather", x, i32({1}, {7}), {{"axis", "1"}}, {2, 1}, {2, 12});
  expect_error("coreml.gather", x, i32({1}, {7}), {{"axis", "1"}, {"validate_indices", "true"}}, StatusCode::kOutOfRange,
               "coreml.gather: indices[0] = 7 is out of range for axis 1 of size 3 (valid range [-3, 3))");
  const Lowering l = lower_shapes("coreml.gather", {2, 3}, {1}, {});
  ASSERT_EQ(l.notes.size(), 2u);
  EXPECT_EQ(l.notes[0], "int64 indices are accepted although Core ML has no int64 indices");
  expect_error("coreml.gather", x, make_tensor(DType::kUInt32, {1}, {0}), {}, StatusCode::kTypeError,
               "coreml.gather: indices dtype uint32 is not supported (coreml.gather accepts int32, int16, uint16, "
               "int8, uint8, int64)");
}

TEST(CoremlGatherAlongAxis, EqualNonAxisSizes) {
  const Tensor x = f32({2, 3}, {0, 1, 2, 10, 11, 12});
  expect_op("coreml.gather_along_axis", x, i32({2, 2}, {2, 0, 1, 1}), {{"axis", "1"}}, {2, 2}, {2, 0, 11, 11});
  expect_error("coreml.gather_along_axis", x, i32({1, 2}, {0, 0}), {{"axis", "1"}}, StatusCode::kInvalidArgument,
               "coreml.gather_along_axis: indices.shape[0] = 1 and x.shape[0] = 2 must be equal (only axis 1 may differ)");
}

TEST(CoremlGatherNd, BatchDims) {
  expect_op("coreml.gather_nd", f32({2, 2, 2}, iota(8)), i32({2, 1}, {1, 0}), {{"batch_dims", "1"}}, {2, 2}, {2, 3, 4, 5});
  expect_error("coreml.gather_nd", f32({2, 2}, iota(4)), i32({2, 2}, {0, 0, 0, 0}), {{"batch_dims", "1"}},
               StatusCode::kInvalidArgument,
               "coreml.gather_nd: indices.shape[-1] + batch_dims = 2 + 1 must be <= rank(x) = 2");
}

// ---- TOSA ---------------------------------------------------------------------------------

TEST(TosaGather, Formula) {
  // output[n, w, c] = values[n, indices[n, w], c]; values [2,3,2], indices [2,2].
  const Tensor values = f32({2, 3, 2}, iota(12));
  expect_op("tosa.gather", values, i32({2, 2}, {2, 0, 1, 1}), {}, {2, 2, 2}, {4, 5, 0, 1, 8, 9, 8, 9});
  const Lowering l = lower_shapes("tosa.gather", {2, 3, 2}, {2, 4}, {}, DType::kInt32);
  EXPECT_EQ(to_string(l.indices.shape), "[2,4,1]");
  EXPECT_EQ(l.axes, std::vector<std::int64_t>{1});
}

TEST(TosaGather, Errors) {
  const Tensor values = f32({2, 3, 2}, iota(12));
  expect_error("tosa.gather", values, i32({2, 1}, {0, -1}), {}, StatusCode::kOutOfRange,
               "tosa.gather: indices[1,0] = -1 is out of range for K (values dimension 1) of size 3 (valid range "
               "[0, 3)); TOSA REQUIRE(0 <= k < K)");
  expect_error("tosa.gather", values, i32({1, 1}, {0}), {}, StatusCode::kInvalidArgument,
               "tosa.gather: values.shape[0] = 2 and indices.shape[0] = 1 must be equal (N)");
  expect_error("tosa.gather", values, i32({2}, {0, 0}), {}, StatusCode::kInvalidArgument,
               "tosa.gather: values must be rank 3 [N,K,C] and indices rank 2 [N,W] (got [2,3,2] and [2])");
}

// ---- MLIR tensor.gather and TCP -----------------------------------------------------------

TEST(TensorGather, DocExampleShapes) {
  // TensorOps.td: tensor<4x5x6xf32>[tensor<1x2x3x2xindex>] gather_dims([1, 2])
  //   -> tensor<1x2x3x4x1x1xf32> (rank-preserving) or tensor<1x2x3x4xf32> (rank-reduced).
  const Lowering l = lower_shapes("tensor.gather", {4, 5, 6}, {1, 2, 3, 2}, {{"gather_dims", "1,2"}});
  EXPECT_EQ(to_string(l.output_shape), "[1,2,3,4,1,1]");
  EXPECT_EQ(to_string(l.input.shape), "[1,1,1,4,5,6]");
  EXPECT_EQ(l.axes, (std::vector<std::int64_t>{4, 5}));
  const Lowering r = lower_shapes("tensor.gather", {4, 5, 6}, {1, 2, 3, 2}, {{"gather_dims", "1,2"}, {"rank_reduced", "true"}});
  EXPECT_EQ(to_string(r.output_shape), "[1,2,3,4]");
}

TEST(TensorGather, ValuesAndErrors) {
  const Tensor src = f32({2, 3}, iota(6));
  expect_op("tensor.gather", src, i64({2, 1}, {1, 0}), {{"gather_dims", "0"}}, {2, 1, 3}, {3, 4, 5, 0, 1, 2});
  expect_op("tensor.gather", src, i64({2, 2}, {1, 2, 0, 1}), {{"gather_dims", "0,1"}, {"rank_reduced", "1"}}, {2}, {5, 1});
  expect_error("tensor.gather", src, i64({1, 2}, {0, 0}), {{"gather_dims", "1,0"}}, StatusCode::kInvalidArgument,
               "tensor.gather: gather_dims [1,0] must be strictly increasing");
  expect_error("tensor.gather", src, i64({1, 1}, {0}), {{"gather_dims", "0,1"}}, StatusCode::kInvalidArgument,
               "tensor.gather: the last dimension of indices [1,1] must equal the number of gather_dims (2)");
  expect_error("tensor.gather", src, i64({1, 1}, {2}), {{"gather_dims", "0"}}, StatusCode::kOutOfRange,
               "tensor.gather: indices[0,0] = 2 is out of range for source dimension 0 of size 2 (valid range "
               "[0, 2)); out-of-range indices are undefined behaviour in MLIR; multigather rejects them");
}

TEST(Tcp, GatherAndGatherNd) {
  // tcp.gather = torch.gather (leading part read); tcp.gather_nd = GatherND without batching.
  expect_op("tcp.gather", f32({3, 4}, iota(12)), i64({1, 2}, {3, 1}), {{"dim", "1"}}, {1, 2}, {3, 1});
  expect_op("tcp.gather_nd", f32({2, 2, 2}, iota(8)), i64({2, 2}, {0, 1, 1, 0}), {}, {2, 2}, {2, 3, 4, 5});
  expect_error("tcp.gather", f32({3, 4}, iota(12)), i64({1, 2}, {3, 1}), {{"dim", "-1"}}, StatusCode::kInvalidArgument,
               "tcp.gather: dim = -1 is out of range [0, 1] for input rank 2");
  expect_error("tcp.gather_nd", f32({2, 2}, iota(4)), i64({1, 3}, {0, 0, 0}), {}, StatusCode::kInvalidArgument,
               "tcp.gather_nd: indices.shape[-1] = 3 must be <= input rank 2");
}

}  // namespace
}  // namespace multigather
