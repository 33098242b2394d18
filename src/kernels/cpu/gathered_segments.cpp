// The fused gather + segment reduction of torch.nn.functional.embedding_bag (Lowering::gathered):
// each bag's table rows are read and reduced straight into its output row, so the gathered rows
// are never written to memory. Bags are runs of update rows (offsets), so each bag is reduced
// by ONE worker in row order: no buckets, no atomics, the same bytes at every thread count.
#include "kernels/cpu/gathered_segments.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/float16_bits.hpp"
#include "core/task_pool.hpp"
#include "kernels/cpu/avx512.hpp"
#include "kernels/cpu/cpu.hpp"

namespace multigather::detail {
namespace {

/// An element type and the type it accumulates in (16-bit floats in float, as PyTorch's opmath).
template <class T>
struct Element {
  using Acc = T;
  using Stored = T;
  static Acc load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(std::byte* p, Acc v) {
    const T t = v;
    std::memcpy(p, &t, sizeof t);
  }
};

/// A 16-bit float stored as its bits, accumulated in float32.
template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
struct Bits16 {
  using Acc = float;
  using Stored = std::uint16_t;
  static Acc load(const std::byte* p) {
    std::uint16_t b;
    std::memcpy(&b, p, 2);
    return ToFloat(b);
  }
  static void store(std::byte* p, Acc v) {
    const std::uint16_t b = FromFloat(v);
    std::memcpy(p, &b, 2);
  }
};
using Half = Bits16<half_bits_to_float, float_to_half_bits>;
using BFloat16 = Bits16<bfloat16_bits_to_float, float_to_bfloat16_bits>;

/// Rows [begin, end) of one bag (`v`: the worker's view of the table) reduced into acc by the
/// element-wise loop (16-bit floats, strided tables, and max); `col_stride`: bytes between a
/// row's elements, `row_bytes`: the bytes of a row prefetched. Returns the rows that took part.
template <class E>
std::int64_t reduce_rows(const BagRows& v, std::int64_t col_stride, std::int64_t row_bytes, bool max,
                         std::int64_t begin, std::int64_t end, typename E::Acc* acc) {
  using Acc = typename E::Acc;
  std::int64_t count = 0;
  const std::int64_t lines = (row_bytes + 63) / 64;
  const bool tail_line = spans_another_line(v, row_bytes);
  for (std::int64_t n = begin; n < end; ++n) {
    if (n + kPrefetchRows < v.prefetch_end) {
      prefetch_row(v.table + v.rows[n + kPrefetchRows] * v.row_stride, lines, row_bytes, tail_line);
    }
    const std::int64_t r = v.rows[n];
    if (r == v.skip_row) continue;
    const std::byte* row = v.table + r * v.row_stride;
    if (max) {
      if (count == 0) {
        for (std::int64_t f = 0; f < v.d; ++f) acc[f] = E::load(row + f * col_stride);
      } else {
        for (std::int64_t f = 0; f < v.d; ++f) {
          const Acc x = E::load(row + f * col_stride);
          if (x > acc[f]) acc[f] = x;  // PyTorch's rule: a NaN after the first row never wins
        }
      }
    } else {
      if (count == 0) std::fill(acc, acc + v.d, Acc(0));
      if (v.scale == nullptr) {
        for (std::int64_t f = 0; f < v.d; ++f) acc[f] += E::load(row + f * col_stride);
      } else {
        const Acc w = E::load(v.scale + n * v.scale_stride);
        for (std::int64_t f = 0; f < v.d; ++f) acc[f] += w * E::load(row + f * col_stride);
      }
    }
    ++count;
  }
  return count;
}

/// Output row b from its `count` rows' accumulators: 0 for an empty bag (or padding rows only) in
/// every mode, the mean's division, else the accumulators themselves.
template <class E>
void write_bag(const GatheredSegmentsCall& g, const MutableTensorView& out, std::int64_t b, std::int64_t count,
               const typename E::Acc* acc) {
  using Acc = typename E::Acc;
  const std::int64_t d_size = g.table.shape[1];
  const std::int64_t es = static_cast<std::int64_t>(element_size(g.table.dtype));
  const std::int64_t out_col = out.strides[1] * es;
  std::byte* o = static_cast<std::byte*>(out.data) + b * out.strides[0] * es;
  if (sizeof(Acc) == sizeof(typename E::Stored) && out_col == es && !g.mean) {  // a contiguous row of Acc
    const auto bytes = static_cast<std::size_t>(d_size * es);
    if (count == 0) std::memset(o, 0, bytes);  // +0.0
    else std::memcpy(o, acc, bytes);
    return;
  }
  if (count == 0) {
    for (std::int64_t f = 0; f < d_size; ++f) E::store(o + f * out_col, Acc(0));
  } else if (g.mean) {
    const Acc c = static_cast<Acc>(count);
    for (std::int64_t f = 0; f < d_size; ++f) E::store(o + f * out_col, acc[f] / c);
  } else {
    for (std::int64_t f = 0; f < d_size; ++f) E::store(o + f * out_col, acc[f]);
  }
}

/// Bags [first, last) of `g` into `out`. acc: D accumulators of this worker. `bag_sum`: the
/// typed sum of a bag's rows (float32 / float64; AVX-512 where the CPU has it), else null.
template <class E>
void reduce_bags(const GatheredSegmentsCall& g, const MutableTensorView& out, std::int64_t first, std::int64_t last,
                 std::vector<typename E::Acc>* acc_storage, BagSumFn bag_sum) {
  using Acc = typename E::Acc;
  const std::int64_t d_size = g.table.shape[1];
  const std::int64_t es = static_cast<std::int64_t>(element_size(g.table.dtype));
  const std::int64_t row_stride = g.table.strides[0] * es, col_stride = g.table.strides[1] * es;
  const auto* table = static_cast<const std::byte*>(g.table.data);
  const auto* scale = static_cast<const std::byte*>(g.scale.data);
  const std::int64_t scale_stride = g.scale.data != nullptr ? g.scale.strides[0] * es : 0;
  acc_storage->resize(static_cast<std::size_t>(d_size));
  Acc* acc = acc_storage->data();
  // Rows of the element type itself (float32, float64), contiguous and aligned: typed adds.
  constexpr bool kTyped = sizeof(Acc) == sizeof(typename E::Stored);
  const bool typed = kTyped && col_stride == es && reinterpret_cast<std::uintptr_t>(table) % sizeof(Acc) == 0 &&
                     row_stride % static_cast<std::int64_t>(sizeof(Acc)) == 0;
  const std::int64_t row_bytes = col_stride == es ? d_size * es : es;
  const std::int64_t end_row = g.bag_starts[last];
  const bool summed = typed && bag_sum != nullptr && !g.max;  // the typed sum takes the whole bag
  const BagRows view{table, row_stride, d_size, g.rows, g.skip_row, scale, scale_stride, end_row};
  for (std::int64_t b = first; b < last; ++b) {
    std::int64_t count = 0;
    if (summed) {
      std::fill(acc, acc + d_size, Acc(0));
      count = bag_sum(view, reinterpret_cast<std::byte*>(acc), g.bag_starts[b], g.bag_starts[b + 1]);
    } else {
      count = reduce_rows<E>(view, col_stride, row_bytes, g.max, g.bag_starts[b], g.bag_starts[b + 1], acc);
    }
    write_bag<E>(g, out, b, count, acc);
  }
}

template <class E>
void run_typed(const GatheredSegmentsCall& g, const MutableTensorView& out, int num_threads) {
  const std::int64_t bags = out.shape[0];
  const std::int64_t rows = g.bag_starts[bags] - g.bag_starts[0];
  const std::int64_t row_bytes = g.table.shape[1] * static_cast<std::int64_t>(element_size(g.table.dtype));
  const int threads = cpu_thread_count((rows + bags) * row_bytes, bags, num_threads);
  // Pieces of about equal update rows: bag boundaries found by a search over bag_starts.
  const std::int64_t pieces = threads <= 1 ? 1 : std::min<std::int64_t>(bags, std::int64_t{8} * threads);
  std::vector<std::int64_t> cut(static_cast<std::size_t>(pieces + 1), bags);
  cut[0] = 0;
  for (std::int64_t p = 1; p < pieces; ++p) {
    const std::int64_t target = g.bag_starts[0] + static_cast<std::int64_t>(static_cast<__int128>(rows) * p / pieces);
    const std::int64_t bag = std::upper_bound(g.bag_starts, g.bag_starts + bags, target) - g.bag_starts - 1;
    cut[static_cast<std::size_t>(p)] = std::clamp(bag, cut[static_cast<std::size_t>(p - 1)], bags);
  }
  BagSumFn bag_sum = nullptr;
  if constexpr (std::is_same_v<E, Element<float>> || std::is_same_v<E, Element<double>>) {
    bag_sum = cpu::bag_sum_simd(g.table.dtype, g.table.shape[1]);
    if (bag_sum == nullptr) bag_sum = &sum_bag_rows<typename E::Acc>;
  }
  auto piece = [&](std::int64_t p) {
    thread_local std::vector<typename E::Acc> acc;
    reduce_bags<E>(g, out, cut[static_cast<std::size_t>(p)], cut[static_cast<std::size_t>(p + 1)], &acc, bag_sum);
    return true;
  };
  parallel_pieces(threads, pieces, piece);
}

/// The max VJP for the table, columns [f0, f1): every bag in order, the first row holding the
/// max of each column gets the bag's gradient added in place.
template <class E>
void vjp_columns(const GatheredSegmentsCall& g, const TensorView& grad_output, const MutableTensorView& grad_table,
                 std::int64_t f0, std::int64_t f1) {
  using Acc = typename E::Acc;
  const std::int64_t es = static_cast<std::int64_t>(element_size(g.table.dtype));
  const std::int64_t bags = grad_output.shape[0];
  const auto* go = static_cast<const std::byte*>(grad_output.data);
  const std::int64_t go_row = grad_output.strides[0] * es, go_col = grad_output.strides[1] * es;
  auto* gt = static_cast<std::byte*>(grad_table.data);
  const std::int64_t gt_row = grad_table.strides[0] * es, gt_col = grad_table.strides[1] * es;
  const auto* table = static_cast<const std::byte*>(g.table.data);
  const std::int64_t t_row = g.table.strides[0] * es, t_col = g.table.strides[1] * es;
  for (std::int64_t b = 0; b < bags; ++b) {
    const std::int64_t first = g.bag_starts[b], last = g.bag_starts[b + 1];
    for (std::int64_t f = f0; f < f1; ++f) {
      std::int64_t arg = -1;
      Acc best{};
      for (std::int64_t n = first; n < last; ++n) {
        if (g.rows[n] == g.skip_row) continue;
        const Acc v = E::load(table + g.rows[n] * t_row + f * t_col);
        if (arg < 0 || v > best) {  // PyTorch's max_indices: the first row holding the max
          best = v;
          arg = g.rows[n];
        }
      }
      if (arg < 0) continue;
      std::byte* p = gt + arg * gt_row + f * gt_col;
      E::store(p, E::load(p) + E::load(go + b * go_row + f * go_col));
    }
  }
}

/// The sum / mean VJP for the table rows [v0, v1) that this worker owns: every bag in order,
/// each of its rows in [v0, v1) gets the bag's gradient (times its weight; / the bag's count)
/// added in place. Every worker reads all the rows' ids and writes only its own table rows, so
/// each element's terms are added in bag order whatever the thread count. Float32 / float64
/// rows, contiguous and element-aligned, are added as typed vectors.
template <class E>
void vjp_rows(const GatheredSegmentsCall& g, const TensorView& grad_output, const MutableTensorView& grad_table,
              std::int64_t v0, std::int64_t v1) {
  using Acc = typename E::Acc;
  const std::int64_t d = grad_table.shape[1];
  const std::int64_t es = static_cast<std::int64_t>(element_size(g.table.dtype));
  const auto* go = static_cast<const std::byte*>(grad_output.data);
  const std::int64_t go_row = grad_output.strides[0] * es, go_col = grad_output.strides[1] * es;
  auto* gt = static_cast<std::byte*>(grad_table.data);
  const std::int64_t gt_row = grad_table.strides[0] * es, gt_col = grad_table.strides[1] * es;
  const auto* scale = static_cast<const std::byte*>(g.scale.data);
  const std::int64_t scale_stride = scale != nullptr ? g.scale.strides[0] * es : 0;
  for (std::int64_t r = v0; r < v1; ++r) {
    for (std::int64_t f = 0; f < d; ++f) E::store(gt + r * gt_row + f * gt_col, Acc(0));
  }
  constexpr bool kTyped = sizeof(Acc) == sizeof(typename E::Stored);
  const bool typed = kTyped && go_col == es && gt_col == es && go_row % es == 0 && gt_row % es == 0 &&
                     reinterpret_cast<std::uintptr_t>(go) % sizeof(Acc) == 0 &&
                     reinterpret_cast<std::uintptr_t>(gt) % sizeof(Acc) == 0;
  const std::int64_t bags = grad_output.shape[0];
  for (std::int64_t b = 0; b < bags; ++b) {
    const std::int64_t first = g.bag_starts[b], last = g.bag_starts[b + 1];
    std::int64_t count = 0;
    if (g.mean) {
      for (std::int64_t n = first; n < last; ++n) count += g.rows[n] != g.skip_row ? 1 : 0;
    }
    const std::byte* grad_b = go + b * go_row;
    for (std::int64_t n = first; n < last; ++n) {
      const std::int64_t r = g.rows[n];
      if (r == g.skip_row || r < v0 || r >= v1) continue;
      const Acc w = scale != nullptr ? E::load(scale + n * scale_stride) : Acc(1);
      std::byte* dst = gt + r * gt_row;
      if (typed) {
        Acc* __restrict out = reinterpret_cast<Acc*>(dst);
        const Acc* __restrict in = reinterpret_cast<const Acc*>(grad_b);
        if (g.mean) {
          const Acc c = static_cast<Acc>(count);
          for (std::int64_t f = 0; f < d; ++f) out[f] += in[f] / c;
        } else if (scale != nullptr) {
          for (std::int64_t f = 0; f < d; ++f) out[f] += in[f] * w;
        } else {
          for (std::int64_t f = 0; f < d; ++f) out[f] += in[f];
        }
        continue;
      }
      for (std::int64_t f = 0; f < d; ++f) {
        const Acc grad = E::load(grad_b + f * go_col);
        std::byte* p = dst + f * gt_col;
        E::store(p, E::load(p) + (g.mean ? grad / static_cast<Acc>(count) : scale != nullptr ? grad * w : grad));
      }
    }
  }
}

template <class E>
void run_vjp_typed(const GatheredSegmentsCall& g, const TensorView& grad_output, const MutableTensorView& grad_table,
                   int num_threads) {
  const std::int64_t v_size = grad_table.shape[0], d_size = grad_table.shape[1];
  const std::int64_t es = static_cast<std::int64_t>(element_size(g.table.dtype));
  const std::int64_t rows = g.bag_starts[grad_output.shape[0]] - g.bag_starts[0];
  if (g.max) {
    // Workers own disjoint columns (each scans the bag's values of its columns for the arg row).
    for (std::int64_t r = 0; r < v_size; ++r) {
      for (std::int64_t f = 0; f < d_size; ++f) {
        E::store(static_cast<std::byte*>(grad_table.data) + (r * grad_table.strides[0] + f * grad_table.strides[1]) * es,
                 typename E::Acc(0));
      }
    }
    const int threads = cpu_thread_count(rows * d_size * es * 2, std::max<std::int64_t>(d_size / 8, 1), num_threads);
    auto piece = [&](std::int64_t p) {
      vjp_columns<E>(g, grad_output, grad_table, d_size * p / threads, d_size * (p + 1) / threads);
      return true;
    };
    parallel_pieces(threads, threads, piece);
    return;
  }
  // Sum and mean: workers own disjoint table rows (and zero them first).
  const int threads = cpu_thread_count((rows + v_size) * d_size * es, v_size, num_threads);
  auto piece = [&](std::int64_t p) {
    vjp_rows<E>(g, grad_output, grad_table, v_size * p / threads, v_size * (p + 1) / threads);
    return true;
  };
  parallel_pieces(threads, threads, piece);
}

}  // namespace

bool run_gathered_segments_vjp(const GatheredSegmentsCall& g, const TensorView& grad_output,
                               const MutableTensorView& grad_table, int num_threads) noexcept {
  if (grad_output.rank() != 2 || grad_table.rank() != 2 || grad_table.shape[1] != grad_output.shape[1]) return false;
  try {
    switch (g.table.dtype) {
      case DType::kFloat32: run_vjp_typed<Element<float>>(g, grad_output, grad_table, num_threads); return true;
      case DType::kFloat64: run_vjp_typed<Element<double>>(g, grad_output, grad_table, num_threads); return true;
      case DType::kFloat16: run_vjp_typed<Half>(g, grad_output, grad_table, num_threads); return true;
      case DType::kBFloat16: run_vjp_typed<BFloat16>(g, grad_output, grad_table, num_threads); return true;
      default: return false;
    }
  } catch (...) {  // the workers' bookkeeping (a host pool's task group) could not be allocated
    return false;
  }
}

bool run_gathered_segments(const GatheredSegmentsCall& g, const MutableTensorView& out, int num_threads) noexcept {
  try {
    switch (g.table.dtype) {
      case DType::kFloat32: run_typed<Element<float>>(g, out, num_threads); return true;
      case DType::kFloat64: run_typed<Element<double>>(g, out, num_threads); return true;
      case DType::kFloat16: run_typed<Half>(g, out, num_threads); return true;
      case DType::kBFloat16: run_typed<BFloat16>(g, out, num_threads); return true;
      default: return false;
    }
  } catch (...) {  // the accumulators' allocation
    return false;
  }
}

}  // namespace multigather::detail
