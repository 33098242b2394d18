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

void expect_scatter(const std::string& op, const Tensor& x, const Tensor& i, const Tensor& u, const Attributes& a,
                    const std::vector<double>& want) {
  Tensor out;
  const Status s = run_op(op, x.view(), i.view(), u.view(), a, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  EXPECT_EQ(to_string(out.shape()), to_string(x.shape())) << op;
  EXPECT_EQ(values_f32(out), as_f32(want)) << op;
}

void expect_scatter_error(const std::string& op, const Tensor& x, const Tensor& i, const Tensor& u,
                          const Attributes& a, StatusCode code, const std::string& message) {
  Tensor out;
  const Status s = run_op(op, x.view(), i.view(), u.view(), a, &out);
  EXPECT_EQ(s.code(), code) << op << ": " << s.message();
  EXPECT_EQ(s.message(), message);
}

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
                       "torch.scatter_add: index[0,0] = 3 is out of range for dim 0 of size 3 (valid range [0, 3)); "
                       "torch.scatter_add rejects negative indices (pytorch#55143)");
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
  expect_scatter_error("torch.scatter_reduce", x, i64({1, 2}, {1, 0}), f32({1, 2}, {1, 1}), {{"reduce", "mean"}},
                       StatusCode::kInvalidArgument,
                       "torch.scatter_reduce: reduce = 'mean' is not supported by multigather yet (it divides by the "
                       "count of updates after the scatter, which one scatter_multiaxis call cannot do)");
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

}  // namespace
}  // namespace multigather
