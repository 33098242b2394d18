// scatter_multiaxis (docs/spec.md section 4): worked examples checked by hand, the CPU engine
// against the reference kernel on randomized cases (every reduction, dtypes of every width,
// index types, modes, broadcasting both ways, strided outputs, in place, forced thread counts),
// determinism (identical bytes at 1..8 threads), the adjoint identity against gather, and every
// error of section 4 with its message.
//
// The seed is printed; replay with MULTIGATHER_SEED=<seed>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/combine.hpp"
#include "kernels/cpu/avx512.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "scatter_cases.hpp"
#include "multigather/gather.hpp"
#include "multigather/scatter.hpp"

namespace mg = multigather;

namespace {

using Rng = std::mt19937_64;

template <class T>
mg::TensorView view(const std::vector<T>& v, mg::DType t, mg::Dims shape) {
  return mg::TensorView(v.data(), t, shape);
}
template <class T>
mg::MutableTensorView mview(std::vector<T>& v, mg::DType t, mg::Dims shape) {
  return mg::MutableTensorView(v.data(), t, shape);
}

using mg::test::run_seed;

std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// ---- Worked examples ---------------------------------------------------------------------------

TEST(ScatterCore, ElementsAlongAxis0WithDuplicatesLastWins) {
  // ONNX ScatterElements' example (axis 0), with a duplicate added: the later update wins.
  std::vector<float> input(9, 0.f);
  std::vector<std::int64_t> indices{1, 0, 2, 0, 2, 1};  // [2,3]: (0,0)->row1, (1,0)->row0
  std::vector<float> updates{1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f};
  const std::vector<std::int64_t> axes{0};
  mg::Tensor out = mg::scatter_multiaxis(view(input, mg::DType::kFloat32, {3, 3}),
                                         view(indices, mg::DType::kInt64, {2, 3}),
                                         view(updates, mg::DType::kFloat32, {2, 3}), axes);
  const float* o = static_cast<const float*>(out.data());
  const std::vector<float> expected{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(o[i], expected[static_cast<std::size_t>(i)]) << i;

  // Duplicates: both updates of column 0 go to row 1; the row-major later one (2.0) wins.
  std::vector<std::int64_t> dup{1, 0, 2, 1, 2, 1};
  out = mg::scatter_multiaxis(view(input, mg::DType::kFloat32, {3, 3}), view(dup, mg::DType::kInt64, {2, 3}),
                              view(updates, mg::DType::kFloat32, {2, 3}), axes);
  o = static_cast<const float*>(out.data());
  EXPECT_EQ(o[3], 2.0f);
  mg::ScatterOptions add;
  add.reduction = mg::Reduction::kAdd;
  out = mg::scatter_multiaxis(view(input, mg::DType::kFloat32, {3, 3}), view(dup, mg::DType::kInt64, {2, 3}),
                              view(updates, mg::DType::kFloat32, {2, 3}), axes, add);
  o = static_cast<const float*>(out.data());
  EXPECT_EQ(o[3], 1.0f + 2.0f);
}

TEST(ScatterCore, BlockRowsWithInputBroadcastSumsAndUpdatesBroadcast) {
  // index_add-like: rows of a [4,3] input, indices [2,1] = rows 3 and 1; updates [1,3] repeat.
  std::vector<std::int32_t> input(12, 10);
  std::vector<std::int32_t> indices{3, 1};
  std::vector<std::int32_t> updates{1, 2, 3};
  mg::ScatterOptions add;
  add.reduction = mg::Reduction::kAdd;
  const std::vector<std::int64_t> axes{0};
  mg::Tensor out = mg::scatter_multiaxis(view(input, mg::DType::kInt32, {4, 3}),
                                         view(indices, mg::DType::kInt32, {2, 1}),
                                         view(updates, mg::DType::kInt32, {1, 3}), axes, add);
  const auto* o = static_cast<const std::int32_t*>(out.data());
  const std::vector<std::int32_t> expected{10, 10, 10, 11, 12, 13, 10, 10, 10, 11, 12, 13};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(o[i], expected[static_cast<std::size_t>(i)]) << i;

  // Input broadcast: input [1,3] against G [5,3] (k = 0): all five rows sum into one.
  std::vector<double> row{0.5, 0.25, 0.125};
  std::vector<double> ups(15);
  for (int i = 0; i < 15; ++i) ups[static_cast<std::size_t>(i)] = i;
  std::vector<std::int64_t> no_index{0};
  mg::Tensor summed = mg::scatter_multiaxis(view(row, mg::DType::kFloat64, {1, 3}),
                                            view(no_index, mg::DType::kInt64, {5, 1}),
                                            view(ups, mg::DType::kFloat64, {5, 3}), {}, add);
  const auto* s = static_cast<const double*>(summed.data());
  EXPECT_EQ(s[0], 0.5 + 0 + 3 + 6 + 9 + 12);
  EXPECT_EQ(s[1], 0.25 + 1 + 4 + 7 + 10 + 13);
  EXPECT_EQ(s[2], 0.125 + 2 + 5 + 8 + 11 + 14);
}

TEST(ScatterCore, ModesDropClampWrapAndIncludeInput) {
  std::vector<float> input{5, 5, 5, 5};
  std::vector<std::int64_t> indices{0, 7, -1, 2, 0};
  std::vector<float> updates{1, 2, 3, 4, 6};
  mg::ScatterOptions o;
  o.reduction = mg::Reduction::kMax;
  o.index_mode = mg::IndexMode::kDrop;
  const std::vector<std::int64_t> axes{0};
  auto run = [&](const mg::ScatterOptions& opts) {
    mg::Tensor t = mg::scatter_multiaxis(view(input, mg::DType::kFloat32, {4}), view(indices, mg::DType::kInt64, {5}),
                                         view(updates, mg::DType::kFloat32, {5}), axes, opts);
    const auto* p = static_cast<const float*>(t.data());
    return std::vector<float>(p, p + 4);
  };
  EXPECT_EQ(run(o), (std::vector<float>{6, 5, 5, 5}));  // 7 dropped; -1 -> 3: max(5, 3) = 5
  o.include_input = false;
  EXPECT_EQ(run(o), (std::vector<float>{6, 5, 4, 3}));  // reached positions start from an update
  o.index_mode = mg::IndexMode::kClamp;
  EXPECT_EQ(run(o), (std::vector<float>{6, 5, 4, 3}));  // 7 -> 3: max(2, 3) = 3
  o.index_mode = mg::IndexMode::kWrap;  // no negative rule: -1 -> 3, 7 -> 3
  EXPECT_EQ(run(o), (std::vector<float>{6, 5, 4, 3}));
  o.reduction = mg::Reduction::kNone;
  EXPECT_EQ(run(o), (std::vector<float>{6, 5, 4, 3}));  // last of (7 -> 3) and (-1 -> 3) wins
}

TEST(ScatterCore, DtypeRules) {
  const std::vector<std::int64_t> axes{0};
  std::vector<std::int64_t> twice{0, 0};
  mg::ScatterOptions add;
  add.reduction = mg::Reduction::kAdd;
  {  // int8 wraps
    std::vector<std::int8_t> in{100}, up{100, 100};
    mg::Tensor t = mg::scatter_multiaxis(view(in, mg::DType::kInt8, {1}), view(twice, mg::DType::kInt64, {2}),
                                         view(up, mg::DType::kInt8, {2}), axes, add);
    EXPECT_EQ(static_cast<const std::int8_t*>(t.data())[0], static_cast<std::int8_t>(44));
  }
  {  // bool: add = or, mul = and
    std::vector<std::uint8_t> in{0}, up{1, 0};
    mg::Tensor t = mg::scatter_multiaxis(view(in, mg::DType::kBool, {1}), view(twice, mg::DType::kInt64, {2}),
                                         view(up, mg::DType::kBool, {2}), axes, add);
    EXPECT_EQ(static_cast<const std::uint8_t*>(t.data())[0], 1);
    mg::ScatterOptions mul;
    mul.reduction = mg::Reduction::kMul;
    std::vector<std::uint8_t> one{1};
    t = mg::scatter_multiaxis(view(one, mg::DType::kBool, {1}), view(twice, mg::DType::kInt64, {2}),
                              view(up, mg::DType::kBool, {2}), axes, mul);
    EXPECT_EQ(static_cast<const std::uint8_t*>(t.data())[0], 0);
  }
  {  // float16 combines in float16: 2048 + 1 + 1 stays 2048 (each step rounds), not 2050
    std::vector<std::uint16_t> in{mg::float_to_half(2048.f)};
    std::vector<std::uint16_t> up{mg::float_to_half(1.f), mg::float_to_half(1.f)};
    mg::Tensor t = mg::scatter_multiaxis(view(in, mg::DType::kFloat16, {1}), view(twice, mg::DType::kInt64, {2}),
                                         view(up, mg::DType::kFloat16, {2}), axes, add);
    EXPECT_EQ(mg::half_to_float(static_cast<const std::uint16_t*>(t.data())[0]), 2048.f);
  }
  {  // NaN propagates through max
    mg::ScatterOptions mx;
    mx.reduction = mg::Reduction::kMax;
    std::vector<float> in{1.f}, up{NAN, 5.f};
    mg::Tensor t = mg::scatter_multiaxis(view(in, mg::DType::kFloat32, {1}), view(twice, mg::DType::kInt64, {2}),
                                         view(up, mg::DType::kFloat32, {2}), axes, mx);
    EXPECT_TRUE(std::isnan(static_cast<const float*>(t.data())[0]));
  }
  {  // complex mul: (1+2i)(3+4i) = -5+10i
    std::vector<float> in{1.f, 2.f}, up{3.f, 4.f};
    std::vector<std::int64_t> once{0};
    mg::ScatterOptions mul;
    mul.reduction = mg::Reduction::kMul;
    mg::Tensor t = mg::scatter_multiaxis(view(in, mg::DType::kComplex64, {1}), view(once, mg::DType::kInt64, {1}),
                                         view(up, mg::DType::kComplex64, {1}), axes, mul);
    EXPECT_EQ(static_cast<const float*>(t.data())[0], -5.f);
    EXPECT_EQ(static_cast<const float*>(t.data())[1], 10.f);
  }
}

// ---- Complex min / max: StableHLO's lexicographic order, as XLA runs it --------------------------

/// One complex element as its two parts.
template <class R>
struct Pair {
  R re, im;
};

/// Updates `ups`, all into element 0 of a [2] input {in, (7, 7)}, combined by `reduction` with
/// include_input true and false, by the CPU engine and by the reference kernel at 1, 2, 3 and 8
/// threads: element 0 must hold `want`'s bytes (`want_without_input` with include_input false),
/// element 1 (no update reaches it) keeps (7, 7).
template <class R>
void expect_complex_combine(mg::Reduction reduction, Pair<R> in, const std::vector<Pair<R>>& ups, Pair<R> want,
                            Pair<R> want_without_input) {
  const mg::DType t = sizeof(R) == 4 ? mg::DType::kComplex64 : mg::DType::kComplex128;
  const std::vector<Pair<R>> input{in, {7, 7}};
  const std::vector<std::int64_t> indices(ups.size(), 0);
  const std::vector<std::int64_t> axes{0};
  const auto n = static_cast<std::int64_t>(ups.size());
  for (const bool include_input : {true, false}) {
    const Pair<R> expected = include_input ? want : want_without_input;
    for (const bool reference : {false, true}) {
      for (const int threads : {1, 2, 3, 8}) {
        mg::ScatterOptions o;
        o.reduction = reduction;
        o.include_input = include_input;
        o.num_threads = threads;
        std::vector<Pair<R>> out(2, Pair<R>{-1, -1});
        const mg::TensorView iv(input.data(), t, {2}), xv(indices.data(), mg::DType::kInt64, {n}),
            uv(ups.data(), t, {n});
        const mg::MutableTensorView ov(out.data(), t, {2});
        const mg::Status s = reference ? mg::scatter_multiaxis_reference(iv, xv, uv, axes, ov, o)
                                       : mg::scatter_multiaxis_into(iv, xv, uv, axes, ov, o);
        ASSERT_TRUE(s.ok()) << s.message();
        const std::string where = std::string(mg::dtype_name(t)) + " " + std::string(mg::reduction_name(reduction)) +
                                  " include_input " + std::to_string(include_input) + " " +
                                  (reference ? "reference" : "engine") + " threads " + std::to_string(threads) +
                                  ": got (" + std::to_string(out[0].re) + ", " + std::to_string(out[0].im) + ")";
        EXPECT_EQ(std::memcmp(&out[0], &expected, sizeof expected), 0) << where;
        EXPECT_EQ(out[1].re, R(7)) << where;
        EXPECT_EQ(out[1].im, R(7)) << where;
      }
    }
  }
}

template <class R>
void check_complex_min_max_table() {
  const R nan = std::numeric_limits<R>::quiet_NaN(), inf = std::numeric_limits<R>::infinity();
  using P = Pair<R>;
  const auto kMax = mg::Reduction::kMax, kMin = mg::Reduction::kMin;
  // The real parts decide; equal real parts: the imaginary parts.
  expect_complex_combine<R>(kMax, {1, 2}, {{1, 3}, {1, 1}}, P{1, 3}, P{1, 3});
  expect_complex_combine<R>(kMin, {1, 2}, {{1, 3}, {1, 1}}, P{1, 1}, P{1, 1});
  expect_complex_combine<R>(kMax, {1, 2}, {{0, 9}, {-1, 9}}, P{1, 2}, P{0, 9});
  expect_complex_combine<R>(kMin, {1, 2}, {{0, 9}, {-1, 9}, {-1, 10}}, P{-1, 9}, P{-1, 9});
  expect_complex_combine<R>(kMax, {-inf, -inf}, {{-inf, 1}, {-inf, 0}}, P{-inf, 1}, P{-inf, 1});
  expect_complex_combine<R>(kMin, {inf, 5}, {{inf, 1}, {inf, 2}}, P{inf, 1}, P{inf, 1});
  // A tie (+0 == -0 included) keeps the update: XLA's `a > b ? a : b`.
  expect_complex_combine<R>(kMax, {0, 1}, {{-0.0, 1}}, P{-0.0, 1}, P{-0.0, 1});
  expect_complex_combine<R>(kMin, {1, -0.0}, {{1, 0}}, P{1, 0}, P{1, 0});
  expect_complex_combine<R>(kMax, {1, 0}, {{1, 0}, {1, -0.0}}, P{1, -0.0}, P{1, -0.0});
  // NaN does not propagate: a comparison with NaN is false, so the update wins.
  expect_complex_combine<R>(kMax, {nan, 0}, {{1, 0}}, P{1, 0}, P{1, 0});
  expect_complex_combine<R>(kMin, {nan, 0}, {{1, 0}}, P{1, 0}, P{1, 0});
  expect_complex_combine<R>(kMax, {1, 0}, {{nan, 0}}, P{nan, 0}, P{nan, 0});
  expect_complex_combine<R>(kMin, {1, 0}, {{nan, 0}}, P{nan, 0}, P{nan, 0});
  expect_complex_combine<R>(kMax, {0, 0}, {{nan, 0}, {1, 0}}, P{1, 0}, P{1, 0});
  expect_complex_combine<R>(kMax, {0, 0}, {{1, 0}, {nan, 0}}, P{nan, 0}, P{nan, 0});
  expect_complex_combine<R>(kMin, {0, 0}, {{nan, 3}, {nan, 2}}, P{nan, 2}, P{nan, 2});
  // A NaN imaginary part decides only between equal real parts.
  expect_complex_combine<R>(kMax, {1, nan}, {{1, 5}}, P{1, 5}, P{1, 5});
  expect_complex_combine<R>(kMax, {1, 5}, {{1, nan}}, P{1, nan}, P{1, nan});
  expect_complex_combine<R>(kMin, {1, 5}, {{1, nan}, {1, 4}}, P{1, 4}, P{1, 4});
  expect_complex_combine<R>(kMax, {0, nan}, {{1, 5}}, P{1, 5}, P{1, 5});
  expect_complex_combine<R>(kMax, {1, 5}, {{0, nan}}, P{1, 5}, P{0, nan});
  expect_complex_combine<R>(kMin, {0, nan}, {{1, 5}}, P{0, nan}, P{1, 5});
  expect_complex_combine<R>(kMin, {1, 5}, {{0, nan}}, P{0, nan}, P{0, nan});
}

TEST(ComplexMinMax, HandWorkedTableOfTiesNansAndDuplicates) {
  // Expected values worked out from the rule (combine.hpp); the NaN and tie rows are what
  // jax.lax.scatter_max / scatter_min return on XLA's CPU (tests/python/test_scatter_jax.py
  // checks the same rows against JAX).
  check_complex_min_max_table<float>();
  check_complex_min_max_table<double>();
}

TEST(ComplexMinMax, SeveralTargetsAlongAnAxis) {
  // complex64 [3, 2] along axis 0, element-wise (output[indices[i][j]][j] combines
  // updates[i][j]): indices [[2, 0], [2, 2]], so column 0 gets two updates into row 2, column 1
  // one into row 0 and one into row 2; row 1 gets none.
  using P = Pair<float>;
  const std::vector<P> input{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}};
  const std::vector<std::int64_t> indices{2, 0, 2, 2};
  const std::vector<P> updates{{5, 0}, {2, 3}, {5, 9}, {6, -1}};
  const std::vector<std::int64_t> axes{0};
  mg::ScatterOptions o;
  o.reduction = mg::Reduction::kMax;
  // Column 0: updates (5,0) then (5,9) into (5,5): (5,0) loses to (5,5), (5,9) wins -> (5,9).
  // Column 1: (2,3) into (2,2) -> (2,3); (6,-1) into (6,6) -> (6,6) kept.
  const std::vector<P> want{{1, 1}, {2, 3}, {3, 3}, {4, 4}, {5, 9}, {6, 6}};
  std::vector<P> out(6);
  ASSERT_TRUE(mg::scatter_multiaxis_into(mg::TensorView(input.data(), mg::DType::kComplex64, {3, 2}),
                                         mg::TensorView(indices.data(), mg::DType::kInt64, {2, 2}),
                                         mg::TensorView(updates.data(), mg::DType::kComplex64, {2, 2}), axes,
                                         mg::MutableTensorView(out.data(), mg::DType::kComplex64, {3, 2}), o).ok());
  EXPECT_EQ(std::memcmp(out.data(), want.data(), sizeof(P) * 6), 0);
  // min, include_input false: column 0 -> min((5,0), (5,9)) = (5,0); column 1: (2,3) and (6,-1).
  o.reduction = mg::Reduction::kMin;
  o.include_input = false;
  const std::vector<P> want_min{{1, 1}, {2, 3}, {3, 3}, {4, 4}, {5, 0}, {6, -1}};
  ASSERT_TRUE(mg::scatter_multiaxis_into(mg::TensorView(input.data(), mg::DType::kComplex64, {3, 2}),
                                         mg::TensorView(indices.data(), mg::DType::kInt64, {2, 2}),
                                         mg::TensorView(updates.data(), mg::DType::kComplex64, {2, 2}), axes,
                                         mg::MutableTensorView(out.data(), mg::DType::kComplex64, {3, 2}), o).ok());
  EXPECT_EQ(std::memcmp(out.data(), want_min.data(), sizeof(P) * 6), 0);
}

// ---- Errors ------------------------------------------------------------------------------------

mg::Status scatter_status(const mg::Dims& in_shape, const mg::Dims& ix_shape, const mg::Dims& up_shape,
                          std::vector<std::int64_t> axes, const mg::ScatterOptions& o,
                          std::vector<std::int64_t> ix = {}, mg::DType up_dtype = mg::DType::kFloat32) {
  std::int64_t ni = 1, nu = 1, nx = 1;
  mg::element_count(in_shape, &ni);
  mg::element_count(up_shape, &nu);
  mg::element_count(ix_shape, &nx);
  std::vector<double> in(static_cast<std::size_t>(ni) + 1), up(static_cast<std::size_t>(nu) * 2 + 1),
      out(static_cast<std::size_t>(ni) + 1);
  if (ix.empty()) ix.assign(static_cast<std::size_t>(nx) + 1, 0);
  return mg::scatter_multiaxis_into(mg::TensorView(in.data(), mg::DType::kFloat32, in_shape),
                                    mg::TensorView(ix.data(), mg::DType::kInt64, ix_shape),
                                    mg::TensorView(up.data(), up_dtype, up_shape), axes,
                                    mg::MutableTensorView(out.data(), mg::DType::kFloat32, in_shape), o);
}

TEST(ScatterCore, ErrorsNameTheArgumentAndTheRule) {
  mg::ScatterOptions o;
  mg::Status s = scatter_status({3, 4}, {2, 4}, {2, 5}, {0}, o);
  EXPECT_EQ(s.code(), mg::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "updates shape [2,5] does not broadcast to the scatter shape [2,4] (the "
                         "gather shape of input and indices): updates.shape[1] = 5 must be 4 or 1");
  s = scatter_status({3, 4}, {2, 4}, {8}, {0}, o);
  EXPECT_EQ(s.message(), "updates rank 1 must equal input rank 2");
  s = scatter_status({3, 4}, {2, 4}, {2, 4}, {0}, o, {}, mg::DType::kFloat64);
  EXPECT_EQ(s.code(), mg::StatusCode::kTypeError);
  EXPECT_EQ(s.message(), "updates dtype float64 must equal input dtype float32");
  o.index_mode = mg::IndexMode::kFill;
  s = scatter_status({3, 4}, {2, 4}, {2, 4}, {0}, o);
  EXPECT_EQ(s.message(), "index_mode fill has no meaning for a scatter (there is no output element "
                         "to fill; drop skips out-of-range updates)");
  o.index_mode = mg::IndexMode::kError;
  s = scatter_status({3, 4}, {2, 4}, {2, 4}, {0}, o, {0, 1, 2, 0, 1, 2, 3, 0, 0});
  EXPECT_EQ(s.code(), mg::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "indices[1,2] = 3 is out of range for axis 0 of size 3 (valid range [-3, 3))");
  s = scatter_status({3, 4}, {2, 4}, {2, 4}, {2}, o);
  EXPECT_EQ(s.message(), "axes[0] = 2 is out of range [-2, 2) for input rank 2");

  // float8 arithmetic is rejected (complex min / max are not: ComplexMinMax above); gather
  // rejects drop.
  std::vector<float> c(4);
  std::vector<std::int64_t> z{0};
  mg::ScatterOptions mn;
  mn.reduction = mg::Reduction::kMin;
  const std::vector<std::int64_t> axes{0};
  s = mg::scatter_multiaxis_into(mg::TensorView(c.data(), mg::DType::kFloat8E4M3FN, {1}),
                                 mg::TensorView(z.data(), mg::DType::kInt64, {1}),
                                 mg::TensorView(c.data() + 2, mg::DType::kFloat8E4M3FN, {1}), axes,
                                 mg::MutableTensorView(c.data(), mg::DType::kFloat8E4M3FN, {1}), mn);
  EXPECT_EQ(s.code(), mg::StatusCode::kTypeError);
  EXPECT_EQ(s.message(), "reduction min is not supported for float8_e4m3fn (8-bit floats have no arithmetic here; "
                         "only reduction none)");
  mg::GatherOptions g;
  g.index_mode = mg::IndexMode::kDrop;
  std::vector<float> gout(1);
  s = mg::gather_multiaxis_into(mg::TensorView(c.data(), mg::DType::kFloat32, {1}),
                                mg::TensorView(z.data(), mg::DType::kInt64, {1}), axes,
                                mg::MutableTensorView(gout.data(), mg::DType::kFloat32, {1}), g);
  EXPECT_EQ(s.message(), "index_mode drop applies to scatter only (a gather has no update to skip; use fill)");
}

TEST(ScatterCore, OverlapRulesAndFailedCallsLeaveTheOutputUnchanged) {
  std::vector<float> data{1, 2, 3, 4};
  std::vector<std::int64_t> ix{1, 9};
  std::vector<float> up{10, 20};
  const std::vector<std::int64_t> axes{0};
  const mg::TensorView in(data.data(), mg::DType::kFloat32, {4});
  // In place with a bad index: an error, and nothing written.
  mg::Status s = mg::scatter_multiaxis_into(in, view(ix, mg::DType::kInt64, {2}), view(up, mg::DType::kFloat32, {2}),
                                            axes, mview(data, mg::DType::kFloat32, {4}));
  EXPECT_EQ(s.code(), mg::StatusCode::kOutOfRange);
  EXPECT_EQ(data, (std::vector<float>{1, 2, 3, 4}));
  // In place, good indices.
  ix = {1, 3};
  s = mg::scatter_multiaxis_into(in, view(ix, mg::DType::kInt64, {2}), view(up, mg::DType::kFloat32, {2}), axes,
                                 mview(data, mg::DType::kFloat32, {4}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data, (std::vector<float>{1, 10, 3, 20}));
  // An output that overlaps input without being it, or overlaps updates: rejected.
  std::vector<float> big(8);
  s = mg::scatter_multiaxis_into(mg::TensorView(big.data(), mg::DType::kFloat32, {4}), view(ix, mg::DType::kInt64, {2}),
                                 view(up, mg::DType::kFloat32, {2}), axes,
                                 mg::MutableTensorView(big.data() + 1, mg::DType::kFloat32, {4}));
  EXPECT_EQ(s.message(), "output overlaps input but is not input itself (a scatter writes in place only "
                         "into the same view: same data and strides)");
  s = mg::scatter_multiaxis_into(in, view(ix, mg::DType::kInt64, {2}),
                                 mg::TensorView(big.data(), mg::DType::kFloat32, {2}), axes,
                                 mg::MutableTensorView(big.data() + 1, mg::DType::kFloat32, {4}));
  EXPECT_EQ(s.message(), "output overlaps indices or updates (a scatter cannot write into memory it reads)");
}

// ---- Randomized: engine vs reference, determinism ---------------------------------------------

using mg::test::Case;
using mg::test::Result;
using mg::test::describe;
using mg::test::random_case;
using mg::test::run_case;

/// Runs one threaded path (buckets or slabs) on every case, however small its lookups
/// (restored on exit).
struct ThreadingForAll {
  explicit ThreadingForAll(mg::detail::ScatterThreading t) : old(mg::detail::set_scatter_threading(t)) {}
  ~ThreadingForAll() { mg::detail::set_scatter_threading(old); }
  mg::detail::ScatterThreading old;
};

TEST(ScatterCore, EngineMatchesReferenceAtEveryThreadCount) {
  for (const auto path : {mg::detail::ScatterThreading::kBuckets, mg::detail::ScatterThreading::kSlabs,
                          mg::detail::ScatterThreading::kFiltered, mg::detail::ScatterThreading::kSorted}) {
    const ThreadingForAll threaded(path);
    Rng rng(run_seed());
    for (int i = 0; i < 1500; ++i) {
      const std::uint64_t case_seed = rng();
      Rng case_rng(case_seed);
      const Case c = random_case(case_rng);
      const Result ref = run_case(c, true, 1);
      for (int threads : {1, 2, 3, 8}) {
        if (threads == 8 && i % 8 != 0) continue;  // 8 threads on a few: fork-join on 2 cores is slow
        const Result got = run_case(c, false, threads);
        ASSERT_EQ(got.status.code(), ref.status.code())
            << "case seed " << case_seed << ": " << got.status.message() << " vs " << ref.status.message();
        ASSERT_EQ(got.status.message(), ref.status.message()) << "case seed " << case_seed;
        ASSERT_TRUE(got.bytes == ref.bytes) << "case seed " << case_seed << " threads " << threads
                                            << " path " << static_cast<int>(path) << ": " << describe(c);
      }
    }
  }
}

/// A one-shot scatter (mg::scatter_multiaxis allocates its output) skips the pass that checks
/// the index values before the first write: the engine checks each index before it uses it.
/// Same status, same message and the same bytes as the reference kernel, on every random case
/// (bad indices included), at 1, 2, 3 and 8 threads.
TEST(ScatterCore, OneShotWithoutThePreCheckMatchesReference) {
  Rng rng(run_seed() ^ 0x5ca77e4);
  int failed_calls = 0;
  for (int i = 0; i < 800; ++i) {
    const std::uint64_t case_seed = rng();
    Rng case_rng(case_seed);
    const Case c = random_case(case_rng);
    const std::size_t es = mg::element_size(c.dtype);
    const mg::TensorView in(c.input.data(), c.dtype, c.input_shape), idx(c.indices.data(), c.index_dtype, c.indices_shape),
        up(c.updates.data(), c.dtype, c.updates_shape);
    std::vector<std::byte> want(static_cast<std::size_t>(in.numel()) * es);
    const mg::Status ref = mg::scatter_multiaxis_reference(in, idx, up, c.axes,
                                                           mg::MutableTensorView(want.data(), c.dtype, c.input_shape),
                                                           c.options);
    failed_calls += !ref.ok();
    for (int threads : {1, 2, 3, 8}) {
      if (threads == 8 && i % 8 != 0) continue;
      mg::ScatterOptions o = c.options;
      o.num_threads = threads;
      try {
        const mg::Tensor got = mg::scatter_multiaxis(in, idx, up, c.axes, o);
        ASSERT_TRUE(ref.ok()) << "case seed " << case_seed << ": the reference says " << ref.message();
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size()))
            << "case seed " << case_seed << " threads " << threads << ": " << describe(c);
      } catch (const mg::Error& e) {
        ASSERT_FALSE(ref.ok()) << "case seed " << case_seed << ": " << e.what();
        ASSERT_EQ(e.code(), ref.code()) << "case seed " << case_seed;
        ASSERT_EQ(std::string(e.what()), ref.message()) << "case seed " << case_seed;
      }
    }
  }
  EXPECT_GT(failed_calls, 0);  // the cases include bad indices
}

/// The plain element-scatter loop (scatter_engine.cpp, scatter_plain_run: one coordinate, block
/// 1) on rows longer than its prefetch distance and than a piece (1024 lookups), for each index
/// type it takes: duplicates (reduction none: the last wins; add), negative indices (the loop
/// hands them to the general path and resumes), index rows that are a slice of a wider array
/// (unit steps, rows apart) or every other column (non-unit steps), and one bad index (the axis
/// size, beyond it, or below -size) at the first lookup of a row, inside the prefetch window, at
/// a piece's end or at a row's end. The
/// reference kernel's status, message and bytes, into an output (left unchanged by a bad
/// index) and one-shot, at 1, 2, 3 and 8 threads.
template <class Index>
void check_plain_element_scatter(mg::DType index_dtype, std::uint64_t seed) {
  Rng rng(seed);
  constexpr std::int64_t rows = 6, cols = 300;
  for (const std::int64_t length : {1, 16, 17, 1023, 1024, 1025, 2100}) {
    for (int variant = 0; variant < 4; ++variant) {  // contiguous, negative, row slice, every other
      if (variant == 1 && !std::is_signed_v<Index>) continue;
      const std::int64_t width = variant >= 2 ? 2 * length : length;  // the stored rows
      std::vector<Index> stored(static_cast<std::size_t>(rows * width));
      for (auto& v : stored) {
        v = static_cast<Index>(uniform(rng, variant == 1 ? -cols : 0, cols - 1));
      }
      const mg::Dims shape{rows, length};
      const mg::Dims strides{width, variant == 3 ? 2 : 1};
      std::vector<float> input(static_cast<std::size_t>(rows * cols)), updates(static_cast<std::size_t>(rows * length));
      for (auto& x : input) x = static_cast<float>(uniform(rng, -1000, 1000));
      for (auto& x : updates) x = static_cast<float>(uniform(rng, -1000, 1000));
      // -1: all good; else the flat position (in `stored`) of one bad value.
      const std::int64_t row = uniform(rng, 0, rows - 1);
      const std::int64_t step = strides[1];
      for (const std::int64_t bad : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{5}, std::int64_t{1023}, length - 1}) {
        if (bad >= length) continue;
        std::vector<Index> ids = stored;
        // The bad value: the axis size itself, beyond it, or (signed) one below -size.
        const std::int64_t bad_values[] = {cols, cols + 7, std::is_signed_v<Index> ? -cols - 1 : cols};
        if (bad >= 0) ids[static_cast<std::size_t>(row * width + bad * step)] = static_cast<Index>(bad_values[uniform(rng, 0, 2)]);
        for (const mg::Reduction reduction : {mg::Reduction::kNone, mg::Reduction::kAdd}) {
          for (const mg::IndexMode mode : {mg::IndexMode::kError, mg::IndexMode::kDrop, mg::IndexMode::kWrap}) {
            mg::ScatterOptions o;
            o.reduction = reduction;
            o.index_mode = mode;
            const std::vector<std::int64_t> axes{1};
            const mg::TensorView in(input.data(), mg::DType::kFloat32, {rows, cols});
            const mg::TensorView idx(ids.data(), index_dtype, shape, strides);
            const mg::TensorView up(updates.data(), mg::DType::kFloat32, shape);
            std::vector<float> want(input.size(), -1.f);
            const mg::Status ref = mg::scatter_multiaxis_reference(in, idx, up, axes,
                                                                   mview(want, mg::DType::kFloat32, {rows, cols}), o);
            const std::string what = "length " + std::to_string(length) + ", variant " + std::to_string(variant) +
                                     ", bad at " + std::to_string(bad) + ", reduction " +
                                     std::to_string(static_cast<int>(reduction)) + ", mode " +
                                     std::to_string(static_cast<int>(mode)) + ", seed " + std::to_string(seed);
            ASSERT_EQ(ref.ok(), bad < 0 || mode != mg::IndexMode::kError) << what;
            for (int threads : {1, 2, 3, 8}) {
              o.num_threads = threads;
              std::vector<float> out(input.size(), -1.f);
              const mg::Status st = mg::scatter_multiaxis_into(in, idx, up, axes, mview(out, mg::DType::kFloat32, {rows, cols}), o);
              ASSERT_EQ(st.code(), ref.code()) << what << ", " << threads << " threads: " << st.message();
              ASSERT_EQ(st.message(), ref.message()) << what;
              ASSERT_EQ(0, std::memcmp(out.data(), want.data(), out.size() * 4)) << what << ", " << threads << " threads";
              try {
                const mg::Tensor fresh = mg::scatter_multiaxis(in, idx, up, axes, o);
                ASSERT_TRUE(ref.ok()) << what;
                ASSERT_EQ(0, std::memcmp(fresh.data(), want.data(), want.size() * 4)) << what << ", one-shot, " << threads << " threads";
              } catch (const mg::Error& e) {
                ASSERT_EQ(std::string(e.what()), ref.message()) << what << ", one-shot, " << threads << " threads";
              }
            }
          }
        }
      }
    }
  }
}

TEST(ScatterCore, PlainElementLoopMatchesReferenceOnLongRowsAndBadIndices) {
  const std::uint64_t seed = run_seed();
  check_plain_element_scatter<std::int64_t>(mg::DType::kInt64, seed);
  check_plain_element_scatter<std::int32_t>(mg::DType::kInt32, seed + 1);
  check_plain_element_scatter<std::uint64_t>(mg::DType::kUInt64, seed + 2);
  check_plain_element_scatter<std::uint32_t>(mg::DType::kUInt32, seed + 3);
}

TEST(ComplexMinMax, EngineMatchesReferenceWithNansTiesAndSignedZeros) {
  // random_case's shapes, index modes, broadcasting and strided outputs, made complex64 /
  // complex128 min / max over parts from {NaN, -inf, -1, -0, +0, 1, inf}: ties on the real part,
  // NaN on either side and both zeros everywhere. Nothing is computed, only chosen, so the bytes
  // (NaN bits included) must be identical at 1, 2, 3 and 8 threads on every threaded path.
  int compared = 0;
  for (const auto path : {mg::detail::ScatterThreading::kBuckets, mg::detail::ScatterThreading::kSlabs,
                          mg::detail::ScatterThreading::kFiltered, mg::detail::ScatterThreading::kSorted}) {
    const ThreadingForAll threaded(path);
    Rng rng(run_seed() + 7);
    for (int i = 0; i < 400; ++i) {
      const std::uint64_t case_seed = rng();
      Rng case_rng(case_seed);
      const Case c = mg::test::random_complex_order_case(case_rng);
      const Result ref = run_case(c, true, 1);
      for (int threads : {1, 2, 3, 8}) {
        const Result got = run_case(c, false, threads);
        ASSERT_EQ(got.status.code(), ref.status.code()) << "case seed " << case_seed << ": " << got.status.message();
        ASSERT_TRUE(got.bytes == ref.bytes) << "case seed " << case_seed << " threads " << threads << " path "
                                            << static_cast<int>(path) << ": " << describe(c);
        compared += ref.status.ok();
      }
    }
  }
  EXPECT_GT(compared, 3000);
}

TEST(ScatterCore, SlabsAreBitIdenticalAtAnyThreadCount) {
  // ScatterElements add along axis 0 of [rows, cols] (S3's shape, smaller): columns are
  // neither an axis nor broadcast, so threads take disjoint column slabs. Many float32 updates
  // per target: the sum's rounding depends on the order, which must stay row-major.
  Rng rng(run_seed() + 3);
  const std::int64_t rows = 16, cols = 1024, n = 512;
  std::vector<float> input(static_cast<std::size_t>(rows * cols), 0.f), updates(static_cast<std::size_t>(n * cols));
  std::vector<std::int32_t> indices(static_cast<std::size_t>(n * cols));
  std::uniform_real_distribution<float> real(-1e4f, 1e4f);
  for (auto& u : updates) u = real(rng);
  for (auto& i : indices) i = static_cast<std::int32_t>(uniform(rng, -rows, rows - 1));
  std::vector<float> sequential = input;
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t col = 0; col < cols; ++col) {
      std::int64_t row = indices[static_cast<std::size_t>(r * cols + col)];
      if (row < 0) row += rows;
      sequential[static_cast<std::size_t>(row * cols + col)] += updates[static_cast<std::size_t>(r * cols + col)];
    }
  }
  mg::ScatterOptions add;
  add.reduction = mg::Reduction::kAdd;
  const std::vector<std::int64_t> axes{0};
  for (int threads : {1, 2, 3, 4, 8, 2, 1}) {
    add.num_threads = threads;
    std::vector<float> out(input.size());
    ASSERT_TRUE(mg::scatter_multiaxis_into(view(input, mg::DType::kFloat32, {rows, cols}),
                                           view(indices, mg::DType::kInt32, {n, cols}),
                                           view(updates, mg::DType::kFloat32, {n, cols}), axes,
                                           mview(out, mg::DType::kFloat32, {rows, cols}), add).ok());
    EXPECT_EQ(0, std::memcmp(sequential.data(), out.data(), out.size() * 4)) << threads << " threads";
  }
}

TEST(ScatterCore, OneShotCopiesTheInputSlabBySlab) {
  // A scatter into a new C-contiguous output copies the input one step of rows at a time
  // (scatter_engine.cpp, run_copied_slabs: about 256 KiB per step) just before combining into
  // it: here 900 rows of 4 KiB (S2's shape, fewer rows) over many steps per thread, and
  // 3007 rows of 132 bytes, whose steps do not divide the rows. Every element must be
  // the reference's, at every thread count and reduction, with duplicates and dropped lookups.
  Rng rng(run_seed() + 5);
  for (const auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{900, 1024}, {3007, 33}}) {
    const std::int64_t k = std::min<std::int64_t>(cols, 300);
    std::vector<float> input(static_cast<std::size_t>(rows * cols)), updates(static_cast<std::size_t>(rows * k));
    std::vector<std::int64_t> indices(updates.size());
    for (auto& v : input) v = static_cast<float>(uniform(rng, -1000, 1000)) / 8;
    for (auto& v : updates) v = static_cast<float>(uniform(rng, -1000, 1000)) / 8;
    for (auto& i : indices) i = uniform(rng, -cols - 1, cols);  // some out of range: dropped
    for (const auto reduction : {mg::Reduction::kNone, mg::Reduction::kAdd, mg::Reduction::kMax}) {
      mg::ScatterOptions o;
      o.reduction = reduction;
      o.index_mode = mg::IndexMode::kDrop;
      const std::vector<std::int64_t> axes{1};
      const mg::TensorView in = view(input, mg::DType::kFloat32, {rows, cols});
      const mg::TensorView ix = view(indices, mg::DType::kInt64, {rows, k});
      const mg::TensorView up = view(updates, mg::DType::kFloat32, {rows, k});
      std::vector<float> want(input.size(), -7.f);
      ASSERT_TRUE(mg::scatter_multiaxis_reference(in, ix, up, axes, mview(want, mg::DType::kFloat32, {rows, cols}), o).ok());
      for (int threads : {1, 2, 3, 8}) {
        o.num_threads = threads;
        std::vector<float> got(input.size(), -7.f);
        ASSERT_TRUE(mg::scatter_multiaxis_into(in, ix, up, axes, mview(got, mg::DType::kFloat32, {rows, cols}), o).ok());
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * 4))
            << rows << "x" << cols << " reduction " << static_cast<int>(reduction) << ", " << threads << " threads";
        const mg::Tensor fresh = mg::scatter_multiaxis(in, ix, up, axes, o);
        ASSERT_EQ(0, std::memcmp(want.data(), fresh.data(), got.size() * 4)) << threads << " threads, one-shot";
      }
    }
  }
}

TEST(ScatterCore, SortedRunsAreBitIdenticalAtAnyThreadCount) {
  // Segment sums over sorted ids: rows of `width` float32 values added into [segments, width]
  // along axis 0, the runs of equal ids of random lengths (a few long enough to cross several
  // chunks), some ids out of range and dropped. Every thread count gives the sequential sum's
  // bytes; ids that decrease once fall back to another rule with the same bytes.
  Rng rng(run_seed() + 11);
  std::uniform_real_distribution<float> real(-1e4f, 1e4f);
  for (int trial = 0; trial < 24; ++trial) {
    const std::int64_t segments = uniform(rng, 1, 300), width = trial % 3 == 0 ? 1 : uniform(rng, 1, 40);
    std::vector<std::int64_t> ids;
    for (std::int64_t s = 0; s < segments; ++s) {
      const std::int64_t run = trial % 4 == 1 && s == segments / 2 ? 5000 : uniform(rng, 0, 30);
      for (std::int64_t r = 0; r < run; ++r) ids.push_back(uniform(rng, 0, 9) == 0 && trial % 2 ? -1 : s);
    }
    if (trial % 6 == 5 && ids.size() > 2) std::swap(ids.front(), ids.back());  // one decrease: not sorted
    const auto n = static_cast<std::int64_t>(ids.size());
    std::vector<float> updates(static_cast<std::size_t>(n * width)), zeros(static_cast<std::size_t>(segments * width), 0.f);
    for (auto& u : updates) u = real(rng);
    std::vector<float> sequential = zeros;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t s = ids[static_cast<std::size_t>(i)];
      if (s < 0) continue;
      for (std::int64_t f = 0; f < width; ++f) {
        sequential[static_cast<std::size_t>(s * width + f)] += updates[static_cast<std::size_t>(i * width + f)];
      }
    }
    mg::ScatterOptions add;
    add.reduction = mg::Reduction::kAdd;
    add.index_mode = mg::IndexMode::kDrop;
    add.negative_indices = false;
    const std::vector<std::int64_t> axes{0};
    for (const auto rule : {mg::detail::ScatterThreading::kAuto, mg::detail::ScatterThreading::kSorted}) {
      const ThreadingForAll threaded(rule);
      for (int threads : {1, 2, 3, 4, 8}) {
        add.num_threads = threads;
        std::vector<float> out(zeros.size());
        // input [segments, 1, width] (broadcast over the rows), indices [1, n, 1], updates [1, n, width]
        ASSERT_TRUE(mg::scatter_multiaxis_into(
                        mg::TensorView(zeros.data(), mg::DType::kFloat32, {segments, 1, width}, {width, 0, 1}),
                        mg::TensorView(ids.data(), mg::DType::kInt64, {1, n, 1}),
                        mg::TensorView(updates.data(), mg::DType::kFloat32, {1, n, width}), axes,
                        mview(out, mg::DType::kFloat32, {segments, 1, width}), add)
                        .ok());
        EXPECT_EQ(0, std::memcmp(sequential.data(), out.data(), out.size() * 4))
            << "trial " << trial << ", " << threads << " threads, rule " << static_cast<int>(rule);
      }
    }
  }
}

/// One value of a float table that makes the combines' rules visible: NaN (where `nan`),
/// infinities, both zeros, ties (1, -1) and ordinary numbers. x86 gives an add or product of two
/// NaNs the first operand's payload, and the compiler may swap a commutative operation's operands,
/// so sums and products get no NaN of their own: the NaNs they make (inf - inf, 0 * inf) all
/// carry the default NaN's bits, whatever the operand order.
template <class T>
T edge_value(Rng& rng, bool nan) {
  switch (uniform(rng, nan ? 0 : 1, 11)) {
    case 0: return std::numeric_limits<T>::quiet_NaN();
    case 1: return -std::numeric_limits<T>::infinity();
    case 2: return std::numeric_limits<T>::infinity();
    case 3: return T(-0.0);
    case 4: return T(0.0);
    case 5: return T(1);
    case 6: return T(-1);
    default: return static_cast<T>(std::uniform_real_distribution<double>(-3, 3)(rng));
  }
}

/// Runs of lookups into one target row, combined in registers (combine_runs_simd) where the CPU
/// has AVX-512: float32 / float64 add, mul, min and max over rows of 1 to 150 elements (1 to 8
/// vectors, each with a partial tail, and past 8 vectors the per-lookup loop), sorted ids with
/// runs of 0 to 12 lookups and some runs longer than a tile, unsorted ids, dropped ids (their
/// tiles take the per-lookup loop), the input's values included. Values include both zeros,
/// infinities, ties and for min / max NaN, so min / max must keep the first NaN and the earlier
/// of equal values.
/// The reference kernel's bytes at 1, 2, 3 and 8 threads, with the AVX-512 kernels on and off.
template <class T>
void check_runs_against_reference(mg::DType dtype, std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<std::int64_t> widths =
      sizeof(T) == 4 ? std::vector<std::int64_t>{1, 2, 3, 15, 16, 17, 32, 33, 64, 100, 128, 129, 150}
                     : std::vector<std::int64_t>{1, 2, 7, 8, 9, 16, 31, 64, 65, 80};
  const mg::Reduction reductions[] = {mg::Reduction::kAdd, mg::Reduction::kMul, mg::Reduction::kMin,
                                      mg::Reduction::kMax};
  int kernels = 0;
  for (std::size_t w = 0; w < widths.size(); ++w) {
    const std::int64_t width = widths[w];
    for (const mg::Reduction reduction : reductions) {
      kernels += mg::detail::cpu::combine_runs_simd(dtype, reduction, width) != nullptr;
      const int shape = static_cast<int>(uniform(rng, 0, 3));  // 0, 1 sorted; 2 unsorted; 3 dropped ids
      const std::int64_t segments = uniform(rng, 1, 60);
      std::vector<std::int64_t> ids;
      for (std::int64_t s = 0; s < segments; ++s) {
        const std::int64_t run = shape == 1 && s == segments / 2 ? 700 : uniform(rng, 0, 12);
        for (std::int64_t r = 0; r < run; ++r) ids.push_back(shape == 3 && uniform(rng, 0, 20) == 0 ? segments : s);
      }
      if (shape == 2) std::shuffle(ids.begin(), ids.end(), rng);
      const auto n = static_cast<std::int64_t>(ids.size());
      std::vector<T> input(static_cast<std::size_t>(segments * width)), updates(static_cast<std::size_t>(n * width));
      const bool order = reduction == mg::Reduction::kMin || reduction == mg::Reduction::kMax;
      for (auto& x : input) x = edge_value<T>(rng, order);
      for (auto& x : updates) x = edge_value<T>(rng, order);
      mg::ScatterOptions o;
      o.reduction = reduction;
      o.index_mode = mg::IndexMode::kDrop;
      const std::vector<std::int64_t> axes{0};
      const mg::TensorView in(input.data(), dtype, {segments, width}), idx(ids.data(), mg::DType::kInt64, {n, 1}),
          up(updates.data(), dtype, {n, width});
      std::vector<T> ref(input.size());
      ASSERT_TRUE(mg::scatter_multiaxis_reference(in, idx, up, axes, mview(ref, dtype, {segments, width}), o).ok());
      for (const bool simd : {true, false}) {
        const bool before = mg::detail::cpu::set_simd_enabled(simd);
        for (int threads : {1, 2, 3, 8}) {
          o.num_threads = threads;
          std::vector<T> out(input.size());
          const mg::Status st = mg::scatter_multiaxis_into(in, idx, up, axes, mview(out, dtype, {segments, width}), o);
          EXPECT_TRUE(st.ok()) << st.message();
          EXPECT_EQ(0, std::memcmp(ref.data(), out.data(), out.size() * sizeof(T)))
              << "width " << width << ", reduction " << static_cast<int>(reduction) << ", ids shape " << shape
              << ", " << threads << " threads, simd " << simd << ", seed " << seed;
        }
        mg::detail::cpu::set_simd_enabled(before);
      }
    }
  }
  // Where the CPU has AVX-512, every width up to 8 vectors had its register kernel.
  if (mg::detail::cpu::simd_enabled()) {
    const int lanes = 64 / static_cast<int>(sizeof(T));
    const auto in_registers = std::count_if(widths.begin(), widths.end(), [&](std::int64_t x) { return x <= 8 * lanes; });
    EXPECT_EQ(kernels, 4 * in_registers);
  }
}

TEST(ScatterCore, RunsInRegistersMatchReferenceWithNansTiesAndSignedZeros) {
  for (int round = 0; round < 3; ++round) {
    check_runs_against_reference<float>(mg::DType::kFloat32, run_seed() + 31 + round);
    check_runs_against_reference<double>(mg::DType::kFloat64, run_seed() + 37 + round);
  }
}

TEST(ScatterCore, OneElementInputReachesEveryElementOfTheOutput) {
  // A segment op's core call: the input ONE element broadcast to [segments, width] (strides 0).
  // Sorted, unsorted and partly dropped ids; targets that leave gaps and a tail never reached;
  // elements of 1, 2, 4, 8 and 16 bytes; zero and non-zero input bytes; an output of stale bytes
  // beforehand. The reference kernel's bytes at 1 and 2 threads.
  Rng rng(run_seed() + 41);
  const mg::DType dtypes[] = {mg::DType::kInt8, mg::DType::kFloat16, mg::DType::kFloat32, mg::DType::kFloat64,
                              mg::DType::kComplex128};
  int cases = 0;
  for (const mg::DType dtype : dtypes) {
    const std::int64_t es = static_cast<std::int64_t>(mg::element_size(dtype));
    for (const mg::Reduction reduction : {mg::Reduction::kAdd, mg::Reduction::kNone, mg::Reduction::kMax}) {
      if (reduction == mg::Reduction::kMax && dtype == mg::DType::kComplex128) continue;
      for (int shape = 0; shape < 6; ++shape) {
        const std::int64_t segments = uniform(rng, 1, 400), width = shape % 2 ? 1 : uniform(rng, 2, 70);
        std::vector<std::int64_t> ids;
        for (std::int64_t s = 0; s < segments * 3 / 4; ++s) {  // the last quarter never reached
          const std::int64_t run = uniform(rng, 0, 4);
          for (std::int64_t r = 0; r < run; ++r) ids.push_back(shape >= 4 && uniform(rng, 0, 9) == 0 ? -1 : s);
        }
        if (shape >= 2 && shape < 4) std::shuffle(ids.begin(), ids.end(), rng);
        const auto n = static_cast<std::int64_t>(ids.size());
        std::vector<std::uint8_t> element(static_cast<std::size_t>(es), 0);
        if (shape % 3 != 0) element[0] = 7;  // a non-zero fill
        std::vector<std::uint8_t> updates(static_cast<std::size_t>(n * width * es));
        for (auto& b : updates) b = static_cast<std::uint8_t>(uniform(rng, 0, 63));  // finite values
        mg::ScatterOptions o;
        o.reduction = reduction;
        o.index_mode = mg::IndexMode::kDrop;
        o.negative_indices = false;
        const std::vector<std::int64_t> axes{0};
        const mg::TensorView in(element.data(), dtype, {segments, width}, {0, 0});
        const mg::TensorView idx(ids.data(), mg::DType::kInt64, {n, 1}), up(updates.data(), dtype, {n, width});
        std::vector<std::uint8_t> ref(static_cast<std::size_t>(segments * width * es), 0xAB);
        ASSERT_TRUE(mg::scatter_multiaxis_reference(in, idx, up, axes, mg::MutableTensorView(ref.data(), dtype, {segments, width}), o).ok());
        for (int threads : {1, 2}) {
          o.num_threads = threads;
          std::vector<std::uint8_t> out(ref.size(), 0xAB);
          const mg::Status st = mg::scatter_multiaxis_into(in, idx, up, axes, mg::MutableTensorView(out.data(), dtype, {segments, width}), o);
          ASSERT_TRUE(st.ok()) << st.message();
          EXPECT_TRUE(out == ref) << mg::dtype_name(dtype) << ", reduction " << static_cast<int>(reduction) << ", ids "
                                  << shape << ", " << threads << " threads, width " << width;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 6 * (5 * 3 - 1));
}

/// Many float32 updates added into `targets` elements at 1-8 threads (twice 1 and 2): the
/// same bytes every time, the sequential left-to-right sum.
void check_float_add_order(std::int64_t targets, std::uint64_t seed) {
  Rng rng(seed);
  const std::int64_t n = 1 << 20;
  std::vector<float> input(static_cast<std::size_t>(targets), 0.f), updates(static_cast<std::size_t>(n));
  std::vector<std::int64_t> indices(static_cast<std::size_t>(n));
  std::uniform_real_distribution<float> real(-1e4f, 1e4f);
  for (std::int64_t i = 0; i < n; ++i) {
    updates[static_cast<std::size_t>(i)] = real(rng);
    indices[static_cast<std::size_t>(i)] = uniform(rng, 0, targets - 1);
  }
  mg::ScatterOptions add;
  add.reduction = mg::Reduction::kAdd;
  std::vector<std::vector<float>> results;
  const std::vector<std::int64_t> axes{0};
  for (int threads : {1, 2, 3, 4, 8, 2, 1}) {
    add.num_threads = threads;
    std::vector<float> out(static_cast<std::size_t>(targets));
    ASSERT_TRUE(mg::scatter_multiaxis_into(view(input, mg::DType::kFloat32, {targets}),
                                           view(indices, mg::DType::kInt64, {n}),
                                           view(updates, mg::DType::kFloat32, {n}), axes,
                                           mview(out, mg::DType::kFloat32, {targets}), add).ok());
    results.push_back(out);
  }
  for (const auto& r : results) EXPECT_EQ(0, std::memcmp(r.data(), results[0].data(), r.size() * 4));
  std::vector<float> sequential(static_cast<std::size_t>(targets), 0.f);
  for (std::int64_t i = 0; i < n; ++i) {
    sequential[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])] += updates[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(0, std::memcmp(sequential.data(), results[0].data(), sequential.size() * 4));
}

TEST(ScatterCore, FloatAddIsBitIdenticalAtAnyThreadCount) {
  // Few targets, many updates each: order matters for the sum's rounding.
  {
    const ThreadingForAll buckets(mg::detail::ScatterThreading::kBuckets);
    check_float_add_order(1000, run_seed() + 1);
  }
  {
    const ThreadingForAll filtered(mg::detail::ScatterThreading::kFiltered);
    check_float_add_order(1000, run_seed() + 4);
  }
  // An 8 MiB output (S5's kind): the automatic rule takes the filtered path.
  check_float_add_order(std::int64_t{1} << 21, run_seed() + 5);
}

TEST(ScatterCore, OneShotCopiesTheInputOnEveryThreadCount) {
  // output = input is a threaded memcpy for C-contiguous views: split points fall on the
  // output's cache lines, with an odd element count and an input one element past alignment.
  const std::int64_t n = (std::int64_t{1} << 21) + 7;
  std::vector<float> storage(static_cast<std::size_t>(n) + 1);
  float* input = storage.data() + 1;
  for (std::int64_t i = 0; i < n; ++i) input[i] = static_cast<float>(i % 1000003);
  const std::vector<std::int64_t> indices{n - 1, 0, 5};  // the split points are elsewhere
  const std::vector<float> updates{-1.f, -2.f, -3.f};
  const std::vector<std::int64_t> axes{0};
  std::vector<float> out(static_cast<std::size_t>(n));
  for (int threads : {1, 2, 3, 5}) {
    mg::ScatterOptions o;
    o.num_threads = threads;
    std::memset(out.data(), 0x5a, out.size() * 4);  // not the input's bytes anywhere
    ASSERT_TRUE(mg::scatter_multiaxis_into(mg::TensorView(input, mg::DType::kFloat32, {n}),
                                           view(indices, mg::DType::kInt64, {3}),
                                           view(updates, mg::DType::kFloat32, {3}), axes,
                                           mview(out, mg::DType::kFloat32, {n}), o).ok());
    std::vector<float> expected(input, input + n);
    expected[static_cast<std::size_t>(n - 1)] = -1.f;
    expected[0] = -2.f;
    expected[5] = -3.f;
    std::int64_t first = -1;
    for (std::int64_t i = 0; i < n && first < 0; ++i) {
      if (std::memcmp(&expected[static_cast<std::size_t>(i)], &out[static_cast<std::size_t>(i)], 4) != 0) first = i;
    }
    ASSERT_EQ(first, -1) << threads << " threads: first difference at element " << first << ": " << out[static_cast<std::size_t>(first < 0 ? 0 : first)] << " vs " << expected[static_cast<std::size_t>(first < 0 ? 0 : first)];
  }
}

TEST(ScatterCombine, IdentityIsNeutralForEveryPairWithAnAtomicForm) {
  // The CUDA scatter's atomic mode starts a target from identity_bytes when include_input is
  // false, so combine(identity, x) must give x's bytes exactly: for random values of every
  // dtype, and for -0, +-inf and NaN where the dtype has them (x on the update side, as the first
  // update that reaches the target is).
  namespace cb = mg::detail::combine;
  static const mg::DType dtypes[] = {mg::DType::kBool, mg::DType::kInt8, mg::DType::kUInt8, mg::DType::kInt16,
                                     mg::DType::kUInt16, mg::DType::kInt32, mg::DType::kUInt32, mg::DType::kInt64,
                                     mg::DType::kUInt64, mg::DType::kFloat16, mg::DType::kBFloat16, mg::DType::kFloat32,
                                     mg::DType::kFloat64, mg::DType::kComplex64, mg::DType::kComplex128};
  Rng rng(run_seed() + 6);
  int checked = 0;
  for (const mg::DType dtype : dtypes) {
    for (const mg::Reduction reduction : {mg::Reduction::kAdd, mg::Reduction::kMul, mg::Reduction::kMin,
                                          mg::Reduction::kMax}) {
      unsigned char identity[16];
      if (!cb::identity_bytes(dtype, reduction, identity) || !cb::has_atomic_form(dtype, reduction)) continue;
      const std::size_t es = mg::element_size(dtype);
      std::vector<std::byte> values;
      mg::test::fill_random(rng, values, dtype, 200);
      const auto special = [&](double v, double w) {  // appended in the dtype's own encoding (w: imaginary)
        std::byte b[16] = {};
        if (dtype == mg::DType::kFloat16) { const std::uint16_t h = mg::float_to_half(static_cast<float>(v)); std::memcpy(b, &h, 2); }
        else if (dtype == mg::DType::kBFloat16) { const std::uint16_t h = mg::float_to_bfloat16(static_cast<float>(v)); std::memcpy(b, &h, 2); }
        else if (dtype == mg::DType::kFloat32 || dtype == mg::DType::kComplex64) { const float f[2] = {static_cast<float>(v), static_cast<float>(w)}; std::memcpy(b, f, es); }
        else { const double d[2] = {v, w}; std::memcpy(b, d, es); }
        values.insert(values.end(), b, b + es);
      };
      const bool floating = dtype >= mg::DType::kFloat16 && dtype <= mg::DType::kComplex128;
      const bool complex = dtype == mg::DType::kComplex64 || dtype == mg::DType::kComplex128;
      const double specials[] = {-0.0, 0.0, double(INFINITY), -double(INFINITY), double(NAN), 1.0};
      for (const double v : specials) {  // complex: every pair of them (NaN or an infinity on one side)
        if (!floating) break;
        if (!complex) special(v, v);
        else for (const double w : specials) special(v, w);
      }
      const std::size_t n = values.size() / es;
      ASSERT_TRUE(cb::visit_combine(dtype, reduction, [&]<class Op>() {
        for (std::size_t e = 0; e < n; ++e) {
          std::byte acc[16];
          std::memcpy(acc, identity, es);
          Op::apply(acc, values.data() + e * es, 1);
          EXPECT_EQ(std::memcmp(acc, values.data() + e * es, es), 0)
              << mg::dtype_name(dtype) << " " << mg::reduction_name(reduction) << " element " << e;
          ++checked;
        }
      }));
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(ScatterCore, AdjointOfGather) {
  // <gather(x), g> == <x, scatter_add(zeros, g)> in float64 (integers: exact).
  Rng rng(run_seed() + 2);
  for (int i = 0; i < 200; ++i) {
    Case c = random_case(rng);
    c.dtype = mg::DType::kFloat64;
    c.options.reduction = mg::Reduction::kAdd;
    c.options.include_input = true;
    if (c.options.index_mode == mg::IndexMode::kError) c.options.index_mode = mg::IndexMode::kClamp;
    mg::GatherShape g;
    ASSERT_TRUE(mg::infer_shape(c.input_shape, c.indices_shape, c.axes, &g).ok());
    std::int64_t nx = 0;
    mg::element_count(c.input_shape, &nx);
    std::vector<double> x(static_cast<std::size_t>(nx)), zeros(static_cast<std::size_t>(nx), 0.0);
    for (auto& v : x) v = static_cast<double>(uniform(rng, -50, 50));
    std::vector<double> gy(static_cast<std::size_t>(g.output_numel));
    for (auto& v : gy) v = static_cast<double>(uniform(rng, -50, 50));
    mg::GatherOptions go;
    go.index_mode = c.options.index_mode == mg::IndexMode::kDrop ? mg::IndexMode::kFill : c.options.index_mode;
    go.negative_indices = c.options.negative_indices;
    const mg::TensorView ix(c.indices.data(), c.index_dtype, c.indices_shape);
    mg::Tensor y = mg::gather_multiaxis(mg::TensorView(x.data(), mg::DType::kFloat64, c.input_shape), ix, c.axes, go);
    mg::Tensor dx = mg::scatter_multiaxis(mg::TensorView(zeros.data(), mg::DType::kFloat64, c.input_shape), ix,
                                          mg::TensorView(gy.data(), mg::DType::kFloat64, g.output_shape), c.axes,
                                          c.options);
    double lhs = 0, rhs = 0;
    for (std::int64_t e = 0; e < g.output_numel; ++e) lhs += static_cast<const double*>(y.data())[e] * gy[static_cast<std::size_t>(e)];
    for (std::int64_t e = 0; e < nx; ++e) rhs += x[static_cast<std::size_t>(e)] * static_cast<const double*>(dx.data())[e];
    EXPECT_EQ(lhs, rhs) << "case " << i;
  }
}

}  // namespace

// ---- Through the one pipeline (lower_op -> execute) ------------------------------------------

#include "multigather/execute.hpp"

namespace {

TEST(ScatterPipeline, RegistryOpMatchesTheCoreCallInPlaceAndStrided) {
  std::vector<double> x{1, 2, 3, 4, 5, 6};
  std::vector<std::int32_t> ix{2, 0, 2, 1};
  std::vector<double> u{10, 20, 30, 40};
  const mg::TensorView xv(x.data(), mg::DType::kFloat64, {2, 3});
  const mg::TensorView iv(ix.data(), mg::DType::kInt32, {2, 2});
  const mg::TensorView uv(u.data(), mg::DType::kFloat64, {2, 2});
  mg::Attributes attrs;
  attrs.set_ints("axes", {1}).set_string("reduction", "mul");
  mg::Tensor got = mg::run_op("scatter_multiaxis", xv, iv, uv, attrs);
  // numpy: np.multiply.at(x, (rows, ix), u): row 0: x[0,2] *= 10, x[0,0] *= 20; row 1: x[1,2] *= 30, x[1,1] *= 40
  const std::vector<double> expected{20, 2, 30, 4, 200, 180};
  ASSERT_EQ(got.numel(), 6);
  for (int e = 0; e < 6; ++e) EXPECT_EQ(static_cast<const double*>(got.data())[e], expected[static_cast<std::size_t>(e)]);

  // In place through execute: the output is the input itself.
  mg::Lowering l;
  ASSERT_TRUE(mg::lower_op("scatter_multiaxis", xv, iv, uv, attrs, &l).ok());
  EXPECT_EQ(l.kind, mg::OpKind::kScatter);
  ASSERT_TRUE(mg::execute(l, mg::MutableTensorView(x.data(), mg::DType::kFloat64, {2, 3})).ok());
  EXPECT_EQ(x, expected);

  // A transposed (strided) output: the result lands in its positions.
  x = {1, 2, 3, 4, 5, 6};
  std::vector<double> t(6, -1);
  ASSERT_TRUE(mg::execute(l, mg::MutableTensorView(t.data(), mg::DType::kFloat64, {2, 3}, {1, 2})).ok());
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) EXPECT_EQ(t[static_cast<std::size_t>(b * 2 + a)], expected[static_cast<std::size_t>(a * 3 + b)]);
  }
  // A bad index fails in place with the output untouched and the core's message.
  ix[3] = 3;
  ASSERT_TRUE(mg::lower_op("scatter_multiaxis", xv, iv, uv, attrs, &l).ok());
  const mg::Status s = mg::execute(l, mg::MutableTensorView(x.data(), mg::DType::kFloat64, {2, 3}));
  EXPECT_EQ(s.message(), "indices[1,1] = 3 is out of range for axis 1 of size 3 (valid range [-3, 3))");
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

}  // namespace

// A wide-accumulator scatter with no updates: an empty updates view broadcast (stride 0) along
// its size-0 dimension, with null data, reads nothing (the fuzzer's finding: the float32 copy
// of the updates folded that dimension to size 1 and read through the null pointer).
TEST(ScatterCore, WideAccumulatorWithEmptyBroadcastUpdatesReadsNothing) {
  std::vector<std::uint16_t> input(6, 0x3C00), output(6, 0);
  const std::vector<std::int64_t> indices(1, 0);
  mg::ScatterOptions options;
  options.reduction = mg::Reduction::kAdd;
  options.wide_accumulator = true;
  const mg::TensorView updates(nullptr, mg::DType::kFloat16, {2, 0, 3}, {3, 0, 1});
  const mg::Status s = mg::scatter_multiaxis_into(
      view(input, mg::DType::kFloat16, {2, 1, 3}),
      mg::TensorView(indices.data(), mg::DType::kInt64, {2, 0, 3}, {0, 0, 0}), updates, std::vector<std::int64_t>{1},
      mview(output, mg::DType::kFloat16, {2, 1, 3}), options);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(output, input);  // no update: the output is the input
}

// ScatterOptions::wide_accumulator (docs/spec.md section 5, "Accumulation"): float16 / bfloat16
// add and mul combine in float32 and round once per element. Oracle: the same scatter on float32
// arrays (every 16-bit value widened exactly) through the reference kernel, rounded once; and
// without the option, the 16-bit combine (each step rounded), which differs here.
TEST(ScatterCore, WideAccumulatorCombinesInFloat32AndRoundsOnce) {
  const std::vector<std::int64_t> axis0{0};
  for (const mg::DType dtype : {mg::DType::kBFloat16, mg::DType::kFloat16}) {
    for (const mg::Reduction reduction : {mg::Reduction::kAdd, mg::Reduction::kMul}) {
      const bool brain = dtype == mg::DType::kBFloat16;
      const auto narrow = [&](float f) { return brain ? mg::float_to_bfloat16(f) : mg::float_to_half(f); };
      const auto wide = [&](std::uint16_t b) { return brain ? mg::bfloat16_to_float(b) : mg::half_to_float(b); };
      // 3 targets x 2 columns; 600 updates into row 0 mostly (contention), a few into row 2.
      const std::int64_t n = 600;
      std::vector<std::uint16_t> input(6), updates(static_cast<std::size_t>(n * 2));
      std::vector<std::int64_t> indices(static_cast<std::size_t>(n * 2));
      std::vector<float> input32(6), updates32(updates.size());
      Rng rng(7);
      std::uniform_real_distribution<float> value(reduction == mg::Reduction::kMul ? 0.995f : 0.5f,
                                                  reduction == mg::Reduction::kMul ? 1.006f : 1.5f);
      for (std::size_t k = 0; k < input.size(); ++k) input32[k] = wide(input[k] = narrow(value(rng)));
      for (std::size_t k = 0; k < updates.size(); ++k) {
        updates32[k] = wide(updates[k] = narrow(value(rng)));
        indices[k] = k % 97 == 0 ? 2 : 0;
      }
      mg::ScatterOptions options;
      options.reduction = reduction;
      std::vector<float> expected32(6);
      ASSERT_TRUE(mg::scatter_multiaxis_reference(view(input32, mg::DType::kFloat32, {3, 2}),
                                                  view(indices, mg::DType::kInt64, {n, 2}),
                                                  view(updates32, mg::DType::kFloat32, {n, 2}), axis0,
                                                  mview(expected32, mg::DType::kFloat32, {3, 2}), options)
                      .ok());
      std::vector<std::uint16_t> narrow_result(6), wide_result(6), in_place = input;
      ASSERT_TRUE(mg::scatter_multiaxis_into(view(input, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                             view(updates, dtype, {n, 2}), axis0, mview(narrow_result, dtype, {3, 2}),
                                             options).ok());
      options.wide_accumulator = true;
      for (int threads : {1, 2, 3}) {
        options.num_threads = threads;
        ASSERT_TRUE(mg::scatter_multiaxis_into(view(input, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                               view(updates, dtype, {n, 2}), axis0, mview(wide_result, dtype, {3, 2}),
                                               options).ok());
        for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(wide_result[k], narrow(expected32[k])) << k << " " << threads;
      }
      // the reference kernel honours the option too (the fuzzers' oracle for such rows)
      std::vector<std::uint16_t> reference_result(6);
      ASSERT_TRUE(mg::scatter_multiaxis_reference(view(input, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                                  view(updates, dtype, {n, 2}), axis0,
                                                  mview(reference_result, dtype, {3, 2}), options)
                      .ok());
      EXPECT_EQ(reference_result, wide_result);
      // in place, and the one-shot form, give the same bytes
      ASSERT_TRUE(mg::scatter_multiaxis_into(view(in_place, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                             view(updates, dtype, {n, 2}), axis0, mview(in_place, dtype, {3, 2}), options)
                      .ok());
      EXPECT_EQ(in_place, wide_result);
      const mg::Tensor one_shot = mg::scatter_multiaxis(view(input, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                                        view(updates, dtype, {n, 2}), axis0, options);
      EXPECT_EQ(std::memcmp(one_shot.data(), wide_result.data(), 12), 0);
      // the 16-bit combine is further off: row 0 differs (the test would not see the option)
      EXPECT_NE(narrow_result[0], wide_result[0]);
      // a bad index leaves the output unchanged, with the reference kernel's message
      indices[5] = 3;
      std::vector<std::uint16_t> untouched = wide_result;
      const mg::Status s = mg::scatter_multiaxis_into(view(input, dtype, {3, 2}), view(indices, mg::DType::kInt64, {n, 2}),
                                                      view(updates, dtype, {n, 2}), axis0,
                                                      mview(untouched, dtype, {3, 2}), options);
      EXPECT_EQ(s.code(), mg::StatusCode::kOutOfRange) << s.message();
      EXPECT_EQ(untouched, wide_result);
    }
  }
}
