// Internal: the fused gather + segment reduction (gathered_segments.cpp) behind
// torch.nn.functional.embedding_bag's lowering (Lowering::gathered).
#pragma once

#include <cstdint>
#include <cstring>

#include "multigather/tensor.hpp"

namespace multigather::detail {

/// One call: out[b, f] = reduce over the update rows n in [bag_starts[b], bag_starts[b+1]) with
/// rows[n] != skip_row of scale[n] * table[rows[n], f] (scale: 1 without data). Sum, or mean
/// (divided by the rows that took part), or max (no scale; PyTorch's rule: a later value
/// replaces the running max only when greater). A bag no row reaches is 0.
struct GatheredSegmentsCall {
  TensorView table;                      // [V, D], any strides; float16, bfloat16, float32, float64
  const std::int64_t* rows = nullptr;    // [N], each in [0, V) (checked by the lowering)
  const std::int64_t* bag_starts = nullptr;  // [B + 1], non-decreasing
  TensorView scale;                      // [N] of table's dtype, or no data
  std::int64_t skip_row = -1;            // padding_idx (-1: none)
  bool mean = false;
  bool max = false;
};

/// One worker's view of the table for the typed sum of bags (float32 / float64 rows, contiguous
/// and element-aligned): what sum_bag_rows reads.
struct BagRows {
  const std::byte* table = nullptr;
  std::int64_t row_stride = 0;  // bytes
  std::int64_t d = 0;           // elements per row
  const std::int64_t* rows = nullptr;
  std::int64_t skip_row = -1;
  const std::byte* scale = nullptr;  // null: no per-row weight
  std::int64_t scale_stride = 0;     // bytes
  std::int64_t prefetch_end = 0;     // rows past this one are not prefetched (the worker's end)
};

/// Rows ahead whose cache lines are prefetched while a row is added: the rows are random reads
/// of the table and each add waits for its row (perf: the hot instruction is the add after the
/// row's load). 16 is fbgemm's distance; 4, 12, 24 and 32 measured within noise of it on the
/// project's VM (bench case G3).
inline constexpr std::int64_t kPrefetchRows = 16;

/// Whether a row of `b` (`row_bytes` from its first byte) may end in a cache line after the
/// ceil(row_bytes / 64) lines from its first byte: rows that do not start on a line boundary
/// (numpy's and malloc's large buffers start 16 bytes past one) or whose stride moves the start
/// between rows. prefetch_row then takes the row's last byte too: without it each 256-byte row
/// of such a table had its fifth line read on demand, and G3 from numpy was well behind G3 on an
/// aligned table (measured: bench/README.md, "Measurements behind the CPU engine's choices").
inline bool spans_another_line(const BagRows& b, std::int64_t row_bytes) noexcept {
  const std::int64_t start = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(b.table) % 64);
  return b.row_stride % 64 != 0 || start + row_bytes > 64 * ((row_bytes + 63) / 64);
}

/// Prefetches the row starting at `row`: `lines` 64-byte lines from its first byte, and the line
/// of its last byte (`row_bytes` - 1) where `tail_line` (spans_another_line) says it is another.
/// kWrite: for a row about to be written (the scatter's target rows), else for reading.
template <bool kWrite = false>
inline void prefetch_row(const std::byte* row, std::int64_t lines, std::int64_t row_bytes, bool tail_line) noexcept {
  for (std::int64_t k = 0; k < lines; ++k) __builtin_prefetch(row + 64 * k, kWrite ? 1 : 0, 3);
  if (tail_line) __builtin_prefetch(row + row_bytes - 1, kWrite ? 1 : 0, 3);
}

/// acc[0, d) += row (times its weight) for the rows n in [first, end) of one bag, in row order,
/// skipping rows[n] == skip_row; returns how many took part. The body both the baseline kernel
/// and the AVX-512 one (avx512.cpp: the same arithmetic, no contraction, so the same bytes)
/// compile: per element, one multiply (weighted) and one add in T.
template <class T>
inline std::int64_t sum_bag_rows(const BagRows& b, std::byte* acc_bytes, std::int64_t first, std::int64_t end) noexcept {
  T* __restrict acc = reinterpret_cast<T*>(acc_bytes);
  const std::int64_t row_bytes = b.d * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t lines = (row_bytes + 63) / 64;
  const bool tail_line = spans_another_line(b, row_bytes);
  std::int64_t count = 0;
  for (std::int64_t n = first; n < end; ++n) {
    if (n + kPrefetchRows < b.prefetch_end) {
      prefetch_row(b.table + b.rows[n + kPrefetchRows] * b.row_stride, lines, row_bytes, tail_line);
    }
    const std::int64_t r = b.rows[n];
    if (r == b.skip_row) continue;
    ++count;
    const T* __restrict row = reinterpret_cast<const T*>(b.table + r * b.row_stride);
    if (b.scale != nullptr) {
      T w;
      std::memcpy(&w, b.scale + n * b.scale_stride, sizeof w);
      for (std::int64_t f = 0; f < b.d; ++f) acc[f] += w * row[f];
    } else {
      for (std::int64_t f = 0; f < b.d; ++f) acc[f] += row[f];
    }
  }
  return count;
}

using BagSumFn = std::int64_t (*)(const BagRows&, std::byte* acc, std::int64_t first, std::int64_t end) noexcept;

/// Writes every element of `out` ([B, D] of table's dtype, any strides, not overlapping the
/// operands). Each bag is reduced by one worker in row order, accumulating 16-bit floats in
/// float32, so the bytes do not depend on `num_threads` (0: automatic). False (nothing written
/// or partial) for a dtype it has no kernel for, or when its accumulators cannot be allocated.
bool run_gathered_segments(const GatheredSegmentsCall& call, const MutableTensorView& out, int num_threads) noexcept;

/// The vector-Jacobian product for the table: grad_table ([V, D] of table's dtype, any strides,
/// written whole) = 0, then for each bag b and row n in it (rows[n] != skip_row) grad_table[rows[n],
/// f] += grad_output[b, f] (times scale[n]; sum), / the bag's count (mean), or only for the first
/// row holding the bag's max of column f (max, read from `table`). Workers own disjoint columns,
/// so the bytes do not depend on `num_threads`. False for a dtype it has no kernel for or shapes
/// that do not match.
bool run_gathered_segments_vjp(const GatheredSegmentsCall& call, const TensorView& grad_output,
                               const MutableTensorView& grad_table, int num_threads) noexcept;

}  // namespace multigather::detail
