// Golden table of make_plan: (input shape and strides, indices shape and strides, axes) -> the
// normalized plan, worked out by hand from the formula in src/plan/plan.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace mg = multigather;
using mg::detail::GatherPlan;
using mg::detail::PlanKind;
using I64s = std::vector<std::int64_t>;

namespace {

struct PlanCase {
  std::string name;
  mg::Dims input_shape, input_strides;   // empty strides: C-contiguous
  mg::Dims indices_shape, indices_strides;
  I64s axes;
  // Expected plan.
  I64s shape, input_strides_out, indices_strides_out, output_strides_out;
  PlanKind kind;
  std::int64_t block;
  int lookup_rank;
  std::int64_t lookups;
  I64s axis_strides, axis_sizes;
  std::int64_t coord_stride;
  bool offsets_fit_int32;
};

GatherPlan plan_of(const PlanCase& c) {
  // make_plan never dereferences: any non-null pointer will do.
  static const std::int64_t dummy = 0;
  mg::TensorView input(&dummy, mg::DType::kFloat32, c.input_shape,
                       c.input_strides.empty() ? mg::contiguous_strides(c.input_shape) : c.input_strides);
  mg::TensorView indices(&dummy, mg::DType::kInt64, c.indices_shape,
                         c.indices_strides.empty() ? mg::contiguous_strides(c.indices_shape)
                                                   : c.indices_strides);
  mg::GatherShape shape;
  EXPECT_TRUE(mg::infer_shape(c.input_shape, c.indices_shape, c.axes, &shape).ok());
  mg::MutableTensorView output(const_cast<std::int64_t*>(&dummy), mg::DType::kFloat32, shape.output_shape);
  mg::detail::ValidatedCall call;
  const mg::GatherOptions options;
  const mg::Status s = mg::detail::validate_call(input, indices, c.axes, output, options, &call);
  EXPECT_TRUE(s.ok()) << s.message();
  GatherPlan plan;
  mg::detail::make_plan(input, indices, output, call, options, &plan);
  return plan;
}

I64s first(const std::array<std::int64_t, mg::kMaxRank>& a, int n) {
  return I64s(a.begin(), a.begin() + n);
}

const std::int64_t k2G = std::int64_t{1} << 31;

const PlanCase kPlanCases[] = {
    {"onnx_gather_axis0_row_block", {50000, 512}, {}, {8192, 1}, {}, {0},
     /*shape=*/{8192, 512}, /*input_strides=*/{0, 1}, /*indices_strides=*/{1, 0},
     /*output_strides=*/{512, 1}, PlanKind::kBlock, /*block=*/512, /*lookup_rank=*/1,
     /*lookups=*/8192, /*axis_strides=*/{512}, /*axis_sizes=*/{50000}, /*coord_stride=*/1,
     /*offsets_fit_int32=*/true},
    {"mid_axis_block", {32, 1024, 256}, {}, {1, 512, 1}, {}, {1},
     {32, 512, 256}, {262144, 0, 1}, {0, 1, 0}, {131072, 256, 1}, PlanKind::kBlock, 256, 2,
     32 * 512, {256}, {1024}, 1, true},
    {"gather_elements_last_axis", {4096, 1024}, {}, {4096, 256}, {}, {-1},
     {4096, 256}, {1024, 0}, {256, 1}, {256, 1}, PlanKind::kElement, 1, 2, 4096 * 256, {1},
     {1024}, 1, true},
    {"gather_elements_axis0_inner_contiguous", {1024, 4096}, {}, {256, 4096}, {}, {0},
     {256, 4096}, {0, 1}, {4096, 1}, {4096, 1}, PlanKind::kElement, 1, 2, 256 * 4096, {4096},
     {1024}, 1, true},
    // GatherND batch_dims=1: the size-1 logical dimension is dropped, the trailing 32 floats
    // are the block, coordinates (h, w) are read at stride 1.
    {"gathernd_batch1_point_sampling", {4, 512, 512, 32}, {}, {4, 65536, 1, 2}, {}, {1, 2},
     {4, 65536, 32}, {8388608, 0, 1}, {131072, 2, 0}, {2097152, 32, 1}, PlanKind::kBlock, 32, 2,
     4 * 65536, {16384, 32}, {512, 512}, 1, true},
    // Non-contiguous axes in (x, y) order: coordinate 0 addresses W (stride 16), 1 addresses H.
    {"nhwc_xy_axes_reordered", {8, 256, 256, 16}, {}, {8, 4096, 1, 2}, {}, {2, 1},
     {8, 4096, 16}, {1048576, 0, 1}, {8192, 2, 0}, {65536, 16, 1}, PlanKind::kBlock, 16, 2,
     8 * 4096, {16, 4096}, {256, 256}, 1, true},
    {"flat_take", {16}, {}, {4}, {}, {0},
     {4}, {0}, {1}, {1}, PlanKind::kElement, 1, 1, 4, {1}, {16}, 1, true},
    // k = 0: the output is the input broadcast; index broadcast along dim 1 makes it a block.
    {"no_axes_broadcast_copy", {1, 5}, {}, {3, 1}, {}, {},
     {3, 5}, {0, 1}, {1, 0}, {5, 1}, PlanKind::kBlock, 5, 1, 3, {}, {}, 1, true},
    // Dimensions contiguous in all three operands coalesce: [6,4,8] -> [24,8].
    {"coalesce_contiguous_dims", {6, 4, 8}, {}, {6, 4, 1}, {}, {},
     {24, 8}, {8, 1}, {1, 0}, {8, 1}, PlanKind::kBlock, 8, 1, 24, {}, {}, 1, true},
    // Size-1 dimensions are dropped before coalescing: [2,1,3] with index constant on dim 2.
    {"drop_size1_dims", {2, 1, 3}, {}, {2, 1, 1}, {}, {0},
     {2, 3}, {0, 1}, {1, 0}, {3, 1}, PlanKind::kBlock, 3, 1, 2, {3}, {2}, 1, true},
    // A transposed input (strides {1, 4}): the inner dimension is not contiguous, no block.
    {"transposed_input_no_block", {4, 3}, {1, 4}, {2, 3}, {}, {0},
     {2, 3}, {0, 4}, {3, 1}, {3, 1}, PlanKind::kElement, 1, 2, 6, {1}, {4}, 1, true},
    // Index constant along an inner dimension of stride 2: element kind, index reloaded.
    {"strided_inner_no_block", {5, 6}, {12, 2}, {3, 1}, {}, {0},
     {3, 6}, {0, 2}, {1, 0}, {6, 1}, PlanKind::kElement, 1, 2, 18, {12}, {5}, 1, true},
    // A reversed input (stride -1) and reversed indices (stride -1).
    {"negative_strides", {4}, {-1}, {3}, {-1}, {0},
     {3}, {0}, {-1}, {1}, PlanKind::kElement, 1, 1, 3, {-1}, {4}, -1, true},
    // Indices broadcast along an input dimension: the index is constant over dim 0 (stride 0).
    {"indices_broadcast_over_batch", {3, 7}, {}, {1, 2}, {}, {1},
     {3, 2}, {7, 0}, {0, 1}, {2, 1}, PlanKind::kElement, 1, 2, 6, {1}, {7}, 1, true},
    {"scalar", {}, {}, {}, {}, {},
     {}, {}, {}, {}, PlanKind::kElement, 1, 0, 1, {}, {}, 0, true},
    {"empty_output", {5, 4}, {}, {0, 1}, {}, {0},
     {0, 4}, {0, 1}, {1, 0}, {4, 1}, PlanKind::kBlock, 4, 1, 0, {4}, {5}, 1, true},
    // An input reaching 2^31 elements: offsets need 64 bits.
    {"offsets_need_64_bits", {2, k2G}, {}, {1, 1}, {}, {1},
     {2}, {k2G}, {0}, {1}, PlanKind::kElement, 1, 1, 2, {1}, {k2G}, 1, false},
};

class PlanGolden : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanGolden, NormalizesAsWorkedOutByHand) {
  const PlanCase& c = GetParam();
  const GatherPlan p = plan_of(c);
  const int rank = static_cast<int>(c.shape.size());
  ASSERT_EQ(p.rank, rank);
  EXPECT_EQ(first(p.shape, rank), c.shape);
  EXPECT_EQ(first(p.input_strides, rank), c.input_strides_out);
  EXPECT_EQ(first(p.indices_strides, rank), c.indices_strides_out);
  EXPECT_EQ(first(p.output_strides, rank), c.output_strides_out);
  EXPECT_EQ(p.kind, c.kind);
  EXPECT_EQ(p.block, c.block);
  EXPECT_EQ(p.lookup_rank, c.lookup_rank);
  EXPECT_EQ(p.lookups, c.lookups);
  const int k = static_cast<int>(c.axes.size());
  ASSERT_EQ(p.k, k);
  EXPECT_EQ(first(p.axis_strides, k), c.axis_strides);
  EXPECT_EQ(first(p.axis_sizes, k), c.axis_sizes);
  if (k > 0) EXPECT_EQ(p.coord_stride, c.coord_stride);
  EXPECT_EQ(p.offsets_fit_int32, c.offsets_fit_int32);
}

INSTANTIATE_TEST_SUITE_P(Table, PlanGolden, ::testing::ValuesIn(kPlanCases),
                         [](const auto& info) { return info.param.name; });

TEST(Plan, WorkBytesCountOutputInputAndIndices) {
  // [8192,512] float32 from 8192 int64 indices: 16 MiB written + 16 MiB read + 64 KiB indices.
  const GatherPlan p = plan_of(kPlanCases[0]);
  EXPECT_EQ(p.work_bytes, 2 * 8192 * 512 * 4 + 8192 * 8);
}

}  // namespace
