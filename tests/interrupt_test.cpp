// Interrupting long calls (multigather/interrupt.hpp) and the unchanged-output contract of a
// failed gather (gather.hpp, execute.hpp): the CPU engines poll the calling thread's
// InterruptScope and stop with StatusCode::kCancelled; a gather into the caller's output that
// meets a bad index leaves the output as it was. Oracles: the reference kernel and the inputs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/avx512.hpp"
#include "multigather/multigather.hpp"

namespace multigather {
namespace {

template <class Index>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<Index, std::int8_t>) return DType::kInt8;
  if constexpr (std::is_same_v<Index, std::uint8_t>) return DType::kUInt8;
  if constexpr (std::is_same_v<Index, std::int16_t>) return DType::kInt16;
  if constexpr (std::is_same_v<Index, std::uint16_t>) return DType::kUInt16;
  if constexpr (std::is_same_v<Index, std::int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<Index, std::uint32_t>) return DType::kUInt32;
  if constexpr (std::is_same_v<Index, std::int64_t>) return DType::kInt64;
  return DType::kUInt64;
}

/// A check that answers true on its `stop_at`-th call (0: never), counting the calls.
struct CountingCheck {
  int calls = 0;
  int stop_at = 0;
  static bool check(void* self) noexcept {
    auto* c = static_cast<CountingCheck*>(self);
    ++c->calls;
    return c->stop_at > 0 && c->calls >= c->stop_at;
  }
};

constexpr std::int64_t kLookups = std::int64_t{1} << 25;  // 8 polls' worth

class Interrupt : public ::testing::TestWithParam<int> {};  // the thread count

TEST_P(Interrupt, GatherStopsAtTheCheckAndSaysCancelled) {
  std::vector<std::uint8_t> x(256);
  std::iota(x.begin(), x.end(), 0);
  std::vector<std::int32_t> idx(static_cast<std::size_t>(kLookups));
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int32_t>(i * 7 % 256);
  std::vector<std::uint8_t> out(idx.size(), 0);
  const TensorView input(x.data(), DType::kUInt8, {256});
  const TensorView indices(idx.data(), DType::kInt32, {kLookups});
  const MutableTensorView output(out.data(), DType::kUInt8, {kLookups});
  const std::int64_t axes[] = {0};
  GatherOptions options;
  options.num_threads = GetParam();
  {
    CountingCheck never;
    const InterruptScope scope(&CountingCheck::check, &never);
    ASSERT_TRUE(gather_multiaxis_into(input, indices, axes, output, options).ok());
    EXPECT_GE(never.calls, 1);  // asked: the pre-check and the engine each poll
    EXPECT_FALSE(scope.interrupted());
    for (std::size_t i = 0; i < out.size(); i += 4099) ASSERT_EQ(out[i], x[static_cast<std::size_t>(idx[i])]);
  }
  for (IndexMode mode : {IndexMode::kError, IndexMode::kClamp}) {
    options.index_mode = mode;  // error: stopped in the index pre-check; clamp: in the engine
    std::fill(out.begin(), out.end(), 0);
    CountingCheck stop;
    stop.stop_at = 2;
    const InterruptScope scope(&CountingCheck::check, &stop);
    const Status s = gather_multiaxis_into(input, indices, axes, output, options);
    EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.message();
    EXPECT_EQ(s.message().rfind("interrupted", 0), 0u) << s.message();
    EXPECT_EQ(stop.calls, 2);  // not asked again once it said stop
    EXPECT_TRUE(scope.interrupted());
  }
}

TEST_P(Interrupt, ScatterOf2To60LookupsStopsWithinTheFirstPollAndWritesNothing) {
  // A stride-0 index view asks for 2^30 x 2^30 lookups into a 4-element output (years; the
  // byte size of that shape, 2^62, is the most that validation allows for float32).
  const std::int64_t zero = 0;
  const float one = 1.0f;
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out(x);
  const std::int64_t n = std::int64_t{1} << 30;
  const TensorView input(x.data(), DType::kFloat32, {4, 1});
  const TensorView indices(&zero, DType::kInt64, {n, n}, {0, 0});
  const TensorView updates(&one, DType::kFloat32, {1, 1}, {0, 0});
  const MutableTensorView output(out.data(), DType::kFloat32, {4, 1});
  const std::int64_t axes[] = {0};
  ScatterOptions options;
  options.reduction = Reduction::kAdd;
  options.num_threads = GetParam();
  CountingCheck stop;
  stop.stop_at = 1;
  const InterruptScope scope(&CountingCheck::check, &stop);
  const auto start = std::chrono::steady_clock::now();
  const Status s = scatter_multiaxis_into(input, indices, updates, axes, output, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.message();
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(out, x);  // stopped in the index pass, before the first write
}

INSTANTIATE_TEST_SUITE_P(Threads, Interrupt, ::testing::Values(1, 2));

TEST(Interrupt, NoScopeNoCheck) {
  // Outside a scope nothing is asked; a scope's check is not asked after the scope ends.
  CountingCheck check;
  { const InterruptScope scope(&CountingCheck::check, &check); }
  std::vector<float> x(1 << 20, 1.0f);
  std::vector<std::int64_t> idx(std::size_t{1} << 23, 5);
  const std::int64_t axes[] = {0};
  const Tensor r = gather_multiaxis(TensorView(x.data(), DType::kFloat32, {1 << 20}),
                                    TensorView(idx.data(), DType::kInt64, {1 << 23}), axes);
  EXPECT_EQ(check.calls, 0);
  EXPECT_EQ(static_cast<const float*>(r.data())[123], 1.0f);
}

// ---- a failed gather leaves the caller's output unchanged ---------------------------------------

template <class Index>
void expect_unchanged_on_bad_index(int threads, bool negative_indices) {
  SCOPED_TRACE(std::string(dtype_name(dtype_of<Index>())) + " threads " + std::to_string(threads));
  const std::int64_t rows = 3000, cols = 7;  // indices [rows, 2 * cols]: two coordinates each
  std::vector<float> x(5 * 9);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<Index> idx(static_cast<std::size_t>(rows * 2 * cols));
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<Index>(i % 2 == 0 ? i % 9 : i % 5);
  const std::int64_t axes[] = {1, 0};  // coordinate 0 indexes axis 1 (size 9), 1 indexes axis 0 (5)
  // Indices viewed with a gap between rows (a strided view of a larger buffer).
  std::vector<Index> strided(static_cast<std::size_t>(rows * (2 * cols + 3)), static_cast<Index>(100));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < 2 * cols; ++c) {
      strided[static_cast<std::size_t>(r * (2 * cols + 3) + c)] = idx[static_cast<std::size_t>(r * 2 * cols + c)];
    }
  }
  const TensorView input(x.data(), DType::kFloat32, {5, 9});
  GatherOptions options;
  options.num_threads = threads;
  options.negative_indices = negative_indices;
  for (const bool use_strided : {false, true}) {
    std::vector<Index>& buffer = use_strided ? strided : idx;
    const TensorView indices = use_strided
                                   ? TensorView(buffer.data(), dtype_of<Index>(), {rows, 2 * cols}, {2 * cols + 3, 1})
                                   : TensorView(buffer.data(), dtype_of<Index>(), {rows, 2 * cols});
    std::vector<float> want(static_cast<std::size_t>(rows * cols));
    const MutableTensorView want_view(want.data(), DType::kFloat32, {rows, cols});
    ASSERT_TRUE(gather_multiaxis_reference(input, TensorView(idx.data(), dtype_of<Index>(), {rows, 2 * cols}),
                                           axes, want_view, options).ok());
    std::vector<float> out(want.size(), -1.0f);
    const MutableTensorView out_view(out.data(), DType::kFloat32, {rows, cols});
    ASSERT_TRUE(gather_multiaxis_into(input, indices, axes, out_view, options).ok());
    EXPECT_EQ(out, want);
    // A bad value late in the indices (the last lookup's axis-0 coordinate = 5): unchanged.
    const std::size_t last = use_strided ? static_cast<std::size_t>((rows - 1) * (2 * cols + 3) + 2 * cols - 1)
                                         : idx.size() - 1;
    const Index saved = buffer[last];
    buffer[last] = static_cast<Index>(5);
    std::fill(out.begin(), out.end(), -1.0f);
    const Status s = gather_multiaxis_into(input, indices, axes, out_view, options);
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; }));
    buffer[last] = saved;
  }
}

TEST(FailedGather, LeavesTheCallersOutputUnchangedForEveryIndexDtype) {
  for (int threads : {1, 2}) {
    expect_unchanged_on_bad_index<std::int16_t>(threads, true);
    expect_unchanged_on_bad_index<std::uint16_t>(threads, true);
    expect_unchanged_on_bad_index<std::int32_t>(threads, false);
    expect_unchanged_on_bad_index<std::uint32_t>(threads, true);
    expect_unchanged_on_bad_index<std::int64_t>(threads, true);
    expect_unchanged_on_bad_index<std::uint64_t>(threads, true);
    expect_unchanged_on_bad_index<std::int8_t>(threads, true);
    expect_unchanged_on_bad_index<std::uint8_t>(threads, true);
  }
}

TEST(FailedGather, NegativeValuesFollowTheNegativeRule) {
  // -1 is valid with negative_indices, out of range without; the output is unchanged then.
  std::vector<float> x = {10, 11, 12};
  std::vector<std::int64_t> idx(100000, 1);
  idx[99999] = -1;
  std::vector<float> out(idx.size(), 0.0f);
  const std::int64_t axes[] = {0};
  GatherOptions options;
  ASSERT_TRUE(gather_multiaxis_into(TensorView(x.data(), DType::kFloat32, {3}),
                                    TensorView(idx.data(), DType::kInt64, {100000}), axes,
                                    MutableTensorView(out.data(), DType::kFloat32, {100000}), options).ok());
  EXPECT_EQ(out[99999], 12.0f);
  std::fill(out.begin(), out.end(), 0.0f);
  options.negative_indices = false;
  EXPECT_EQ(gather_multiaxis_into(TensorView(x.data(), DType::kFloat32, {3}),
                                  TensorView(idx.data(), DType::kInt64, {100000}), axes,
                                  MutableTensorView(out.data(), DType::kFloat32, {100000}), options).code(),
            StatusCode::kOutOfRange);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 0.0f; }));
}

TEST(FailedGather, BroadcastIndicesAreCheckedPerCoordinate) {
  // One stored value for every lookup and both coordinates (strides 0, 0): 3 is in range for
  // both axes (sizes 9 and 5), 6 only for the first.
  std::vector<float> x(5 * 9);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::int64_t axes[] = {1, 0};
  for (const std::int64_t value : {std::int64_t{3}, std::int64_t{6}}) {
    const TensorView indices(&value, DType::kInt64, {1000, 2}, {0, 0});
    std::vector<float> out(1000, -1.0f);
    const Status s = gather_multiaxis_into(TensorView(x.data(), DType::kFloat32, {5, 9}), indices, axes,
                                           MutableTensorView(out.data(), DType::kFloat32, {1000, 1}), {});
    if (value == 3) {
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](float v) { return v == x[3 * 9 + 3]; }));
    } else {
      EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; }));
    }
  }
}

template <class Index>
void expect_bounds_at_every_position(bool negative_indices) {
  // One coordinate, contiguous indices (the AVX-512 pre-check where the CPU has it): every
  // boundary value at the first, a middle and the last position, against the reference.
  const std::int64_t n = 7, lookups = 5000;
  std::vector<float> x(static_cast<std::size_t>(n));
  std::iota(x.begin(), x.end(), 1.0f);
  const std::int64_t axes[] = {0};
  GatherOptions options;
  options.negative_indices = negative_indices;
  std::vector<std::int64_t> values = {0, n - 1, n};
  if (std::is_signed_v<Index>) values.insert(values.end(), {-1, -n, -n - 1});
  if (std::is_unsigned_v<Index>) values.push_back(-1);  // the largest value of the type
  for (const std::int64_t v : values) {
    for (const std::int64_t at : {std::int64_t{0}, lookups / 2, lookups - 1}) {
      std::vector<Index> idx(static_cast<std::size_t>(lookups), static_cast<Index>(3));
      idx[static_cast<std::size_t>(at)] = static_cast<Index>(v);
      const TensorView input(x.data(), DType::kFloat32, {n}), indices(idx.data(), dtype_of<Index>(), {lookups});
      std::vector<float> want(idx.size(), -1.0f), out(idx.size(), -1.0f);
      const Status ref = gather_multiaxis_reference(input, indices, axes,
                                                    MutableTensorView(want.data(), DType::kFloat32, {lookups}), options);
      const Status s = gather_multiaxis_into(input, indices, axes,
                                             MutableTensorView(out.data(), DType::kFloat32, {lookups}), options);
      ASSERT_EQ(s.code(), ref.code()) << v << " at " << at;
      if (ref.ok()) {
        EXPECT_EQ(out, want) << v << " at " << at;
      } else {
        EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float f) { return f == -1.0f; })) << v << " at " << at;
      }
    }
  }
}

TEST(FailedGather, PreCheckMatchesTheReferenceWithAndWithoutAvx512) {
  for (const bool simd : {true, false}) {
    const bool before = detail::cpu::set_simd_enabled(simd);
    SCOPED_TRACE(simd ? "AVX-512 where the CPU has it" : "scalar");
    for (const bool negative : {true, false}) {
      expect_bounds_at_every_position<std::int32_t>(negative);
      expect_bounds_at_every_position<std::int64_t>(negative);
      expect_bounds_at_every_position<std::uint32_t>(negative);
      expect_bounds_at_every_position<std::uint64_t>(negative);
      expect_bounds_at_every_position<std::int16_t>(negative);
    }
    expect_unchanged_on_bad_index<std::int64_t>(1, true);  // two coordinates per lookup
    expect_unchanged_on_bad_index<std::uint32_t>(2, true);
    detail::cpu::set_simd_enabled(before);
  }
}

TEST(FailedGather, ExecuteIntoTheCallersOutputLeavesItUnchanged) {
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<std::int64_t> idx = {0, 3, 1, 9, 2};
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", TensorView(x.data(), DType::kFloat32, {4}),
                       TensorView(idx.data(), DType::kInt64, {5}), Attributes{}, &l).ok());
  std::vector<float> out(5, -3.0f);
  const Status s = execute(l, MutableTensorView(out.data(), DType::kFloat32, {5}));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
  EXPECT_EQ(out, std::vector<float>(5, -3.0f));
}

}  // namespace
}  // namespace multigather
