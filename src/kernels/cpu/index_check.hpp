// Internal: the index pre-check of a gather into the caller's output (indices_in_range in
// engine.cpp): whether stored index values are within their axes' ranges, read sequentially.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
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

/// values_in_range over contiguous values (step 1) in a form the compiler vectorizes: one
/// coordinate as a min and a max; several as branch-free compares, block by block, against
/// the bounds repeated over L = lcm(c, 8) positions (every block starts at coordinate 0).
/// Values are compared as int64: an unsigned 64-bit value from 2^63 on is negative there,
/// below every lower bound (0), as it must be.
template <class Index>
bool contiguous_in_range(const Index* p, std::int64_t n, int c, const std::int64_t* lo,
                         const std::int64_t* hi) noexcept {
  if (c == 1) return values_in_range(p, n, 1, 1, lo, hi);
  constexpr int kMaxBlock = 8 * 16;  // lcm(c, 8) <= 8 c, c <= kMaxRank (16)
  const int block = c * 8 / std::gcd(c, 8);
  std::int64_t block_lo[kMaxBlock], block_hi[kMaxBlock];
  for (int t = 0; t < block; ++t) {
    block_lo[t] = lo[t % c];
    block_hi[t] = hi[t % c];
  }
  std::int64_t e = 0;
  for (; e + block <= n; e += block) {
    bool bad = false;
    for (int t = 0; t < block; ++t) {
      const auto v = static_cast<std::int64_t>(p[e + t]);
      bad |= (v < block_lo[t]) | (v > block_hi[t]);
    }
    if (bad) return false;
  }
  bool bad = false;
  for (int t = 0; e < n; ++e, ++t) {
    const auto v = static_cast<std::int64_t>(p[e]);
    bad |= (v < block_lo[t]) | (v > block_hi[t]);
  }
  return !bad;
}

/// contiguous_in_range, type-erased (the AVX-512 build's pointer).
using RangeCheckFn = bool (*)(const void* p, std::int64_t n, int c, const std::int64_t* lo,
                              const std::int64_t* hi) noexcept;

}  // namespace multigather::detail::cpu
