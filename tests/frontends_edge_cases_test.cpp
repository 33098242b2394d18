// The edge cases of docs/semantics.md section 17, op by op, as one golden table: empty
// indices, empty inputs, 0-D indices, unsigned index dtypes (accepted or rejected by each
// framework's dtype list), coordinate-size bounds. Each row runs the op on real buffers and checks
// the output shape (values: zero elements, or the single element named in the row) or the error
// code. The exact messages of these errors are asserted in the per-family test files.
#include <cstring>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

struct EdgeCase {
  const char* op;
  Dims input_shape;
  Dims indices_shape;
  DType indices_dtype;
  Attributes attrs;
  const char* expected_shape;  // nullptr: an error is expected
  StatusCode error = StatusCode::kOk;
};

void run_table(const std::vector<EdgeCase>& rows) {
  for (const EdgeCase& c : rows) {
    std::int64_t n = 0, m = 0;
    element_count(c.input_shape, &n);
    element_count(c.indices_shape, &m);
    const Tensor input = f32(c.input_shape, iota(static_cast<int>(n)));
    const Tensor indices = make_tensor(c.indices_dtype, c.indices_shape, std::vector<double>(static_cast<std::size_t>(m), 0));
    Tensor out;
    const Status s = run_op(c.op, input.view(), indices.view(), c.attrs, &out);
    const std::string where = std::string(c.op) + " input " + to_string(c.input_shape) + " indices " +
                              to_string(c.indices_shape) + " " + std::string(dtype_name(c.indices_dtype));
    if (c.expected_shape == nullptr) {
      EXPECT_FALSE(s.ok()) << where;
      EXPECT_EQ(s.code(), c.error) << where << ": " << s.message();
    } else {
      ASSERT_TRUE(s.ok()) << where << ": " << s.message();
      EXPECT_EQ(to_string(out.shape()), c.expected_shape) << where;
      if (out.numel() > 0) EXPECT_EQ(out.data_as<float>()[0], 0.0f) << where;  // index 0 reads element 0
    }
  }
}

constexpr DType I32 = DType::kInt32, I64 = DType::kInt64, U8 = DType::kUInt8, U32 = DType::kUInt32,
                U64 = DType::kUInt64;
constexpr StatusCode kInvalid = StatusCode::kInvalidArgument, kType = StatusCode::kTypeError,
                     kRange = StatusCode::kOutOfRange;

TEST(EdgeCases, EmptyIndices) {
  run_table({
      {"onnx.Gather", {3, 4}, {0, 2}, I64, {{"axis", "1"}}, "[3,0,2]"},
      {"onnx.GatherElements", {3, 4}, {3, 0}, I64, {{"axis", "1"}}, "[3,0]"},
      {"onnx.GatherND", {3, 4}, {0, 2}, I64, {}, "[0]"},
      {"torch.gather", {3, 4}, {0, 9}, I64, {}, "[0,9]"},
      {"torch.take", {3, 4}, {0}, I64, {}, "[0]"},
      {"torch.take_along_dim", {3, 4}, {3, 0}, I64, {{"dim", "1"}}, "[3,0]"},
      {"torch.index_select", {3, 4}, {0}, I64, {{"dim", "1"}}, "[3,0]"},
      {"numpy.take", {3, 4}, {0}, I64, {{"axis", "0"}}, "[0,4]"},
      {"numpy.take_along_axis", {3, 4}, {0, 4}, I64, {{"axis", "0"}}, "[0,4]"},
      {"numpy.advanced_index", {3, 4}, {0, 2}, I64, {{"index_dims", "0,1"}}, "[0]"},
      {"tf.gather", {3, 4}, {2, 0}, I32, {{"axis", "1"}}, "[3,2,0]"},
      {"tf.gather_nd", {3, 4}, {0, 1}, I32, {}, "[0,4]"},
      {"jax.numpy.take", {3, 4}, {0}, I64, {{"axis", "1"}}, "[3,0]"},
      {"jax.numpy.take_along_axis", {3, 4}, {3, 0}, I64, {}, "[3,0]"},
      {"coreml.gather", {3, 4}, {0}, I32, {}, "[0,4]"},
      {"coreml.gather_along_axis", {3, 4}, {0, 4}, I32, {}, "[0,4]"},
      {"coreml.gather_nd", {3, 4}, {0, 2}, I32, {}, "[0]"},
      {"tosa.gather", {2, 3, 4}, {2, 0}, I32, {}, "[2,0,4]"},
      {"tensor.gather", {3, 4}, {0, 1}, I64, {{"gather_dims", "0"}}, "[0,1,4]"},
      {"tcp.gather", {3, 4}, {0, 4}, I64, {}, "[0,4]"},
      {"tcp.gather_nd", {3, 4}, {0, 1}, I64, {}, "[0,4]"},
      {"stablehlo.gather", {3, 4}, {0, 1}, I64,
       {{"offset_dims", "1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"}, {"index_vector_dim", "1"},
        {"slice_sizes", "1,4"}},
       "[0,4]"},
      {"webnn.gather", {3, 4}, {0}, I32, {}, "[0,4]"},
      {"webnn.gatherElements", {3, 4}, {0, 4}, I32, {}, "[0,4]"},
      {"webnn.gatherND", {3, 4}, {0, 2}, I32, {}, "[0]"},
  });
}

TEST(EdgeCases, EmptyInputIsFineWhenNothingIsLookedUp) {
  run_table({
      {"onnx.Gather", {0, 5}, {1, 3}, I64, {{"axis", "1"}}, "[0,1,3]"},
      {"tf.gather", {0, 5}, {2}, I64, {{"axis", "1"}}, "[0,2]"},
      {"numpy.take", {0, 5}, {1, 3}, I64, {{"axis", "1"}}, "[0,1,3]"},
      {"torch.index_select", {0, 5}, {2}, I64, {{"dim", "1"}}, "[0,2]"},
      {"webnn.gather", {0, 5}, {2}, I32, {{"axis", "1"}}, "[0,2]"},
      // ... and an error when something is: the indexed axis is empty.
      {"onnx.Gather", {0, 5}, {1}, I64, {}, nullptr, kRange},
      {"webnn.gather", {0, 5}, {1}, I32, {}, nullptr, kRange},
      {"torch.take", {0, 5}, {1}, I64, {}, nullptr, kRange},
      {"numpy.take", {0, 5}, {1}, I64, {{"axis", "0"}}, nullptr, kRange},
      {"jax.numpy.take", {0, 5}, {1}, I64, {{"axis", "0"}}, nullptr, kRange},
  });
}

TEST(EdgeCases, ZeroDimensionalIndices) {
  run_table({
      {"onnx.Gather", {3, 4}, {}, I64, {{"axis", "1"}}, "[3]"},
      {"tf.gather", {3, 4}, {}, I32, {}, "[4]"},
      {"numpy.take", {3, 4}, {}, I64, {}, "[]"},
      {"jax.numpy.take", {3, 4}, {}, I64, {{"axis", "0"}}, "[4]"},
      {"coreml.gather", {3, 4}, {}, I32, {{"axis", "1"}}, "[3]"},
      {"webnn.gather", {3}, {}, U32, {}, "[]"},
      {"torch.take", {3, 4}, {}, I64, {}, "[]"},
      {"torch.index_select", {3, 4}, {}, I64, {{"dim", "1"}}, "[3,1]"},
      {"torch.gather", {3}, {}, I64, {}, "[]"},
      {"stablehlo.gather", {3, 4}, {}, I64,
       {{"offset_dims", "0"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"}, {"index_vector_dim", "0"},
        {"slice_sizes", "1,4"}},
       "[4]"},
      // Ops whose indices carry coordinates (or match the input rank) reject 0-D indices.
      {"onnx.GatherND", {3, 4}, {}, I64, {}, nullptr, kInvalid},
      {"onnx.GatherElements", {3, 4}, {}, I64, {}, nullptr, kInvalid},
      {"tf.gather_nd", {3, 4}, {}, I32, {}, nullptr, kInvalid},
      {"webnn.gatherND", {3, 4}, {}, I32, {}, nullptr, kInvalid},
      {"webnn.gatherElements", {3, 4}, {}, I32, {}, nullptr, kInvalid},
      {"tensor.gather", {3, 4}, {}, I64, {{"gather_dims", "0"}}, nullptr, kInvalid},
  });
}

TEST(EdgeCases, UnsignedIndexDtypes) {
  run_table({
      {"webnn.gather", {3, 4}, {2}, U32, {}, "[2,4]"},
      {"numpy.take", {3, 4}, {2}, U64, {{"axis", "0"}}, "[2,4]"},
      {"jax.numpy.take", {3, 4}, {2}, U8, {{"axis", "0"}}, "[2,4]"},
      {"coreml.gather", {3, 4}, {2}, U8, {}, "[2,4]"},
      {"tensor.gather", {3, 4}, {2, 1}, U32, {{"gather_dims", "0"}}, "[2,1,4]"},
      {"stablehlo.gather", {3, 4}, {2, 1}, U64,
       {{"offset_dims", "1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"}, {"index_vector_dim", "1"},
        {"slice_sizes", "1,4"}},
       "[2,4]"},
      {"gather_multiaxis", {3, 4}, {2, 1}, U32, {{"axes", "0"}}, "[2,4]"},
      {"onnx.Gather", {3, 4}, {2}, U32, {}, nullptr, kType},
      {"onnx.GatherND", {3, 4}, {2, 1}, U64, {}, nullptr, kType},
      {"torch.gather", {3, 4}, {1, 4}, U8, {}, nullptr, kType},
      {"torch.index_select", {3, 4}, {2}, U32, {}, nullptr, kType},
      {"tf.gather", {3, 4}, {2}, U32, {}, nullptr, kType},
      {"tosa.gather", {2, 3, 4}, {2, 1}, U32, {}, nullptr, kType},
      {"coreml.gather", {3, 4}, {2}, U32, {}, nullptr, kType},
      {"webnn.gather", {3, 4}, {2}, U64, {}, nullptr, kType},
  });
}

TEST(EdgeCases, CoordinateSizeBounds) {
  run_table({
      {"onnx.GatherND", {2, 3, 4}, {5, 3}, I64, {}, "[5]"},
      {"onnx.GatherND", {2, 3, 4}, {2, 2}, I64, {{"batch_dims", "1"}}, "[2]"},
      {"onnx.GatherND", {2, 3, 4}, {5, 4}, I64, {}, nullptr, kInvalid},
      {"onnx.GatherND", {2, 3, 4}, {5, 0}, I64, {}, nullptr, kInvalid},
      {"tf.gather_nd", {2, 3, 4}, {5, 0}, I64, {}, "[5,2,3,4]"},
      {"tf.gather_nd", {2, 3, 4}, {2, 3}, I64, {{"batch_dims", "1"}}, nullptr, kInvalid},
      {"webnn.gatherND", {2, 3, 4}, {5, 3}, I32, {}, "[5]"},
      {"webnn.gatherND", {2, 3, 4}, {5, 4}, I32, {}, nullptr, kInvalid},
      {"coreml.gather_nd", {2, 3, 4}, {2, 3}, I32, {{"batch_dims", "1"}}, nullptr, kInvalid},
      {"tcp.gather_nd", {2, 3, 4}, {5, 4}, I64, {}, nullptr, kInvalid},
      {"tensor.gather", {2, 3, 4}, {5, 3}, I64, {{"gather_dims", "0,1,2"}, {"rank_reduced", "true"}}, "[5]"},
  });
}

TEST(EdgeCases, BatchDimsMustMatchExactly) {
  run_table({
      {"tf.gather", {2, 3}, {2, 4}, I32, {{"axis", "1"}, {"batch_dims", "1"}}, "[2,4]"},
      {"tf.gather", {2, 3}, {1, 4}, I32, {{"axis", "1"}, {"batch_dims", "1"}}, nullptr, kInvalid},
      {"coreml.gather", {2, 3}, {1, 4}, I32, {{"axis", "1"}, {"batch_dims", "1"}}, nullptr, kInvalid},
      {"coreml.gather_nd", {2, 3}, {1, 1}, I32, {{"batch_dims", "1"}}, nullptr, kInvalid},
      {"tf.gather_nd", {1, 3}, {2, 1}, I32, {{"batch_dims", "1"}}, nullptr, kInvalid},
  });
}

// ---- Differences from the frameworks found by comparing them on edge cases (PyTorch 2.15,
// numpy 2.4, ONNX Runtime 1.31; tests/python/test_edge_cases.py checks the same cases against the
// installed frameworks). The expected results follow each framework's rule as its source states
// it, cited per test; none needs a framework here.

constexpr DType Bool = DType::kBool, F32 = DType::kFloat32, I8 = DType::kInt8, I16 = DType::kInt16;

// A uint64 tensor holding `values` exactly (make_tensor converts through double).
Tensor u64(Dims shape, const std::vector<std::uint64_t>& values) {
  Tensor t(DType::kUInt64, shape);
  std::memcpy(t.data(), values.data(), values.size() * sizeof(std::uint64_t));
  return t;
}

TEST(EdgeCases, TorchGatherEmptyIndexIsCheckedForDimOnly) {
  // ATen's gather meta function wraps dim against input.dim() (a 0-D input counts as 1-D), then:
  // "When index is empty, we always return an empty output with the same shape without further
  // error checking": no dtype check (torch.gather(x, 0, torch.empty(0, 4, dtype=torch.uint8))
  // is an empty tensor), no rank or size check. A non-empty index must be int32/int64.
  run_table({
      {"torch.gather", {3, 4}, {0, 4}, U8, {}, "[0,4]"},
      {"torch.gather", {3, 4}, {0, 9}, Bool, {{"dim", "1"}}, "[0,9]"},
      {"torch.gather", {3, 4}, {0}, F32, {}, "[0]"},            // rank 1 against rank 2
      {"torch.gather", {3, 4}, {2, 0, 5}, I16, {}, "[2,0,5]"},  // rank 3, larger sizes
      {"torch.gather", {}, {0, 3}, U64, {{"dim", "-1"}}, "[0,3]"},
      {"torch.gather", {3, 4}, {0, 4}, U8, {{"dim", "2"}}, nullptr, kInvalid},
      {"torch.gather", {}, {0}, I64, {{"dim", "1"}}, nullptr, kInvalid},
      {"torch.gather", {3, 4}, {1, 4}, U8, {}, nullptr, kType},
      {"torch.gather", {3, 4}, {1, 4}, Bool, {}, nullptr, kType},
      // dim is checked before the dtype, the dtype before the ranks.
      {"torch.gather", {3, 4}, {1, 4}, U8, {{"dim", "5"}}, nullptr, kInvalid},
      {"torch.gather", {3, 4}, {4}, U8, {}, nullptr, kType},
  });
}

TEST(EdgeCases, TorchTakeAlongDimWithoutDimFollowsGather) {
  // ATen: take_along_dim(input, indices, dim=None) is input.view(-1).gather(0, indices.view(-1)),
  // so gather's dtype rule applies (int32 too; an empty index of any dtype); with a dim,
  // _take_along_dim_helper checks the ranks, then int64 only.
  run_table({
      {"torch.take_along_dim", {3, 4}, {2, 2}, I32, {}, "[4]"},
      {"torch.take_along_dim", {}, {}, I32, {}, "[1]"},
      {"torch.take_along_dim", {3, 4}, {0, 2}, F32, {}, "[0]"},
      {"torch.take_along_dim", {3, 4}, {2, 0}, U8, {}, "[0]"},
      {"torch.take_along_dim", {3, 4}, {2}, U8, {}, nullptr, kType},
      {"torch.take_along_dim", {3, 4}, {1, 4}, I32, {{"dim", "0"}}, nullptr, kType},
      {"torch.take_along_dim", {3, 4}, {0, 4}, U8, {{"dim", "0"}}, nullptr, kType},
      {"torch.take_along_dim", {3, 4}, {4}, U8, {{"dim", "0"}}, nullptr, kInvalid},  // ranks first
  });
  expect_op("torch.take_along_dim", f32({2, 3}, iota(6)), i32({2, 2}, {5, 0, 3, 1}), {}, {4}, {5, 0, 3, 1});
  expect_error("torch.take_along_dim", f32({2, 3}, iota(6)), i32({2}, {1, -1}), {}, StatusCode::kOutOfRange,
               "torch.take_along_dim: indices.flatten()[1] = -1 is out of range for the flattened input of "
               "size 6 (valid range [0, 6)); torch.take_along_dim rejects negative indices (pytorch#55143)");
}

TEST(EdgeCases, TorchIndexSelectOnZeroDimensionalInput) {
  // ATen index_select_out_cpu_: a 0-D input takes exactly one index ("Index to scalar can have
  // only 1 value"), which must be 0, and gives a 0-D result.
  expect_op("torch.index_select", f32({}, {7}), i64({1}, {0}), {}, {}, {7});
  expect_op("torch.index_select", f32({}, {7}), i32({}, {0}), {{"dim", "-1"}}, {}, {7});
  expect_error("torch.index_select", f32({}, {7}), i64({1}, {1}), {}, StatusCode::kOutOfRange,
               "torch.index_select: index[0] = 1 is out of range for dim 0 of size 1 (valid range [0, 1))");
  expect_error("torch.index_select", f32({}, {7}), i64({2}, {0, 0}), {}, StatusCode::kInvalidArgument,
               "torch.index_select: index_select(): Index to scalar can have only 1 value, got 2 value(s)");
  expect_error("torch.index_select", f32({}, {7}), i64({0}, {}), {}, StatusCode::kInvalidArgument,
               "torch.index_select: index_select(): Index to scalar can have only 1 value, got 0 value(s)");
  // The order: dim, vector index, one value for a 0-D input, then the dtype.
  run_table({
      {"torch.index_select", {}, {2}, U8, {{"dim", "1"}}, nullptr, kInvalid},
      {"torch.index_select", {3, 4}, {1, 1}, U8, {}, nullptr, kInvalid},
      {"torch.index_select", {}, {2}, U8, {}, nullptr, kInvalid},
      {"torch.index_select", {}, {1}, U8, {}, nullptr, kType},
  });
}

TEST(EdgeCases, TorchIndexSelectChecksIndicesWhenTheOutputIsEmpty) {
  // ATen index_select_out_cpu_ checks every index against self.size(dim) even when self has no
  // elements (another dimension is 0): index_select(zeros(3, 0), 0, [0, 5]) is an error.
  expect_error("torch.index_select", f32({3, 0}, {}), i64({2}, {0, 5}), {}, StatusCode::kOutOfRange,
               "torch.index_select: index[1] = 5 is out of range for dim 0 of size 3 (valid range [0, 3))");
  expect_error("torch.index_select", f32({0, 4}, {}), i32({1}, {-1}), {{"dim", "1"}}, StatusCode::kOutOfRange,
               "torch.index_select: index[0] = -1 is out of range for dim 1 of size 4 (valid range [0, 4)); "
               "torch.index_select rejects negative indices (pytorch#55143)");
  expect_error("torch.index_select", f32({0, 0}, {}), i64({1}, {0}), {}, StatusCode::kOutOfRange,
               "torch.index_select: index[0] = 0 is out of range for dim 0 of size 0 (valid range [0, 0))");
  expect_op("torch.index_select", f32({3, 0}, {}), i64({2}, {2, 0}), {}, {2, 0}, {});
  // Index values are never read on the host for CUDA operands (nor for shapes alone).
  const Tensor x = f32({3, 0}, {}), idx = i64({1}, {5});
  Lowering l;
  EXPECT_TRUE(lower_op("torch.index_select", x.view(), idx.view(), {}, &l, Device::kCUDA).ok());
}

TEST(EdgeCases, NumpyTakeCastsIndicesToIntp) {
  // numpy.take casts indices to intp with casting='same_kind' (PyArray_TakeFrom): bool indices
  // are 0 and 1, and uint64 values of 2**63 and above wrap to negatives (2**64 - 1 is -1).
  const Tensor a = f32({4}, {4, 3, 5, 7});
  expect_op("numpy.take", a, make_tensor(Bool, {3}, {1, 0, 1}), {}, {3}, {3, 4, 3});
  expect_op("numpy.take", a, make_tensor(Bool, {2}, {1, 1}), {{"axis", "0"}, {"mode", "clip"}}, {2}, {3, 3});
  expect_op("numpy.take", a, u64({2}, {~0ull, 1}), {}, {2}, {7, 3});
  expect_op("numpy.take", a, u64({1}, {~0ull}), {{"mode", "clip"}}, {1}, {4});  // -1 clips to 0
  expect_op("numpy.take", a, u64({1}, {~0ull - 4}), {{"mode", "wrap"}}, {1}, {7});  // -5 mod 4 = 3
  expect_error("numpy.take", a, u64({1}, {1ull << 63}), {}, StatusCode::kOutOfRange,
               "numpy.take: indices[0] = -9223372036854775808 is out of range for the flattened input of "
               "size 4 (valid range [-4, 4))");
  expect_op("numpy.take_along_axis", a, u64({2}, {~0ull, 0}), {{"axis", "0"}}, {2}, {7, 4});
  expect_op("numpy.advanced_index", a, u64({2, 1}, {~0ull - 1, 0}), {{"index_dims", "0"}}, {2}, {5, 4});
}

TEST(EdgeCases, NumpyTakeOnEmptyAxesAndEmptyOutputs) {
  // PyArray_TakeFrom: "cannot do a non-empty take from an empty axes" only when the OUTPUT is
  // not empty; mode 'raise' checks the indices once per outer row (n = prod(a.shape[:axis]))
  // even when a later dimension makes the output empty; 'clip' never fails there.
  run_table({
      {"numpy.take", {0, 0}, {1}, I64, {{"axis", "0"}, {"mode", "clip"}}, "[1,0]"},
      {"numpy.take", {3, 0}, {2}, I64, {{"axis", "0"}, {"mode", "clip"}}, "[2,0]"},
      {"numpy.take", {0, 3}, {2}, I64, {{"axis", "1"}}, "[0,2]"},  // no outer row: not checked
      {"numpy.take", {0, 0}, {1}, I64, {{"axis", "0"}}, nullptr, kRange},
      {"numpy.take", {0, 0}, {1}, I64, {{"axis", "0"}, {"mode", "wrap"}}, nullptr, kRange},  // numpy hangs
      {"numpy.take", {0, 3}, {1}, I64, {{"axis", "0"}, {"mode", "clip"}}, nullptr, kRange},
  });
  expect_error("numpy.take", f32({3, 0}, {}), i64({2}, {1, 5}), {{"axis", "0"}}, StatusCode::kOutOfRange,
               "numpy.take: indices[1] = 5 is out of range for axis 0 of size 3 (valid range [-3, 3))");
  expect_op("numpy.take", f32({3, 0}, {}), i64({2}, {1, 5}), {{"axis", "0"}, {"mode", "wrap"}}, {2, 0}, {});
}

TEST(EdgeCases, NumpyTakeFromZeroDimensionalArrayWithAxis) {
  // PyArray_CheckAxis views a 0-D array as 1-D: np.take(np.array(7.), [0, 0, -1], axis=0).
  expect_op("numpy.take", f32({}, {7}), i64({3}, {0, 0, -1}), {{"axis", "0"}}, {3}, {7, 7, 7});
  expect_op("numpy.take", f32({}, {7}), i64({1, 1}, {0}), {{"axis", "-1"}}, {1, 1}, {7});
  run_table({{"numpy.take", {}, {1}, I64, {{"axis", "1"}}, nullptr, kInvalid}});
}

TEST(EdgeCases, NumpyTakeAlongAxisCheckOrder) {
  // numpy.take_along_axis: axis=None needs 1-D indices (ValueError) before the dtype is looked at;
  // else the axis, then the dtype (not bool), then the ranks.
  run_table({
      {"numpy.take_along_axis", {3, 4}, {2, 2}, Bool, {{"axis", "none"}}, nullptr, kInvalid},
      {"numpy.take_along_axis", {3, 4}, {2}, Bool, {{"axis", "none"}}, nullptr, kType},
      {"numpy.take_along_axis", {3, 4}, {2}, F32, {{"axis", "2"}}, nullptr, kInvalid},
      {"numpy.take_along_axis", {3, 4}, {2}, F32, {{"axis", "1"}}, nullptr, kType},
  });
}

TEST(EdgeCases, NumpyAdvancedIndexChecksIndicesWhenTheResultIsEmpty) {
  // numpy checks every value of non-empty index arrays, whatever the other dimensions:
  // np.zeros((3, 0))[[5]] and np.zeros((0, 3))[:, [5]] are IndexErrors; empty ones check nothing.
  expect_error("numpy.advanced_index", f32({3, 0}, {}), i64({2, 1}, {1, 5}), {{"index_dims", "0"}},
               StatusCode::kOutOfRange,
               "numpy.advanced_index: indices[1,0] = 5 is out of range for axis 0 of size 3 (valid range [-3, 3))");
  expect_error("numpy.advanced_index", f32({0, 3}, {}), i64({1, 1}, {-4}), {{"index_dims", "1"}},
               StatusCode::kOutOfRange,
               "numpy.advanced_index: indices[0,0] = -4 is out of range for axis 1 of size 3 (valid range [-3, 3))");
  expect_op("numpy.advanced_index", f32({3, 0}, {}), i64({2, 1}, {1, -3}), {{"index_dims", "0"}}, {2, 0}, {});
  expect_op("numpy.advanced_index", f32({3, 3}, iota(9)), i64({0, 2}, {}), {{"index_dims", "0,1"}}, {0}, {});
}

TEST(EdgeCases, OnnxGatherChecksIndicesWhenTheOutputIsEmpty) {
  // ONNX Gather: "It is an error if any of the index values are out of bounds"; ONNX Runtime's
  // CPU kernel checks them all before copying, also when another data dimension is 0.
  expect_error("onnx.Gather", f32({3, 0}, {}), i64({2}, {1, 3}), {}, StatusCode::kOutOfRange,
               "onnx.Gather: indices[1] = 3 is out of range for axis 0 of size 3 (valid range [-3, 3)); "
               "ONNX indices must lie in [-s, s-1]");
  expect_error("onnx.Gather", f32({0, 3}, {}), i32({1, 1}, {-4}), {{"axis", "1"}}, StatusCode::kOutOfRange,
               "onnx.Gather: indices[0,0] = -4 is out of range for axis 1 of size 3 (valid range [-3, 3)); "
               "ONNX indices must lie in [-s, s-1]");
  expect_op("onnx.Gather", f32({3, 0}, {}), i64({2}, {-3, 2}), {}, {2, 0}, {});
}

TEST(EdgeCases, OnnxIndexDtypes) {
  // The ONNX operator schemas (opset 13): Gather and GatherElements take tensor(int32) or
  // tensor(int64) indices, GatherND tensor(int64) only; ONNX Runtime refuses any other type
  // when it loads the model.
  run_table({
      {"onnx.Gather", {3, 4}, {2}, I32, {}, "[2,4]"},
      {"onnx.GatherElements", {3, 4}, {1, 4}, I32, {}, "[1,4]"},
      {"onnx.GatherND", {3, 4}, {2, 1}, I64, {}, "[2,4]"},
  });
  for (DType t : {I8, I16, U8, DType::kUInt16, U32, U64, Bool}) {
    run_table({
        {"onnx.Gather", {3, 4}, {2}, t, {}, nullptr, kType},
        {"onnx.GatherElements", {3, 4}, {1, 4}, t, {}, nullptr, kType},
        {"onnx.GatherND", {3, 4}, {2, 1}, t, {}, nullptr, kType},
    });
  }
  run_table({{"onnx.GatherND", {3, 4}, {2, 1}, I32, {}, nullptr, kType}});
}

}  // namespace
}  // namespace multigather
