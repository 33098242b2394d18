// The CPU scatter engine (docs/spec.md section 4), deterministic at every thread count.
//
// A scatter runs on the GatherPlan of the gather that reads its targets (plan/scatter_plan.hpp):
// plan.input is the OUTPUT (the targets, written here), plan.output is the updates viewed with
// shape G (read only). Lookups are walked in the plan's C order, which is the row-major order of
// G, and resolved in tiles by the gather engine's resolvers (resolve.hpp; drop runs as fill:
// an out-of-range lookup is flagged, and skipped). Element scatters with one coordinate
// (ScatterElements, torch.scatter_, put) take a plain loop instead while their indices are in
// range as stored: index, address and combine in one pass (scatter_plain_run).
//
// One thread: tiles of 1024 lookups are resolved on the stack and combined in order. Nothing is
// allocated (include_input = false aside).
//
// T threads, slabs: where a lookup dimension is neither an axis nor broadcast (its lookups move
// the output), its positions split the targets into disjoint slabs. Each thread takes a range
// of positions and walks its lookups in row-major order: no allocation, one index pass.
//
// T threads, filtered (no such dimension and targets that are not sorted; lookups of 64 bytes
// or more, or smaller ones into an output of 8 MiB or more): every thread reads all lookups and
// combines those whose target it owns.
//
// T threads, buckets (the kBuckets test rule only; the automatic rule took them for lookups of
// 64 bytes or more until the filtered rule measured faster there too): the OUTPUT is
// partitioned, not the updates. Each target offset has one owner thread (T equal ranges of the
// output's offsets). Phase 1 counts, per chunk of lookups and per owner, the lookups that land
// there; phase 2 resolves again and writes each lookup's (target,
// update) offset pair into its owner's bucket, chunk by chunk, so that a bucket lists its
// lookups in row-major order; phase 3 has each owner combine its bucket in order. Every output
// element thus sees exactly the sequence of combines of the one-thread walk: the bytes are
// identical at any thread count. What determinism costs: 16 bytes per lookup (the buckets) and
// T * T counters. A lookup's block (the inner run of elements its index moves together) is an
// interval of the output that no other lookup's block partly overlaps (the output view has no
// self-overlap), so a block is owned by the owner of its first element.
//
// T threads, sorted runs (no slab dimension, targets that never decrease in row-major order:
// segment reductions over sorted ids): one read-only pass checks the order in T chunks, then
// each thread combines a contiguous range of lookups cut between runs of equal targets, so that
// one thread owns each target. No buckets, no sort, no atomics; the pass stops at the first
// decrease, and another rule runs.
//
// One-shot (ScatterRun::copy_from: output = input first, both C-contiguous): where the
// outermost lookup dimension moves the output, each thread copies its slab in steps of about
// 256 KiB and combines into each step right after its copy, while its lines are still cached
// (faster than copying first on S2 one-shot, 1 and 2 threads; measured: bench/README.md,
// "Scatter"); elsewhere the caller copies the whole input first (scatter_copies_input).
//
// include_input = false: one byte per output offset marks the elements already reached (the
// first update reaching an element is assigned, the next ones combine).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "core/index_value.hpp"  // visit_index_type
#include "core/interrupt_poll.hpp"

#include "kernels/combine.hpp"
#include "kernels/cpu/avx512.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/cpu/cursor.hpp"
#include "kernels/cpu/element_run.hpp"
#include "kernels/cpu/resolve.hpp"
#include "kernels/cpu/scatter_engine.hpp"

#if defined(MULTIGATHER_HAVE_OPENMP)
#include <omp.h>
#endif

namespace multigather::detail {
namespace {

constexpr int kTile = 1024;
/// Outputs of at least this many bytes take the filtered path for small lookups (run_filtered).
constexpr std::int64_t kMinFilteredSpanBytes = std::int64_t{8} << 20;
/// The threading rule (set_scatter_threading; tests force each path on small cases).
std::atomic<ScatterThreading> threading_rule{ScatterThreading::kAuto};
/// The target of a dropped lookup (a real target offset may be negative: negative strides).
constexpr std::int64_t kDropped = INT64_MIN;

/// Runs work(w) for w in [0, T), each on its own OpenMP thread; true when every call returned
/// true. The threads read the calling thread's InterruptScope (core/interrupt_poll.hpp).
template <class Work>
bool on_threads(int T, Work&& work) {
  // One worker runs on the calling thread: an OpenMP region, even one that its if clause
  // serializes, costs libgomp's team start and barrier (two futex calls per scatter, measured
  // with strace on a small torch scatter_add at 1 thread).
  if (T == 1) return work(0);
  bool ok = true;
  InterruptScope* const interrupt = current_interrupt();
#if defined(MULTIGATHER_HAVE_OPENMP)
#pragma omp parallel num_threads(T) reduction(&& : ok) if (T > 1)
#endif
  {
    const InterruptShare share(interrupt);  // every thread sees the caller's stop flag
#if defined(MULTIGATHER_HAVE_OPENMP)
#pragma omp for schedule(static, 1)
#endif
    for (int w = 0; w < T; ++w) ok = work(w) && ok;
  }
  return ok;
}

/// The tile resolver of a plan: resolve.hpp's, or the AVX-512 one where the CPU has it (32- and
/// 64-bit signed indices), as the gather engine picks it.
template <class Index, IndexMode kMode, bool kNegative>
cpu::ResolveFn<std::int64_t> tile_resolver() {
  if constexpr (std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>) {
    if (const auto simd = cpu::resolve_simd<Index, std::int64_t, kMode, kNegative>()) return simd;
  }
  return &cpu::resolve_tile<Index, std::int64_t, kMode, kNegative>;
}

template <class Index>
cpu::ResolveFn<std::int64_t> select_tile_for_index(const GatherPlan& p) {
  const bool neg = std::is_signed_v<Index> && p.negative_indices;
  switch (p.index_mode) {
    case IndexMode::kError:
      return neg ? tile_resolver<Index, IndexMode::kError, std::is_signed_v<Index>>()
                 : tile_resolver<Index, IndexMode::kError, false>();
    case IndexMode::kClamp:
      return neg ? tile_resolver<Index, IndexMode::kClamp, std::is_signed_v<Index>>()
                 : tile_resolver<Index, IndexMode::kClamp, false>();
    case IndexMode::kWrap: return tile_resolver<Index, IndexMode::kWrap, false>();
    case IndexMode::kFill:
      return neg ? tile_resolver<Index, IndexMode::kFill, std::is_signed_v<Index>>()
                 : tile_resolver<Index, IndexMode::kFill, false>();
    default: return nullptr;
  }
}

cpu::ResolveFn<std::int64_t> select_tile_resolver(const GatherPlan& p) {
  cpu::ResolveFn<std::int64_t> resolver = nullptr;
  visit_index_type(p.index_dtype, [&]<class Index>() {
    resolver = select_tile_for_index<Index>(p);
    return true;
  });
  return resolver;
}

/// Walks lookups [begin, end) (flat, C order over the plan's lookup dimensions) in runs along
/// the innermost lookup dimension (the row), in tiles of at most kTile lookups resolved by
/// `resolve`, and calls tile(offsets, flagged, ok, m, base_in, base_out, row_out) for each:
/// lookup t of the tile targets output offset base_in + offsets[t] and reads updates offset
/// base_out + t * row_out; `ok` false means a coordinate was out of range (under fill, i.e.
/// drop, `flagged` marks those lookups). Stops, returning false, when tile() returns false.
template <class Tile>
bool walk_tiles(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, std::int64_t begin,
                std::int64_t end, Tile&& tile) {
  const std::int64_t is = static_cast<std::int64_t>(element_size(p.index_dtype));
  const int outer = p.lookup_rank - 1;
  const auto row = static_cast<std::size_t>(outer < 0 ? 0 : outer);
  const std::int64_t row_size = p.lookup_rank > 0 ? p.shape[row] : 1;
  const std::int64_t row_in = p.lookup_rank > 0 ? p.input_strides[row] : 0;
  const std::int64_t row_ix = p.lookup_rank > 0 ? p.indices_strides[row] : 0;
  const std::int64_t row_out = p.lookup_rank > 0 ? p.output_strides[row] : 0;
  cpu::TileCoordinates coords;
  coords.index_step = row_ix * is;
  coords.coord_step = p.coord_stride * is;
  coords.input_step = row_in;
  alignas(64) std::int64_t offsets[kTile];
  alignas(64) std::uint8_t flagged[kTile];
  cpu::PlanCursor at;
  std::int64_t r0 = begin % row_size;
  at.seek(p, outer, begin / row_size);
  for (std::int64_t f = begin; f < end; r0 = 0, at.advance(p, outer)) {
    const std::int64_t n = std::min(row_size - r0, end - f);
    for (std::int64_t t0 = 0; t0 < n; t0 += kTile) {
      const int m = static_cast<int>(std::min<std::int64_t>(kTile, n - t0));
      bool ok = true;
      if (p.k > 0) {
        coords.indices = p.indices + (at.indices + (r0 + t0) * row_ix) * is;
        ok = resolve(p, coords, m, offsets, flagged);
      } else {
        for (int t = 0; t < m; ++t) offsets[t] = t * row_in;
      }
      if (!tile(offsets, flagged, ok, m, at.input + (r0 + t0) * row_in, at.output + (r0 + t0) * row_out, row_out)) {
        return false;
      }
    }
    f += n;
  }
  return true;
}

/// Resolves lookups [begin, end): targets[t] = the output element offset of lookup begin + t
/// (kDropped when dropped), updates[t] = its updates element offset. False when an index is out
/// of range under kError.
bool resolve_range(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, std::int64_t begin,
                   std::int64_t end, std::int64_t* targets, std::int64_t* updates) {
  const bool drop = p.index_mode == IndexMode::kFill;
  return walk_tiles(p, resolve, begin, end,
                    [&](const std::int64_t* offsets, const std::uint8_t* flagged, bool ok, int m,
                        std::int64_t base_in, std::int64_t base_out, std::int64_t row_out) {
                      if (!ok && !drop) return false;
                      for (int t = 0; t < m; ++t) {
                        targets[t] = (!ok && flagged[t]) ? kDropped : base_in + offsets[t];
                        updates[t] = base_out + t * row_out;
                      }
                      targets += m;
                      updates += m;
                      return true;
                    });
}

/// Where the combine writes and reads, and the first-reach marks (include_input = false).
struct Apply {
  std::byte* output = nullptr;
  const std::byte* updates = nullptr;
  std::int64_t es = 0;
  std::int64_t block = 1;
  std::uint8_t* reached = nullptr;  // indexed by output offset - lo; null: include_input
  std::int64_t lo = 0;
  /// The block combine compiled for AVX-512 (avx512.hpp), or null: Op::apply.
  cpu::CombineRunFn run = nullptr;
  /// A whole tile's combine with runs into one target kept in registers (avx512.hpp), or null.
  cpu::CombineRunsFn runs = nullptr;
  /// The plain element loop prefetches the target kPrefetchAhead lookups on: only where the
  /// target spans more than kPlainScatterPrefetchBytes.
  bool prefetch = true;
};

/// Prefetch distance of the element loop (lookups ahead): the targets of a tile are known before
/// it is combined, so the random read-modify-writes are fetched ahead of their turn.
constexpr std::int64_t kPrefetchAhead = 16;
/// Targets of at most this many bytes are in the cache after their first touches: there the
/// plain element loop's prefetch fetches nothing, and its test per update costs (callgrind,
/// torch.ops.multigather.scatter_add of a [64, 16] index into [64, 64] float32: 71.6k -> 68.1k
/// instructions per call without it; bench/README.md, "Issue 54's per-call work").
constexpr std::int64_t kPlainScatterPrefetchBytes = std::int64_t{256} << 10;
/// Blocks up to this many bytes are prefetched whole, one lookup ahead.
constexpr std::int64_t kPrefetchBlockBytes = 4096;

/// Combines m (target, update) offset pairs in order.
template <class Op>
void apply_pairs(const Apply& a, const std::int64_t* targets, const std::int64_t* updates, std::int64_t m) {
  const std::int64_t block_bytes = a.block * a.es;
  // Blocks up to kPrefetchBlockBytes are fetched whole, about 2 KiB of lookups ahead (at least
  // the next one): a random target row is in flight while the rows before it combine.
  const std::int64_t ahead = std::clamp<std::int64_t>(2048 / std::max<std::int64_t>(block_bytes, 1), 1, kPrefetchAhead);
  for (std::int64_t t = 0; t < m; ++t) {
    const std::int64_t target = targets[t];
    if (block_bytes <= 64) {
      if (t + kPrefetchAhead < m && targets[t + kPrefetchAhead] != kDropped) {
        __builtin_prefetch(a.output + targets[t + kPrefetchAhead] * a.es, 1, 1);
      }
    } else if (block_bytes <= kPrefetchBlockBytes && t + ahead < m && targets[t + ahead] != kDropped) {
      const std::byte* next = a.output + targets[t + ahead] * a.es;
      const std::byte* next_src = a.updates + updates[t + ahead] * a.es;
      for (std::int64_t b = 0; b < block_bytes; b += 64) {
        __builtin_prefetch(next + b, 1, 1);
        __builtin_prefetch(next_src + b, 0, 1);
      }
    }
    if (target == kDropped) continue;
    std::byte* dst = a.output + target * a.es;
    const std::byte* src = a.updates + updates[t] * a.es;
    if (a.reached == nullptr) {
      if (a.run != nullptr) {
        a.run(dst, src, a.block);
      } else {
        Op::apply(dst, src, a.block);
      }
      continue;
    }
    std::uint8_t* mark = a.reached + (target - a.lo);
    for (std::int64_t e = 0; e < a.block; ++e) {
      if (mark[e]) {
        Op::apply(dst + e * a.es, src + e * a.es, 1);
      } else {
        mark[e] = 1;
        std::memcpy(dst + e * a.es, src + e * a.es, static_cast<std::size_t>(a.es));
      }
    }
  }
}

/// Lookups [begin, end) combined tile by tile in order, with no arrays beyond a tile. False: an
/// index out of range under kError (tiles before it are already combined: the caller checks
/// the indices first).
template <class Op>
bool run_range_tiles(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, std::int64_t begin,
               std::int64_t end) {
  const bool drop = p.index_mode == IndexMode::kFill;
  alignas(64) std::int64_t targets[kTile];
  alignas(64) std::int64_t updates[kTile];
  return walk_tiles(p, resolve, begin, end,
                    [&](const std::int64_t* offsets, const std::uint8_t* flagged, bool ok, int m,
                        std::int64_t base_in, std::int64_t base_out, std::int64_t row_out) {
                      if (!ok && !drop) return false;
                      if (interrupt_requested(m)) return false;  // stops between two tiles
                      if (a.block == 1 && a.reached == nullptr && ok) {
                        // The element loop: straight from the tile's offsets, the next targets
                        // prefetched; the element size a constant of the Op.
                        constexpr auto es = static_cast<std::int64_t>(Op::kSize);
                        std::byte* const out = a.output + base_in * es;
                        const std::byte* src = a.updates + base_out * es;
                        const std::int64_t src_step = row_out * es;
                        for (int t = 0; t < m; ++t, src += src_step) {
                          if (t + kPrefetchAhead < m) {
                            __builtin_prefetch(out + offsets[t + kPrefetchAhead] * es, 1, 1);
                          }
                          Op::apply(out + offsets[t] * es, src, 1);
                        }
                        return true;
                      }
                      if (a.runs != nullptr && a.reached == nullptr && ok) {
                        // Blocks: the tile's runs into one target row combine in registers.
                        a.runs(a.output + base_in * a.es, offsets, m, a.updates + base_out * a.es,
                               row_out * a.es, a.block);
                        return true;
                      }
                      for (int t = 0; t < m; ++t) {
                        targets[t] = (!ok && flagged[t]) ? kDropped : base_in + offsets[t];
                        updates[t] = base_out + t * row_out;
                      }
                      apply_pairs<Op>(a, targets, updates, m);
                      return true;
                    });
}

/// The plain element-scatter loop, one call per piece of a row (element plans with one
/// coordinate and block 1: ScatterElements, put_along_axis, torch.scatter_, flat put): lookup t
/// combines updates[t * update_step] into target[t * target_step + v * axis_stride], v its index,
/// while v is already in [0, size); returns how many lookups it did, and the caller resolves
/// the one it stopped at (and on) the general way. One pass over the indices, no offsets
/// written and read back (the tile resolver's 36% of S2 into at 1 thread, `perf record`). The
/// target kPrefetchAhead lookups on is prefetched from its raw index, in unsigned arithmetic:
/// a prefetch never faults, and the index is checked before its own write. In order, so
/// duplicate targets combine (or, reduction none, the last wins) as in the one-thread walk.
/// kUnit: index_step == update_step == 1. kPrefetch: the target is prefetched kPrefetchAhead on
/// (targets above kPlainScatterPrefetchBytes).
template <class Op, class Index, bool kUnit, bool kPrefetch>
std::int64_t scatter_plain_run(std::byte* target, const std::byte* indices, const std::byte* updates,
                               std::int64_t target_step, std::int64_t index_step, std::int64_t update_step,
                               std::int64_t axis_stride, std::int64_t size, std::int64_t m) {
  constexpr auto es = static_cast<std::int64_t>(Op::kSize);
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  if constexpr (kUnit) index_step = update_step = 1;
  auto index = [&](std::int64_t t) { return cpu::load_index_unsigned<Index>(indices + t * index_step * is); };
  const auto base = reinterpret_cast<std::uintptr_t>(target);
  const auto n = static_cast<std::uint64_t>(size);
  std::int64_t t = 0;
  for (; t < m; ++t) {
    if (kPrefetch && t + kPrefetchAhead < m) {
      const std::int64_t a = t + kPrefetchAhead;
      const std::uint64_t element = static_cast<std::uint64_t>(a * target_step) +
                                    index(a) * static_cast<std::uint64_t>(axis_stride);
      __builtin_prefetch(reinterpret_cast<const void*>(base + element * static_cast<std::uint64_t>(es)), 1, 1);
    }
    const std::uint64_t v = index(t);
    if (__builtin_expect(v >= n, 0)) return t;
    Op::apply(target + (t * target_step + static_cast<std::int64_t>(v) * axis_stride) * es,
              updates + t * update_step * es, 1);
  }
  return m;
}

/// Whether run_range takes the plain element-scatter loop for the plan: one coordinate, block 1,
/// no first-reach marks (and, run_range's switch, 32- or 64-bit indices).
bool plain_scatter_applies(const GatherPlan& p, const Apply& a) {
  return p.k == 1 && p.block == 1 && a.reached == nullptr && p.lookup_rank > 0;
}

/// Lookups [begin, end) of a plan plain_scatter_applies to, row by row in pieces of at most
/// kTile (each preceded by the interrupt poll) on scatter_plain_run; from a lookup it stops
/// at, the rest of that piece runs on run_range_tiles (which reports an index out of
/// range, or applies the mode), then the plain loop again.
template <class Op, class Index>
bool run_range_plain(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, std::int64_t begin,
                     std::int64_t end) {
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  const int outer = p.lookup_rank - 1;
  const auto row = static_cast<std::size_t>(outer);
  const std::int64_t row_size = p.shape[row];
  const std::int64_t row_in = p.input_strides[row];
  const std::int64_t row_ix = p.indices_strides[row];
  const std::int64_t row_out = p.output_strides[row];
  const bool unit = row_ix == 1 && row_out == 1;
  auto plain = a.prefetch ? (unit ? &scatter_plain_run<Op, Index, true, true> : &scatter_plain_run<Op, Index, false, true>)
                          : (unit ? &scatter_plain_run<Op, Index, true, false> : &scatter_plain_run<Op, Index, false, false>);
  const std::int64_t stride = p.axis_strides[0];
  const std::int64_t size = p.axis_sizes[0];
  constexpr auto es = static_cast<std::int64_t>(Op::kSize);
  cpu::PlanCursor at;
  std::int64_t r0 = begin % row_size;
  at.seek(p, outer, begin / row_size);
  const std::int64_t index_row_bytes = row_size * is;
  // Short index rows apart from each other: the next one prefetched whole (element_run.hpp;
  // faster on S2 into; measured: bench/README.md, "Measurements behind the CPU engine's choices").
  const bool prefetch_rows = unit && outer > 0 && index_row_bytes <= cpu::kPrefetchIndexRowBytes;
  for (std::int64_t f = begin; f < end; r0 = 0, at.advance(p, outer)) {
    const std::int64_t n = std::min(row_size - r0, end - f);
    if (prefetch_rows && f + n < end) {
      cpu::prefetch_lines(p.indices + at.peek_next(p, outer, p.indices_strides, at.indices) * is, index_row_bytes);
    }
    for (std::int64_t t0 = 0; t0 < n; t0 += kTile) {
      const std::int64_t m = std::min<std::int64_t>(kTile, n - t0);
      if (interrupt_requested(m)) return false;  // stops between two pieces
      const std::int64_t r = r0 + t0;
      const std::int64_t done =
          plain(a.output + (at.input + r * row_in) * es, p.indices + (at.indices + r * row_ix) * is,
                a.updates + (at.output + r * row_out) * es, row_in, row_ix, row_out, stride, size, m);
      if (done < m && !run_range_tiles<Op>(p, resolve, a, f + t0 + done, f + t0 + m)) return false;
    }
    f += n;
  }
  return true;
}

/// Lookups [begin, end) combined in order: on the plain element-scatter loop where it applies,
/// else tile by tile. False: an index out of range under kError (lookups before it are already
/// combined: the caller checks the indices first), or an interrupt.
template <class Op>
bool run_range(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, std::int64_t begin,
               std::int64_t end) {
  if (plain_scatter_applies(p, a)) {
    switch (p.index_dtype) {
      case DType::kInt64: return run_range_plain<Op, std::int64_t>(p, resolve, a, begin, end);
      case DType::kInt32: return run_range_plain<Op, std::int32_t>(p, resolve, a, begin, end);
      case DType::kUInt64: return run_range_plain<Op, std::uint64_t>(p, resolve, a, begin, end);
      case DType::kUInt32: return run_range_plain<Op, std::uint32_t>(p, resolve, a, begin, end);
      default: break;  // 8- and 16-bit indices: the tiles
    }
  }
  return run_range_tiles<Op>(p, resolve, a, begin, end);
}

/// A lookup dimension that splits the targets into disjoint slabs: one whose lookups move the
/// output (plan.input_strides[d] != 0). Such a plan dimension is made of input dimensions that
/// are neither axes nor broadcast (make_plan gives those stride 0, and never coalesces them with
/// a strided one), so a lookup's coordinate along it IS its target's coordinate there: lookups
/// with different coordinates reach different elements (the output view has no self-overlap).
/// The outermost such dimension with at least `threads` positions and at least kMinSlabLookups
/// lookups per thread and outer step is chosen; -1 when there is none.
constexpr std::int64_t kMinSlabLookups = 256;

int slab_dimension(const GatherPlan& p, int threads, std::int64_t min_lookups) {
  std::int64_t inner = 1;
  int best = -1;
  // From the inside out, so that `inner` is the product of the dimensions inside d.
  for (int d = p.lookup_rank - 1; d >= 0; --d) {
    const auto du = static_cast<std::size_t>(d);
    if (p.input_strides[du] != 0 && p.shape[du] >= threads &&
        p.shape[du] / threads * inner >= min_lookups) {
      best = d;
    }
    inner *= p.shape[du];
  }
  return best;
}

/// T threads over disjoint slabs of the targets: thread w takes positions [size*w/T,
/// size*(w+1)/T) of slab dimension d, in every outer step, and walks its lookups in row-major
/// order. Every output element is reached by one thread only, through the same sequence of
/// combines as the one-thread walk: identical bytes, with no buckets and no second index pass.
template <class Op>
bool run_slabs(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, int d, int threads) {
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= p.shape[static_cast<std::size_t>(i)];
  for (int i = d + 1; i < p.lookup_rank; ++i) inner *= p.shape[static_cast<std::size_t>(i)];
  const std::int64_t size = p.shape[static_cast<std::size_t>(d)];
  const int T = threads;
  return on_threads(T, [&](int w) {
    const std::int64_t c0 = static_cast<std::int64_t>(static_cast<__int128>(size) * w / T);
    const std::int64_t c1 = static_cast<std::int64_t>(static_cast<__int128>(size) * (w + 1) / T);
    bool mine = true;
    for (std::int64_t o = 0; o < outer && mine; ++o) {
      const std::int64_t base = o * size * inner;
      mine = run_range<Op>(p, resolve, a, base + c0 * inner, base + c1 * inner);
    }
    return mine;
  });
}

/// Output bytes copied and then combined into per step of run_copied_slabs: about a quarter of
/// an L2 cache, so that the combine's random writes find their lines still there.
constexpr std::int64_t kCopyStepBytes = std::int64_t{256} << 10;

/// The lookup dimension along which a one-shot scatter copies its input slab by slab
/// (ScatterRun::copy_from), or -1: the first dimension of more than one position, when every
/// dimension before it has one and it moves the output (input_strides[d] = s > 0) by s * size =
/// the whole output. The output is C-contiguous, so such a dimension is its outermost (a
/// coalesced group of them): lookups at position c reach only offsets [c * s, (c + 1) * s).
int copy_slab_dimension(const GatherPlan& p, const ScatterRun& run) {
  if (run.copy_from == nullptr || run.output_lo != 0) return -1;
  for (int d = 0; d < p.lookup_rank; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (p.shape[du] == 1) continue;
    const std::int64_t s = p.input_strides[du];
    return s > 0 && s * p.shape[du] == run.output_hi + 1 ? d : -1;
  }
  return -1;
}

/// A one-shot scatter along copy slab dimension d: thread w takes positions [size*w/T,
/// size*(w+1)/T) as run_slabs does, and walks them in steps of about kCopyStepBytes of output,
/// each copied from the input and then combined into, lookups in row-major order. One pass
/// over the output instead of two (the copy, then random read-modify-writes of lines long
/// evicted); each element sees the one-thread walk's combines, after its copy.
template <class Op>
bool run_copied_slabs(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, int d,
                      const std::byte* copy_from, int threads) {
  std::int64_t inner = 1;
  for (int i = d + 1; i < p.lookup_rank; ++i) inner *= p.shape[static_cast<std::size_t>(i)];
  const std::int64_t size = p.shape[static_cast<std::size_t>(d)];
  const std::int64_t slab_bytes = p.input_strides[static_cast<std::size_t>(d)] * a.es;
  const std::int64_t step = std::max<std::int64_t>(1, kCopyStepBytes / slab_bytes);
  const int T = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), size));
  return on_threads(T, [&](int w) {
    const std::int64_t c0 = static_cast<std::int64_t>(static_cast<__int128>(size) * w / T);
    const std::int64_t c1 = static_cast<std::int64_t>(static_cast<__int128>(size) * (w + 1) / T);
    for (std::int64_t c = c0; c < c1; c += step) {
      const std::int64_t e = std::min(c + step, c1);
      std::memcpy(a.output + c * slab_bytes, copy_from + c * slab_bytes, static_cast<std::size_t>((e - c) * slab_bytes));
      if (!run_range<Op>(p, resolve, a, c * inner, e * inner)) return false;
    }
    return true;
  });
}

/// The owner of a target offset among `owners` equal ranges of [lo, lo + span).
inline int owner_of(std::int64_t target, std::int64_t lo, std::int64_t span, int owners) {
  return static_cast<int>(static_cast<__int128>(target - lo) * owners / span);
}

/// T threads, each reading EVERY lookup and combining only those whose target it owns (T equal
/// ranges of the output's offsets), in row-major order: no allocation, each owner's sequence
/// of combines that of the one-thread walk. The index pass is repeated per thread, so this
/// pays where the combines are random accesses into an output larger than the caches (S5's
/// flat put-add), whose cost is split between the threads.
template <class Op>
bool run_filtered(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, std::int64_t span,
                  int threads) {
  const bool drop = p.index_mode == IndexMode::kFill;
  const int T = threads;
  return on_threads(T, [&](int w) {
    // The offsets that owner_of gives to w: [lo + ceil(span * w / T), lo + ceil(span * (w + 1) / T)).
    auto bound = [&](int i) {
      return a.lo + static_cast<std::int64_t>((static_cast<__int128>(span) * i + T - 1) / T);
    };
    const std::int64_t own_lo = bound(w), own_hi = bound(w + 1);
    alignas(64) std::int64_t targets[kTile];
    alignas(64) std::int64_t updates[kTile];
    const bool mine = walk_tiles(p, resolve, 0, p.lookups,
                                 [&](const std::int64_t* offsets, const std::uint8_t* flagged, bool tile_ok, int m,
                                     std::int64_t base_in, std::int64_t base_out, std::int64_t row_out) {
                                   if (!tile_ok && !drop) return false;
                                   if (interrupt_requested(m)) return false;
                                   int n = 0;
                                   for (int t = 0; t < m; ++t) {
                                     const std::int64_t target = base_in + offsets[t];
                                     const bool dropped = !tile_ok && flagged[t] != 0;
                                     targets[n] = target;
                                     updates[n] = base_out + t * row_out;
                                     n += static_cast<int>(!dropped && target >= own_lo && target < own_hi);
                                   }
                                   apply_pairs<Op>(a, targets, updates, n);
                                   return true;
                                 });
    return mine;
  });
}

/// What the order check of run_sorted notes about one chunk of lookups (non-dropped targets).
struct ChunkOrder {
  bool sorted = true;
  bool any = false;            // a non-dropped lookup
  std::int64_t first = 0;      // the first target
  std::int64_t last = 0;       // the last target
  std::int64_t change = -1;    // the first lookup whose target is not `first` (-1: none)
};

/// Sorted targets (segment reductions over sorted ids, CSR offsets): when the lookups' target
/// offsets never decrease in row-major order (dropped lookups aside), the lookups that reach one
/// target are one contiguous run. T threads then take T contiguous ranges of lookups, cut only
/// between runs: each target is combined by one thread, in the one-thread walk's order (the same
/// bytes at every thread count), with no buckets, no sort and no atomics. Phase 1 (read only, in
/// parallel) checks the order chunk by chunk; a decrease (or an index out of range) stops it
/// with *sorted = false and nothing written, for another path to run. Phase 2 combines.
template <class Op>
bool run_sorted(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, int threads,
                bool* sorted) {
  const std::int64_t lookups = p.lookups;
  const int T = threads;
  auto chunk_begin = [&](int c) { return static_cast<std::int64_t>(static_cast<__int128>(lookups) * c / T); };
  std::vector<ChunkOrder> order(static_cast<std::size_t>(T));
  const bool walked = on_threads(T, [&](int c) {
    ChunkOrder& f = order[static_cast<std::size_t>(c)];
    alignas(64) std::int64_t targets[kTile];
    alignas(64) std::int64_t updates[kTile];
    for (std::int64_t l = chunk_begin(c), end = chunk_begin(c + 1); l < end; l += kTile) {
      const std::int64_t m = std::min<std::int64_t>(kTile, end - l);
      if (interrupt_requested(m)) return false;
      if (!resolve_range(p, resolve, l, l + m, targets, updates)) {
        f.sorted = false;  // an index out of range: the other paths report it
        return true;
      }
      for (std::int64_t t = 0; t < m; ++t) {
        const std::int64_t target = targets[t];
        if (target == kDropped) continue;
        if (!f.any) {
          f.any = true;
          f.first = target;
        } else if (target < f.last) {
          f.sorted = false;
          return true;
        } else if (f.change < 0 && target != f.first) {
          f.change = l + t;
        }
        f.last = target;
      }
    }
    return true;
  });
  if (!walked) return false;
  // Across chunks: each chunk starts at or after the last target before it.
  std::vector<std::int64_t> start(static_cast<std::size_t>(T) + 1, lookups);
  std::vector<std::uint8_t> has_before(static_cast<std::size_t>(T), 0);
  std::vector<std::int64_t> last_before(static_cast<std::size_t>(T), 0);
  bool any = false;
  std::int64_t last = 0;
  for (int c = 0; c < T; ++c) {
    const ChunkOrder& f = order[static_cast<std::size_t>(c)];
    if (!f.sorted || (any && f.any && f.first < last)) {
      *sorted = false;
      return true;
    }
    has_before[static_cast<std::size_t>(c)] = any ? 1 : 0;
    last_before[static_cast<std::size_t>(c)] = last;
    if (f.any) {
      any = true;
      last = f.last;
    }
  }
  *sorted = true;
  // Thread c starts at the first lookup of chunk c or later whose target is past every target
  // before chunk c: a run that crosses into chunk c stays with the thread that began it.
  start[0] = 0;
  for (int c = T - 1; c >= 1; --c) {
    const ChunkOrder& f = order[static_cast<std::size_t>(c)];
    const auto u = static_cast<std::size_t>(c);
    if (!f.any) {
      start[u] = start[u + 1];
    } else if (!has_before[u] || f.first > last_before[u]) {
      start[u] = chunk_begin(c);
    } else {
      start[u] = f.change >= 0 ? f.change : start[u + 1];
    }
  }
  return on_threads(T, [&](int w) {
    const auto u = static_cast<std::size_t>(w);
    return start[u] >= start[u + 1] || run_range<Op>(p, resolve, a, start[u], start[u + 1]);
  });
}

template <class Op>
bool run_threads(const GatherPlan& p, cpu::ResolveFn<std::int64_t> resolve, const Apply& a, std::int64_t span,
                 int threads) {
  const std::int64_t lookups = p.lookups;
  const int T = threads;
  auto chunk_begin = [&](int c) {
    return static_cast<std::int64_t>(static_cast<__int128>(lookups) * c / T);
  };
  // counts[c * T + w]: lookups of chunk c owned by w; then each one's first slot in `pairs`.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(T) * static_cast<std::size_t>(T), 0);
  // Phase 1 (counting; nothing written yet) is where an interrupt stops this rule: phases 2
  // and 3 only redo and apply what phase 1 walked.
  const bool ok = on_threads(T, [&](int c) {
    alignas(64) std::int64_t targets[kTile];
    alignas(64) std::int64_t updates[kTile];
    std::int64_t* count = counts.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(T);
    bool chunk_ok = true;
    for (std::int64_t l = chunk_begin(c), end = chunk_begin(c + 1); l < end && chunk_ok; l += kTile) {
      const std::int64_t m = std::min<std::int64_t>(kTile, end - l);
      chunk_ok = !interrupt_requested(m) && resolve_range(p, resolve, l, l + m, targets, updates);
      for (std::int64_t t = 0; t < m && chunk_ok; ++t) {
        if (targets[t] != kDropped) ++count[owner_of(targets[t], a.lo, span, T)];
      }
    }
    return chunk_ok;
  });
  if (!ok) return false;
  // Bucket w holds chunk 0's lookups owned by w, then chunk 1's, ...: row-major order.
  std::vector<std::int64_t> bucket_begin(static_cast<std::size_t>(T) + 1, 0);
  std::int64_t total = 0;
  for (int w = 0; w < T; ++w) {
    bucket_begin[static_cast<std::size_t>(w)] = total;
    for (int c = 0; c < T; ++c) {
      std::int64_t& slot = counts[static_cast<std::size_t>(c) * static_cast<std::size_t>(T) + static_cast<std::size_t>(w)];
      const std::int64_t n = slot;
      slot = total;
      total += n;
    }
  }
  bucket_begin[static_cast<std::size_t>(T)] = total;
  std::unique_ptr<std::int64_t[]> pair_targets(new std::int64_t[static_cast<std::size_t>(total > 0 ? total : 1)]);
  std::unique_ptr<std::int64_t[]> pair_updates(new std::int64_t[static_cast<std::size_t>(total > 0 ? total : 1)]);
#if defined(MULTIGATHER_HAVE_OPENMP)
#pragma omp parallel num_threads(T)
#endif
  {
#if defined(MULTIGATHER_HAVE_OPENMP)
    const int me = omp_get_thread_num();
    const int team = omp_get_num_threads();
#else
    const int me = 0, team = 1;
#endif
    alignas(64) std::int64_t targets[kTile];
    alignas(64) std::int64_t updates[kTile];
    // Phase 2: each chunk writes its lookups into the owners' buckets, in order.
    for (int c = me; c < T; c += team) {
      std::int64_t* next = counts.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(T);
      for (std::int64_t l = chunk_begin(c), end = chunk_begin(c + 1); l < end; l += kTile) {
        const std::int64_t m = std::min<std::int64_t>(kTile, end - l);
        resolve_range(p, resolve, l, l + m, targets, updates);
        for (std::int64_t t = 0; t < m; ++t) {
          if (targets[t] == kDropped) continue;
          const std::int64_t slot = next[owner_of(targets[t], a.lo, span, T)]++;
          pair_targets[static_cast<std::size_t>(slot)] = targets[t];
          pair_updates[static_cast<std::size_t>(slot)] = updates[t];
        }
      }
    }
#if defined(MULTIGATHER_HAVE_OPENMP)
#pragma omp barrier
#endif
    // Phase 3: each owner combines its bucket in order.
    for (int w = me; w < T; w += team) {
      const std::int64_t b = bucket_begin[static_cast<std::size_t>(w)];
      const std::int64_t e = bucket_begin[static_cast<std::size_t>(w) + 1];
      apply_pairs<Op>(a, pair_targets.get() + b, pair_updates.get() + b, e - b);
    }
  }
  return true;
}

}  // namespace

bool scatter_indices_ok(const GatherPlan& plan, const TensorView& indices) noexcept {
  if (plan.numel == 0) return true;
  for (int j = 0; j < plan.k; ++j) {
    // An empty axis: clamp and wrap have no position to resolve to; drop skips every update.
    if (plan.axis_sizes[static_cast<std::size_t>(j)] == 0) return plan.index_mode == IndexMode::kFill;
  }
  if (plan.index_mode != IndexMode::kError) return true;
  // The interrupt check is asked here, before the first write, once the lookups' count calls for
  // it: broadcast indices read a few stored values for very many lookups.
  if (interrupt_requested(plan.lookups)) return false;
  // The gather's own pre-check (engine.cpp): a min / max pass over the stored values (each once,
  // broadcast or not), in parallel pieces; nothing is resolved into offsets.
  return indices_in_range(indices, plan);
}

bool scatter_copies_input(const GatherPlan& plan, const ScatterRun& run) noexcept {
  if (plan.numel == 0) return false;
  for (int j = 0; j < plan.k; ++j) {
    if (plan.axis_sizes[static_cast<std::size_t>(j)] == 0) return false;
  }
  const ScatterThreading rule = threading_rule.load(std::memory_order_relaxed);
  return (rule == ScatterThreading::kAuto || rule == ScatterThreading::kSlabs) && copy_slab_dimension(plan, run) >= 0;
}

ScatterThreading set_scatter_threading(ScatterThreading threading) noexcept {
  return threading_rule.exchange(threading);
}

ScatterResult run_scatter_cpu(const GatherPlan& plan, const ScatterRun& run, int threads) noexcept {
  if (plan.numel == 0) return ScatterResult::kOk;
  for (int j = 0; j < plan.k; ++j) {
    if (plan.axis_sizes[static_cast<std::size_t>(j)] == 0) {
      return plan.index_mode == IndexMode::kFill ? ScatterResult::kOk : ScatterResult::kBadIndex;
    }
  }
  const cpu::ResolveFn<std::int64_t> resolve = select_tile_resolver(plan);
  if (resolve == nullptr) return ScatterResult::kInternal;
  Apply a;
  a.output = const_cast<std::byte*>(plan.input);  // the scatter's output (see the file comment)
  a.updates = plan.output;
  a.es = static_cast<std::int64_t>(plan.element_size);
  a.block = plan.block;
  a.lo = run.output_lo;
  // Blocks of 16 elements or more combine with the CPU's vector width.
  if (plan.block >= 16) a.run = cpu::combine_run_simd(run.dtype, run.reduction);
  // Blocks of 2 to 8 vectors: whole tiles, each run of lookups into one target in registers.
  if (plan.block >= 2) a.runs = cpu::combine_runs_simd(run.dtype, run.reduction, plan.block);
  const std::int64_t span = run.output_hi - run.output_lo + 1;
  a.prefetch = span * a.es > kPlainScatterPrefetchBytes;
  std::unique_ptr<std::uint8_t[]> reached;
  if (!run.include_input && run.reduction != Reduction::kNone) {
    reached.reset(new (std::nothrow) std::uint8_t[static_cast<std::size_t>(span)]());
    if (reached == nullptr) return ScatterResult::kOutOfMemory;
    a.reached = reached.get();
  }
  const ScatterThreading rule = threading_rule.load(std::memory_order_relaxed);
  // The test rules take an explicit num_threads as it is, however little work the call has.
  if (rule != ScatterThreading::kAuto && plan.num_threads > 0) threads = plan.num_threads;
  if (threads > plan.lookups) threads = static_cast<int>(plan.lookups);
  const int slab = threads > 1 && rule != ScatterThreading::kBuckets && rule != ScatterThreading::kFiltered
                       ? slab_dimension(plan, threads, rule == ScatterThreading::kSlabs ? 1 : kMinSlabLookups)
                       : -1;
  // Without a slab dimension (and unsorted), every thread reads all lookups and combines its
  // own targets (run_filtered): the buckets' pairs (two index passes and 16 bytes written and
  // read per lookup) cost more at 2 threads: on S5's elements, G2's and S4's 128-byte rows and
  // S1's 2 KiB rows (measured: bench/README.md, "Measurements behind the CPU engine's choices").
  // Lookups of fewer than 64 bytes into an output under 8 MiB run on one thread: there the
  // repeated index pass costs more than the combine it splits.
  const bool small_lookups = static_cast<std::int64_t>(plan.block) * a.es < kDefaultMinParallelBlockBytes;
  const bool filtered = threads > 1 && slab < 0 &&
                        (rule == ScatterThreading::kFiltered ||
                         (rule == ScatterThreading::kAuto && (!small_lookups || span * a.es >= kMinFilteredSpanBytes)));
  // Sorted targets are tried first where there is no slab dimension (auto and the sorted test
  // rule): one read-only pass, which stops at the first decrease.
  const bool try_sorted = threads > 1 && slab < 0 && (rule == ScatterThreading::kAuto || rule == ScatterThreading::kSorted);
  // The call's threads before the one-thread rule of small lookups (below): the sorted runs'
  // and the one-shot copy's, whose work does not repeat per thread.
  const int call_threads = threads;
  if (slab < 0 && !filtered && rule == ScatterThreading::kAuto && small_lookups) threads = 1;
  // A one-shot scatter (scatter_copies_input said yes) copies its input slab by slab.
  const int copy_slab = run.copy_from != nullptr ? copy_slab_dimension(plan, run) : -1;
  if (run.copy_from != nullptr && copy_slab < 0) return ScatterResult::kInternal;
  ScatterResult result = ScatterResult::kInternal;
  combine::visit_combine(run.dtype, run.reduction, [&]<class Op>() {
    if (copy_slab >= 0) {
      const bool ok = run_copied_slabs<Op>(plan, resolve, a, copy_slab, run.copy_from, call_threads);
      result = ok ? ScatterResult::kOk : ScatterResult::kBadIndex;
      return;
    }
    if (threads > 1 && slab >= 0) {
      result = run_slabs<Op>(plan, resolve, a, slab, threads) ? ScatterResult::kOk : ScatterResult::kBadIndex;
      return;
    }
    if (try_sorted) {
      bool sorted = false;
      const bool ran = run_sorted<Op>(plan, resolve, a, call_threads, &sorted);
      if (!ran || sorted) {
        result = ran ? ScatterResult::kOk : ScatterResult::kBadIndex;
        return;
      }
    }
    if (filtered) {
      result = run_filtered<Op>(plan, resolve, a, span, threads) ? ScatterResult::kOk : ScatterResult::kBadIndex;
      return;
    }
    if (threads > 1) {
      try {
        result = run_threads<Op>(plan, resolve, a, span, threads) ? ScatterResult::kOk
                                                                  : ScatterResult::kBadIndex;
        return;
      } catch (const std::bad_alloc&) {
        // The buckets do not fit: nothing was written yet; one thread needs none.
      }
    }
    result = run_range<Op>(plan, resolve, a, 0, plan.lookups) ? ScatterResult::kOk : ScatterResult::kBadIndex;
  });
  return result;
}

}  // namespace multigather::detail
