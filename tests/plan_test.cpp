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
    // k = 0 with indices that move along every dimension: no index is read, so the whole
    // (coalesced) input is one block all the same.
    {"no_axes_moving_indices_block", {3, 5}, {}, {3, 5}, {}, {},
     {15}, {1}, {1}, {1}, PlanKind::kBlock, 15, 0, 1, {}, {}, 1, true},
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
    // An empty last dimension as the block: no lookups (and no division by the block of 0).
    {"empty_block", {0}, {}, {0}, {}, {},
     {0}, {1}, {1}, {1}, PlanKind::kBlock, 0, 0, 0, {}, {}, 1, true},
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

// A plan of `input` (any address, dtype and strides) gathered along `axes` into an output at
// `output_address` with `output_strides` (empty: C-contiguous). Nothing is dereferenced.
GatherPlan plan_at(std::uintptr_t input_address, mg::DType dtype, const mg::Dims& input_shape,
                   const mg::Dims& input_strides, const mg::Dims& indices_shape, const I64s& axes,
                   std::uintptr_t output_address, const mg::Dims& output_strides = {},
                   mg::IndexMode mode = mg::IndexMode::kError) {
  const mg::TensorView input(reinterpret_cast<const void*>(input_address), dtype, input_shape,
                             input_strides.empty() ? mg::contiguous_strides(input_shape) : input_strides);
  const mg::TensorView indices(reinterpret_cast<const void*>(std::uintptr_t{0x30000000}), mg::DType::kInt64,
                               indices_shape);
  mg::GatherShape shape;
  EXPECT_TRUE(mg::infer_shape(input_shape, indices_shape, axes, &shape).ok());
  const mg::MutableTensorView output(
      reinterpret_cast<void*>(output_address), dtype, shape.output_shape,
      output_strides.empty() ? mg::contiguous_strides(shape.output_shape) : output_strides);
  mg::GatherOptions options;
  options.index_mode = mode;
  mg::detail::ValidatedCall call;
  const mg::Status s = mg::detail::validate_call(input, indices, axes, output, options, &call);
  EXPECT_TRUE(s.ok()) << s.message();
  GatherPlan plan;
  mg::detail::make_plan(input, indices, output, call, options, &plan);
  return plan;
}

constexpr std::uintptr_t kIn = 0x10000000, kOut = 0x20000000;  // 16-byte aligned

TEST(PlanUnit, WidestUnitOfAlignedBlocks) {
  // Embedding rows of 512 float32 (2048 bytes) at aligned addresses: 16-byte units.
  GatherPlan p = plan_at(kIn, mg::DType::kFloat32, {100, 512}, {}, {10, 1}, {0}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.block, 512);
  EXPECT_EQ(p.unit_bytes, 16);
  // Rows of 2 float32 (8 bytes, axis stride 8 bytes): 8-byte units.
  p = plan_at(kIn, mg::DType::kFloat32, {1000, 2}, {}, {300, 1}, {0}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.unit_bytes, 8);
  // Rows of 3 float16 (6 bytes): 2-byte units.
  p = plan_at(kIn, mg::DType::kFloat16, {100, 3}, {}, {4, 1}, {0}, kOut);
  EXPECT_EQ(p.block, 3);
  EXPECT_EQ(p.unit_bytes, 2);
  // A mid-axis block of 8 float32 (32 bytes); outer strides 320 and 96 bytes: 16.
  p = plan_at(kIn, mg::DType::kFloat32, {4, 10, 8}, {}, {1, 3, 1}, {1}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.lookup_rank, 2);
  EXPECT_EQ(p.unit_bytes, 16);
}

TEST(PlanUnit, MisalignedPointersNarrowTheUnit) {
  // The table 4 bytes past a 16-byte boundary: 4-byte units.
  EXPECT_EQ(plan_at(kIn + 4, mg::DType::kFloat32, {100, 512}, {}, {10, 1}, {0}, kOut).unit_bytes, 4);
  // The output 8 bytes past one: 8-byte units.
  EXPECT_EQ(plan_at(kIn, mg::DType::kFloat32, {100, 512}, {}, {10, 1}, {0}, kOut + 8).unit_bytes, 8);
  // int8 at an odd address: 1-byte units.
  EXPECT_EQ(plan_at(kIn + 1, mg::DType::kInt8, {100, 64}, {}, {10, 1}, {0}, kOut).unit_bytes, 1);
}

TEST(PlanUnit, StridesNarrowTheUnit) {
  // Rows of 4 float32 padded to 6 (axis stride 24 bytes): 8-byte units.
  GatherPlan p = plan_at(kIn, mg::DType::kFloat32, {100, 4}, {6, 1}, {10, 1}, {0}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.block, 4);
  EXPECT_EQ(p.unit_bytes, 8);
  // The mid-axis block with output rows of 8 floats 25 floats apart (100 bytes): 4-byte units.
  p = plan_at(kIn, mg::DType::kFloat32, {4, 10, 8}, {}, {1, 3, 1}, {1}, kOut, {75, 25, 1});
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.unit_bytes, 4);
  // A transposed input: element kind, a unit of one float32 at most.
  p = plan_at(kIn, mg::DType::kFloat32, {4, 3}, {1, 4}, {2, 3}, {0}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kElement);
  EXPECT_EQ(p.unit_bytes, 4);
}

TEST(PlanUnit, ElementPlansMoveOneElementPerUnit) {
  // take_along_axis: one element per lookup, units as wide as the element (up to 16 bytes).
  GatherPlan p = plan_at(kIn, mg::DType::kFloat32, {64, 32}, {}, {64, 8}, {1}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kElement);
  EXPECT_EQ(p.block, 1);
  EXPECT_EQ(p.lookups, 64 * 8);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_EQ(plan_at(kIn, mg::DType::kComplex128, {64, 32}, {}, {64, 8}, {1}, kOut).unit_bytes, 16);
  EXPECT_EQ(plan_at(kIn, mg::DType::kFloat64, {64, 32}, {}, {64, 8}, {1}, kOut).unit_bytes, 8);
  EXPECT_EQ(plan_at(kIn, mg::DType::kFloat16, {64, 32}, {}, {64, 8}, {1}, kOut).unit_bytes, 2);
}

TEST(PlanUnit, NoAxesIsABlockWhateverTheIndicesStrides) {
  // k = 0: no index is read, so the indices moving along the last dimension do not stop the
  // block (the CUDA planner always counted it so; the CPU engine copies it as one block).
  GatherPlan p = plan_at(kIn, mg::DType::kFloat32, {6, 8}, {}, {6, 8}, {}, kOut);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.block, 48);
  EXPECT_EQ(p.lookup_rank, 0);
  EXPECT_EQ(p.lookups, 1);
  EXPECT_EQ(p.unit_bytes, 16);
}

TEST(PlanUnit, EmptyAxis) {
  // Axis 0 of size 0 in fill mode: a block of 8 floats per lookup, an axis that reaches nothing.
  const GatherPlan p = plan_at(kIn, mg::DType::kFloat32, {0, 8}, {}, {3, 1}, {0}, kOut, {},
                               mg::IndexMode::kFill);
  EXPECT_EQ(p.kind, PlanKind::kBlock);
  EXPECT_EQ(p.block, 8);
  EXPECT_EQ(p.lookups, 3);
  EXPECT_EQ(p.axis_sizes[0], 0);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(mg::detail::axes_reach(p.axis_strides.data(), p.axis_sizes.data(), p.k), 0);
}

TEST(PlanUnit, AxesReach) {
  const std::int64_t strides[] = {4, -3, 7, 2};
  const std::int64_t sizes[] = {5, 2, 0, 1};
  EXPECT_EQ(mg::detail::axes_reach(strides, sizes, 4), 4 * 4 + 3 * 1);
  EXPECT_EQ(mg::detail::axes_reach(strides, sizes, 0), 0);
}

}  // namespace
