// DirectML GATHER / GATHER_ELEMENTS / GATHER_ND1: the docs' example, the right-aligned
// DimensionCount rules (leading 1s padded and cropped), batch dims, clamping.
#include "multigather/frontends/dml.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(DmlGatherElements, DocExample) {
  // DML_GATHER_ELEMENTS_OPERATOR_DESC example: Axis 0, UINT32 indices.
  expect_op("dml.GatherElements", f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            make_tensor(DType::kUInt32, {2, 3}, {1, 2, 0, 2, 0, 0}), {{"axis", "0"}}, {2, 3}, {4, 8, 3, 7, 2, 3});
  expect_error("dml.GatherElements", f32({3, 3}, iota(9)), i32({2, 2}, {0, 0, 0, 0}), {}, StatusCode::kInvalidArgument,
               "dml.GatherElements: IndicesTensor.shape[1] = 2 and InputTensor.shape[1] = 3 must be equal (only axis 0 may differ)");
}

TEST(DmlGather, RightAlignedSizes) {
  // Input {1,1,3,3}, IndicesTensor {1,1,1,2} with IndexDimensions 1, Axis 2: rows 2 and 0.
  const Tensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_op("dml.Gather", x, i32({1, 1, 1, 2}, {2, 0}), {{"axis", "2"}, {"index_dimensions", "1"}}, {1, 1, 2, 3},
            {7, 8, 9, 1, 2, 3});
  // IndexDimensions 2: {1,1} ++ {2,2} ++ {3} is cropped to DimensionCount 4 -> {1,2,2,3}.
  expect_op("dml.Gather", x, i64({1, 1, 2, 2}, {0, 1, 2, -1}), {{"axis", "2"}, {"index_dimensions", "2"}}, {1, 2, 2, 3},
            {1, 2, 3, 4, 5, 6, 7, 8, 9, 7, 8, 9});
  // IndexDimensions 0 (a scalar index): the output is padded back to DimensionCount 4.
  expect_op("dml.Gather", x, i32({1, 1, 1, 1}, {1}), {{"axis", "3"}, {"index_dimensions", "0"}}, {1, 1, 1, 3}, {2, 5, 8});
  // Out-of-range indices clamp (DirectML: no failure, reads stay inside the input).
  expect_op("dml.Gather", x, i32({1, 1, 1, 1}, {7}), {{"axis", "3"}}, {1, 1, 3, 1}, {3, 6, 9});
}

TEST(DmlGather, Errors) {
  const Tensor x = f32({1, 1, 3, 3}, iota(9));
  expect_error("dml.Gather", x, i32({1, 2, 1, 2}, {0, 0, 0, 0}), {{"axis", "2"}}, StatusCode::kInvalidArgument,
               "dml.Gather: IndexDimensions: Sizes[1] = 2 lies in the leading padding (original rank 1) and must be 1");
  expect_error("dml.Gather", f32({2, 3, 3}, iota(18)), i32({1, 2, 2}, {0, 0, 0, 0}), {{"axis", "1"}, {"index_dimensions", "2"}},
               StatusCode::kInvalidArgument,
               "dml.Gather: the output sizes [2,2,2,3] do not fit DimensionCount 3 (only leading 1s are cropped)");
  expect_error("dml.Gather", x, i32({2, 2}, {0, 0, 0, 0}), {}, StatusCode::kInvalidArgument,
               "dml.Gather: IndicesTensor.DimensionCount = 2 must match InputTensor.DimensionCount = 4 (>= 1)");
  expect_error("dml.Gather", x, make_tensor(DType::kInt16, {1, 1, 1, 1}, {0}), {}, StatusCode::kTypeError,
               "dml.Gather: IndicesTensor dtype int16 is not supported (dml.Gather accepts int32, int64, uint32, uint64)");
}

TEST(DmlGatherND, DocExampleShapesAndBatchDims) {
  // GATHER_ND docs: Input {3,4,5,6,7} (InputDimensionCount 5), Indices {1,1,1,2,3}
  // (IndicesDimensionCount 3): a 1x2 array of 3-tuples -> {1,1,2,6,7} (the trailing {6,7} kept).
  const Lowering l = lower_shapes("dml.GatherND", {3, 4, 5, 6, 7}, {1, 1, 1, 2, 3},
                                  {{"input_dimension_count", "5"}, {"indices_dimension_count", "3"}});
  EXPECT_EQ(to_string(l.output_shape), "[1,1,2,6,7]");
  // ONNX GatherND example 5 in DirectML's padded form (DimensionCount 3, BatchDimensionCount 1).
  expect_op("dml.GatherND", f32({2, 2, 2}, iota(8)), i64({1, 2, 1}, {1, 0}),
            {{"input_dimension_count", "3"}, {"indices_dimension_count", "2"}, {"batch_dimension_count", "1"}}, {1, 2, 2},
            {2, 3, 4, 5});
  expect_error("dml.GatherND", f32({2, 2, 2}, iota(8)), i64({1, 3, 1}, {1, 0, 0}),
               {{"indices_dimension_count", "2"}, {"batch_dimension_count", "1"}}, StatusCode::kInvalidArgument,
               "dml.GatherND: batch_dims = 1: InputTensor.shape[0] = 2 and IndicesTensor.shape[0] = 3 must be equal "
               "(batch dimensions are not broadcast)");
}

}  // namespace
}  // namespace multigather
