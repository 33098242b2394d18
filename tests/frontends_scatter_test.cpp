// The framework scatters (onnx.ScatterElements / ScatterND, torch.scatter / scatter_add /
// scatter_reduce / index_add, numpy.put_along_axis / add_at): hand-checked values (the ONNX
// operator docs' examples, values worked out by hand below each call), the duplicate and
// reduction rules, and the exact error messages in each framework's terms.
#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::f32;
using testing::i32;
using testing::i64;
using testing::values_f32;
using testing::as_f32;
using testing::make_tensor;

using testing::expect_scatter;
using testing::expect_scatter_error;

// ---- onnx.ScatterElements ---------------------------------------------------------------------

TEST(OnnxScatterElements, DocExamples) {
  // ONNX doc example 1 (axis 0), updates 1, 11, 12 / 20, 21, 22 instead of 1.0, 1.1, ...:
  // output[indices[i][j]][j] = updates[i][j].
  expect_scatter("onnx.ScatterElements", f32({3, 3}, std::vector<double>(9, 0)),
                 i64({2, 3}, {1, 0, 2, 0, 2, 1}), f32({2, 3}, {1, 11, 12, 20, 21, 22}), {},
                 {20, 11, 0, 1, 0, 22, 0, 21, 12});
  // Example 2 (axis 1), and -3 wrapping to 2.
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  expect_scatter("onnx.ScatterElements", data, i64({1, 2}, {1, 3}), f32({1, 2}, {11, 21}), {{"axis", "1"}},
                 {1, 11, 3, 21, 5});
  expect_scatter("onnx.ScatterElements", data, i64({1, 2}, {1, -3}), f32({1, 2}, {11, 21}), {{"axis", "-1"}},
                 {1, 11, 21, 4, 5});
  expect_scatter("onnx.ScatterElements", data, i32({1, 2}, {1, -3}), f32({1, 2}, {11, 21}), {{"axis", "1"}},
                 {1, 11, 21, 4, 5});
}

TEST(ScatterPartialWrite, AnIndexSmallerThanTheDataWritesItsLeadingPart) {
  // indices [1,2] into data [2,5] along axis 1: only row 0 is written (ONNX Runtime and torch:
  // out[i][index[i][j]] = updates[i][j] for the index's own positions); row 1 keeps data.
  expect_scatter("onnx.ScatterElements", f32({2, 5}, testing::iota(10)), i64({1, 2}, {4, 0}), f32({1, 2}, {50, 60}),
                 {{"axis", "1"}, {"reduction", "add"}}, {60, 1, 2, 3, 54, 5, 6, 7, 8, 9});
  // torch.scatter_add(self [3,4], 0, index [2,2], src [2,3]): src sliced to [2,2], columns 2-3 kept.
  expect_scatter("torch.scatter_add", f32({3, 4}, std::vector<double>(12, 1)), i64({2, 2}, {2, 0, 2, 2}),
                 f32({2, 3}, {10, 20, 99, 30, 40, 99}), {{"dim", "0"}}, {1, 21, 1, 1, 1, 1, 1, 1, 41, 41, 1, 1});
  // In place through execute: the output IS the input; a strided (transposed) output too.
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<std::int64_t> ix{4, 0};
  const std::vector<float> u{50, 60};
  const TensorView xv(x.data(), DType::kFloat32, {2, 5});
  Attributes a;
  a.set("axis", "1").set("reduction", "add");
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.ScatterElements", xv, TensorView(ix.data(), DType::kInt64, {1, 2}),
                       TensorView(u.data(), DType::kFloat32, {1, 2}), a, &l).ok());
  EXPECT_TRUE(l.has_scatter_base);
  std::vector<float> t(10, -1);
  ASSERT_TRUE(execute(l, MutableTensorView(t.data(), DType::kFloat32, {2, 5}, {1, 2})).ok());
  const std::vector<float> want{60, 1, 2, 3, 54, 5, 6, 7, 8, 9};
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 5; ++c) EXPECT_EQ(t[static_cast<std::size_t>(c * 2 + r)], want[static_cast<std::size_t>(r * 5 + c)]);
  }
  ASSERT_TRUE(execute(l, MutableTensorView(x.data(), DType::kFloat32, {2, 5})).ok());
  EXPECT_EQ(x, want);
}

TEST(OnnxScatterElements, ReductionsAndDuplicates) {
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor idx = i64({1, 2}, {1, 1});
  const Tensor upd = f32({1, 2}, {11, 21});
  // Both updates reach data[0][1] = 2.
  expect_scatter("onnx.ScatterElements", data, idx, upd, {{"axis", "1"}, {"reduction", "add"}}, {1, 34, 3, 4, 5});
  expect_scatter("onnx.ScatterElements", data, idx, upd, {{"axis", "1"}, {"reduction", "mul"}}, {1, 462, 3, 4, 5});
  expect_scatter("onnx.ScatterElements", data, idx, upd, {{"axis", "1"}, {"reduction", "max"}}, {1, 21, 3, 4, 5});
  expect_scatter("onnx.ScatterElements", data, idx, upd, {{"axis", "1"}, {"reduction", "min"}}, {1, 2, 3, 4, 5});
  // none: undefined in ONNX; the spec's answer is the last update in row-major order.
  expect_scatter("onnx.ScatterElements", data, idx, upd, {{"axis", "1"}}, {1, 21, 3, 4, 5});
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.ScatterElements", data.view(), idx.view(), upd.view(), {{"axis", "1"}}, &l).ok());
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("ONNX leaves the result undefined"), std::string::npos);
}

TEST(OnnxScatterElements, Errors) {
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const std::string op = "onnx.ScatterElements";
  expect_scatter_error(op, data, i64({1, 2}, {1, 5}), f32({1, 2}, {11, 21}), {{"axis", "1"}}, StatusCode::kOutOfRange,
                       "onnx.ScatterElements: indices[0,1] = 5 is out of range for axis 1 of size 5 (valid range "
                       "[-5, 5)); ONNX indices must lie in [-s, s-1]");
  expect_scatter_error(op, data, i64({1, 2}, {1, -6}), f32({1, 2}, {11, 21}), {{"axis", "1"}}, StatusCode::kOutOfRange,
                       "onnx.ScatterElements: indices[0,1] = -6 is out of range for axis 1 of size 5 (valid range "
                       "[-5, 5)); ONNX indices must lie in [-s, s-1]");
  expect_scatter_error(op, data, i64({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3}), {{"axis", "1"}},
                       StatusCode::kInvalidArgument,
                       "onnx.ScatterElements: updates shape [1,3] must equal indices shape [1,2]");
  expect_scatter_error(op, data, i64({2}, {1, 2}), f32({2}, {1, 2}), {{"axis", "1"}}, StatusCode::kInvalidArgument,
                       "onnx.ScatterElements: indices rank 1 must equal data rank 2");
  expect_scatter_error(op, data, i64({2, 2}, {0, 0, 0, 0}), f32({2, 2}, {1, 2, 3, 4}), {{"axis", "1"}},
                       StatusCode::kInvalidArgument,
                       "onnx.ScatterElements: indices.shape[0] = 2 and data.shape[0] = 1: the index size must not "
                       "exceed the data size on every dimension but axis 1");
  expect_scatter_error(op, data, i64({1, 2}, {1, 2}), f32({1, 2}, {1, 2}), {{"axis", "2"}},
                       StatusCode::kInvalidArgument, "onnx.ScatterElements: axis = 2 is out of range [-2, 1] for input rank 2");
  expect_scatter_error(op, data, f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2}), {{"axis", "1"}}, StatusCode::kTypeError,
                       "onnx.ScatterElements: indices dtype float32 is not supported (onnx.ScatterElements accepts int32, int64)");
  expect_scatter_error(op, data, i64({1, 2}, {1, 2}), i64({1, 2}, {1, 2}), {{"axis", "1"}}, StatusCode::kTypeError,
                       "onnx.ScatterElements: updates dtype int64 must equal data dtype float32 (both are type T)");
  expect_scatter_error(op, data, i64({1, 2}, {1, 2}), f32({1, 2}, {1, 2}), {{"reduction", "sub"}},
                       StatusCode::kInvalidArgument,
                       "onnx.ScatterElements: attribute reduction: 'sub' is not one of none, add, mul, max, min");
  // Called without updates (the gather form of lower_op).
  Lowering l;
  EXPECT_EQ(lower_op(op, data.view(), i64({1, 2}, {1, 2}).view(), {}, &l).message(),
            "onnx.ScatterElements is a scatter: it needs updates (the values it writes), besides data and indices");
}

// ---- onnx.ScatterND ---------------------------------------------------------------------------

TEST(OnnxScatterND, DocExamplesAndReductions) {
  // ONNX doc example 1: data [1..8], indices [[4],[3],[1],[7]], updates [9,10,11,12].
  expect_scatter("onnx.ScatterND", f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({4, 1}, {4, 3, 1, 7}),
                 f32({4}, {9, 10, 11, 12}), {}, {1, 11, 3, 10, 9, 6, 7, 12});
  // Slices: row 1 of a [3, 2] replaced (updates [1, 2] = indices.shape[:-1] ++ data.shape[1:]).
  expect_scatter("onnx.ScatterND", f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({1, 1}, {-2}), f32({1, 2}, {7, 8}), {},
                 {1, 2, 7, 8, 5, 6});
  // Element indices (k = rank) and duplicates with each reduction: both updates reach [0, 0] = 1.
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  expect_scatter("onnx.ScatterND", data, i64({2, 2}, {0, 0, 1, 1}), f32({2}, {10, 20}), {}, {10, 2, 3, 20});
  const Tensor dup = i64({2, 2}, {0, 0, 0, 0});
  const Tensor upd = f32({2}, {10, 20});
  expect_scatter("onnx.ScatterND", data, dup, upd, {{"reduction", "add"}}, {31, 2, 3, 4});
  expect_scatter("onnx.ScatterND", data, dup, upd, {{"reduction", "mul"}}, {200, 2, 3, 4});
  expect_scatter("onnx.ScatterND", data, dup, upd, {{"reduction", "max"}}, {20, 2, 3, 4});
  expect_scatter("onnx.ScatterND", data, dup, upd, {{"reduction", "min"}}, {1, 2, 3, 4});
  expect_scatter("onnx.ScatterND", data, dup, upd, {}, {20, 2, 3, 4});  // last wins (ONNX: undefined)
  // Batched index dims: indices [2, 1, 1] -> updates [2, 1, 2].
  expect_scatter("onnx.ScatterND", f32({3, 2}, std::vector<double>(6, 0)), i64({2, 1, 1}, {2, 0}),
                 f32({2, 1, 2}, {1, 2, 3, 4}), {{"reduction", "add"}}, {3, 4, 0, 0, 1, 2});
}

TEST(OnnxScatterND, Errors) {
  const std::string op = "onnx.ScatterND";
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  expect_scatter_error(op, data, i64({2, 2}, {0, 0, 1, 1}), f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "onnx.ScatterND: updates shape [3] must equal indices.shape[:-1] ++ data.shape[k:] = [2] "
                       "(k = indices.shape[-1] = 2)");
  expect_scatter_error(op, data, i64({1, 3}, {0, 0, 0}), f32({1}, {1}), {}, StatusCode::kInvalidArgument,
                       "onnx.ScatterND: indices.shape[-1] = 3 must be in [1, rank(data)] = [1, 2]");
  expect_scatter_error(op, data, i32({1, 2}, {0, 0}), f32({1}, {1}), {}, StatusCode::kTypeError,
                       "onnx.ScatterND: indices dtype int32 is not supported (onnx.ScatterND accepts int64)");
  expect_scatter_error(op, data, i64({1, 2}, {0, 2}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "onnx.ScatterND: indices[0,1] = 2 is out of range for data dimension 1 of size 2 (valid "
                       "range [-2, 2)); ONNX indices must lie in [-s, s-1]");
}

// ---- torch ------------------------------------------------------------------------------------

TEST(TorchScatter, ScatterAddAndScatter) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // out[index[i][j]][j] += src[i][j]: [0][0] += 10, [2][1] += 20, [0][0] += 30, [0][1] += 40.
  expect_scatter("torch.scatter_add", x, i64({2, 2}, {0, 2, 0, 0}), f32({2, 2}, {10, 20, 30, 40}), {},
                 {41, 42, 3, 4, 5, 26});
  // src larger than index: its leading part [[10, 20]] is read.
  expect_scatter("torch.scatter_add", x, i32({1, 2}, {1, 1}), f32({2, 3}, {10, 20, 99, 99, 99, 99}), {},
                 {1, 2, 13, 24, 5, 6});
  // dim 1: out[i][index[i][j]] = src[i][j]; row 0: [0][1] = 10, then [0][1] = 20 (last wins).
  expect_scatter("torch.scatter", x, i64({3, 2}, {1, 1, 0, 0, 1, 0}), f32({3, 2}, {10, 20, 30, 40, 50, 60}),
                 {{"dim", "1"}}, {1, 20, 40, 4, 60, 50});
  expect_scatter("torch.scatter", x, i64({1, 2}, {2, 2}), f32({1, 2}, {10, 20}), {{"reduce", "multiply"}},
                 {1, 2, 3, 4, 50, 120});
  expect_scatter("torch.scatter", x, i64({1, 2}, {2, 2}), f32({1, 2}, {10, 20}), {{"reduce", "add"}},
                 {1, 2, 3, 4, 15, 26});
}

TEST(TorchScatter, ScatterReduce) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = i64({2, 2}, {0, 0, 0, 0});
  const Tensor src = f32({2, 2}, {-5, 7, 8, -9});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "sum"}}, {4, 0, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "prod"}}, {-40, -126, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "amax"}}, {8, 7, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "amin"}}, {-5, -9, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "sum"}, {"include_self", "false"}},
                 {3, -2, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "amin"}, {"include_self", "false"}},
                 {-5, -9, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "amax"}, {"include_self", "false"}},
                 {8, 7, 3, 4, 5, 6});
  // mean: (self + sum) / (count + 1), or sum / count without self; rows no update reaches stay.
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "mean"}}, {4.0f / 3.0f, 0, 3, 4, 5, 6});
  expect_scatter("torch.scatter_reduce", x, idx, src, {{"reduce", "mean"}, {"include_self", "false"}},
                 {1.5f, -1, 3, 4, 5, 6});
}

TEST(TorchScatter, IndexAdd) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor src = f32({3, 2}, {1, 1, 2, 2, 3, 3});
  // Row 2 += 1 + 3, row 0 += 2; alpha 2 doubles the additions.
  expect_scatter("torch.index_add", x, i64({3}, {2, 0, 2}), src, {}, {3, 4, 3, 4, 9, 10});
  expect_scatter("torch.index_add", x, i64({3}, {2, 0, 2}), src, {{"alpha", "2"}}, {5, 6, 3, 4, 13, 14});
  expect_scatter("torch.index_add", x, i32({3}, {2, 0, 2}), src, {{"alpha", "-0.5"}}, {0, 1, 3, 4, 3, 4});
  // dim 1: out[i][index[j]] += source[i][j].
  expect_scatter("torch.index_add", f32({2, 3}, std::vector<double>(6, 0)), i64({2}, {2, 0}),
                 f32({2, 2}, {1, 2, 3, 4}), {{"dim", "1"}}, {2, 0, 1, 4, 0, 3});
  // Integer input: alpha truncated to an integer (PyTorch 2.15: int64 index_add with 2.5 adds 2x).
  Tensor out;
  ASSERT_TRUE(run_op("torch.index_add", i64({2}, {1, 1}).view(), i64({2}, {0, 0}).view(), i64({2}, {1, 1}).view(),
                     {{"alpha", "2.5"}}, &out).ok());
  EXPECT_EQ(out.data_as<std::int64_t>()[0], 5);
  EXPECT_EQ(out.data_as<std::int64_t>()[1], 1);
}

TEST(TorchScatter, Errors) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_scatter_error("torch.scatter_add", x, i64({1, 2}, {-1, 0}), f32({1, 2}, {1, 1}), {}, StatusCode::kOutOfRange,
                       "torch.scatter_add: index[0,0] = -1 is out of range for dim 0 of size 3 (valid range [0, 3)); "
                       "torch.scatter_add rejects negative indices (pytorch#55143)");
  expect_scatter_error("torch.scatter_add", x, i64({1, 2}, {3, 0}), f32({1, 2}, {1, 1}), {}, StatusCode::kOutOfRange,
                       "torch.scatter_add: index[0,0] = 3 is out of range for dim 0 of size 3 (valid range [0, 3))");
  expect_scatter_error("torch.scatter_add", x, i64({1, 3}, {1, 0, 0}), f32({1, 3}, {1, 1, 1}), {},
                       StatusCode::kInvalidArgument,
                       "torch.scatter_add: Expected index [1,3] to be no larger than self [3,2] apart from dimension 0 "
                       "and to be no larger size than src [1,3]");
  expect_scatter_error("torch.scatter_add", x, i64({1, 2}, {1, 0}), f32({1, 1}, {1}), {}, StatusCode::kInvalidArgument,
                       "torch.scatter_add: Expected index [1,2] to be no larger than self [3,2] apart from dimension 0 "
                       "and to be no larger size than src [1,1]");
  expect_scatter_error("torch.scatter_add", x, i64({2}, {1, 0}), f32({1, 2}, {1, 1}), {}, StatusCode::kInvalidArgument,
                       "torch.scatter_add: Index tensor must have the same number of dimensions as self tensor and src "
                       "tensor (index rank 1, self rank 2, src rank 2)");
  expect_scatter_error("torch.scatter_add", x, i64({1, 2}, {1, 0}), i64({1, 2}, {1, 1}), {}, StatusCode::kTypeError,
                       "torch.scatter_add: scatter(): Expected self.dtype to be equal to src.dtype (self float32, src int64)");
  expect_scatter_error("torch.scatter_add", x, i64({1, 2}, {1, 0}), f32({1, 2}, {1, 1}), {{"dim", "2"}},
                       StatusCode::kInvalidArgument, "torch.scatter_add: dim = 2 is out of range [-2, 1] for input rank 2");
  expect_scatter_error("torch.scatter_reduce", x, i64({1, 2}, {1, 0}), f32({1, 2}, {1, 1}), {{"reduce", "median"}},
                       StatusCode::kInvalidArgument,
                       "torch.scatter_reduce: attribute reduce: 'median' is not one of sum, prod, mean, amax, amin");
  expect_scatter_error("torch.index_add", x, i64({2}, {0, 1}), f32({1, 2}, {1, 1}), {}, StatusCode::kInvalidArgument,
                       "torch.index_add: index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0");
  expect_scatter_error("torch.index_add", x, i64({1}, {0}), f32({1, 3}, {1, 1, 1}), {}, StatusCode::kInvalidArgument,
                       "torch.index_add: source tensor shape must match self tensor shape, excluding the specified "
                       "dimension. Got self.shape = [3,2] source.shape = [1,3]");
  expect_scatter_error("torch.index_add", x, i64({1, 1}, {0}), f32({1, 2}, {1, 1}), {}, StatusCode::kInvalidArgument,
                       "torch.index_add: index_add_(): Index is supposed to be a vector, but got dim: 2 (index shape [1,1])");
  expect_scatter_error("torch.index_add", x, i64({1}, {-1}), f32({1, 2}, {1, 1}), {}, StatusCode::kOutOfRange,
                       "torch.index_add: index[0] = -1 is out of range for dim 0 of size 3 (valid range [0, 3)); "
                       "torch.index_add rejects negative indices (pytorch#55143)");
  expect_scatter_error("torch.index_add", x, i64({1}, {0}), testing::make_tensor(DType::kFloat64, {1, 2}, {1, 1}), {},
                       StatusCode::kTypeError,
                       "torch.index_add: index_add_(): self (float32) and source (float64) must have the same scalar type");
}

// ---- numpy ------------------------------------------------------------------------------------

TEST(NumpyScatter, PutAlongAxis) {
  const Tensor arr = f32({2, 3}, {10, 30, 20, 60, 40, 50});
  // values [[99]] broadcast to the indices' shape [2, 1].
  expect_scatter("numpy.put_along_axis", arr, i64({2, 1}, {1, 0}), f32({1, 1}, {99}), {{"axis", "1"}},
                 {10, 99, 20, 99, 40, 50});
  expect_scatter("numpy.put_along_axis", arr, i64({2, 1}, {-1, 0}), f32({2, 1}, {7, 8}), {{"axis", "1"}},
                 {10, 30, 7, 8, 40, 50});
  // An index dimension of size 1 broadcasts against arr: column j of both rows (axis 0).
  expect_scatter("numpy.put_along_axis", arr, i64({1, 3}, {1, 0, 1}), f32({3}, {1, 2, 3}), {{"axis", "0"}},
                 {10, 2, 20, 1, 40, 3});
  // axis=None: the flattened arr; duplicates: the last value wins.
  expect_scatter("numpy.put_along_axis", arr, i64({3}, {5, 0, 5}), f32({3}, {7, 8, 9}), {{"axis", "none"}},
                 {8, 30, 20, 60, 40, 9});
  expect_scatter_error("numpy.put_along_axis", arr, i64({2, 1}, {2, 3}), f32({1}, {1}), {{"axis", "1"}},
                       StatusCode::kOutOfRange,
                       "numpy.put_along_axis: indices[1,0] = 3 is out of range for axis 1 of size 3 (valid range [-3, 3))");
  expect_scatter_error("numpy.put_along_axis", arr, i64({2, 1}, {0, 0}), f32({3}, {1, 2, 3}), {{"axis", "1"}},
                       StatusCode::kInvalidArgument,
                       "numpy.put_along_axis: shape mismatch: value array of shape [3] could not be broadcast to "
                       "indexing result of shape [2,1]");
  expect_scatter_error("numpy.put_along_axis", arr, i64({2}, {0, 0}), f32({1}, {1}), {{"axis", "1"}},
                       StatusCode::kInvalidArgument,
                       "numpy.put_along_axis: `indices` and `arr` must have the same number of dimensions (1 and 2)");
  expect_scatter_error("numpy.put_along_axis", arr, f32({2, 1}, {0, 0}), f32({1}, {1}), {{"axis", "1"}},
                       StatusCode::kTypeError, "numpy.put_along_axis: `indices` must be an integer array (got float32)");
}

TEST(NumpyScatter, AddAt) {
  // a[[0, 1, 0, 3]] += 10 (0-D b): index 0 twice.
  expect_scatter("numpy.add_at", f32({4}, {1, 2, 3, 4}), i64({4}, {0, 1, 0, -1}), f32({}, {10}), {},
                 {21, 12, 3, 14});
  // Rows: b [2] broadcasts to a[indices].shape [2, 2]; row 2 twice.
  expect_scatter("numpy.add_at", f32({3, 2}, std::vector<double>(6, 0)), i64({2}, {2, 2}), f32({2}, {1, 2}), {},
                 {0, 0, 0, 0, 2, 4});
  // 2-D indices: a[indices] has shape [2, 2].
  expect_scatter("numpy.add_at", f32({3}, {0, 0, 0}), i32({2, 2}, {0, 1, 1, 2}), f32({2, 2}, {1, 2, 3, 4}), {},
                 {1, 5, 4});
  expect_scatter_error("numpy.add_at", f32({3}, {0, 0, 0}), i64({1}, {3}), f32({}, {1}), {}, StatusCode::kOutOfRange,
                       "numpy.add_at: indices[0] = 3 is out of range for axis 0 of size 3 (valid range [-3, 3))");
  expect_scatter_error("numpy.add_at", f32({3}, {0, 0, 0}), i64({2}, {0, 1}), f32({3}, {1, 2, 3}), {},
                       StatusCode::kInvalidArgument,
                       "numpy.add_at: operands could not be broadcast together: b shape [3] and a[indices] shape [2]");
}

// ---- webnn ------------------------------------------------------------------------------------

TEST(WebnnScatter, ScatterElements) {
  // WPT "along axis 0" with integral updates: output[indices[i][j]][j] = updates[i][j].
  expect_scatter("webnn.scatterElements", f32({3, 3}, std::vector<double>(9, 0)), i32({2, 3}, {1, 0, 2, 0, 2, 1}),
                 f32({2, 3}, {1, 11, 12, 20, 21, 22}), {{"axis", "0"}}, {20, 11, 0, 1, 0, 22, 0, 21, 12});
  // axis 1; -4 wraps once to 1; 9 and -9 clamp to 4 and 0 (WPT's rule).
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  expect_scatter("webnn.scatterElements", data, i64({1, 2}, {-4, 9}), f32({1, 2}, {11, 21}), {{"axis", "1"}},
                 {1, 11, 3, 4, 21});
  expect_scatter("webnn.scatterElements", data, make_tensor(DType::kUInt32, {1, 1}, {7}), f32({1, 1}, {9}),
                 {{"axis", "1"}}, {1, 2, 3, 4, 9});
  expect_scatter("webnn.scatterElements", data, i32({1, 1}, {-9}), f32({1, 1}, {9}), {{"axis", "1"}}, {9, 2, 3, 4, 5});
  // Duplicates: unspecified in WebNN; the last update wins here (noted).
  expect_scatter("webnn.scatterElements", data, i32({1, 3}, {2, 2, 0}), f32({1, 3}, {7, 8, 6}), {{"axis", "1"}},
                 {6, 2, 8, 4, 5});
  Lowering l;
  ASSERT_TRUE(lower_op("webnn.scatterElements", data.view(), i32({1, 2}, {0, 0}).view(), f32({1, 2}, {0, 0}).view(),
                       {{"axis", "1"}}, &l).ok());
  EXPECT_EQ(l.options.index_mode, IndexMode::kClamp);
  EXPECT_EQ(l.notes.back(), "duplicate indices: WebNN leaves the result unspecified; multigather writes the last "
                            "update in row-major order of indices");
  const std::string op = "webnn.scatterElements";
  const Tensor x = f32({3, 3}, std::vector<double>(9, 0));
  expect_scatter_error(op, x, i32({2, 3}, {0, 0, 0, 0, 0, 0}), f32({2, 3}, std::vector<double>(6, 0)), {{"axis", "2"}},
                       StatusCode::kInvalidArgument,
                       "webnn.scatterElements: axis = 2 must be in [0, 2) (an unsigned long less than the input rank 2)");
  expect_scatter_error(op, x, i32({2, 3}, {0, 0, 0, 0, 0, 0}), make_tensor(DType::kFloat16, {2, 3}, {}), {},
                       StatusCode::kTypeError,
                       "webnn.scatterElements: updates dtype float16 must equal input dtype float32 (updates must "
                       "have input's data type)");
  expect_scatter_error(op, f32({}, {0}), i32({}, {0}), f32({}, {0}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterElements: input must have rank >= 1 (got a scalar)");
  expect_scatter_error(op, x, i32({2, 3, 3}, {}), f32({2, 3, 3}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterElements: indices rank 3 must equal input rank 2");
  expect_scatter_error(op, x, i32({2, 2}, {}), f32({2, 2}, {}), {{"axis", "1"}}, StatusCode::kInvalidArgument,
                       "webnn.scatterElements: indices.shape[0] = 2 must equal input.shape[0] = 3 (every dimension "
                       "but axis 1)");
  expect_scatter_error(op, x, i32({2, 3}, {}), f32({2, 4}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterElements: updates shape [2,4] must equal indices shape [2,3]");
  expect_scatter_error(op, x, f32({2, 3}, {}), f32({2, 3}, {}), {}, StatusCode::kTypeError,
                       "webnn.scatterElements: indices dtype float32 is not supported (webnn.scatterElements "
                       "accepts int32, uint32, int64)");
}

TEST(WebnnScatter, ScatterND) {
  expect_scatter("webnn.scatterND", f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), i32({4, 1}, {4, 3, 1, 7}),
                 f32({4}, {9, 10, 11, 12}), {}, {1, 11, 3, 10, 9, 6, 7, 12});
  // Rows of a [3, 2]: -1 wraps to row 2, 5 clamps to row 2 as well (the last wins), -7 clamps to 0.
  expect_scatter("webnn.scatterND", f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({3, 1}, {-1, 5, -7}),
                 f32({3, 2}, {7, 8, 9, 10, 11, 12}), {}, {11, 12, 3, 4, 9, 10});
  // WPT's int8 case: 2147483647 clamps to row 1.
  Tensor out;
  ASSERT_TRUE(run_op("webnn.scatterND", make_tensor(DType::kInt8, {2, 1}, {0, 0}).view(),
                     i32({1, 1}, {2147483647}).view(), make_tensor(DType::kInt8, {1, 1}, {1}).view(), {}, &out).ok());
  EXPECT_EQ(out.data_as<std::int8_t>()[0], 0);
  EXPECT_EQ(out.data_as<std::int8_t>()[1], 1);
  const std::string op = "webnn.scatterND";
  const Tensor x = f32({4, 4, 4}, std::vector<double>(64, 0));
  expect_scatter_error(op, x, i32({2, 4}, {}), f32({2, 4, 4}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterND: indices.shape[-1] = 4 is greater than the input rank 3");
  expect_scatter_error(op, x, i32({2, 1}, {}), f32({2, 3, 4}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterND: updates shape [2,3,4] must equal indices.shape[:-1] ++ input.shape[c:] = "
                       "[2,4,4] (c = indices.shape[-1] = 1)");
  expect_scatter_error(op, x, i32({}, {0}), f32({2, 4, 4}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterND: indices must have rank >= 1 (got a scalar)");
  expect_scatter_error(op, f32({}, {0}), i32({2, 1}, {}), f32({2, 4, 4}, {}), {}, StatusCode::kInvalidArgument,
                       "webnn.scatterND: input must have rank >= 1 (got a scalar)");
}

// ---- tf ---------------------------------------------------------------------------------------

TEST(TfScatter, TensorScatterNd) {
  // tensor [1..8]; indices [[4],[3],[1],[7]] (the TF docs' example), updates 9 10 11 12.
  const Tensor t = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor idx = i32({4, 1}, {4, 3, 1, 7});
  const Tensor upd = f32({4}, {9, 10, 11, 12});
  expect_scatter("tf.tensor_scatter_nd_update", t, idx, upd, {}, {1, 11, 3, 10, 9, 6, 7, 12});
  expect_scatter("tf.tensor_scatter_nd_add", t, idx, upd, {}, {1, 13, 3, 14, 14, 6, 7, 20});
  expect_scatter("tf.tensor_scatter_nd_sub", t, idx, upd, {}, {1, -9, 3, -6, -4, 6, 7, -4});
  expect_scatter("tf.tensor_scatter_nd_min", t, idx, upd, {}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_scatter("tf.tensor_scatter_nd_max", t, idx, upd, {}, {1, 11, 3, 10, 9, 6, 7, 12});
  // Duplicates: [1] twice. update: the last (2); add 2+1+2; sub 2-1-2; min / max over {2, 1, 2}.
  const Tensor dup = i64({2, 1}, {1, 1});
  const Tensor du = f32({2}, {1, 2});
  expect_scatter("tf.tensor_scatter_nd_update", t, dup, du, {}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_scatter("tf.tensor_scatter_nd_add", t, dup, du, {}, {1, 5, 3, 4, 5, 6, 7, 8});
  expect_scatter("tf.tensor_scatter_nd_sub", t, dup, du, {}, {1, -1, 3, 4, 5, 6, 7, 8});
  expect_scatter("tf.tensor_scatter_nd_min", t, dup, du, {}, {1, 1, 3, 4, 5, 6, 7, 8});
  expect_scatter("tf.tensor_scatter_nd_max", t, dup, du, {}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Slices: rows of a [3, 2] (updates [2, 2] = indices.shape[:-1] ++ tensor.shape[1:]).
  expect_scatter("tf.tensor_scatter_nd_sub", f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32({2, 1}, {2, 0}),
                 f32({2, 2}, {1, 1, 2, 2}), {}, {-1, 0, 3, 4, 4, 5});
  // Integer sub wraps like TF's: int32 min - 1.
  Tensor out;
  ASSERT_TRUE(run_op("tf.tensor_scatter_nd_sub", make_tensor(DType::kInt32, {2}, {-2147483648.0, 5}).view(),
                     i32({2, 1}, {0, 1}).view(), make_tensor(DType::kInt32, {2}, {1, -2147483648.0}).view(), {}, &out)
                  .ok());
  EXPECT_EQ(out.data_as<std::int32_t>()[0], 2147483647);
  EXPECT_EQ(out.data_as<std::int32_t>()[1], static_cast<std::int32_t>(5u + 2147483648u));
  // index_mode = drop (TF GPU): 9 and -1 skipped.
  expect_scatter("tf.tensor_scatter_nd_update", t, i32({3, 1}, {9, -1, 0}), f32({3}, {7, 7, 0}),
                 {{"index_mode", "drop"}}, {0, 2, 3, 4, 5, 6, 7, 8});
  Lowering l;
  ASSERT_TRUE(lower_op("tf.tensor_scatter_nd_sub", t.view(), idx.view(), upd.view(), {}, &l).ok());
  // The negation is the engines' step: the lowering copies nothing (updates is the caller's).
  EXPECT_EQ(l.owned_updates, nullptr);
  EXPECT_EQ(l.updates_step.kind, UpdatesStep::Kind::kNegate);
  EXPECT_EQ(l.updates.data, upd.data());
  EXPECT_EQ(l.notes.back(), "tensor - updates: the engine negates the updates before the add (sign flips are exact)");
}

TEST(TfScatter, ScatterNd) {
  // tf.scatter_nd([[4],[3],[1],[7]], [9,10,11,12], [8]) (the TF docs' example); duplicates sum.
  expect_scatter("tf.scatter_nd", f32({8}, std::vector<double>(8, 5)), i32({4, 1}, {4, 3, 1, 7}),
                 f32({4}, {9, 10, 11, 12}), {}, {0, 11, 0, 10, 9, 0, 0, 12});
  expect_scatter("tf.scatter_nd", f32({4}, {}), i64({3, 1}, {1, 1, 3}), f32({3}, {1, 2, 4}), {}, {0, 3, 0, 4});
  // The docs' slice example, reduced: [4, 2, 2] with rows 0 and 2.
  expect_scatter("tf.scatter_nd", f32({3, 2}, {}), i32({2, 1}, {0, 2}), f32({2, 2}, {5, 5, 6, 6}), {},
                 {5, 5, 0, 0, 6, 6});
  Lowering l;
  ASSERT_TRUE(lower_op("tf.scatter_nd", f32({4}, {}).view(), i32({1, 1}, {0}).view(), f32({1}, {1}).view(), {}, &l)
                  .ok());
  // The zeros are one constant element, broadcast: nothing allocated, the lowering cacheable.
  EXPECT_EQ(l.owned_input, nullptr);
  EXPECT_TRUE(l.input_is_constant);
  EXPECT_EQ(l.input.strides, Dims({0}));
  EXPECT_EQ(l.notes.back(), "tf.scatter_nd: the output starts from zeros (one constant element, broadcast)");
}

TEST(TfScatter, Errors) {
  const Tensor t = f32({8}, std::vector<double>(8, 0));
  const std::string op = "tf.tensor_scatter_nd_update";
  expect_scatter_error(op, t, i32({1, 1}, {9}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "tf.tensor_scatter_nd_update: indices[0,0] = 9 is out of range for tensor dimension 0 of size 8 "
                       "(valid range [0, 8)); TensorFlow indices must be in [0, D) (negative indices are not supported)");
  expect_scatter_error(op, t, i32({1, 1}, {-1}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "tf.tensor_scatter_nd_update: indices[0,0] = -1 is out of range for tensor dimension 0 of size 8 "
                       "(valid range [0, 8)); TensorFlow indices must be in [0, D) (negative indices are not supported)");
  expect_scatter_error(op, t, i32({1, 1}, {1}), f32({2}, {1, 2}), {}, StatusCode::kInvalidArgument,
                       "tf.tensor_scatter_nd_update: Outer dimensions of indices and update must match. Indices shape: "
                       "[1,1], updates shape:[2]");
  expect_scatter_error(op, t, i32({1, 2}, {1, 2}), f32({1}, {1}), {}, StatusCode::kInvalidArgument,
                       "tf.tensor_scatter_nd_update: Inner dimensions of output shape must match inner dimensions of "
                       "updates shape. Output: [8] updates: [1]");
  expect_scatter_error(op, t, i32({1}, {1}), f32({}, {1}), {}, StatusCode::kInvalidArgument,
                       "tf.tensor_scatter_nd_update: Updates shape must have rank at least one. Found:[]");
  expect_scatter_error(op, t, i32({1, 1}, {1}), make_tensor(DType::kFloat64, {1}, {1}), {}, StatusCode::kTypeError,
                       "tf.tensor_scatter_nd_update: updates dtype float64 must equal tensor dtype float32 "
                       "(TensorFlow: updates must have tensor's dtype T)");
  expect_scatter_error(op, t, make_tensor(DType::kInt16, {1, 1}, {1}), f32({1}, {1}), {}, StatusCode::kTypeError,
                       "tf.tensor_scatter_nd_update: indices dtype int16 is not supported (tf.tensor_scatter_nd_update "
                       "accepts int32, int64)");
  expect_scatter_error("tf.tensor_scatter_nd_sub", make_tensor(DType::kBool, {2}, {0, 1}), i32({1, 1}, {1}),
                       make_tensor(DType::kBool, {1}, {1}), {}, StatusCode::kTypeError,
                       "tf.tensor_scatter_nd_sub: tensor - updates needs -updates, which multigather cannot form "
                       "exactly for dtype bool");
  expect_scatter_error("tf.scatter_nd", f32({4}, {}), i32({1, 1}, {5}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "tf.scatter_nd: indices[0,0] = 5 is out of range for shape dimension 0 of size 4 (valid range "
                       "[0, 4)); TensorFlow indices must be in [0, D) (negative indices are not supported)");
  expect_scatter_error("tf.scatter_nd", f32({4}, {}), i32({1, 1}, {1}), f32({2}, {1, 3}), {},
                       StatusCode::kInvalidArgument,
                       "tf.scatter_nd: Dimensions [0,1) of indices[shape=[1,1]] must match dimensions [0,1) of "
                       "updates[shape=[2]]");
}

// ---- coreml -----------------------------------------------------------------------------------

TEST(CoremlScatter, ScatterModes) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = i32({2}, {2, 0});
  const Tensor upd = f32({2, 2}, {10, 20, 30, 40});
  // Default mode add: row 2 += [10, 20], row 0 += [30, 40].
  expect_scatter("coreml.scatter", data, idx, upd, {}, {31, 42, 3, 4, 15, 26});
  expect_scatter("coreml.scatter", data, idx, upd, {{"mode", "update"}}, {30, 40, 3, 4, 10, 20});
  expect_scatter("coreml.scatter", data, idx, upd, {{"mode", "sub"}}, {-29, -38, 3, 4, -5, -14});
  expect_scatter("coreml.scatter", data, idx, upd, {{"mode", "mul"}}, {30, 80, 3, 4, 50, 120});
  expect_scatter("coreml.scatter", data, idx, upd, {{"mode", "max"}}, {30, 40, 3, 4, 10, 20});
  expect_scatter("coreml.scatter", data, idx, upd, {{"mode", "min"}}, {1, 2, 3, 4, 5, 6});
  // axis 1, -1 wraps to column 1; updates [3, 1] = data.shape[:1] ++ indices.shape ++ data.shape[2:].
  expect_scatter("coreml.scatter", data, i32({1}, {-1}), f32({3, 1}, {7, 8, 9}), {{"axis", "1"}, {"mode", "update"}},
                 {1, 7, 3, 8, 5, 9});
  // validate_indices=False: out of range is undefined in Core ML; clamped here (5 -> row 2).
  expect_scatter("coreml.scatter", data, i32({1}, {5}), f32({1, 2}, {2, 3}), {{"mode", "mul"}}, {1, 2, 3, 4, 10, 18});
}

TEST(CoremlScatter, AlongAxisAndNd) {
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  // Column 0: rows 1 (max(3, 5)) and 0 (max(1, -1)); column 1: row 0 twice (max(2, 0, 9)).
  expect_scatter("coreml.scatter_along_axis", data, i32({2, 2}, {1, 0, 0, 0}), f32({2, 2}, {5, 0, -1, 9}),
                 {{"mode", "max"}}, {1, 9, 5, 4});
  expect_scatter("coreml.scatter_along_axis", data, i32({2, 1}, {1, 0}), f32({2, 1}, {7, 8}),
                 {{"axis", "1"}, {"mode", "sub"}}, {1, -5, -5, 4});
  // [0][1] = min(2, 0, -3); [1][0] = min(3, 5).
  expect_scatter("coreml.scatter_nd", data, i32({3, 2}, {0, 1, 1, 0, 0, 1}), f32({3}, {0, 5, -3}), {{"mode", "min"}},
                 {1, -3, 3, 4});
  expect_scatter("coreml.scatter_nd", data, i32({1, 1}, {1}), f32({1, 2}, {10, 20}), {}, {1, 2, 13, 24});
}

TEST(CoremlScatter, Errors) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_scatter_error("coreml.scatter", data, i32({1}, {0}), f32({1, 2}, {1, 1}), {{"mode", "div"}},
                       StatusCode::kInvalidArgument,
                       "coreml.scatter: mode = 'div' is not supported by multigather (data / updates has no exact form "
                       "as one scatter_multiaxis call: multiplying by 1 / updates rounds twice)");
  expect_scatter_error("coreml.scatter", data, i32({2}, {0, 1}), f32({1, 2}, {1, 1}), {},
                       StatusCode::kInvalidArgument,
                       "coreml.scatter: updates shape [1,2] must equal data.shape[:axis] ++ indices.shape ++ "
                       "data.shape[axis+1:] = [2,2]");
  expect_scatter_error("coreml.scatter_nd", data, i32({1, 3}, {0, 0, 0}), f32({1}, {1}), {},
                       StatusCode::kInvalidArgument, "coreml.scatter_nd: indices.shape[-1] = 3 must be <= rank(data) = 2");
  expect_scatter_error("coreml.scatter_along_axis", data, i32({3, 2}, {0, 0, 0, 0, 0, 0}), f32({3, 1}, {1, 1, 1}), {},
                       StatusCode::kInvalidArgument,
                       "coreml.scatter_along_axis: updates shape [3,1] must equal indices shape = [3,2]");
  Lowering l;
  const Status s = lower_op("coreml.scatter", data.view(), i32({1}, {0}).view(), f32({1, 2}, {1, 1}).view(),
                            {{"mode", "xor"}}, &l);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

// ---- tosa.scatter -----------------------------------------------------------------------------

TEST(TosaScatter, ValuesAndErrors) {
  // values_in [1,3,2] rows [1,2] [3,4] [5,6]; indices [[2, 0]]: row 2 <- [10,20], row 0 <- [30,40].
  expect_scatter("tosa.scatter", f32({1, 3, 2}, {1, 2, 3, 4, 5, 6}), i32({1, 2}, {2, 0}),
                 f32({1, 2, 2}, {10, 20, 30, 40}), {}, {30, 40, 3, 4, 10, 20});
  // N = 2, C = 1: batch 0 writes k 1, batch 1 writes k 0.
  expect_scatter("tosa.scatter", f32({2, 2, 1}, {1, 2, 3, 4}), i32({2, 1}, {1, 0}), f32({2, 1, 1}, {9, 8}), {},
                 {1, 9, 8, 4});
  // Duplicates (TOSA: REQUIRE fails): the last wins here.
  expect_scatter("tosa.scatter", f32({1, 2, 1}, {1, 2}), i32({1, 2}, {0, 0}), f32({1, 2, 1}, {7, 8}), {}, {8, 2});
  const std::string op = "tosa.scatter";
  const Tensor v = f32({2, 3, 2}, std::vector<double>(12, 0));
  expect_scatter_error(op, v, i32({2, 1}, {0, -1}), f32({2, 1, 2}, std::vector<double>(4, 0)), {},
                       StatusCode::kOutOfRange,
                       "tosa.scatter: indices[1,0] = -1 is out of range for K (values_in dimension 1) of size 3 (valid "
                       "range [0, 3)); TOSA REQUIRE(0 <= k < K)");
  expect_scatter_error(op, v, i32({2, 1}, {0, 0}), f32({2, 2, 2}, std::vector<double>(8, 0)), {},
                       StatusCode::kInvalidArgument,
                       "tosa.scatter: indices [2,1] must be [N,W] and input [2,2,2] must be [N,W,C] = [2,1,2] for "
                       "values_in [N,K,C] = [2,3,2]");
  expect_scatter_error(op, v, i32({2}, {0, 0}), f32({2, 1, 2}, std::vector<double>(4, 0)), {},
                       StatusCode::kInvalidArgument,
                       "tosa.scatter: values_in must be rank 3 [N,K,C], indices rank 2 [N,W] and input rank 3 [N,W,C] "
                       "(got [2,3,2], [2] and [2,1,2])");
  expect_scatter_error(op, v, i32({2, 1}, {0, 0}), make_tensor(DType::kFloat64, {2, 1, 2}, {}), {},
                       StatusCode::kTypeError,
                       "tosa.scatter: input dtype float64 must equal values_in dtype float32 (TOSA: input and "
                       "values_in have the same type)");
  expect_scatter_error(op, v, make_tensor(DType::kInt16, {2, 1}, {0, 0}), f32({2, 1, 2}, std::vector<double>(4, 0)),
                       {}, StatusCode::kTypeError,
                       "tosa.scatter: indices dtype int16 is not supported (tosa.scatter accepts int32, int64)");
}

// ---- dml --------------------------------------------------------------------------------------

TEST(DmlScatter, ScatterElements) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Axis 0: out[1][0] = 10, out[0][1] = 20, out[1][2] = 30.
  expect_scatter("dml.ScatterElements", x, i32({1, 3}, {1, 0, 1}), f32({1, 3}, {10, 20, 30}), {},
                 {1, 20, 3, 10, 5, 30});
  // Axis 1: -1 wraps to column 2, 7 clamps to column 2.
  expect_scatter("dml.ScatterElements", x, i64({2, 1}, {-1, 7}), f32({2, 1}, {8, 9}), {{"axis", "1"}},
                 {1, 2, 8, 4, 5, 9});
  const std::string op = "dml.ScatterElements";
  expect_scatter_error(op, x, i32({1, 3}, {0, 0, 0}), f32({1, 2}, {1, 2}), {}, StatusCode::kInvalidArgument,
                       "dml.ScatterElements: UpdatesTensor.Sizes [1,2] must match IndicesTensor.Sizes [1,3]");
  expect_scatter_error(op, x, i32({1, 3}, {0, 0, 0}), f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "dml.ScatterElements: UpdatesTensor.DimensionCount = 1 must match InputTensor.DimensionCount = 2");
  expect_scatter_error(op, x, i32({1, 3}, {0, 0, 0}), make_tensor(DType::kFloat64, {1, 3}, {}), {},
                       StatusCode::kTypeError,
                       "dml.ScatterElements: UpdatesTensor dtype float64 must equal InputTensor dtype float32 "
                       "(DirectML: UpdatesTensor.DataType must match InputTensor.DataType)");
  expect_scatter_error(op, x, i32({3}, {0, 0, 0}), f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "dml.ScatterElements: IndicesTensor.DimensionCount = 1 must match InputTensor.DimensionCount = "
                       "2 (>= 1)");
}

TEST(DmlScatter, ScatterND) {
  // DimensionCount 3, original ranks 2: rows 2 and 0 of a [3, 2] replaced; the output keeps [1, 3, 2].
  Tensor out;
  ASSERT_TRUE(run_op("dml.ScatterND", f32({1, 3, 2}, {1, 2, 3, 4, 5, 6}).view(), i32({1, 2, 1}, {2, 0}).view(),
                     f32({1, 2, 2}, {10, 20, 30, 40}).view(),
                     {{"input_dimension_count", "2"}, {"indices_dimension_count", "2"}}, &out)
                  .ok());
  EXPECT_EQ(to_string(out.shape()), "[1,3,2]");
  EXPECT_EQ(values_f32(out), as_f32({30, 40, 3, 4, 10, 20}));
  // Element coordinates: updates [2] right-aligned to [1, 2]; out[0][1] = 7, out[2][0] = 8.
  expect_scatter("dml.ScatterND", f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2, 2}, {0, 1, 2, 0}), f32({1, 2}, {7, 8}), {},
                 {1, 7, 3, 4, 8, 6});
  const std::string op = "dml.ScatterND";
  const Tensor x = f32({3, 2}, std::vector<double>(6, 0));
  expect_scatter_error(op, x, i64({2, 1}, {0, 1}), f32({2, 3}, {}), {}, StatusCode::kInvalidArgument,
                       "dml.ScatterND: UpdatesTensor.Sizes [2,3] must be IndicesTensor.Sizes[:-1] ++ "
                       "InputTensor.Sizes[k:] = [2,2] (right-aligned to DimensionCount 2, k = 1)");
  expect_scatter_error(op, x, i64({1, 3}, {0, 0, 0}), f32({1, 1}, {1}), {}, StatusCode::kInvalidArgument,
                       "dml.ScatterND: the index tuple size 3 must be <= InputDimensionCount = 2");
  expect_scatter_error(op, x, i64({2, 1}, {0, 1}), f32({2, 2}, {}), {{"input_dimension_count", "1"}},
                       StatusCode::kInvalidArgument,
                       "dml.ScatterND: InputDimensionCount: Sizes[0] = 3 lies in the leading padding (original rank 1) "
                       "and must be 1");
}

// ---- MLIR tensor.scatter ----------------------------------------------------------------------

TEST(TensorScatter, ValuesAndErrors) {
  const Tensor dest = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  // scatter_dims [0]: rows 1 and 0 replaced; the source full rank [2,1,3] or rank-reduced [2,3].
  expect_scatter("tensor.scatter", dest, i64({2, 1}, {1, 0}), f32({2, 1, 3}, {10, 11, 12, 20, 21, 22}),
                 {{"scatter_dims", "0"}}, {20, 21, 22, 10, 11, 12});
  expect_scatter("tensor.scatter", dest, i64({2, 1}, {1, 0}), f32({2, 3}, {10, 11, 12, 20, 21, 22}),
                 {{"scatter_dims", "0"}}, {20, 21, 22, 10, 11, 12});
  // scatter_dims [0, 1]: result[1][2] = 7, result[0][1] = 8 (source [2] reduced or [2,1,1]).
  expect_scatter("tensor.scatter", dest, i64({2, 2}, {1, 2, 0, 1}), f32({2}, {7, 8}), {{"scatter_dims", "0,1"}},
                 {0, 8, 2, 3, 4, 7});
  expect_scatter("tensor.scatter", dest, i32({2, 2}, {1, 2, 0, 1}), f32({2, 1, 1}, {7, 8}), {{"scatter_dims", "0,1"}},
                 {0, 8, 2, 3, 4, 7});
  const std::string op = "tensor.scatter";
  expect_scatter_error(op, dest, i64({2, 1}, {1, 0}), f32({2, 3}, {}), {{"scatter_dims", "0"}, {"unique", "false"}},
                       StatusCode::kInvalidArgument,
                       "tensor.scatter: requires 'unique' attribute to be set (MLIR only defines tensor.scatter with "
                       "coordinates guaranteed unique)");
  expect_scatter_error(op, dest, i64({2, 1}, {1, 0}), f32({2, 2}, {}), {{"scatter_dims", "0"}},
                       StatusCode::kInvalidArgument,
                       "tensor.scatter: source shape [2,2] must be [2,1,3] (or rank-reduced [2,3]): indices.shape[:-1] "
                       "++ dest.shape with the scatter_dims set to 1");
  expect_scatter_error(op, dest, i64({1, 1}, {2}), f32({1, 1, 3}, {}), {{"scatter_dims", "0"}},
                       StatusCode::kOutOfRange,
                       "tensor.scatter: indices[0,0] = 2 is out of range for dest dimension 0 of size 2 (valid range "
                       "[0, 2)); out-of-range indices are undefined behaviour in MLIR; multigather rejects them");
  expect_scatter_error(op, dest, i64({1, 2}, {0, 0}), f32({1}, {}), {{"scatter_dims", "1,0"}},
                       StatusCode::kInvalidArgument, "tensor.scatter: scatter_dims [1,0] must be strictly increasing");
  expect_scatter_error(op, dest, i64({1, 1}, {0}), make_tensor(DType::kFloat64, {1, 1, 3}, {}),
                       {{"scatter_dims", "0"}}, StatusCode::kTypeError,
                       "tensor.scatter: source dtype float64 must equal dest dtype float32 (MLIR: source and dest "
                       "have the same element type)");
}

// ---- numpy ufunc.at (multiply, minimum, maximum) ---------------------------------------------

TEST(NumpyUfuncAt, MultiplyMinimumMaximum) {
  const Tensor a = f32({4}, {1, 2, 3, 4});
  const Tensor idx = i64({4}, {0, 1, 0, -1});
  // multiply: a[0] = 1*2*5, a[1] = 2*3, a[3] = 4*0.5.
  expect_scatter("numpy.multiply_at", a, idx, f32({4}, {2, 3, 5, 0.5}), {}, {10, 6, 3, 2});
  // minimum over {1, 0, -1}, {2, 5}, {4, 9}; maximum likewise.
  expect_scatter("numpy.minimum_at", a, idx, f32({4}, {0, 5, -1, 9}), {}, {-1, 2, 3, 4});
  expect_scatter("numpy.maximum_at", a, idx, f32({4}, {0, 5, -1, 9}), {}, {1, 5, 3, 9});
  // b broadcasts over rows of a [2, 2]: row 1 twice.
  expect_scatter("numpy.maximum_at", f32({2, 2}, {1, 2, 3, 4}), i32({2}, {1, 1}), f32({2}, {5, 0}), {},
                 {1, 2, 5, 4});
  expect_scatter_error("numpy.multiply_at", a, idx, f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "numpy.multiply_at: operands could not be broadcast together: b shape [3] and a[indices] "
                       "shape [4]");
  expect_scatter_error("numpy.minimum_at", a, i64({1}, {4}), f32({}, {1}), {}, StatusCode::kOutOfRange,
                       "numpy.minimum_at: indices[0] = 4 is out of range for axis 0 of size 4 (valid range [-4, 4))");
}

// ---- complex min / max: only StableHLO's order, which these frameworks do not have ------------

TEST(ComplexMinMax, FrameworksWithoutStableHlosOrderRefuseIt) {
  // The core takes complex min / max (StableHLO's lexicographic order: ComplexMinMax in
  // scatter_core_test.cpp); a framework whose own rule differs, or that has none, keeps refusing.
  const Tensor x = testing::c64({2}, {1, 0, 2, 0});
  const Tensor u1 = testing::c64({1}, {3, 0});
  const Tensor i1 = i64({1}, {0});
  expect_scatter_error("numpy.maximum_at", x, i1, u1, {}, StatusCode::kTypeError,
                       "numpy.maximum_at: a dtype complex64 is not supported with maximum (numpy's complex maximum / "
                       "minimum propagate NaN and keep a on ties; multigather's complex min / max are StableHLO's, "
                       "where the update wins both: scatter_multiaxis with reduction min / max)");
  expect_scatter_error("numpy.minimum_at", x, i1, u1, {}, StatusCode::kTypeError,
                       "numpy.minimum_at: a dtype complex64 is not supported with minimum (numpy's complex maximum / "
                       "minimum propagate NaN and keep a on ties; multigather's complex min / max are StableHLO's, "
                       "where the update wins both: scatter_multiaxis with reduction min / max)");
  for (const char* reduce : {"amax", "amin"}) {
    expect_scatter_error("torch.scatter_reduce", x, i1, u1, {{"reduce", reduce}}, StatusCode::kTypeError,
                         std::string("torch.scatter_reduce: self dtype complex64 is not supported with reduce = '") +
                             reduce + "' (PyTorch implements amax and amin for no complex dtype)");
  }
  expect_scatter("torch.scatter_reduce", f32({2}, {1, 2}), i1, f32({1}, {3}), {{"reduce", "amax"}}, {3, 2});
  const Tensor i11 = i64({1, 1}, {0});
  expect_scatter_error("tf.tensor_scatter_nd_max", x, i11, u1, {}, StatusCode::kTypeError,
                       "tf.tensor_scatter_nd_max: tensor dtype complex64 is not supported with max (TensorFlow "
                       "registers TensorScatterMin / TensorScatterMax for real number types only)");
  expect_scatter_error("tf.tensor_scatter_nd_min", x, i11, u1, {}, StatusCode::kTypeError,
                       "tf.tensor_scatter_nd_min: tensor dtype complex64 is not supported with min (TensorFlow "
                       "registers TensorScatterMin / TensorScatterMax for real number types only)");
  expect_scatter_error("onnx.ScatterElements", x, i1, u1, {{"reduction", "max"}}, StatusCode::kTypeError,
                       "onnx.ScatterElements: data dtype complex64 is not supported with reduction = 'max' (ONNX's "
                       "Max and Min take no complex type)");
  expect_scatter_error("onnx.ScatterND", x, i11, u1, {{"reduction", "min"}}, StatusCode::kTypeError,
                       "onnx.ScatterND: data dtype complex64 is not supported with reduction = 'min' (ONNX's Max "
                       "and Min take no complex type)");
  expect_scatter_error("coreml.scatter", x, testing::i32({1}, {0}), u1, {{"mode", "max"}}, StatusCode::kTypeError,
                       "coreml.scatter: data dtype complex64 is not supported with mode = 'max' (Core ML's scatter "
                       "takes fp16, fp32 and int32 data)");
  // Their complex add is unchanged: (1, 0) + (3, 0).
  testing::expect_scatter_c64("onnx.ScatterElements", x, i1, u1, {{"reduction", "add"}}, {4, 0, 2, 0});
  testing::expect_scatter_c64("torch.scatter_reduce", x, i1, u1, {{"reduce", "sum"}}, {4, 0, 2, 0});
}

// ---- torch.index_copy / index_fill / put -------------------------------------------------------

TEST(TorchIndexCopyFillPut, Values) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // index_copy dim 0: row 2 <- [10,20], row 0 <- [30,40]; dim 1: column 1 <- [7,8,9]; a 0-d index.
  expect_scatter("torch.index_copy", x, i64({2}, {2, 0}), f32({2, 2}, {10, 20, 30, 40}), {}, {30, 40, 3, 4, 10, 20});
  expect_scatter("torch.index_copy", x, i64({1}, {1}), f32({3, 1}, {7, 8, 9}), {{"dim", "1"}}, {1, 7, 3, 8, 5, 9});
  expect_scatter("torch.index_copy", x, i64({}, {1}), f32({1, 2}, {7, 8}), {}, {1, 2, 7, 8, 5, 6});
  // index_fill: -1 wraps to the last row; dim 1 with columns 1 and 0 fills everything.
  expect_scatter("torch.index_fill", x, i64({1}, {-1}), f32({}, {9}), {}, {1, 2, 3, 4, 9, 9});
  expect_scatter("torch.index_fill", x, i64({2}, {1, 0}), f32({}, {0}), {{"dim", "-1"}}, {0, 0, 0, 0, 0, 0});
  // put: flat positions; -1 is element 5. accumulate: 1 at 0, 2+3+4 at 1.
  expect_scatter("torch.put", x, i64({2}, {-1, 0}), f32({2}, {10, 20}), {}, {20, 2, 3, 4, 5, 10});
  expect_scatter("torch.put", x, i64({2, 2}, {0, 1, 1, 1}), f32({4}, {1, 2, 3, 4}), {{"accumulate", "true"}},
                 {2, 11, 3, 4, 5, 6});
  expect_scatter("torch.put", x, i64({2}, {1, 1}), f32({1, 2}, {7, 8}), {}, {1, 8, 3, 4, 5, 6});
}

TEST(TorchIndexCopyFillPut, Errors) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_scatter_error("torch.index_copy", x, i64({1}, {-1}), f32({1, 2}, {1, 2}), {}, StatusCode::kOutOfRange,
                       "torch.index_copy: index[0] = -1 is out of range for dim 0 of size 3 (valid range [0, 3)); "
                       "index_copy_(): indices must be in [0, size) (negatives are out of bounds)");
  expect_scatter_error("torch.index_copy", x, i64({2}, {0, 1}), f32({3, 2}, {}), {}, StatusCode::kInvalidArgument,
                       "torch.index_copy: index_copy_(): Number of indices (2) should be equal to source.size(dim) (3)");
  expect_scatter_error("torch.index_copy", x, i64({2}, {0, 1}), f32({2, 3}, {}), {}, StatusCode::kInvalidArgument,
                       "torch.index_copy: index_copy_(): Source/destination tensor must have same slice shapes "
                       "(self.shape = [3,2], source.shape = [2,3], dim 0)");
  expect_scatter_error("torch.index_copy", x, i32({2}, {0, 1}), f32({2, 2}, {}), {}, StatusCode::kTypeError,
                       "torch.index_copy: index_copy_(): Expected a long tensor for index, but got int32");
  expect_scatter_error("torch.index_copy", x, i64({1, 2}, {0, 1}), f32({2, 2}, {}), {}, StatusCode::kInvalidArgument,
                       "torch.index_copy: index_copy_(): Index should have dimension 1 or 0 (got 2)");
  expect_scatter_error("torch.index_fill", x, i64({1}, {0}), f32({1}, {5}), {}, StatusCode::kInvalidArgument,
                       "torch.index_fill: index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
                       "dimension(s).");
  expect_scatter_error("torch.index_fill", x, i64({1}, {3}), f32({}, {5}), {}, StatusCode::kOutOfRange,
                       "torch.index_fill: index[0] = 3 is out of range for dim 0 of size 3 (valid range [-3, 3))");
  expect_scatter_error("torch.index_fill", x, i32({1}, {0}), f32({}, {5}), {}, StatusCode::kTypeError,
                       "torch.index_fill: index_fill_(): Expected dtype int64 for index.");
  expect_scatter_error("torch.put", x, i64({2}, {0, 1}), f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "torch.put: put_(): Expected source and index to have the same number of elements, but got "
                       "source.numel() = 3, index.numel() = 2");
  expect_scatter_error("torch.put", x, i64({2}, {0, 7}), f32({2}, {1, 2}), {}, StatusCode::kOutOfRange,
                       "torch.put: index.flatten()[1] = 7 is out of range for the flattened input of size 6 (valid "
                       "range [-6, 6)); torch.put: index must be in [-numel, numel)");
  expect_scatter_error("torch.put", x, i64({2}, {0, 1}), make_tensor(DType::kFloat64, {2}, {}), {},
                       StatusCode::kTypeError,
                       "torch.put: put_(): self and source expected to have the same dtype, but got self.dtype = "
                       "float32 and source.dtype = float64");
}

TEST(TorchIndexPut, ValuesAndErrors) {
  const Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // x[[2, -3]] = [[10, 20], [30, 40]]: rows 2 and 0 (-3 wraps once).
  expect_scatter("torch.index_put", x, i64({2, 1}, {2, -3}), f32({2, 2}, {10, 20, 30, 40}), {},
                 {30, 40, 3, 4, 10, 20});
  // x[[0, 0, 1], [1, 1, 0]] += [1, 2, 3] (accumulate: the duplicate adds both); values broadcast.
  expect_scatter("torch.index_put", x, i64({3, 2}, {0, 1, 0, 1, 1, 0}), f32({3}, {1, 2, 3}),
                 {{"index_dims", "0,1"}, {"accumulate", "true"}}, {1, 5, 6, 4, 5, 6});
  // without accumulate the last duplicate wins; x[:, [1]] = 9 (index_dims 1, a scalar value).
  expect_scatter("torch.index_put", x, i64({2, 2}, {1, 1, 1, 1}), f32({2}, {7, 8}), {{"index_dims", "0,1"}},
                 {1, 2, 3, 8, 5, 6});
  expect_scatter("torch.index_put", x, i64({1, 1}, {1}), f32({}, {9}), {{"index_dims", "1"}}, {1, 9, 3, 9, 5, 9});
  expect_scatter_error("torch.index_put", x, i64({2, 1}, {0, 3}), f32({2}, {1, 2}), {}, StatusCode::kOutOfRange,
                       "torch.index_put: indices[1,0] = 3 is out of range for axis 0 of size 3 (valid range [-3, 3)); "
                       "torch.index_put: an index must be in [-size, size)");
  expect_scatter_error("torch.index_put", x, i64({2, 1}, {0, 1}), f32({3}, {1, 2, 3}), {}, StatusCode::kInvalidArgument,
                       "torch.index_put: shape mismatch: value tensor of shape [3] cannot be broadcast to indexing "
                       "result of shape [2,2]");
  expect_scatter_error("torch.index_put", x, i64({2, 1}, {0, 1}), make_tensor(DType::kFloat64, {2}, {}), {},
                       StatusCode::kTypeError,
                       "torch.index_put: Index put requires the source and destination dtypes match, got float32 for "
                       "the destination and float64 for the source.");
  expect_scatter_error("torch.index_put", x, make_tensor(DType::kInt16, {1, 1}, {0}), f32({}, {1}), {},
                       StatusCode::kTypeError,
                       "torch.index_put: tensors used as indices must be long or int tensors, got int16");
}

// ---- numpy.put --------------------------------------------------------------------------------

TEST(NumpyPut, ValuesModesAndErrors) {
  const Tensor a = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  // Flat positions 5, 0 and -1 (= 5 again: the last wins).
  expect_scatter("numpy.put", a, i64({3}, {5, 0, -1}), f32({3}, {10, 20, 30}), {}, {20, 1, 2, 3, 4, 30});
  // One value broadcast; v longer than ind: its first elements.
  expect_scatter("numpy.put", a, i64({2}, {1, 2}), f32({}, {7}), {}, {0, 7, 7, 3, 4, 5});
  expect_scatter("numpy.put", a, i32({1, 2}, {1, 2}), f32({2, 2}, {7, 8, 9, 9}), {}, {0, 7, 8, 3, 4, 5});
  // wrap: 7 -> 1, -1 -> 5; clip: 9 -> 5, -3 -> 0.
  expect_scatter("numpy.put", a, i64({2}, {7, -1}), f32({2}, {10, 20}), {{"mode", "wrap"}}, {0, 10, 2, 3, 4, 20});
  expect_scatter("numpy.put", a, i64({2}, {9, -3}), f32({2}, {10, 20}), {{"mode", "clip"}}, {20, 1, 2, 3, 4, 10});
  expect_scatter_error("numpy.put", a, i64({1}, {6}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "numpy.put: ind[0] = 6 is out of range for the flattened a of size 6 (valid range [-6, 6))");
  expect_scatter_error("numpy.put", a, i64({3}, {0, 1, 2}), f32({2}, {1, 2}), {}, StatusCode::kInvalidArgument,
                       "numpy.put: v has 2 elements, fewer than the 3 indices: numpy repeats v cyclically, which "
                       "multigather does not (the Python wrapper tiles v with numpy.resize; pass v with 1 or at least "
                       "3 elements)");
  expect_scatter_error("numpy.put", f32({0}, {}), i64({1}, {0}), f32({1}, {1}), {}, StatusCode::kOutOfRange,
                       "numpy.put: cannot replace elements of an empty array");
  Lowering l;
  const Status s = lower_op("numpy.put", a.view(), i64({1}, {0}).view(), f32({1}, {1}).view(), {{"mode", "x"}}, &l);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace multigather
