// Internal: segment ids from per-row boundaries (Lowering::segment_ids: torch.segment_reduce's
// lengths or offsets, torch_scatter.segment_csr's indptr; docs/spec.md section 6), written once
// for the host and the device, as updates_step.hpp is: the CPU lowering and the CPU engine run it
// in loops, the CUDA engine over grids (segment_ids_kernel.cu), and the host tests compare them.
//
// bounds [batch'.., K] (int32 / int64, any strides; batch'[d] is the data's batch[d] or 1, a
// boundary row read by every data row there). ids [batch.., n] (int64, C order): the segment of
// each data row along the axis, or S (no segment; dropped by the core's index mode drop):
//   offsets (K = S + 1): row j is in segment s when bounds[s] <= j < bounds[s + 1];
//   lengths (K = S):     segment s is the bounds[s] rows after the previous segments' rows.
// Two passes:
//   1. the check, per boundary row: offsets in [0, n] and not decreasing; lengths >= 0 and (with
//      check_sum) adding up to n. A lengths row also writes its starts (S + 1 running sums,
//      saturated at n + 1: rows past n are in no segment either way). Each failure is a CODE,
//      row * (K + 1) + s (a sum at s = K), and the smallest code is kept: the first failure in
//      the order the CPU lowering reads them (segment_ids_error words it);
//   2. the ids, per element: the last s < S with starts[s] <= j and j < starts[S] (a binary
//      search in the row's starts: the offsets themselves, or pass 1's running sums).
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "core/odometer.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"  // kMaxRank

namespace multigather {
struct SegmentBoundaries;
}

namespace multigather::detail {

/// No failure (pass 1's code word starts so).
inline constexpr std::uint64_t kNoSegmentIdsError = ~std::uint64_t{0};

struct SegmentIdsParams {
  const void* bounds = nullptr;  // [batch'.., K]
  bool bounds_int32 = false;
  bool offsets = false;
  bool check_sum = false;
  int batch_rank = 0;
  std::int64_t k = 0;            // bounds' last size
  std::int64_t n = 0;            // the data's rows along the axis
  std::int64_t segments = 0;     // S
  std::int64_t bound_rows = 0;   // prod(batch')
  std::int64_t bound_shape[kMaxRank] = {};    // batch'
  std::int64_t bound_strides[kMaxRank] = {};  // bounds' strides along batch' (elements)
  std::int64_t bound_step = 1;                // bounds' stride along K
  std::int64_t rows = 0;                      // prod(batch): the data rows
  std::int64_t batch[kMaxRank] = {};          // batch
  std::int64_t batch_bound_strides[kMaxRank] = {};  // bounds' strides along batch, 0 where batch' is 1
  std::int64_t batch_row_strides[kMaxRank] = {};    // the boundary row's number, 0 where batch' is 1
  std::int64_t* starts = nullptr;  // lengths: [bound_rows, S + 1] (pass 1 writes, pass 2 reads)
  std::int64_t* ids = nullptr;     // [rows, n]
  std::uint64_t* first_error = nullptr;  // pass 1's smallest code (kNoSegmentIdsError: none)
};

/// The params of `b` (bounds' data as given: host or device) into `ids` and `starts` (lengths'
/// scratch of segment_starts_count elements; null for offsets).
SegmentIdsParams segment_ids_params(const SegmentBoundaries& b, std::int64_t* ids, std::int64_t* starts,
                                    std::uint64_t* first_error);
/// The elements of lengths' starts scratch (0 for offsets).
std::int64_t segment_starts_count(const SegmentBoundaries& b);

/// The first failure `code` of pass 1 worded as the CPU lowering words it ("torch.segment_reduce:
/// offsets[0, 3] = 7 is out of range [0, 5] (the data's rows along the axis)"), from `host_bounds`
/// (b.bounds' values in host memory). `op`: the op's name.
Status segment_ids_error(const std::string& op, const SegmentBoundaries& b, const TensorView& host_bounds,
                         std::uint64_t code);

namespace segment_ids {

MULTIGATHER_HOST_DEVICE inline std::int64_t load(const SegmentIdsParams& p, std::int64_t at) {
  return p.bounds_int32 ? static_cast<const std::int32_t*>(p.bounds)[at] : static_cast<const std::int64_t*>(p.bounds)[at];
}

MULTIGATHER_HOST_DEVICE inline void keep_first(std::uint64_t* word, std::uint64_t code) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<unsigned long long*>(word), static_cast<unsigned long long>(code));
#else
  if (code < *word) *word = code;
#endif
}

/// The element offset of boundary row `row` (C order of batch') in bounds.
MULTIGATHER_HOST_DEVICE inline std::int64_t bound_row_offset(const SegmentIdsParams& p, std::int64_t row) {
  std::int64_t at = 0;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    at += row % p.bound_shape[d] * p.bound_strides[d];
    row /= p.bound_shape[d];
  }
  return at;
}

}  // namespace segment_ids

/// Pass 1 of offsets, per boundary element e = row * K + s (e = thread, thread + threads, ...):
/// out of [0, n], or below the previous offset of its row.
MULTIGATHER_HOST_DEVICE inline void check_offsets_thread(const SegmentIdsParams& p, std::int64_t thread,
                                                         std::int64_t threads) {
  for (std::int64_t e = thread; e < p.bound_rows * p.k; e += threads) {
    const std::int64_t row = e / p.k, s = e % p.k;
    const std::int64_t base = segment_ids::bound_row_offset(p, row);
    const std::int64_t v = segment_ids::load(p, base + s * p.bound_step);
    const bool bad = v < 0 || v > p.n || (s > 0 && v < segment_ids::load(p, base + (s - 1) * p.bound_step));
    if (bad) segment_ids::keep_first(p.first_error, static_cast<std::uint64_t>(row * (p.k + 1) + s));
  }
}

/// Pass 1 of lengths, per boundary row: its starts (running sums saturated at n + 1), a negative
/// length, and (check_sum) a sum other than n.
MULTIGATHER_HOST_DEVICE inline void lengths_starts_thread(const SegmentIdsParams& p, std::int64_t thread,
                                                          std::int64_t threads) {
  for (std::int64_t row = thread; row < p.bound_rows; row += threads) {
    const std::int64_t base = segment_ids::bound_row_offset(p, row);
    std::int64_t* starts = p.starts + row * (p.segments + 1);
    std::int64_t start = 0;
    std::int64_t negative = -1;  // the first negative length's position
    for (std::int64_t s = 0; s < p.k; ++s) {
      const std::int64_t v = segment_ids::load(p, base + s * p.bound_step);
      starts[s] = start;
      if (v < 0 && negative < 0) negative = s;
      if (v > 0) start = v > p.n + 1 - start ? p.n + 1 : start + v;
    }
    starts[p.k] = start;
    const std::int64_t failed = negative >= 0 ? negative : p.check_sum && start != p.n ? p.k : -1;
    if (failed >= 0) segment_ids::keep_first(p.first_error, static_cast<std::uint64_t>(row * (p.k + 1) + failed));
  }
}

/// Pass 2, per id element i = row * n + j: the segment of data row j in data row `row`.
MULTIGATHER_HOST_DEVICE inline void segment_ids_thread(const SegmentIdsParams& p, std::int64_t thread,
                                                       std::int64_t threads) {
  for (std::int64_t i = thread; i < p.rows * p.n; i += threads) {
    const std::int64_t row = i / p.n, j = i % p.n;
    std::int64_t bound_offset = 0, bound_row = 0;
    offsets_at(row, p.batch_rank, p.batch, p.batch_bound_strides, p.batch_row_strides, &bound_offset, &bound_row);
    // starts[s] for s in [0, S]: the offsets themselves, or pass 1's sums.
    const std::int64_t* sums = p.offsets ? nullptr : p.starts + bound_row * (p.segments + 1);
    const auto start = [&](std::int64_t s) {
      return sums != nullptr ? sums[s] : segment_ids::load(p, bound_offset + s * p.bound_step);
    };
    std::int64_t id = p.segments;
    if (p.segments > 0 && start(0) <= j && j < start(p.segments)) {
      std::int64_t low = 0, high = p.segments - 1;  // the last s in [low, high] with start(s) <= j
      while (low < high) {
        const std::int64_t mid = low + (high - low + 1) / 2;
        if (start(mid) <= j) {
          low = mid;
        } else {
          high = mid - 1;
        }
      }
      id = low;
    }
    p.ids[i] = id;
  }
}

/// Both passes on the host, in loops (the CPU lowering and the CPU engine): *first_error is
/// pass 1's code (kNoSegmentIdsError: none; then the ids are written).
void segment_ids_on_host(const SegmentIdsParams& p);

}  // namespace multigather::detail
