// Internal: the element kernels of the CPU engine for element plans with one coordinate
// (GatherElements / take_along_axis, flat take, torch.gather), over one run of lookups:
//  - gather_plain_run: out[t] = input[t * input_step + idx[t] * axis_stride] while each index
//    is already in range, the check a never-taken branch (flat take, GatherElements on a
//    non-last axis);
//  - gather_element_run, the fused row kernel: out[t] = row[resolve(idx[t]) * axis_stride]
//    with the mode and the bounds check fused, while the next row's input span is prefetched
//    a cache line per lookup (GatherElements along the last axis: each row reads its own small
//    span; measured 2x on elements_last_axis, 1 and 2 threads).
// Templated on the element width and the index type (plus the mode and negative rule for the
// fused kernel, as resolve.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/resolve.hpp"

namespace multigather::detail::cpu {

inline constexpr std::int64_t kCacheLineBytes = 64;

/// Rows of indices up to this many bytes, apart from each other (a slice such as
/// argsort(x)[:, :256]), are prefetched whole a row ahead (prefetch_lines), so that each row
/// does not start with the misses the hardware prefetcher needs to find its stream: the
/// gather's index pre-check and the plain element-scatter loop.
inline constexpr std::int64_t kPrefetchIndexRowBytes = 4096;

/// Prefetches every cache line of [p, p + bytes) for reading.
inline void prefetch_lines(const std::byte* p, std::int64_t bytes) noexcept {
  for (std::int64_t b = 0; b < bytes; b += kCacheLineBytes) __builtin_prefetch(p + b);
}

/// gather_plain_run<..., kPrefetch = true>: lookups between the one loaded and the one prefetched.
inline constexpr std::int64_t kPlainPrefetchDistance = 24;
/// Lookup spans (the input bytes one run's lookups may reach) from which the plain loop
/// prefetches: more than the L2 cache of this project's machine (2 MiB per core).
inline constexpr std::int64_t kPlainPrefetchSpanBytes = std::int64_t{4} << 20;

/// One run of lookups (consecutive along the innermost lookup dimension, or a tile of it).
struct ElementRun {
  const std::byte* input = nullptr;    // lookup t reads input + (t * input_step + v * axis_stride) * W
  const std::byte* indices = nullptr;  // lookup t's index: indices + t * index_step * sizeof(Index)
  std::byte* output = nullptr;         // lookup t writes output + t * output_step * W
  std::int64_t input_step = 0;         // elements
  std::int64_t index_step = 1;         // indices elements
  std::int64_t output_step = 1;        // elements
  std::int64_t axis_stride = 0;        // input elements per index step
  std::int64_t axis_size = 0;
  const std::byte* fill = nullptr;     // one element: the fill value (kFill)
  const std::byte* next = nullptr;     // the next row's input span, prefetched (next_lines lines)
  std::int64_t next_lines = 0;
};

using ElementRunFn = bool (*)(const ElementRun&, std::int64_t);
/// gather_plain_run: returns the number of lookups done.
using PlainRunFn = std::int64_t (*)(const ElementRun&, std::int64_t);

/// Runs lookups [0, m) of the row `r` (input_step is 0 on a row: every lookup reads the same
/// span, so it is not read). kUnit: index_step == output_step == 1 (the common layout; the
/// steps are then not read). Returns false when an index was out of range under kError or
/// kFill; nothing out of range is ever read (a bad lookup reads position 0 of its axis, or the
/// fill value under kFill).
template <std::size_t W, class Index, IndexMode kMode, bool kNegative, bool kUnit>
bool gather_element_run(const ElementRun& r, std::int64_t m) {
  const std::byte* const input = r.input;
  const std::byte* const indices = r.indices;
  std::byte* const output = r.output;
  const std::int64_t index_step = kUnit ? 1 : r.index_step;
  const std::int64_t output_step = kUnit ? 1 : r.output_step;
  const std::int64_t stride = r.axis_stride;
  const std::int64_t size = r.axis_size;
  const std::byte* const fill_value = r.fill;
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  constexpr auto w = static_cast<std::int64_t>(W);
  unsigned bad = 0;
  auto one = [&](std::int64_t t) {
    bool ok;
    const std::int64_t v =
        resolve_index<Index, kMode, kNegative>(load_index<Index>(indices + t * index_step * is), size, ok);
    const std::byte* src = input + v * stride * w;
    if constexpr (kMode == IndexMode::kFill) src = ok ? src : fill_value;
    std::memcpy(output + t * output_step * w, src, W);
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

/// The plain element loop: gathers lookups [0, m) of a run as long as each index is already in
/// [0, size) (the common case: no negative rule, no mode needed), and returns how many it did;
/// the caller resolves the lookup it stopped at (and on) the general way. The check is a
/// branch that is never taken on good input, so the loop keeps its few instructions per
/// lookup and with them many random reads in flight: a little slower than a loop with no
/// check, and faster than the check as a data dependency (select and flag) (GatherElements on
/// axis 0; measured: bench/README.md, "Measurements behind the CPU engine's choices"). An
/// out-of-range index is never used as an address. Unrolled by 4. next / next_lines are not used.
///
/// kPrefetch (inputs larger than the L2 cache, kPlainPrefetchSpanBytes): the element of the
/// lookup kPlainPrefetchDistance ahead is prefetched, so that many misses are in flight while
/// the loop waits on none (mlp_limit.c's fastest loop; measured through bench/limit_fraction.py,
/// flat take from 64 MiB at 1 thread: 0.83 of the limit on AVX-512 gathers, 0.90 this way).
/// The prefetched index is not checked yet: its address is computed in unsigned arithmetic and
/// only prefetched, which never faults.
template <std::size_t W, class Index, bool kUnit, bool kPrefetch = false>
std::int64_t gather_plain_run(const ElementRun& r, std::int64_t m) {
  const std::byte* const input = r.input;
  const std::byte* const indices = r.indices;
  std::byte* const output = r.output;
  const std::int64_t input_step = r.input_step;
  const std::int64_t index_step = kUnit ? 1 : r.index_step;
  const std::int64_t output_step = kUnit ? 1 : r.output_step;
  const std::int64_t stride = r.axis_stride;
  const auto size = static_cast<std::uint64_t>(r.axis_size);
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  constexpr auto w = static_cast<std::int64_t>(W);
  // One lookup; false (nothing written) when its index is not already in [0, size). As
  // uint64, a negative index is huge, so the one compare finds it too.
  auto one = [&](std::int64_t t) {
    const std::uint64_t v = load_index_unsigned<Index>(indices + t * index_step * is);
    if (__builtin_expect(v >= size, 0)) return false;
    std::memcpy(output + t * output_step * w,
                input + (t * input_step + static_cast<std::int64_t>(v) * stride) * w, W);
    return true;
  };
  std::int64_t t = 0;
  if constexpr (kPrefetch) {
    const auto base = reinterpret_cast<std::uintptr_t>(input);
    auto prefetch = [&](std::int64_t a) {
      const std::uint64_t v = load_index_unsigned<Index>(indices + a * index_step * is);
      const std::uint64_t element = static_cast<std::uint64_t>(a * input_step) + v * static_cast<std::uint64_t>(stride);
      __builtin_prefetch(reinterpret_cast<const void*>(base + element * static_cast<std::uint64_t>(w)));
    };
    for (; t + kPlainPrefetchDistance < m; ++t) {
      prefetch(t + kPlainPrefetchDistance);
      if (!one(t)) return t;
    }
  }
  for (; t + 4 <= m; t += 4) {
    if (!one(t)) return t;
    if (!one(t + 1)) return t + 1;
    if (!one(t + 2)) return t + 2;
    if (!one(t + 3)) return t + 3;
  }
  for (; t < m; ++t) {
    if (!one(t)) return t;
  }
  return m;
}

}  // namespace multigather::detail::cpu
