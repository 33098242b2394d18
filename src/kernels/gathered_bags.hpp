// Internal: torch.nn.functional.embedding_bag's fused gather + segment reduction (Lowering::
// gathered) written once for the host and the device, as the CUDA engine runs it over grids
// (gathered_bags_kernel.cu) and the host tests compare it with the CPU engine's kernels
// (kernels/cpu/gathered_segments.cpp, whose arithmetic it repeats: the same bytes):
//   1. bag starts from torch's offsets (or a 2-D input's fixed bags), with PyTorch's checks;
//   2. each id as an int64 table row, checked against [0, V);
//   3. one thread per output element (bag b, column f): the bag's rows in order, skipping
//      padding_idx; sum (times per_sample_weights), mean (the sum / the rows that took part) or
//      max (a later value replaces the running max only when greater); 16-bit floats accumulate
//      in float32; each product and sum rounded on its own (no fused multiply-add); an empty bag
//      is +0.
// A failed check of 1 or 2 raises *failed; the engine then asks the lowering for its message
// (GatheredRows::check_values) from host copies of ids and offsets.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "kernels/combine.hpp"  // mul_rn, add_rn
#include "kernels/floating_element.hpp"  // visit_floating: the table dtypes it has
#include "multigather/dtype.hpp"

namespace multigather {
struct GatheredRows;
struct MutableTensorView;
}

namespace multigather::detail {

/// Passes 1 and 2.
struct BagIndexParams {
  const void* ids = nullptr;  // [N] or [B, L]
  int ids_kind = 0;           // 0 int64, 1 int32, 2 int16, 3 int8, 4 uint8
  std::int64_t ids_cols = 1;  // L for a 2-D input, else N
  std::int64_t ids_row_stride = 0, ids_col_stride = 1;  // elements
  std::int64_t n = 0;         // ids' elements
  bool fixed = false;         // a 2-D input: its rows are the bags (no offsets)
  const void* offsets = nullptr;  // [K] int32 / int64
  bool offsets_int32 = false;
  std::int64_t offsets_count = 0, offsets_stride = 1;
  bool include_last_offset = false;
  std::int64_t bags = 0;      // B
  std::int64_t v_size = 0;    // the table's rows
  std::int64_t* rows = nullptr;        // out: [N]
  std::int64_t* bag_starts = nullptr;  // out: [B + 1]
  std::uint32_t* failed = nullptr;     // raised by a failed check
};

/// Pass 3.
struct GatheredBagsParams {
  const void* table = nullptr;
  std::int64_t table_row = 0, table_col = 1;  // element strides
  std::int64_t bags = 0, d = 0;
  const std::int64_t* rows = nullptr;
  const std::int64_t* bag_starts = nullptr;
  const void* scale = nullptr;  // per_sample_weights (null: none)
  std::int64_t scale_stride = 0;
  std::int64_t skip_row = -1;
  bool mean = false, max = false;
  void* out = nullptr;
  std::int64_t out_row = 0, out_col = 1;
};

/// The params of passes 1 and 2 for g's ids and offsets (GatheredRows::ids / offsets / bags),
/// into `rows` [N] and `bag_starts` [B + 1], raising `failed`.
BagIndexParams bag_index_params(const GatheredRows& g, std::int64_t* rows, std::int64_t* bag_starts,
                                std::uint32_t* failed);
/// The params of pass 3: g's table and scale reduced into `bags` [B, D] from `rows` / `bag_starts`.
GatheredBagsParams gathered_bags_params(const GatheredRows& g, const std::int64_t* rows, const std::int64_t* bag_starts,
                                        const MutableTensorView& bags, bool mean, bool max);

namespace gathered_bags {

MULTIGATHER_HOST_DEVICE inline std::int64_t load_id(const void* p, int kind, std::int64_t at) {
  switch (kind) {
    case 0: return static_cast<const std::int64_t*>(p)[at];
    case 1: return static_cast<const std::int32_t*>(p)[at];
    case 2: return static_cast<const std::int16_t*>(p)[at];
    case 3: return static_cast<const std::int8_t*>(p)[at];
    default: return static_cast<const std::uint8_t*>(p)[at];
  }
}

MULTIGATHER_HOST_DEVICE inline void raise(std::uint32_t* failed) {
#if defined(__CUDA_ARCH__)
  atomicOr(failed, 1u);
#else
  *failed = 1;
#endif
}

}  // namespace gathered_bags

/// Pass 1 over b = thread, thread + threads, ... <= B: bag_starts[b], and PyTorch's checks of
/// the offsets (the first one 0, none decreasing, the last one at most N, or N itself with
/// include_last_offset).
MULTIGATHER_HOST_DEVICE inline void bag_starts_thread(const BagIndexParams& p, std::int64_t thread, std::int64_t threads) {
  for (std::int64_t b = thread; b <= p.bags; b += threads) {
    if (p.fixed) {
      p.bag_starts[b] = b * p.ids_cols;
      continue;
    }
    const auto offset = [&](std::int64_t k) {
      return gathered_bags::load_id(p.offsets, p.offsets_int32 ? 1 : 0, k * p.offsets_stride);
    };
    if (b >= p.offsets_count) {  // the end of the last bag, without include_last_offset
      p.bag_starts[b] = p.n;
      continue;
    }
    const std::int64_t v = offset(b);
    p.bag_starts[b] = v;
    const bool last = b == p.offsets_count - 1;
    if ((b == 0 && v != 0) || (b > 0 && v < offset(b - 1)) || (last && v > p.n) ||
        (last && p.include_last_offset && v != p.n)) {
      gathered_bags::raise(p.failed);
    }
  }
}

/// Pass 2 over e = thread, thread + threads, ... < N (C order of ids): rows[e], checked.
MULTIGATHER_HOST_DEVICE inline void bag_rows_thread(const BagIndexParams& p, std::int64_t thread, std::int64_t threads) {
  for (std::int64_t e = thread; e < p.n; e += threads) {
    const std::int64_t v = gathered_bags::load_id(p.ids, p.ids_kind,
                                                  e / p.ids_cols * p.ids_row_stride + e % p.ids_cols * p.ids_col_stride);
    p.rows[e] = v;
    if (v < 0 || v >= p.v_size) gathered_bags::raise(p.failed);
  }
}

/// Pass 3 over i = thread, thread + threads, ... < B * D (output element (i / D, i % D)).
template <class E>
MULTIGATHER_HOST_DEVICE inline void gathered_bags_thread(const GatheredBagsParams& p, std::int64_t thread,
                                                         std::int64_t threads) {
  using Acc = typename E::Acc;
  using T = typename E::Stored;
  const T* table = static_cast<const T*>(p.table);
  const T* scale = static_cast<const T*>(p.scale);
  T* out = static_cast<T*>(p.out);
  for (std::int64_t i = thread; i < p.bags * p.d; i += threads) {
    const std::int64_t b = i / p.d, f = i % p.d;
    Acc acc = Acc(0);
    std::int64_t count = 0;
    for (std::int64_t n = p.bag_starts[b]; n < p.bag_starts[b + 1]; ++n) {
      const std::int64_t r = p.rows[n];
      if (r == p.skip_row) continue;
      const Acc x = E::load(table[r * p.table_row + f * p.table_col]);
      if (p.max) {
        if (count == 0 || x > acc) acc = x;  // PyTorch's rule: a NaN after the first row never wins
      } else {
        // each product and sum rounded on its own (combine.hpp's: no contraction on the device)
        acc = combine::add_rn(acc, scale != nullptr ? combine::mul_rn(E::load(scale[n * p.scale_stride]), x) : x);
      }
      ++count;
    }
    T& o = out[b * p.out_row + f * p.out_col];
    if (count == 0) {
      o = E::store(Acc(0));
    } else {
      o = E::store(p.mean ? acc / static_cast<Acc>(count) : acc);  // IEEE division on the device too
    }
  }
}

}  // namespace multigather::detail
