// The one resolver (src/core/index_resolve.hpp) against docs/spec.md section 1's resolve(v, n),
// transcribed here literally in 128-bit arithmetic: every mode, both negative rules, axis sizes
// 0-7, values around the range of every index type (uint64 above INT64_MAX included).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/index_resolve.hpp"

namespace multigather::detail {
namespace {

struct Spec {
  bool in_bounds;  // false: out of range (error / fill / drop: the caller's)
  __int128 position;
  IndexResolution how;
};

// SPEC section 1: if negative_indices and v < 0 (not in wrap mode): v += n; then by index_mode.
Spec spec_resolve(__int128 v, __int128 n, IndexMode mode, bool negative) {
  const __int128 raw = v;
  bool moved = false;
  if (mode != IndexMode::kWrap && negative && v < 0) {
    v += n;
    moved = true;
  }
  if (v >= 0 && v < n) return {true, v, moved ? IndexResolution::kNegative : IndexResolution::kInRange};
  if (n > 0 && mode == IndexMode::kClamp) return {true, v < 0 ? 0 : n - 1, IndexResolution::kClamped};
  if (n > 0 && mode == IndexMode::kWrap) return {true, ((raw % n) + n) % n, IndexResolution::kWrapped};
  return {false, 0, IndexResolution::kOutOfRange};
}

template <class Index>
void check_type(const std::vector<__int128>& values) {
  for (const IndexMode mode : {IndexMode::kError, IndexMode::kClamp, IndexMode::kWrap, IndexMode::kFill, IndexMode::kDrop}) {
    for (const bool negative : {false, true}) {
      for (std::int64_t n = 0; n < 8; ++n) {
        for (const __int128 value : values) {
          if (value < static_cast<__int128>(std::numeric_limits<Index>::min()) ||
              value > static_cast<__int128>(std::numeric_limits<Index>::max())) {
            continue;
          }
          const Index raw = static_cast<Index>(value);
          // The negative rule applies to signed index types only.
          const Spec want = spec_resolve(value, n, mode, negative && std::is_signed_v<Index>);
          std::int64_t got = -1, got_value = -1;
          const IndexResolution how = resolve_index(raw, n, mode, negative, &got);
          const IndexResolution how_value = resolve_index_value(value, n, mode, negative && std::is_signed_v<Index>, &got_value);
          SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << " negative " << negative
                                            << " n " << n << " value " << static_cast<long double>(value));
          ASSERT_EQ(how, want.how);
          ASSERT_EQ(how_value, want.how);
          ASSERT_EQ(static_cast<__int128>(got), want.position);  // 0 when out of range: always addressable
          ASSERT_EQ(static_cast<__int128>(got_value), want.position);
        }
      }
    }
  }
}

TEST(IndexResolve, EveryModeAndTypeMatchesTheSpec) {
  std::vector<__int128> values;
  for (int v = -20; v <= 20; ++v) values.push_back(v);
  for (const __int128 v : {__int128{-129}, __int128{-128}, __int128{127}, __int128{128}, __int128{255}, __int128{256},
                           __int128{INT32_MIN}, __int128{INT32_MAX}, __int128{UINT32_MAX}, __int128{INT64_MIN},
                           __int128{INT64_MIN} + 1, __int128{INT64_MAX}, __int128{INT64_MAX} + 1,
                           __int128{UINT64_MAX}}) {
    values.push_back(v);
  }
  check_type<std::int8_t>(values);
  check_type<std::uint8_t>(values);
  check_type<std::int16_t>(values);
  check_type<std::uint16_t>(values);
  check_type<std::int32_t>(values);
  check_type<std::uint32_t>(values);
  check_type<std::int64_t>(values);
  check_type<std::uint64_t>(values);
}

TEST(IndexResolve, CompileTimePolicyEqualsRunTimePolicy) {
  for (std::int64_t n = 1; n < 6; ++n) {
    for (std::int64_t v = -12; v <= 12; ++v) {
      std::int64_t a = 0, b = 0;
      EXPECT_EQ((resolve_index<IndexMode::kClamp, true>(v, n, &a)), resolve_index(v, n, IndexMode::kClamp, true, &b));
      EXPECT_EQ(a, b);
      EXPECT_EQ((resolve_index<IndexMode::kWrap, false>(v, n, &a)), resolve_index(v, n, IndexMode::kWrap, true, &b));
      EXPECT_EQ(a, b);
      EXPECT_EQ((resolve_index<IndexMode::kError, true>(v, n, &a)), resolve_index(v, n, IndexMode::kFill, true, &b));
      EXPECT_EQ(a, b);
    }
  }
}

}  // namespace
}  // namespace multigather::detail
