// Internal: the index pre-check of a gather into the caller's output (indices_in_range in
// engine.cpp): whether stored index values are within their axes' ranges, read sequentially.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace multigather::detail::cpu {

/// Whether v is within [lo, hi] (hi < 0: an empty axis, nothing is).
template <class Index>
inline bool value_in_range(Index v, std::int64_t lo, std::int64_t hi) noexcept {
  if constexpr (std::is_unsigned_v<Index>) {
    return hi >= 0 && static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(hi);
  } else {
    return static_cast<std::int64_t>(v) >= lo && static_cast<std::int64_t>(v) <= hi;
  }
}

/// n values p[0], p[step], ... starting at coordinate 0: value e within [lo[j], hi[j]] for its
/// coordinate j = e % c. c == 1 reduces to a min and a max (vectorized for step 1).
template <class Index>
bool values_in_range(const Index* p, std::int64_t n, std::int64_t step, int c, const std::int64_t* lo,
                     const std::int64_t* hi) noexcept {
  if (n == 0) return true;
  if (c == 1) {
    Index mn = p[0], mx = p[0];
    if (step == 1) {
      for (std::int64_t e = 1; e < n; ++e) {
        mn = std::min(mn, p[e]);
        mx = std::max(mx, p[e]);
      }
    } else {
      for (std::int64_t e = 1; e < n; ++e) {
        mn = std::min(mn, p[e * step]);
        mx = std::max(mx, p[e * step]);
      }
    }
    return value_in_range(mn, lo[0], hi[0]) && value_in_range(mx, lo[0], hi[0]);
  }
  bool ok = true;
  for (std::int64_t e = 0, j = 0; e < n; ++e) {
    ok &= value_in_range(p[e * step], lo[j], hi[j]);
    if (++j == c) j = 0;
  }
  return ok;
}

/// values_in_range for one coordinate (c == 1) over contiguous values, type-erased:
/// p[0, n) within [lo, hi].
using RangeCheckFn = bool (*)(const void* p, std::int64_t n, std::int64_t lo, std::int64_t hi) noexcept;

}  // namespace multigather::detail::cpu
