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
//
// The table's gradient (the VJP; kernels/cpu/gathered_segments.cpp's vjp_rows / vjp_columns,
// whose bytes it repeats: every table element adds its terms in bag order, each add rounded to
// the dtype), after passes 1 and 2:
//   V1. sum / mean: each row's bag, and each bag's count of rows that are not padding_idx;
//   V2. the keys of a stable sort: sum / mean, row n's table row (padding_idx: dropped); max,
//       output element (b, f)'s first row holding the bag's max of column f, as row * D + f (an
//       empty bag: dropped); each with its position as the value;
//   V3. the table's gradient zeroed (+0);
//   the sort (cub on the device, stable_sort_pairs on the host): the terms of one table element
//   now sit together, in bag order;
//   V4. the head of each run adds the run's terms in order: sum, grad_output[b, f] (times
//       per_sample_weights[n]); mean, grad_output[b, f] / the bag's count; max, grad_output[b, f].
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "kernels/combine.hpp"  // mul_rn, add_rn
#include "kernels/floating_element.hpp"  // visit_floating: the table dtypes it has
#include "multigather/dtype.hpp"

namespace multigather {
struct GatheredRows;
struct MutableTensorView;
struct TensorView;
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

/// The bags' terms (what pass 3 and the gradient's passes read): the table, the rows of each
/// bag (passes 1 and 2), the weights, the mode.
struct BagTerms {
  const void* table = nullptr;  // the weight's values (the gradient: read by max only)
  std::int64_t table_row = 0, table_col = 1;  // element strides
  std::int64_t bags = 0, d = 0, n = 0;        // B, D, N
  const std::int64_t* rows = nullptr;        // [N]
  const std::int64_t* bag_starts = nullptr;  // [B + 1]
  const void* scale = nullptr;  // per_sample_weights (null: none)
  std::int64_t scale_stride = 0;
  std::int64_t skip_row = -1;
  bool mean = false, max = false;
};

/// Pass 3.
struct GatheredBagsParams {
  BagTerms terms;
  void* out = nullptr;
  std::int64_t out_row = 0, out_col = 1;
};

/// Passes V1 to V4 (the table's gradient).
struct GatheredBagsVjpParams {
  BagTerms terms;
  const void* grad = nullptr;  // grad_output [B, D]
  std::int64_t grad_row = 0, grad_col = 1;
  std::int64_t* bag_of = nullptr;  // [N]: V1 (sum / mean)
  std::int64_t* counts = nullptr;  // [B]: V1 (mean)
  std::uint64_t* keys = nullptr;   // [K]: V2, then sorted (K: N, or B * D for max)
  std::int64_t* values = nullptr;  // [K]
  int key_bits = 1;                // the sort's: every key is below 2^key_bits - 1 (kDroppedKey's bits)
  void* grad_table = nullptr;      // [V, D]
  std::int64_t v_size = 0, grad_table_row = 0, grad_table_col = 1;

  /// The sort's length: N, or B * D for max.
  MULTIGATHER_HOST_DEVICE std::int64_t keys_count() const { return terms.max ? terms.bags * terms.d : terms.n; }
};

/// The key of a term that no table element takes (sorts last).
inline constexpr std::uint64_t kDroppedKey = ~std::uint64_t{0};

/// The params of passes 1 and 2 for g's ids and offsets (GatheredRows::ids / offsets / bags),
/// into `rows` [N] and `bag_starts` [B + 1], raising `failed`.
BagIndexParams bag_index_params(const GatheredRows& g, std::int64_t* rows, std::int64_t* bag_starts,
                                std::uint32_t* failed);
/// g's terms over `table` ([V, D]: g's table, or for the gradient the weight's values) for B
/// bags of D columns, from `rows` / `bag_starts`.
BagTerms bag_terms(const GatheredRows& g, const TensorView& table, std::int64_t bags, std::int64_t d,
                   const std::int64_t* rows, const std::int64_t* bag_starts, bool mean, bool max);
/// The params of pass 3: g's table and scale reduced into `bags` [B, D] from `rows` / `bag_starts`.
GatheredBagsParams gathered_bags_params(const GatheredRows& g, const std::int64_t* rows, const std::int64_t* bag_starts,
                                        const MutableTensorView& bags, bool mean, bool max);
/// The params of passes V1 to V4: the table's gradient `grad_table` [V, D] of g at `grad_output`
/// [B, D], from `rows` / `bag_starts`; `table` is the weight's values (max reads them). The
/// scratch arrays are set by the caller (GatheredBagsVjpParams' comments give their sizes).
GatheredBagsVjpParams gathered_bags_vjp_params(const GatheredRows& g, const TensorView& table,
                                               const TensorView& grad_output, const MutableTensorView& grad_table,
                                               const std::int64_t* rows, const std::int64_t* bag_starts, bool mean,
                                               bool max);
/// Passes V1 to V4 in loops, the sort by stable_sort_pairs (the CPU engine's run of a lowering
/// described for the device, and the host tests' reference for the grids).
bool gathered_bags_vjp_on_host(const GatheredBagsVjpParams& p, DType dtype);
/// (keys, values) sorted by key, stably (the host's form of the device's sort).
void stable_sort_pairs(std::uint64_t* keys, std::int64_t* values, std::size_t n);

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

/// Bag b's first row holding the max of column f (PyTorch's max_indices: a later value replaces
/// the running max only when greater, so a NaN after the first row never wins; rows at
/// padding_idx skipped) into *arg, and that max into *best; *arg = -1 for a bag without rows.
template <class E>
MULTIGATHER_HOST_DEVICE inline void bag_max_row(const BagTerms& t, std::int64_t b, std::int64_t f, std::int64_t* arg,
                                                typename E::Acc* best) {
  const auto* table = static_cast<const typename E::Stored*>(t.table);
  *arg = -1;
  for (std::int64_t n = t.bag_starts[b]; n < t.bag_starts[b + 1]; ++n) {
    const std::int64_t r = t.rows[n];
    if (r == t.skip_row) continue;
    const typename E::Acc v = E::load(table[r * t.table_row + f * t.table_col]);
    if (*arg < 0 || v > *best) {
      *best = v;
      *arg = r;
    }
  }
}

/// Pass 3 over i = thread, thread + threads, ... < B * D (output element (i / D, i % D)).
template <class E>
MULTIGATHER_HOST_DEVICE inline void gathered_bags_thread(const GatheredBagsParams& p, std::int64_t thread,
                                                         std::int64_t threads) {
  using Acc = typename E::Acc;
  using T = typename E::Stored;
  const BagTerms& t = p.terms;
  const T* table = static_cast<const T*>(t.table);
  const T* scale = static_cast<const T*>(t.scale);
  T* out = static_cast<T*>(p.out);
  for (std::int64_t i = thread; i < t.bags * t.d; i += threads) {
    const std::int64_t b = i / t.d, f = i % t.d;
    Acc acc = Acc(0);
    std::int64_t count = 0;
    if (t.max) {
      std::int64_t arg = -1;
      bag_max_row<E>(t, b, f, &arg, &acc);
      count = arg < 0 ? 0 : 1;
    } else {
      for (std::int64_t n = t.bag_starts[b]; n < t.bag_starts[b + 1]; ++n) {
        const std::int64_t r = t.rows[n];
        if (r == t.skip_row) continue;
        const Acc x = E::load(table[r * t.table_row + f * t.table_col]);
        // each product and sum rounded on its own (combine.hpp's: no contraction on the device)
        acc = combine::add_rn(acc, scale != nullptr ? combine::mul_rn(E::load(scale[n * t.scale_stride]), x) : x);
        ++count;
      }
    }
    T& o = out[b * p.out_row + f * p.out_col];
    if (count == 0) {
      o = E::store(Acc(0));
    } else {
      o = E::store(t.mean ? acc / static_cast<Acc>(count) : acc);  // IEEE division on the device too
    }
  }
}

/// Pass V1 over b = thread, thread + threads, ... < B (sum / mean): bag_of for the bag's rows,
/// and its count of rows that are not padding_idx.
MULTIGATHER_HOST_DEVICE inline void vjp_bags_thread(const GatheredBagsVjpParams& p, std::int64_t thread,
                                                    std::int64_t threads) {
  const BagTerms& t = p.terms;
  for (std::int64_t b = thread; b < t.bags; b += threads) {
    std::int64_t count = 0;
    for (std::int64_t n = t.bag_starts[b]; n < t.bag_starts[b + 1]; ++n) {
      p.bag_of[n] = b;
      count += t.rows[n] != t.skip_row ? 1 : 0;
    }
    p.counts[b] = count;
  }
}

/// Pass V2 over k = thread, thread + threads, ... < keys_count(): the sort's keys and values.
template <class E>
MULTIGATHER_HOST_DEVICE inline void vjp_keys_thread(const GatheredBagsVjpParams& p, std::int64_t thread,
                                                    std::int64_t threads) {
  const BagTerms& t = p.terms;
  const std::int64_t count = p.keys_count();
  for (std::int64_t k = thread; k < count; k += threads) {
    p.values[k] = k;
    std::int64_t row = -1;
    if (t.max) {
      typename E::Acc best{};
      bag_max_row<E>(t, k / t.d, k % t.d, &row, &best);
      if (row >= 0) row = row * t.d + k % t.d;
    } else if (t.rows[k] != t.skip_row) {
      row = t.rows[k];
    }
    p.keys[k] = row < 0 ? kDroppedKey : static_cast<std::uint64_t>(row);
  }
}

/// Pass V3 over i = thread, thread + threads, ... < V * D: the gradient's element set to +0.
template <class E>
MULTIGATHER_HOST_DEVICE inline void vjp_zero_thread(const GatheredBagsVjpParams& p, std::int64_t thread,
                                                    std::int64_t threads) {
  using T = typename E::Stored;
  const std::int64_t d = p.terms.d;
  T* out = static_cast<T*>(p.grad_table);
  for (std::int64_t i = thread; i < p.v_size * d; i += threads) {
    out[i / d * p.grad_table_row + i % d * p.grad_table_col] = E::store(typename E::Acc(0));
  }
}

/// Pass V4 over items thread, thread + threads, ...: sum / mean, N * D items (sorted position
/// i = item / D, column item % D); max, B * D items (sorted positions). The head of a run of
/// equal keys adds the run's terms to its table element, in order, each add rounded.
template <class E>
MULTIGATHER_HOST_DEVICE inline void vjp_runs_thread(const GatheredBagsVjpParams& p, std::int64_t thread,
                                                    std::int64_t threads) {
  using Acc = typename E::Acc;
  using T = typename E::Stored;
  const BagTerms& t = p.terms;
  const T* grad = static_cast<const T*>(p.grad);
  const T* scale = static_cast<const T*>(t.scale);
  T* out = static_cast<T*>(p.grad_table);
  const std::int64_t count = p.keys_count();
  const std::int64_t items = t.max ? count : count * t.d;
  for (std::int64_t item = thread; item < items; item += threads) {
    const std::int64_t i = t.max ? item : item / t.d;
    const std::uint64_t key = p.keys[i];
    if (key == kDroppedKey || (i > 0 && p.keys[i - 1] == key)) continue;  // not the head of a run
    const auto k = static_cast<std::int64_t>(key);
    const std::int64_t r = t.max ? k / t.d : k, f = t.max ? k % t.d : item % t.d;
    T& element = out[r * p.grad_table_row + f * p.grad_table_col];
    T stored = element;
    for (std::int64_t j = i; j < count && p.keys[j] == key; ++j) {
      // the bag of the term and its gradient element; sum and mean scale it
      const std::int64_t n = p.values[j], b = t.max ? n / t.d : p.bag_of[n];
      Acc term = E::load(grad[b * p.grad_row + f * p.grad_col]);
      if (t.mean) {
        term = term / static_cast<Acc>(p.counts[b]);  // IEEE division on the device too
      } else if (scale != nullptr) {
        term = combine::mul_rn(term, E::load(scale[n * t.scale_stride]));
      }
      stored = E::store(combine::add_rn(E::load(stored), term));
    }
    element = stored;
  }
}

}  // namespace multigather::detail
