// Golden tables for gather_multiaxis (SPEC section 1), values worked out by hand: rank 0, k = 0,
// zero-size dimensions, negative and reordered axes, broadcasting both ways, every index mode,
// unsigned indices, the maximum rank, every element width, strided views.
#include <complex>
#include <limits>
#include <numeric>

#include "core_support.hpp"

namespace {

using multigather::DType;
using multigather::Dims;
using multigather::GatherOptions;
using multigather::IndexMode;
using multigather::Scalar;
using mg_test::gather_status;
using mg_test::gather_values;
using mg_test::Host;
using V = std::vector<std::int32_t>;

GatherOptions mode(IndexMode m, bool negative = true, std::int64_t fill = 0) {
  GatherOptions o;
  o.index_mode = m;
  o.negative_indices = negative;
  o.fill_value = Scalar::from_int(fill);
  return o;
}

TEST(Golden, RankZero) {
  Dims shape{9};
  EXPECT_EQ(gather_values(Host<std::int32_t>{{}, {42}}, Host<std::int64_t>{{}, {0}}, {}, {}, &shape),
            (V{42}));
  EXPECT_EQ(shape, Dims{});
}

TEST(Golden, NoAxesBroadcastsInputAndNeverReadsIndices) {
  // k = 0: the output is input broadcast to broadcast(input.shape, indices.shape).
  Dims shape;
  EXPECT_EQ(gather_values(Host<std::int32_t>{{1, 3}, {1, 2, 3}},
                          Host<std::int64_t>{{2, 1}, {99, -12345}}, {}, {}, &shape),
            (V{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(shape, (Dims{2, 3}));
  EXPECT_EQ(gather_values(Host<std::int32_t>{{2, 1}, {7, 8}}, Host<std::int32_t>{{1, 3}, {5, 5, 5}}, {}),
            (V{7, 7, 7, 8, 8, 8}));
  // Indices of the input's own shape (they move along every dimension): one block copy of the
  // whole input (make_plan's kBlock with k = 0), the indices still never read.
  EXPECT_EQ(gather_values(Host<std::int32_t>{{2, 3}, {1, 2, 3, 4, 5, 6}},
                          Host<std::int64_t>{{2, 3}, {99, -1, 7, 1 << 20, -5, 3}}, {}),
            (V{1, 2, 3, 4, 5, 6}));
}

TEST(Golden, EmptyInputWithEmptyOutputIsLegal) {
  // input [0,5], indices [1,3] on axis 1: output [0,3]; the out-of-range 7 is never read.
  Dims shape;
  EXPECT_TRUE(gather_values(Host<std::int32_t>{{0, 5}, {}}, Host<std::int64_t>{{1, 3}, {7, 8, 9}}, {1},
                            {}, &shape)
                  .empty());
  EXPECT_EQ(shape, (Dims{0, 3}));
}

TEST(Golden, EmptyIndicesGiveEmptyOutput) {
  Dims shape;
  EXPECT_TRUE(gather_values(Host<std::int32_t>{{3, 4}, V(12)}, Host<std::int64_t>{{0, 4}, {}}, {0}, {},
                            &shape)
                  .empty());
  EXPECT_EQ(shape, (Dims{0, 4}));
  // 0 broadcast with 1 gives 0.
  EXPECT_EQ(multigather::output_shape({1, 4}, {0, 1}, std::vector<std::int64_t>{1}).output_shape,
            (Dims{0, 1}));
}

TEST(Golden, NonEmptyOutputOverEmptyIndexedAxis) {
  const Host<std::int32_t> input{{2, 0}, {}};
  const Host<std::int64_t> indices{{2, 1}, {0, 0}};
  const auto s = gather_status(input, indices, {1});
  EXPECT_EQ(s.code(), multigather::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "indices[0,0] = 0 is out of range for axis 1 of size 0 (the axis is empty)");
  EXPECT_EQ(gather_status(input, indices, {1}, mode(IndexMode::kClamp)).message(),
            "indices[0,0] = 0 is out of range for axis 1 of size 0 (the axis is empty: index_mode "
            "clamp has no index to resolve to)");
  EXPECT_EQ(gather_status(input, indices, {1}, mode(IndexMode::kWrap)).code(),
            multigather::StatusCode::kOutOfRange);
  // fill mode fills instead.
  EXPECT_EQ(gather_values(input, indices, {1}, mode(IndexMode::kFill, true, -3)), (V{-3, -3}));
}

TEST(Golden, NegativeAxesCountFromTheBack) {
  const Host<std::int32_t> input{{4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}};
  const Host<std::int64_t> indices{{2, 3}, {3, 1, 1, 2, 0, 3}};
  EXPECT_EQ(gather_values(input, indices, {-2}), (V{30, 11, 12, 20, 1, 32}));
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{4, 1}, {2, 1, 0, 2}}, {-1}), (V{2, 11, 20, 32}));
}

TEST(Golden, ReorderedAxesTakeXYCoordinates) {
  // input[y][x] = 10y + x on a [3,4] image; coordinates are (x, y) pairs, so axes = [1, 0].
  Host<std::int32_t> image{{3, 4}, V(12)};
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) image.values[static_cast<std::size_t>(y * 4 + x)] = 10 * y + x;
  Dims shape;
  EXPECT_EQ(gather_values(image, Host<std::int64_t>{{1, 6}, {3, 0, 0, 2, 1, 1}}, {1, 0}, {}, &shape),
            (V{3, 20, 11}));
  EXPECT_EQ(shape, (Dims{1, 3}));
  // The same pairs read as (y, x) with axes [0, 1].
  EXPECT_EQ(gather_values(image, Host<std::int64_t>{{1, 6}, {0, 3, 2, 0, 1, 1}}, {0, 1}), (V{3, 20, 11}));
}

TEST(Golden, BroadcastingInBothDirections) {
  // input [2,3,1] with indices [1,2,4] on axis 1: dim 0 broadcasts indices, dim 2 broadcasts input.
  const Host<std::int32_t> input{{2, 3, 1}, {10, 11, 12, 20, 21, 22}};
  const Host<std::int64_t> indices{{1, 2, 4}, {0, 1, 2, 0, 2, 2, 1, 0}};
  Dims shape;
  EXPECT_EQ(gather_values(input, indices, {1}, {}, &shape),
            (V{10, 11, 12, 10, 12, 12, 11, 10, 20, 21, 22, 20, 22, 22, 21, 20}));
  EXPECT_EQ(shape, (Dims{2, 2, 4}));
}

// Index modes on input [10,20,30,40,50] (axis of size 5) with indices {-1, 5, 7, -6, 2, -5}.
const Host<std::int32_t> k5{{5}, {10, 20, 30, 40, 50}};
const Host<std::int64_t> kMixed{{6}, {-1, 5, 7, -6, 2, -5}};

TEST(Golden, IndexModeError) {
  auto s = gather_status(k5, kMixed, {0});
  EXPECT_EQ(s.code(), multigather::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "indices[1] = 5 is out of range for axis 0 of size 5 (valid range [-5, 5))");
  s = gather_status(k5, kMixed, {0}, mode(IndexMode::kError, /*negative=*/false));
  EXPECT_EQ(s.message(), "indices[0] = -1 is out of range for axis 0 of size 5 (valid range [0, 5))");
  // In range: negatives wrap once.
  EXPECT_EQ(gather_values(k5, Host<std::int64_t>{{3}, {-1, -5, 4}}, {0}), (V{50, 10, 50}));
}

TEST(Golden, IndexModeClamp) {
  // wrap once, then clamp (WebNN): -1 -> 4, 5 -> 4, 7 -> 4, -6 -> -1 -> 0, 2, -5 -> 0.
  EXPECT_EQ(gather_values(k5, kMixed, {0}, mode(IndexMode::kClamp)), (V{50, 50, 50, 10, 30, 10}));
  // numpy clip: no wrap, every negative clamps to 0.
  EXPECT_EQ(gather_values(k5, kMixed, {0}, mode(IndexMode::kClamp, /*negative=*/false)),
            (V{10, 50, 50, 10, 30, 10}));
}

TEST(Golden, IndexModeWrap) {
  // floor modulo: -1 -> 4, 5 -> 0, 7 -> 2, -6 -> 4, 2, -5 -> 0.
  EXPECT_EQ(gather_values(k5, kMixed, {0}, mode(IndexMode::kWrap)), (V{50, 10, 30, 50, 30, 10}));
  EXPECT_EQ(gather_values(k5, Host<std::int64_t>{{2}, {std::numeric_limits<std::int64_t>::min(), -11}},
                          {0}, mode(IndexMode::kWrap)),
            (V{30, 50}));  // 2^63 = 5 * 1844674407370955161 + 3, so -2^63 mod 5 = 2; -11 mod 5 = 4
}

TEST(Golden, IndexModeFill) {
  EXPECT_EQ(gather_values(k5, kMixed, {0}, mode(IndexMode::kFill, true, -1)), (V{50, -1, -1, -1, 30, 10}));
  EXPECT_EQ(gather_values(k5, kMixed, {0}, mode(IndexMode::kFill, false, 99)), (V{99, 99, 99, 99, 30, 99}));
  // A float fill value converts to the input's dtype.
  GatherOptions o = mode(IndexMode::kFill);
  o.fill_value = Scalar::from_float(-0.5);
  EXPECT_EQ(gather_values(Host<float>{{2}, {1.5f, 2.5f}}, Host<std::int32_t>{{2}, {1, 2}}, {0}, o),
            (std::vector<float>{2.5f, -0.5f}));
}

TEST(Golden, UnsignedIndicesNeverWrapNegative) {
  EXPECT_EQ(gather_values(k5, Host<std::uint8_t>{{2}, {255, 1}}, {0}, mode(IndexMode::kClamp)), (V{50, 20}));
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
  auto s = gather_status(k5, Host<std::uint64_t>{{2}, {0, huge}}, {0});
  EXPECT_EQ(s.message(),
            "indices[1] = 18446744073709551615 is out of range for axis 0 of size 5 (valid range [0, 5))");
  // 2^64 - 2 = 5 * 3689348814741910322 + 4.
  EXPECT_EQ(gather_values(k5, Host<std::uint64_t>{{2}, {huge - 1, huge}}, {0}, mode(IndexMode::kWrap)),
            (V{50, 10}));
  EXPECT_EQ(gather_values(k5, Host<std::uint64_t>{{1}, {huge}}, {0}, mode(IndexMode::kClamp)), (V{50}));
  EXPECT_EQ(gather_values(k5, Host<std::uint32_t>{{2}, {4, 0xffffffffu}}, {0}, mode(IndexMode::kFill, true, 7)),
            (V{50, 7}));
  EXPECT_EQ(gather_values(k5, Host<std::uint16_t>{{2}, {3, 65534}}, {0}, mode(IndexMode::kWrap)), (V{40, 50}));
  EXPECT_EQ(gather_values(k5, Host<std::int8_t>{{2}, {-1, -128}}, {0}, mode(IndexMode::kWrap)), (V{50, 30}));  // -128 mod 5 = 2
  EXPECT_EQ(gather_values(k5, Host<std::int16_t>{{2}, {-2, 3}}, {0}), (V{40, 40}));
}

TEST(Golden, MaximumRank) {
  // rank 16: input [2,1,...,1,3] = arange(6), coordinates (x on dim 15, y on dim 0).
  Dims in_shape = Dims::filled(multigather::kMaxRank, 1);
  in_shape[0] = 2;
  in_shape[15] = 3;
  Dims ix_shape = Dims::filled(multigather::kMaxRank, 1);
  ix_shape[15] = 4;
  Host<std::int32_t> input{in_shape, V{0, 1, 2, 3, 4, 5}};
  Dims shape;
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{ix_shape, {2, 1, 0, 0}}, {15, 0}, {}, &shape), (V{5, 0}));
  Dims expected = Dims::filled(multigather::kMaxRank, 1);
  expected[15] = 2;
  EXPECT_EQ(shape, expected);
}

// Element widths 1, 2, 4, 8, 16: the operator moves bytes. Element e of the input has bytes
// (e * 16 + b) & 0xff; GatherElements on [4,3] with [[3,1,1],[2,0,3]], axis 0 selects flat
// elements 9, 4, 5, 6, 1, 11.
TEST(Golden, EveryElementWidth) {
  const std::vector<int> selected = {9, 4, 5, 6, 1, 11};
  const std::int64_t idx[] = {3, 1, 1, 2, 0, 3};
  for (DType t : {DType::kBool, DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                  DType::kInt32, DType::kFloat64, DType::kComplex64, DType::kComplex128,
                  DType::kFloat8E4M3FN}) {
    SCOPED_TRACE(std::string(multigather::dtype_name(t)));
    const std::size_t w = multigather::element_size(t);
    std::vector<std::uint8_t> in(12 * w);
    for (std::size_t e = 0; e < 12; ++e)
      for (std::size_t b = 0; b < w; ++b) in[e * w + b] = static_cast<std::uint8_t>((e * 16 + b) & 0xff);
    auto out = multigather::gather_multiaxis(multigather::TensorView(in.data(), t, {4, 3}),
                                             multigather::TensorView(idx, DType::kInt64, {2, 3}), {0});
    ASSERT_EQ(out.dtype(), t);
    ASSERT_EQ(out.nbytes(), 6 * w);
    const auto* o = static_cast<const std::uint8_t*>(out.data());
    for (std::size_t n = 0; n < 6; ++n)
      for (std::size_t b = 0; b < w; ++b)
        EXPECT_EQ(o[n * w + b], static_cast<std::uint8_t>((static_cast<std::size_t>(selected[n]) * 16 + b) & 0xff));
  }
}

TEST(Golden, FillValueInEveryWidth) {
  GatherOptions o = mode(IndexMode::kFill);
  o.fill_value = Scalar::from_float(1.5);
  const std::int64_t idx[] = {7};
  const std::uint16_t h_in[] = {0, 0};
  auto h = multigather::gather_multiaxis(multigather::TensorView(h_in, DType::kFloat16, {2}),
                                         multigather::TensorView(idx, DType::kInt64, {1}), {0}, o);
  EXPECT_EQ(h.data_as<std::uint16_t>()[0], 0x3e00);  // 1.5 in binary16
  auto b = multigather::gather_multiaxis(multigather::TensorView(h_in, DType::kBFloat16, {2}),
                                         multigather::TensorView(idx, DType::kInt64, {1}), {0}, o);
  EXPECT_EQ(b.data_as<std::uint16_t>()[0], 0x3fc0);  // 1.5 in bfloat16
  const std::complex<double> c_in[] = {{1, 2}};
  auto c = multigather::gather_multiaxis(multigather::TensorView(c_in, DType::kComplex128, {1}),
                                         multigather::TensorView(idx, DType::kInt64, {1}), {0}, o);
  EXPECT_EQ(c.data_as<std::complex<double>>()[0], std::complex<double>(1.5, 0.0));
}

TEST(Golden, StridedViews) {
  // Input: the transpose of a row-major [3,4] buffer (a [4,3] view with strides [1,4]).
  std::vector<std::int32_t> buf(12);
  std::iota(buf.begin(), buf.end(), 0);  // buf[r*4 + c] = r*4 + c
  const multigather::TensorView input(buf.data(), DType::kInt32, {4, 3}, {1, 4});  // input[i][j] = 4j + i
  // Indices: every other element of an [2,6] buffer -> a [2,3] view with strides [6,2].
  const std::int64_t ibuf[] = {3, -1, 1, -1, 1, -1, 2, -1, 0, -1, 3, -1};
  const multigather::TensorView indices(ibuf, DType::kInt64, {2, 3}, {6, 2});
  // Output: a [2,3] view with strides [1,2] into a sentinel-filled buffer of 8 (column-major
  // plus gaps).
  std::vector<std::int32_t> obuf(8, -7);
  const multigather::MutableTensorView output(obuf.data(), DType::kInt32, {2, 3}, {1, 2});
  ASSERT_TRUE(multigather::gather_multiaxis_into(input, indices, std::vector<std::int64_t>{0}, output).ok());
  // out[r][c] = input[idx[r][c]][c] = 4c + idx[r][c]: idx = [[3,1,1],[2,0,3]].
  EXPECT_EQ(obuf, (V{3, 2, 5, 4, 9, 11, -7, -7}));
  // Negative strides: the input reversed along dim 0 (view starts at the last row).
  const multigather::TensorView reversed(buf.data() + 8, DType::kInt32, {3, 4}, {-4, 1});
  const std::int64_t rows[] = {0, 2};
  auto out = multigather::gather_multiaxis(reversed, multigather::TensorView(rows, DType::kInt64, {2, 1}), {0});
  EXPECT_EQ(std::vector<std::int32_t>(out.data_as<std::int32_t>(), out.data_as<std::int32_t>() + 8),
            (V{8, 9, 10, 11, 0, 1, 2, 3}));
  // Stride 0 in a view is a broadcast: one row read three times.
  const multigather::TensorView repeated(buf.data(), DType::kInt32, {3, 4}, {0, 1});
  const std::int64_t cols[] = {3, 0};
  out = multigather::gather_multiaxis(repeated, multigather::TensorView(cols, DType::kInt64, {1, 2}), {1});
  EXPECT_EQ(std::vector<std::int32_t>(out.data_as<std::int32_t>(), out.data_as<std::int32_t>() + 6),
            (V{3, 0, 3, 0, 3, 0}));
}

TEST(Golden, IntoMatchesReferenceOnStridedOutput) {
  // The reference kernel writes through the same strided output contract.
  std::vector<std::int32_t> obuf(8, -7);
  const multigather::MutableTensorView output(obuf.data(), DType::kInt32, {2, 2}, {4, 2});
  const Host<std::int32_t> input{{2, 2}, {1, 2, 3, 4}};
  const Host<std::int64_t> idx{{2, 1}, {1, 0}};
  ASSERT_TRUE(multigather::gather_multiaxis_reference(input.view(), idx.view(), std::vector<std::int64_t>{0},
                                                      output).ok());
  EXPECT_EQ(obuf, (V{3, -7, 4, -7, 1, -7, 2, -7}));
}

}  // namespace
