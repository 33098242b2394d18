// stablehlo.gather: vectors written by others (openxla/stablehlo interpreter tests
// stablehlo/tests/interpret/gather.mlir, and IREE's e2e stablehlo gather tests), the spec's
// constraints, windows (clamp the START, then add iota), batching dims, index_vector_dim at 0
// and equal to the indices rank, unsigned indices, and the lowering shapes.
#include "multigather/frontends/stablehlo.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

std::vector<std::int64_t> ints(const Tensor& t) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    v.push_back(t.dtype() == DType::kInt64 ? t.data_as<std::int64_t>()[i] : t.data_as<std::int32_t>()[i]);
  }
  return v;
}

void expect_gather(const Tensor& operand, const Tensor& start, const Attributes& attrs, Dims shape,
                   const std::vector<std::int64_t>& values) {
  Tensor out;
  const Status s = run_op("stablehlo.gather", operand.view(), start.view(), attrs, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(to_string(out.shape()), to_string(shape));
  EXPECT_EQ(ints(out), values);
}

Tensor operand_3x4x2() { return i64({3, 4, 2}, iota(24, 1)); }

TEST(StablehloGather, InterpreterGatherOpTest) {
  // stablehlo interpret/gather.mlir @gather_op_test: a windowed gather (slice 2 on indexed dim 1),
  // start index [0, 9] clamps to 4 - 2 = 2 on dim 1.
  const Tensor start = i64({2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9});
  expect_gather(operand_3x4x2(), start,
                {{"offset_dims", "2,3"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "1,0"},
                 {"index_vector_dim", "2"}, {"slice_sizes", "1,2,2"}},
                {2, 3, 2, 2},
                {1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16, 9, 10, 11, 12, 11, 12, 13, 14, 17, 18, 19, 20});
}

TEST(StablehloGather, AnEmptyIndexVectorReadsNoIndices) {
  // start_indices of shape [3, 0] (index_vector_dim 1 of size 0, start_index_map empty): every
  // start is 0, and the 0-byte index tensor is never read. Its lowered view has a broadcast
  // shape, so it must not count as memory the output overlaps: here its data pointer is the
  // output's own first byte (a 0-element tensor may point anywhere), as the heap may place it.
  const Tensor operand = i64({4}, {5, 6, 7, 8});
  const Attributes attrs{{"offset_dims", "1"}, {"collapsed_slice_dims", ""}, {"start_index_map", ""},
                         {"index_vector_dim", "1"}, {"slice_sizes", "2"}};
  std::int64_t out[6] = {};
  Lowering l;
  ASSERT_TRUE(lower_op("stablehlo.gather", operand.view(), TensorView(out, DType::kInt64, {3, 0}), attrs, &l).ok());
  const Status s = execute(l, MutableTensorView(out, DType::kInt64, {3, 2}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(std::vector<std::int64_t>(out, out + 6), (std::vector<std::int64_t>{5, 6, 5, 6, 5, 6}));
}

TEST(StablehloGather, InterpreterBatchingDimsTest) {
  // stablehlo interpret/gather.mlir @gather_op_with_batching_dim_test.
  const Tensor operand = i64({2, 3, 4, 2}, iota(48, 1));
  const Tensor start = i64({2, 2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0});
  expect_gather(operand, start,
                {{"offset_dims", "3,4"}, {"collapsed_slice_dims", "1"}, {"operand_batching_dims", "0"},
                 {"start_indices_batching_dims", "1"}, {"start_index_map", "2,1"}, {"index_vector_dim", "3"},
                 {"slice_sizes", "1,1,2,2"}},
                {2, 2, 3, 2, 2},
                {1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16, 33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
                 1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24, 43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30});
}

TEST(StablehloGather, IreePointGathers) {
  // IREE e2e stablehlo gather tests (@gather_dynamic_index_count): clamping both ways.
  const Tensor a = i32({3, 4}, {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33});
  const Attributes rows{{"offset_dims", "1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                        {"index_vector_dim", "1"}, {"slice_sizes", "1,4"}};
  expect_gather(a, i64({4, 1}, {2, -1, 3, 1}), rows, {4, 4},
                {30, 31, 32, 33, 10, 11, 12, 13, 30, 31, 32, 33, 20, 21, 22, 23});
  // @gather_empty_index_count
  expect_gather(i32({1, 4}, {10, 11, 12, 13}), i32({0, 1}, {}), rows, {0, 4}, {});
  // @foo: 0-D start index, index_vector_dim == rank(start_indices) == 0.
  const Tensor in = i32({5, 1, 5}, iota(25, 1));
  expect_gather(in, i64({}, {2}),
                {{"offset_dims", "0,1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                 {"index_vector_dim", "0"}, {"slice_sizes", "1,1,5"}},
                {1, 5}, {11, 12, 13, 14, 15});
  // @general_but_just_index_select / @small_slices: partial non-indexed slices.
  const Tensor op = i32({1, 4, 8}, iota(32));
  const Tensor idx = i32({1, 4, 2}, {0, 1, 0, 2, 0, 3, 0, 0});
  expect_gather(op, idx,
                {{"offset_dims", "2"}, {"collapsed_slice_dims", "0,1"}, {"start_index_map", "0,1"},
                 {"index_vector_dim", "2"}, {"slice_sizes", "1,1,3"}},
                {1, 4, 3}, {8, 9, 10, 16, 17, 18, 24, 25, 26, 0, 1, 2});
}

TEST(StablehloGather, IreeWindowsAndReorderedMaps) {
  // @nonstandard_offset_dims: windows 2x3 with offset_dims [1, 2] before the batch dim.
  const Tensor op = i32({1, 4, 8}, iota(32));
  expect_gather(op, i32({1, 4, 2}, {0, 1, 0, 2, 0, 2, 0, 0}),
                {{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0,1"},
                 {"index_vector_dim", "2"}, {"slice_sizes", "1,2,3"}},
                {1, 2, 3, 4}, {8, 16, 16, 0, 9, 17, 17, 1, 10, 18, 18, 2, 16, 24, 24, 8, 17, 25, 25, 9, 18, 26, 26, 10});
  // @reordered_start_index: start_index_map [3, 2, 0, 1] (any order).
  expect_gather(i32({1, 3, 2, 4}, iota(24)), i32({2, 4}, {0, 1, 0, 0, 1, 0, 0, 0}),
                {{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0,2"}, {"start_index_map", "3,2,0,1"},
                 {"index_vector_dim", "1"}, {"slice_sizes", "1,2,1,3"}},
                {2, 2, 3}, {4, 5, 6, 12, 13, 14, 1, 2, 3, 9, 10, 11});
  // @dynamic_gather_leading_index_vector: index_vector_dim 0, batching dims.
  expect_gather(i32({3, 8}, {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23, 24, 25, 26, 27}),
                i64({1, 3, 2}, {0, 7, 1, 6, 2, 5}),
                {{"offset_dims", ""}, {"collapsed_slice_dims", "1"}, {"operand_batching_dims", "0"},
                 {"start_indices_batching_dims", "1"}, {"start_index_map", "1"}, {"index_vector_dim", "0"},
                 {"slice_sizes", "1,1"}},
                {3, 2}, {0, 7, 11, 16, 22, 25});
}

TEST(StablehloGather, ClampTheStartNotTheElementAndNoNegativeWrap) {
  // Window of 3 on a dim of 5: start -100 -> 0 (elements 0,1,2), start 4 -> 2 (2,3,4).
  const Tensor op = i64({5}, {10, 11, 12, 13, 14});
  const Attributes win{{"offset_dims", "1"}, {"start_index_map", "0"}, {"index_vector_dim", "1"}, {"slice_sizes", "3"}};
  expect_gather(op, i64({3, 1}, {-100, 4, 1}), win, {3, 3}, {10, 11, 12, 12, 13, 14, 11, 12, 13});
  // Point gather: -1 clamps to 0 (no wrap); a huge unsigned value clamps to D - 1.
  const Attributes pt{{"offset_dims", ""}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                      {"index_vector_dim", "1"}, {"slice_sizes", "1"}};
  expect_gather(op, i64({2, 1}, {-1, 7}), pt, {2}, {10, 14});
  Tensor big(DType::kUInt64, Dims{1, 1});
  big.data_as<std::uint64_t>()[0] = UINT64_MAX;
  expect_gather(op, big, pt, {1}, {14});
}

TEST(StablehloGather, PointGatherIsOneCoreCallOnViews) {
  const Lowering l = lower_shapes("stablehlo.gather", {3, 4}, {5, 1},
                                  {{"offset_dims", "1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                                   {"index_vector_dim", "1"}, {"slice_sizes", "1,4"}});
  EXPECT_EQ(l.owned_indices, nullptr);
  EXPECT_EQ(to_string(l.input.shape), "[1,3,4]");
  EXPECT_EQ(to_string(l.indices.shape), "[5,1,1]");
  EXPECT_EQ(l.axes, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(l.options.index_mode, IndexMode::kClamp);
  EXPECT_FALSE(l.options.negative_indices);
  EXPECT_EQ(to_string(l.output_shape), "[5,4]");
  // offset_dims before the batch dim: the core writes through permuted strides.
  const Lowering t = lower_shapes("stablehlo.gather", {3, 4}, {5, 1},
                                  {{"offset_dims", "0"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                                   {"index_vector_dim", "1"}, {"slice_sizes", "1,4"}});
  EXPECT_EQ(to_string(t.output_shape), "[4,5]");
  EXPECT_EQ(to_string(t.core_output_strides), "[1,0,5]");
}

TEST(StablehloGather, Errors) {
  const Tensor op = operand_3x4x2();
  const Tensor start = i64({2, 1}, {0, 1});
  auto expect_invalid = [&](const Attributes& a, const std::string& message) {
    expect_error("stablehlo.gather", op, start, a, StatusCode::kInvalidArgument, message);
  };
  expect_invalid({{"offset_dims", "1,2"}, {"start_index_map", "0"}, {"index_vector_dim", "1"}, {"slice_sizes", "1,4,2"}},
                 "stablehlo.gather: size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims) = 2 "
                 "must equal rank(operand) = 3 (C1)");
  expect_invalid({{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                  {"index_vector_dim", "1"}, {"slice_sizes", "2,4,2"}},
                 "stablehlo.gather: slice_sizes[0] = 2 must be <= 1 on a collapsed (C9) dimension");
  expect_invalid({{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0,1"},
                  {"index_vector_dim", "1"}, {"slice_sizes", "1,4,2"}},
                 "stablehlo.gather: size(start_index_map) = 2 must equal the index vector size 1 (C3)");
  expect_invalid({{"offset_dims", "2,1"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                  {"index_vector_dim", "1"}, {"slice_sizes", "1,4,2"}},
                 "stablehlo.gather: offset_dims [2,1] must be sorted (C4)");
  expect_invalid({{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                  {"index_vector_dim", "3"}, {"slice_sizes", "1,4,2"}},
                 "stablehlo.gather: index_vector_dim = 3 must be in [0, 2] (C2)");
  expect_invalid({{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                  {"index_vector_dim", "1"}, {"slice_sizes", "1,5,2"}},
                 "stablehlo.gather: slice_sizes[1] = 5 must be in [0, 4] (C21)");
  expect_invalid({{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                  {"index_vector_dim", "1"}, {"slice_sizes", "0,4,2"}},
                 "stablehlo.gather: slice_sizes[0] = 0 on a collapsed dimension cannot be lowered: the result keeps "
                 "an element for a window that is empty");
  expect_error("stablehlo.gather", op, f32({2, 1}, {0, 1}),
               {{"offset_dims", "1,2"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "0"},
                {"index_vector_dim", "1"}, {"slice_sizes", "1,4,2"}},
               StatusCode::kTypeError, "stablehlo.gather: start_indices dtype float32 is not an integer type");
}

}  // namespace
}  // namespace multigather
