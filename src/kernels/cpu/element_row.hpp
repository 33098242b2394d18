// Internal: the row kernel of the CPU engine for GatherElements along the last axis (and any
// element plan of that shape): one coordinate, each row of lookups reads its own small span of
// the input (input stride 0 along the row), indices and output contiguous along the row.
// out[t] = row[resolve(idx[t]) * axis_stride] in one pass, the bounds check fused branch-free,
// while the next row's span is prefetched a cache line per lookup: the random reads within a
// row then hit the caches instead of waiting on memory one line at a time (measured 2x on
// elements_last_axis, 1 and 2 threads). Templated on the element width and the index type
// (plus the mode and negative rule, as resolve.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/resolve.hpp"

namespace multigather::detail::cpu {

inline constexpr std::int64_t kCacheLineBytes = 64;

/// One row of lookups.
struct ElementRow {
  const std::byte* input = nullptr;    // the row's input base: lookup t reads input + v * axis_stride
  const std::byte* indices = nullptr;  // one Index per lookup, contiguous
  std::byte* output = nullptr;         // one element per lookup, contiguous
  std::int64_t axis_stride = 0;        // input elements per index step
  std::int64_t axis_size = 0;
  const std::byte* fill = nullptr;     // one element: the fill value (kFill)
  const std::byte* next = nullptr;     // the next row's input span, prefetched (next_lines lines)
  std::int64_t next_lines = 0;
};

using ElementRowFn = bool (*)(const ElementRow&, std::int64_t);

/// Runs lookups [0, m) of row `r`. Returns false when an index was out of range under kError or
/// kFill; nothing out of range is ever read (a bad lookup reads the row's first element, or
/// the fill value under kFill).
template <std::size_t W, class Index, IndexMode kMode, bool kNegative>
bool gather_element_row(const ElementRow& r, std::int64_t m) {
  const std::byte* const input = r.input;
  const std::byte* const indices = r.indices;
  std::byte* const output = r.output;
  const std::int64_t stride = r.axis_stride;
  const std::int64_t size = r.axis_size;
  const std::byte* const fill_value = r.fill;
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  constexpr auto w = static_cast<std::int64_t>(W);
  unsigned bad = 0;
  auto one = [&](std::int64_t t) {
    bool ok;
    const std::int64_t v = resolve_index<Index, kMode, kNegative>(load_index<Index>(indices + t * is), size, ok);
    const std::byte* src = input + v * stride * w;
    if constexpr (kMode == IndexMode::kFill) src = ok ? src : fill_value;
    std::memcpy(output + t * w, src, W);
    bad |= static_cast<unsigned>(!ok);
  };
  const std::int64_t lines = r.next_lines < m ? r.next_lines : m;
  std::int64_t t = 0;
  for (; t < lines; ++t) {
    __builtin_prefetch(r.next + t * kCacheLineBytes);
    one(t);
  }
  for (; t < m; ++t) one(t);
  return bad == 0;
}

}  // namespace multigather::detail::cpu
