// onnx.Gather / GatherElements / GatherND: golden tables from the ONNX operator docs (Operators.md
// examples), the seed's mapping tables and examples with their intermediate shapes, and the edge
// cases of docs/semantics.md section 17. Values worked out by hand from the documented examples.
#include "multigather/frontends/onnx.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

// ---- onnx.Gather --------------------------------------------------------------------------

TEST(OnnxGather, DocExampleAxis0) {
  // Operators.md Gather example 1: data [3,2], indices [[0,1],[1,2]], axis=0 -> [2,2,2].
  expect_op("onnx.Gather", f32({3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7}), i64({2, 2}, {0, 1, 1, 2}),
            {{"axis", "0"}}, {2, 2, 2}, {1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7});
}

TEST(OnnxGather, DocExampleAxis1) {
  // Operators.md Gather example 2: data [3,3], indices [[0,2]], axis=1 -> [3,1,2].
  expect_op("onnx.Gather", f32({3, 3}, {1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9}),
            i64({1, 2}, {0, 2}), {{"axis", "1"}}, {3, 1, 2}, {1.0, 1.9, 2.3, 3.9, 4.5, 5.9});
}

TEST(OnnxGather, SeedMappingTableShapes) {
  // The seed draft's gatherBlocks table (Multigather.md, cited in docs/spec.md): data, indices,
  // axis -> reshaped input / indices / output (P, Q, R, S) = (2, 3, 4, 5).
  struct Row { Dims data, indices; int axis; Dims input, idx, core, out; };
  const Row rows[] = {
      {{2, 3}, {}, 0, {2, 3}, {1, 1}, {1, 3}, {3}},
      {{2, 3, 4}, {}, 1, {2, 3, 4}, {1, 1, 1}, {2, 1, 4}, {2, 4}},
      {{2, 3, 4}, {5}, 1, {2, 3, 1, 4}, {1, 1, 5, 1}, {2, 1, 5, 4}, {2, 5, 4}},
      {{2, 3}, {4, 5}, 0, {2, 1, 1, 3}, {1, 4, 5, 1}, {1, 4, 5, 3}, {4, 5, 3}},
      {{2, 3}, {4, 5}, 1, {2, 3, 1, 1}, {1, 1, 4, 5}, {2, 1, 4, 5}, {2, 4, 5}},
  };
  for (const Row& r : rows) {
    const Lowering l = lower_shapes("onnx.Gather", r.data, r.indices, {{"axis", std::to_string(r.axis)}});
    EXPECT_EQ(to_string(l.input.shape), to_string(r.input));
    EXPECT_EQ(to_string(l.indices.shape), to_string(r.idx));
    EXPECT_EQ(to_string(l.core_output_shape), to_string(r.core));
    EXPECT_EQ(to_string(l.output_shape), to_string(r.out));
    EXPECT_EQ(l.axes, std::vector<std::int64_t>{r.axis});
  }
}

TEST(OnnxGather, SeedExamples) {
  const Tensor x = f32({4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  expect_op("onnx.Gather", x, i64({2}, {3, 1}), {}, {2, 3}, {30, 31, 32, 10, 11, 12});
  expect_op("onnx.Gather", x, i64({5}, {2, 1, 0, 1, 2}), {{"axis", "1"}}, {4, 5},
            {2, 1, 0, 1, 2, 12, 11, 10, 11, 12, 22, 21, 20, 21, 22, 32, 31, 30, 31, 32});
  expect_op("onnx.Gather", x, i64({2, 2}, {0, 1, 1, 2}), {{"axis", "1"}}, {4, 2, 2},
            {0, 1, 1, 2, 10, 11, 11, 12, 20, 21, 21, 22, 30, 31, 31, 32});
  const Tensor y = f32({2, 2}, {1, 2, 3, 4});
  expect_op("onnx.Gather", y, i64({}, {1}), {}, {2}, {3, 4});
  expect_op("onnx.Gather", y, i64({2}, {1, 0}), {}, {2, 2}, {3, 4, 1, 2});
  expect_op("onnx.Gather", y, i64({2, 2}, {1, 0, 0, 1}), {}, {2, 2, 2}, {3, 4, 1, 2, 1, 2, 3, 4});
}

TEST(OnnxGather, ScalarIndicesDropTheAxisAndNegativesWrapOnce) {
  expect_op("onnx.Gather", f32({3, 2}, iota(6)), i32({}, {-1}), {{"axis", "-2"}}, {2}, {4, 5});
  expect_op("onnx.Gather", f32({3}, iota(3)), i64({}, {-3}), {}, {}, {0});
}

TEST(OnnxGather, EmptyIndicesAndEmptyOutputs) {
  expect_op("onnx.Gather", f32({3, 2}, iota(6)), i64({0}, {}), {}, {0, 2}, {});
  // An empty data axis is fine when nothing is looked up.
  expect_op("onnx.Gather", f32({0, 2}, {}), i64({0, 4}, {}), {}, {0, 4, 2}, {});
}

TEST(OnnxGather, Errors) {
  expect_error("onnx.Gather", f32({3, 2}, iota(6)), i64({2}, {0, 3}), {}, StatusCode::kOutOfRange,
               "onnx.Gather: indices[1] = 3 is out of range for axis 0 of size 3 (valid range [-3, 3)); "
               "ONNX indices must lie in [-s, s-1]");
  expect_error("onnx.Gather", f32({3, 2}, iota(6)), i64({1}, {-4}), {}, StatusCode::kOutOfRange,
               "onnx.Gather: indices[0] = -4 is out of range for axis 0 of size 3 (valid range [-3, 3)); "
               "ONNX indices must lie in [-s, s-1]");
  expect_error("onnx.Gather", f32({3, 2}, iota(6)), make_tensor(DType::kUInt32, {1}, {0}), {},
               StatusCode::kTypeError,
               "onnx.Gather: indices dtype uint32 is not supported (onnx.Gather accepts int32, int64)");
  expect_error("onnx.Gather", f32({3, 2}, iota(6)), i64({1}, {0}), {{"axis", "2"}},
               StatusCode::kInvalidArgument, "onnx.Gather: axis = 2 is out of range [-2, 1] for input rank 2");
  expect_error("onnx.Gather", f32({}, {1}), i64({1}, {0}), {}, StatusCode::kInvalidArgument,
               "onnx.Gather: data must have rank >= 1 (got a 0-D tensor)");
  expect_error("onnx.Gather", f32({3}, iota(3)), i64({1}, {0}), {{"dim", "0"}}, StatusCode::kInvalidArgument,
               "onnx.Gather has no attribute 'dim' (attributes: axis)");
  expect_error("onnx.Gather", f32({3}, iota(3)), i64({1}, {0}), {{"axis", "x"}}, StatusCode::kInvalidArgument,
               "onnx.Gather: attribute axis: 'x' is not an integer");
  // 0-size data axis with non-empty output: every lookup is out of range.
  expect_error("onnx.Gather", f32({0, 2}, {}), i64({1}, {0}), {}, StatusCode::kOutOfRange,
               "onnx.Gather: indices[0] = 0 is out of range for axis 0 of size 0 (valid range [0, 0)); "
               "ONNX indices must lie in [-s, s-1]");
}

TEST(OnnxGather, NonContiguousViewsNeedNoCopy) {
  // data viewed transposed (strides [1,3]) and indices with stride 2: the lowering only views.
  const Tensor base = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  const TensorView data(base.data(), DType::kFloat32, Dims{3, 2}, Dims{1, 3});  // [[0,3],[1,4],[2,5]]
  const Tensor idx = i64({4}, {2, 9, 0, 9});
  const TensorView indices(idx.data(), DType::kInt64, Dims{2}, Dims{2});  // [2, 0]
  Lowering l;
  ASSERT_TRUE(onnx::Gather(data, indices, 0, &l).ok());
  EXPECT_TRUE(l.notes.empty());
  EXPECT_EQ(l.owned_indices, nullptr);
  const Tensor out = execute(l);
  EXPECT_EQ(values_f32(out), as_f32({2, 5, 0, 3}));
}

// ---- onnx.GatherElements ------------------------------------------------------------------

TEST(OnnxGatherElements, DocExamples) {
  expect_op("onnx.GatherElements", f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0}), {{"axis", "1"}},
            {2, 2}, {1, 1, 4, 3});
  expect_op("onnx.GatherElements", f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i64({2, 3}, {1, 2, 0, 2, 0, 0}),
            {{"axis", "0"}}, {2, 3}, {4, 8, 3, 7, 2, 3});
}

TEST(OnnxGatherElements, SeedExamples) {
  const Tensor x = f32({4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  expect_op("onnx.GatherElements", x, i64({2, 3}, {3, 1, 1, 2, 0, 3}), {}, {2, 3}, {30, 11, 12, 20, 1, 32});
  expect_op("onnx.GatherElements", x, i64({4, 1}, {2, 1, 0, 2}), {{"axis", "1"}}, {4, 1}, {2, 11, 20, 32});
  expect_op("onnx.GatherElements", f32({4, 2, 2}, {0, 1, 10, 11, 100, 101, 110, 111, 200, 201, 210, 211, 300, 301, 310, 311}),
            i64({1, 2, 2}, {0, 2, 1, 3}), {}, {1, 2, 2}, {0, 201, 110, 311});
}

TEST(OnnxGatherElements, SizeOneIndexDimsReadTheLeadingPartNeverBroadcast) {
  // indices [1,2] on data [3,4], axis 1: row 0 only (ONNX Runtime), not a broadcast to [3,2].
  const Lowering l = lower_shapes("onnx.GatherElements", {3, 4}, {1, 2}, {{"axis", "1"}});
  EXPECT_EQ(to_string(l.input.shape), "[1,4]");
  EXPECT_EQ(to_string(l.output_shape), "[1,2]");
  expect_op("onnx.GatherElements", f32({3, 4}, iota(12)), i64({1, 2}, {3, 1}), {{"axis", "1"}}, {1, 2}, {3, 1});
}

TEST(OnnxGatherElements, Errors) {
  expect_error("onnx.GatherElements", f32({2, 2}, iota(4)), i64({3, 1}, {0, 0, 0}), {{"axis", "1"}},
               StatusCode::kInvalidArgument,
               "onnx.GatherElements: indices.shape[0] = 3 and data.shape[0] = 2: the index size must not "
               "exceed the data size on every dimension but 1");
  expect_error("onnx.GatherElements", f32({2, 2}, iota(4)), i64({2}, {0, 0}), {}, StatusCode::kInvalidArgument,
               "onnx.GatherElements: indices rank 1 must equal data rank 2");
  expect_error("onnx.GatherElements", f32({2, 2}, iota(4)), i64({1, 1}, {-3}), {}, StatusCode::kOutOfRange,
               "onnx.GatherElements: indices[0,0] = -3 is out of range for axis 0 of size 2 (valid range "
               "[-2, 2)); ONNX indices must lie in [-s, s-1]");
}

// ---- onnx.GatherND ------------------------------------------------------------------------

TEST(OnnxGatherND, DocExamples) {
  const Tensor d2 = f32({2, 2}, {0, 1, 2, 3});
  const Tensor d3 = f32({2, 2, 2}, iota(8));
  expect_op("onnx.GatherND", d2, i64({2, 2}, {0, 0, 1, 1}), {}, {2}, {0, 3});                  // example 1
  expect_op("onnx.GatherND", d2, i64({2, 1}, {1, 0}), {}, {2, 2}, {2, 3, 0, 1});               // example 2
  expect_op("onnx.GatherND", d3, i64({2, 2}, {0, 1, 1, 0}), {}, {2, 2}, {2, 3, 4, 5});         // example 3
  expect_op("onnx.GatherND", d3, i64({2, 1, 2}, {0, 1, 1, 0}), {}, {2, 1, 2}, {2, 3, 4, 5});   // example 4
  expect_op("onnx.GatherND", d3, i64({2, 1}, {1, 0}), {{"batch_dims", "1"}}, {2, 2}, {2, 3, 4, 5});  // example 5
}

TEST(OnnxGatherND, SeedExamplesWithIntermediateShapes) {
  // The seed draft's "Multiple axes blocks" examples 2-4 (Multigather.md, cited in docs/spec.md;
  // the shapes its gatherNdBlocks computes; example 1's prose shapes [1,2,1*2] disagree with that
  // code, which gives [2,1,2]).
  struct Row { Dims indices; int b; Dims input, idx, core, out; std::vector<std::int64_t> axes; };
  const Row rows[] = {
      {{2, 2}, 0, {2, 2, 2}, {2, 1, 2}, {2, 1, 2}, {2, 2}, {0, 1}},
      {{3, 1}, 0, {2, 2, 2}, {3, 1, 1}, {3, 2, 2}, {3, 2, 2}, {0}},
      {{2, 1}, 1, {2, 2, 2}, {2, 1, 1}, {2, 1, 2}, {2, 2}, {1}},
      {{5, 3}, 0, {2, 2, 2}, {5, 1, 3}, {5, 1, 1}, {5}, {0, 1, 2}},
  };
  for (const Row& r : rows) {
    const Lowering l = lower_shapes("onnx.GatherND", {2, 2, 2}, r.indices, {{"batch_dims", std::to_string(r.b)}});
    EXPECT_EQ(to_string(l.input.shape), to_string(r.input));
    EXPECT_EQ(to_string(l.indices.shape), to_string(r.idx));
    EXPECT_EQ(to_string(l.core_output_shape), to_string(r.core));
    EXPECT_EQ(to_string(l.output_shape), to_string(r.out));
    EXPECT_EQ(l.axes, r.axes);
  }
  const Tensor d3 = f32({2, 2, 2}, iota(8));
  expect_op("onnx.GatherND", d3, i64({3, 1}, {1, 0, 1}), {}, {3, 2, 2}, {4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7});
  expect_op("onnx.GatherND", d3, i64({5, 3}, {0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1}), {}, {5}, {1, 2, 4, 6, 7});
}

TEST(OnnxGatherND, ExplainBatchDims1) {
  std::string text;
  ASSERT_TRUE(explain_op("onnx.GatherND", {2, 2, 2}, DType::kFloat32, {2, 1}, DType::kInt64,
                         {{"batch_dims", "1"}}, &text).ok());
  EXPECT_NE(text.find("lowered call:       gather_multiaxis(input [2,2,2], indices [2,1,1], axes [1])"), std::string::npos) << text;
  EXPECT_NE(text.find("core output:        [2,1,2]"), std::string::npos) << text;
  EXPECT_NE(text.find("output:             [2,2]"), std::string::npos) << text;
}

TEST(OnnxGatherND, Errors) {
  const Tensor d3 = f32({2, 2, 2}, iota(8));
  expect_error("onnx.GatherND", d3, i64({3, 1}, {0, 0, 0}), {{"batch_dims", "1"}}, StatusCode::kInvalidArgument,
               "onnx.GatherND: batch_dims = 1: data.shape[0] = 2 and indices.shape[0] = 3 must be equal "
               "(batch dimensions are not broadcast)");
  expect_error("onnx.GatherND", f32({1, 3}, iota(3)), i64({2, 1}, {1, 2}), {{"batch_dims", "1"}},
               StatusCode::kInvalidArgument,
               "onnx.GatherND: batch_dims = 1: data.shape[0] = 1 and indices.shape[0] = 2 must be equal "
               "(batch dimensions are not broadcast)");
  expect_error("onnx.GatherND", d3, i64({2, 0}, {}), {}, StatusCode::kInvalidArgument,
               "onnx.GatherND: indices.shape[-1] = 0 must be in [1, r - batch_dims] = [1, 3]");
  expect_error("onnx.GatherND", d3, i64({2, 3}, iota(6)), {{"batch_dims", "1"}}, StatusCode::kInvalidArgument,
               "onnx.GatherND: indices.shape[-1] = 3 must be in [1, r - batch_dims] = [1, 2]");
  expect_error("onnx.GatherND", d3, i64({2}, {0, 0}), {{"batch_dims", "1"}}, StatusCode::kInvalidArgument,
               "onnx.GatherND: batch_dims = 1 must be in [0, min(q, r)) = [0, 1) for data rank 3 and indices rank 1");
  expect_error("onnx.GatherND", d3, i32({1, 2}, {0, 0}), {}, StatusCode::kTypeError,
               "onnx.GatherND: indices dtype int32 is not supported (onnx.GatherND accepts int64)");
  expect_error("onnx.GatherND", d3, i64({2, 2}, {0, 1, 1, -3}), {}, StatusCode::kOutOfRange,
               "onnx.GatherND: indices[1,1] = -3 is out of range for data dimension 1 of size 2 (valid "
               "range [-2, 2)); ONNX indices must lie in [-s, s-1]");
}

TEST(OnnxGatherND, EmptyIndicesAndNegativeCoordinates) {
  expect_op("onnx.GatherND", f32({2, 2}, iota(4)), i64({0, 2}, {}), {}, {0}, {});
  expect_op("onnx.GatherND", f32({2, 2}, iota(4)), i64({1, 2}, {-1, -2}), {}, {1}, {2});
}

TEST(OnnxGatherND, NonContiguousIndicesAreCopiedOnlyWhenCoordinatesCannotMerge) {
  // indices [2,2] viewed transposed: the coordinate dim (stride 2) cannot fold into a view.
  const Tensor base = i64({2, 2}, {0, 1, 1, 0});  // transposed view: [[0,1],[1,0]]
  const TensorView indices(base.data(), DType::kInt64, Dims{2, 2}, Dims{1, 2});
  const Tensor d = f32({2, 2}, {0, 1, 2, 3});
  Lowering l;
  ASSERT_TRUE(onnx::GatherND(d.view(), indices, 0, &l).ok());
  EXPECT_EQ(l.owned_indices, nullptr);  // J is empty here: the coordinate dim folds into a unit dim
  EXPECT_EQ(values_f32(execute(l)), as_f32({1, 2}));
  // indices [3,3,2] whose coordinate dim has stride 9 while the last index dim has stride 1:
  // with T empty the coordinates must merge with that dim, so they are copied once (noted).
  const Tensor coords = i64({2, 3, 3}, {0, 0, 1, 1, 1, 0, 0, 1, 0,    // rows
                                        0, 1, 0, 1, 0, 1, 1, 1, 0});  // columns
  const TensorView idx(coords.data(), DType::kInt64, Dims{3, 3, 2}, Dims{3, 1, 9});
  Lowering l2;
  ASSERT_TRUE(onnx::GatherND(d.view(), idx, 0, &l2).ok());
  ASSERT_NE(l2.owned_indices, nullptr);
  ASSERT_EQ(l2.notes.size(), 1u);
  EXPECT_EQ(values_f32(execute(l2)), as_f32({0, 1, 2, 3, 2, 1, 1, 3, 0}));
}

}  // namespace
}  // namespace multigather
