// The CLI's text output (tools/cli/print.hpp) against numpy's str(): every golden string below
// was printed by numpy 2.4.6 for the same array (`print(repr(str(a)))`), except the
// bfloat16/float8 rows, which numpy cannot print and are worked out by hand with numpy's rules
// (noted per case).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "cli/print.hpp"

using multigather::Dims;
using multigather::DType;
using multigather::TensorView;
using multigather::cli::format_tensor;

namespace {

template <class T>
std::string fmt(const std::vector<T>& values, DType dtype, Dims shape) {
  return format_tensor(TensorView(values.data(), dtype, shape));
}

TEST(CliPrintTest, Integers) {
  EXPECT_EQ(fmt<std::int64_t>({30, 11, 12, 20, 1, 32}, DType::kInt64, {2, 3}),
            "[[30 11 12]\n [20  1 32]]");
  EXPECT_EQ(fmt<std::int32_t>({-3, -2, -1, 0, 1, 2, 3, 4}, DType::kInt32, {2, 2, 2}),
            "[[[-3 -2]\n  [-1  0]]\n\n [[ 1  2]\n  [ 3  4]]]");
  EXPECT_EQ(fmt<std::uint64_t>({18446744073709551615ull, 0}, DType::kUInt64, {2}),
            "[18446744073709551615                    0]");
  EXPECT_EQ(fmt<std::int8_t>({7}, DType::kInt8, {}), "7");
  EXPECT_EQ(fmt<float>({}, DType::kFloat32, {2, 0}), "[]");
  std::vector<std::int64_t> v(30);
  std::iota(v.begin(), v.end(), 0);
  EXPECT_EQ(fmt(v, DType::kInt64, {2, 3, 5}),
            "[[[ 0  1  2  3  4]\n  [ 5  6  7  8  9]\n  [10 11 12 13 14]]\n\n"
            " [[15 16 17 18 19]\n  [20 21 22 23 24]\n  [25 26 27 28 29]]]");
}

TEST(CliPrintTest, Bools) {
  EXPECT_EQ(fmt<std::uint8_t>({1, 0, 0, 1}, DType::kBool, {2, 2}), "[[ True False]\n [False  True]]");
}

TEST(CliPrintTest, Floats) {
  EXPECT_EQ(fmt<double>({1.0, 2.5, -3.25}, DType::kFloat64, {3}), "[ 1.    2.5  -3.25]");
  EXPECT_EQ(fmt<float>({0.1f, 1.0f / 3}, DType::kFloat32, {2}), "[0.1        0.33333334]");
  EXPECT_EQ(fmt<float>({1e-3f, 0.5f}, DType::kFloat32, {2}), "[0.001 0.5  ]");
  EXPECT_EQ(fmt<double>({1.5, 1e8}, DType::kFloat64, {2}), "[1.5e+00 1.0e+08]");
  EXPECT_EQ(fmt<double>({1e-5, 1.0}, DType::kFloat64, {2}), "[1.e-05 1.e+00]");
  EXPECT_EQ(fmt<double>({-INFINITY, 1.5, NAN}, DType::kFloat64, {3}), "[-inf  1.5  nan]");
  EXPECT_EQ(fmt<double>({1, 2, NAN, -0.75}, DType::kFloat64, {4}), "[ 1.    2.     nan -0.75]");
  std::vector<double> line(16);
  for (int i = 0; i < 16; ++i) line[static_cast<std::size_t>(i)] = i / 15.0;  // np.linspace(0, 1, 16)
  EXPECT_EQ(fmt(line, DType::kFloat64, {16}),
            "[0.         0.06666667 0.13333333 0.2        0.26666667 0.33333333\n"
            " 0.4        0.46666667 0.53333333 0.6        0.66666667 0.73333333\n"
            " 0.8        0.86666667 0.93333333 1.        ]");
}

TEST(CliPrintTest, HalfBfloat16AndFloat8) {
  using multigather::float_to_bfloat16;
  using multigather::float_to_half;
  // float16 digits are the shortest that identify the float16 value (0.1 -> 0.0999755859375).
  EXPECT_EQ(fmt<std::uint16_t>({float_to_half(0.1f), float_to_half(0.5f), float_to_half(2.0f)},
                               DType::kFloat16, {3}),
            "[0.1 0.5 2. ]");
  EXPECT_EQ(fmt<std::uint16_t>({float_to_half(0.1f), float_to_half(2000.0f)}, DType::kFloat16, {2}),
            "[1.e-01 2.e+03]");
  // By hand: bfloat16(-0.1) = -0.10009765625, whose shortest bfloat16 digits are -0.1; then
  // numpy's positional layout, as for float32 [1, 2.5, -0.1] (numpy: '[ 1.   2.5 -0.1]').
  EXPECT_EQ(fmt<std::uint16_t>({float_to_bfloat16(1.0f), float_to_bfloat16(2.5f),
                                float_to_bfloat16(-0.1f)},
                               DType::kBFloat16, {3}),
            "[ 1.   2.5 -0.1]");
  // By hand: float8_e4m3fn 0x38 = 1, 0x40 = 2, 0x7f = nan, 0xb4 = -0.75 (numpy prints float64
  // [1, 2, nan, -0.75] as below).
  EXPECT_EQ(fmt<std::uint8_t>({0x38, 0x40, 0x7f, 0xb4}, DType::kFloat8E4M3FN, {4}),
            "[ 1.    2.     nan -0.75]");
  // float8_e5m2 is the top byte of a float16: 0x3c = 1.0, 0xc0 = -2.0.
  EXPECT_EQ(fmt<std::uint8_t>({0x3c, 0xc0}, DType::kFloat8E5M2, {2}), "[ 1. -2.]");
}

TEST(CliPrintTest, Complex) {
  EXPECT_EQ(fmt<double>({1, 2, 3, -1.5}, DType::kComplex128, {2}), "[1.+2.j  3.-1.5j]");
  EXPECT_EQ(fmt<float>({1.5f, 0.25f, -2, -1}, DType::kComplex64, {2}), "[ 1.5+0.25j -2. -1.j  ]");
}

TEST(CliPrintTest, LargeTensorsAreSummarized) {
  std::vector<std::int64_t> v(2000);
  std::iota(v.begin(), v.end(), 0);
  EXPECT_EQ(fmt(v, DType::kInt64, {2000}), "[   0    1    2 ... 1997 1998 1999]");
  std::vector<std::int16_t> w(2000);
  std::iota(w.begin(), w.end(), 0);
  EXPECT_EQ(fmt(w, DType::kInt16, {40, 50}),
            "[[   0    1    2 ...   47   48   49]\n"
            " [  50   51   52 ...   97   98   99]\n"
            " [ 100  101  102 ...  147  148  149]\n"
            " ...\n"
            " [1850 1851 1852 ... 1897 1898 1899]\n"
            " [1900 1901 1902 ... 1947 1948 1949]\n"
            " [1950 1951 1952 ... 1997 1998 1999]]");
}

// A strided view prints its logical order.
TEST(CliPrintTest, StridedView) {
  const std::vector<std::int32_t> v = {0, 1, 2, 10, 11, 12};
  EXPECT_EQ(format_tensor(TensorView(v.data(), DType::kInt32, {3, 2}, {1, 3})),
            "[[ 0 10]\n [ 1 11]\n [ 2 12]]");
}

}  // namespace
