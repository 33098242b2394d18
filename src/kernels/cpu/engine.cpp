// The CPU engine: walks the plan's lookups in runs along the innermost lookup dimension,
// resolves each run in tiles (resolve.hpp) and copies them (copy.hpp); splits the lookups
// across OpenMP threads (run_chunks).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/index_value.hpp"  // visit_index_type
#include "core/interrupt_poll.hpp"
#include "core/task_pool.hpp"
#include "kernels/cpu/avx512.hpp"
#include "kernels/cpu/copy.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/cpu/cursor.hpp"
#include "kernels/cpu/element_run.hpp"
#include "kernels/cpu/index_check.hpp"
#include "kernels/cpu/resolve.hpp"

#if defined(MULTIGATHER_HAVE_OPENMP)
#include <omp.h>
#endif

namespace multigather::detail {
namespace {

using cpu::CopyFn;

/// Lookups resolved per tile (offsets live on the stack: nothing is allocated). 1024 rather than
/// 256: fewer restarts of the copy loop's prefetch window (measured faster on flat_take).
constexpr int kTile = 1024;
/// The parallel split: chunks of at least this much work, at most kChunksPerThread per thread.
constexpr std::int64_t kBytesPerChunk = std::int64_t{64} << 10;
constexpr std::int64_t kChunksPerThread = 8;
/// Element rows that each read their own span of at most this much input get the next row's
/// span prefetched while one runs (element_run.hpp).
constexpr std::int64_t kRowPrefetchMaxBytes = std::int64_t{16} << 10;

/// Bytes of input that one lookup's coordinates can reach (where a random read may land).
std::int64_t lookup_span_bytes(const GatherPlan& p) {
  const std::int64_t span = axes_reach(p.axis_strides.data(), p.axis_sizes.data(), p.k);
  return (span + 1) * static_cast<std::int64_t>(p.element_size);
}

/// Whether every block of a block plan is copied between addresses equal modulo 64 (the same
/// offset within a cache line): the input and output bases are, and every byte stride that
/// moves a block (lookup dimensions, axes) is a multiple of 64.
bool same_line_offset(const GatherPlan& p) {
  const auto es = static_cast<std::int64_t>(p.element_size);
  if ((reinterpret_cast<std::uintptr_t>(p.input) - reinterpret_cast<std::uintptr_t>(p.output)) % 64 != 0) return false;
  for (int d = 0; d < p.lookup_rank; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (p.shape[du] > 1 && ((p.input_strides[du] * es) % 64 != 0 || (p.output_strides[du] * es) % 64 != 0)) return false;
  }
  for (int j = 0; j < p.k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (p.axis_sizes[ju] > 1 && (p.axis_strides[ju] * es) % 64 != 0) return false;
  }
  return true;
}

template <std::size_t W, class Offset, bool kFill>
CopyFn<Offset> select_copy_width(const GatherPlan& p) {
  if (p.kind == PlanKind::kElement) {
    return lookup_span_bytes(p) < cpu::kPrefetchSpanBytes ? &cpu::copy_elements<W, Offset, kFill, false>
                                                          : &cpu::copy_elements<W, Offset, kFill, true>;
  }
  const std::int64_t bytes = p.block * static_cast<std::int64_t>(W);
  if (bytes < cpu::kMemcpyBlockBytes) return &cpu::copy_small_blocks<W, Offset, kFill>;
  if (const CopyFn<Offset> simd = cpu::chunked_blocks_simd<Offset, kFill>(W, bytes)) return simd;
  if (bytes == 64) return &cpu::copy_chunked_blocks<W, Offset, kFill, 64>;
  if (bytes == 128) return &cpu::copy_chunked_blocks<W, Offset, kFill, 128>;
  if (bytes <= cpu::kChunkedBlockMaxBytes) return &cpu::copy_chunked_blocks<W, Offset, kFill>;
  if (const CopyFn<Offset> simd = cpu::large_blocks_simd<Offset, kFill>(W, bytes, same_line_offset(p))) return simd;
  return &cpu::copy_large_blocks<W, Offset, kFill>;
}

template <class Offset, bool kFill>
CopyFn<Offset> select_copy(const GatherPlan& p) {
  switch (p.element_size) {
    case 1: return select_copy_width<1, Offset, kFill>(p);
    case 2: return select_copy_width<2, Offset, kFill>(p);
    case 4: return select_copy_width<4, Offset, kFill>(p);
    case 8: return select_copy_width<8, Offset, kFill>(p);
    case 16: return select_copy_width<16, Offset, kFill>(p);
    default: return nullptr;
  }
}

/// Whether an element plan with one coordinate runs on the fused element kernel with the next
/// row's span prefetched (element_run.hpp): more than one row, input stride 0 along the row
/// (each row reads its own span of at most kRowPrefetchMaxBytes, upward from the row's base: a
/// positive axis stride). Elsewhere the plain element loop is faster: with the mode and checks
/// fused in, the loop has more instructions per lookup and fewer random reads in flight
/// (measured on flat_take: slower than both the tiles and the plain loop).
bool fused_row_applies(const GatherPlan& p) {
  if (p.kind != PlanKind::kElement || p.k != 1 || p.lookup_rank < 2) return false;
  const auto row = static_cast<std::size_t>(p.lookup_rank - 1);
  return p.input_strides[row] == 0 && p.axis_strides[0] > 0 && lookup_span_bytes(p) <= kRowPrefetchMaxBytes;
}

/// Indices and output contiguous along the row (the innermost lookup dimension).
bool unit_row(const GatherPlan& p) {
  const auto row = static_cast<std::size_t>(p.lookup_rank > 0 ? p.lookup_rank - 1 : 0);
  return p.lookup_rank > 0 && p.indices_strides[row] == 1 && p.output_strides[row] == 1;
}

/// pick.template operator()<W>() for the plan's element width W (1, 2, 4, 8 or 16 bytes).
template <class Fn, class Pick>
Fn by_width(const GatherPlan& p, Pick pick) {
  switch (p.element_size) {
    case 1: return pick.template operator()<1>();
    case 2: return pick.template operator()<2>();
    case 4: return pick.template operator()<4>();
    case 8: return pick.template operator()<8>();
    case 16: return pick.template operator()<16>();
    default: return nullptr;
  }
}

/// The fused row kernel for the plan when fused_row_applies, else nullptr. kUnit when indices
/// and output are contiguous along the row.
template <class Index, IndexMode kMode, bool kNegative>
cpu::ElementRunFn select_fused_row(const GatherPlan& p) {
  if (!fused_row_applies(p)) return nullptr;
  const bool unit = unit_row(p);
  return by_width<cpu::ElementRunFn>(p, [&]<std::size_t W>() -> cpu::ElementRunFn {
    return unit ? &cpu::gather_element_run<W, Index, kMode, kNegative, true>
                : &cpu::gather_element_run<W, Index, kMode, kNegative, false>;
  });
}

/// The plain element loop for an element plan with one coordinate, with indices and output
/// contiguous along the row: on AVX-512 gathers (avx512.hpp, which says where they pay: on AMD
/// CPUs also for a moving input, and beyond the L2 cache with prefetch) where the CPU has them, for 4- and
/// 8-byte elements and 32- and 64-bit indices; else, where the lookups reach beyond the L2 cache
/// (kPlainPrefetchSpanBytes), the scalar loop with software prefetch. Otherwise, and for other
/// layouts, element_run.hpp's plain loop. nullptr for other plans (run_threads asks only for
/// plans not on the fused row kernel).
template <class Index>
cpu::PlainRunFn select_plain_run(const GatherPlan& p) {
  if (p.kind != PlanKind::kElement || p.k != 1) return nullptr;
  const bool unit = unit_row(p);
  const bool beyond_l2 = unit && lookup_span_bytes(p) >= cpu::kPlainPrefetchSpanBytes;
  if (unit) {
    const bool input_moves = p.input_strides[static_cast<std::size_t>(p.lookup_rank - 1)] != 0;  // unit: rank > 0
    if (const cpu::PlainRunFn simd =
            cpu::plain_run_simd(p.element_size, sizeof(Index), std::is_signed_v<Index>, input_moves, beyond_l2)) {
      return simd;
    }
  }
  if (beyond_l2) {
    // Elements from beyond the L2 cache: the scalar loop with software prefetch keeps more
    // misses in flight than the plain loop (element_run.hpp).
    return by_width<cpu::PlainRunFn>(p, [&]<std::size_t W>() -> cpu::PlainRunFn {
      return &cpu::gather_plain_run<W, Index, true, true>;
    });
  }
  return by_width<cpu::PlainRunFn>(p, [&]<std::size_t W>() -> cpu::PlainRunFn {
    return unit ? &cpu::gather_plain_run<W, Index, true> : &cpu::gather_plain_run<W, Index, false>;
  });
}

/// The tile resolver: compiled for AVX-512 where the CPU has it (avx512.hpp; 32- and 64-bit
/// signed indices), else resolve.hpp's.
template <class Index, class Offset, IndexMode kMode, bool kNegative>
cpu::ResolveFn<Offset> select_resolve() {
  if constexpr (std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>) {
    if (const cpu::ResolveFn<Offset> simd = cpu::resolve_simd<Index, Offset, kMode, kNegative>()) return simd;
  }
  return &cpu::resolve_tile<Index, Offset, kMode, kNegative>;
}

/// The kernels of one call, selected once per call (run_threads) for all its threads.
template <class Offset>
struct Kernels {
  CopyFn<Offset> copy = nullptr;             // the copy stage of the tiles
  cpu::ResolveFn<Offset> resolve = nullptr;  // the resolve stage of the tiles
  cpu::ElementRunFn fused_row = nullptr;     // the fused row kernel, when it applies
  cpu::PlainRunFn plain_run = nullptr;       // the plain element loop, when it applies
};

/// Runs runs of consecutive lookups along the innermost lookup dimension (the row): on the
/// fused row kernel when there is one; else on the plain element loop while the indices are in
/// range as they are (when the plan has one), and in tiles of kTile lookups resolved
/// (resolve.hpp) then copied (copy.hpp) from a lookup it does not take on. Holds the tile
/// buffers (on the stack: nothing is allocated).
template <class Index, class Offset, IndexMode kMode, bool kNegative>
class RunLookups {
 public:
  RunLookups(const GatherPlan& p, const Kernels<Offset>& kernels) noexcept
      : p_(p), copy_(kernels.copy), resolve_(kernels.resolve), fused_row_(kernels.fused_row),
        plain_run_(kernels.plain_run) {
    const auto row = static_cast<std::size_t>(p.lookup_rank > 0 ? p.lookup_rank - 1 : 0);
    row_in_ = p.lookup_rank > 0 ? p.input_strides[row] : 0;
    row_ix_ = p.lookup_rank > 0 ? p.indices_strides[row] : 0;
    row_out_ = p.lookup_rank > 0 ? p.output_strides[row] : 0;
    copy_run_.block = p.block;
    copy_run_.output_step = row_out_ * es_;
    copy_run_.fill = p.fill_bytes.data();
    coords_.index_step = row_ix_ * kIs;
    coords_.coord_step = p.coord_stride * kIs;
    coords_.input_step = row_in_;
    element_run_.input_step = row_in_;
    element_run_.index_step = row_ix_;
    element_run_.output_step = row_out_;
    element_run_.axis_stride = p.axis_strides[0];
    element_run_.axis_size = p.axis_sizes[0];
    element_run_.fill = p.fill_bytes.data();
  }

  /// Lookups [r0, r0 + n) of the row at cursor `at` (over the dimensions above the row).
  /// `next_input` (element offset, or -1): the next row's input span, prefetched by the fused
  /// row kernel. False: an index out of range under kError.
  bool run(const cpu::PlanCursor& at, std::int64_t r0, std::int64_t n, std::int64_t next_input) noexcept {
    const std::int64_t input = at.input + r0 * row_in_;
    const std::int64_t indices = at.indices + r0 * row_ix_;
    const std::int64_t output = at.output + r0 * row_out_;
    if (fused_row_ != nullptr) {
      element_run_.input = p_.input + input * es_;
      element_run_.indices = p_.indices + indices * kIs;
      element_run_.output = p_.output + output * es_;
      element_run_.next = next_input >= 0 ? p_.input + next_input * es_ : nullptr;
      element_run_.next_lines = next_input >= 0 ? span_lines_ : 0;
      return fused_row_(element_run_, n) || kMode != IndexMode::kError;
    }
    for (std::int64_t t0 = 0; t0 < n; t0 += kTile) {
      if (plain_run_ != nullptr) {
        element_run_.input = p_.input + (input + t0 * row_in_) * es_;
        element_run_.indices = p_.indices + (indices + t0 * row_ix_) * kIs;
        element_run_.output = p_.output + (output + t0 * row_out_) * es_;
        t0 += plain_run_(element_run_, n - t0);
        if (t0 >= n) break;  // else one tile from t0 the general way, then the plain loop again
      }
      const int m = static_cast<int>(std::min<std::int64_t>(kTile, n - t0));
      coords_.indices = p_.k > 0 ? p_.indices + (indices + t0 * row_ix_) * kIs : nullptr;
      const bool ok = resolve_(p_, coords_, m, offsets_, fill_);
      if (kMode == IndexMode::kError && !ok) return false;
      copy_run_.input = p_.input + (input + t0 * row_in_) * es_;
      copy_run_.output = p_.output + (output + t0 * row_out_) * es_;
      copy_(copy_run_, offsets_, fill_, m);
    }
    return true;
  }

  bool fused() const noexcept { return fused_row_ != nullptr; }

 private:
  static constexpr auto kIs = static_cast<std::int64_t>(sizeof(Index));
  const GatherPlan& p_;
  CopyFn<Offset> copy_;
  cpu::ResolveFn<Offset> resolve_;
  cpu::ElementRunFn fused_row_;
  cpu::PlainRunFn plain_run_;
  std::int64_t es_ = static_cast<std::int64_t>(p_.element_size);
  std::int64_t row_in_ = 0, row_ix_ = 0, row_out_ = 0;
  std::int64_t span_lines_ = (lookup_span_bytes(p_) + cpu::kCacheLineBytes - 1) / cpu::kCacheLineBytes;
  cpu::CopyRun copy_run_;
  cpu::TileCoordinates coords_;
  cpu::ElementRun element_run_;
  alignas(64) Offset offsets_[kTile];
  alignas(64) std::uint8_t fill_[kTile];
};

/// Runs lookups [begin, end) (flat, C order over the first lookup_rank plan dimensions) in
/// runs along the row.
template <class Index, class Offset, IndexMode kMode, bool kNegative>
bool walk(const GatherPlan& p, const Kernels<Offset>& kernels, std::int64_t begin, std::int64_t end) {
  const int outer = p.lookup_rank - 1;  // dimensions above the row; -1 or more
  const auto row = static_cast<std::size_t>(outer < 0 ? 0 : outer);
  const std::int64_t row_size = p.lookup_rank > 0 ? p.shape[row] : 1;
  RunLookups<Index, Offset, kMode, kNegative> runner(p, kernels);

  // Position of `begin`: the cursor over the outer dimensions, r0 along the row.
  cpu::PlanCursor at;
  std::int64_t r0 = begin % row_size;
  at.seek(p, outer, begin / row_size);
  for (std::int64_t f = begin; f < end;) {
    const std::int64_t n = std::min(row_size - r0, end - f);
    // the next row is this walk's too: prefetch its span
    const std::int64_t next_input = runner.fused() && f + n < end ? at.peek_next(p, outer, p.input_strides, at.input) : -1;
    if (!runner.run(at, r0, n, next_input)) return false;
    f += n;
    r0 = 0;
    at.advance(p, outer);  // next outer position
  }
  return true;
}

/// Runs chunk(c) for every c in [0, chunks) on `threads` OpenMP threads and returns the && of
/// the results; every thread reads the calling thread's InterruptScope (core/interrupt_poll.hpp).
/// With T = min(threads, 64) owners, thread t owns chunks t, t + T, t + 2T, ...;
/// each thread runs its own chunks first, in order, then the chunks of the other owners that
/// nobody has started (one atomic counter per owner, so each chunk runs exactly once).
/// - A thread that the OS schedules late (a shared, busy machine) takes fewer chunks instead of
///   holding every other thread back, as with schedule(dynamic, 1).
/// - On time, a thread gets the same chunks on every call: the output rows it writes, and for a
///   repeated index list the input rows it reads, are those its core touched last time.
///   Handed out dynamically they went to another thread on each call, and the first call after
///   other work was slower (embedding, docs/bench.md case 1, 2 threads, from C++ and from
///   bench/peers.py; the same in steady state).
/// - At any moment the threads work on neighbouring chunks. Contiguous ranges per thread were
///   slower for gathernd_batch1 (two threads then read two batches' inputs at once) than
///   interleaved or dynamic chunks.
/// Measured: bench/README.md, "Measurements behind the CPU engine's choices".
template <class Chunk>
bool run_chunks(int threads, std::int64_t chunks, Chunk& chunk) {
  constexpr int kMaxOwners = 64;  // more threads share owners: thread t is owner t % owners
  struct alignas(64) Taken {      // chunks of one owner started so far (one cache line each)
    std::atomic<std::int64_t> count;
  };
  const int owners = std::max(1, std::min(threads, kMaxOwners));
  Taken taken[kMaxOwners];
  for (int o = 0; o < owners; ++o) taken[o].count.store(0, std::memory_order_relaxed);
  InterruptScope* const interrupt = current_interrupt();
  std::atomic<bool> ok{true};
  // Each worker starts with its own owner's chunks, then helps the others: worker 0 alone does
  // them all when the others never start (parallel_workers on a busy host pool).
  auto worker = [&](int w) {
    const InterruptShare share(interrupt);
    const int own = w % owners;
    bool mine = true;
    for (int v = 0; v < owners; ++v) {
      const int o = (own + v) % owners;
      auto next = [&] { return o + owners * taken[o].count.fetch_add(1, std::memory_order_relaxed); };
      for (std::int64_t c = next(); c < chunks; c = next()) mine = chunk(c) && mine;
    }
    if (!mine) ok.store(false, std::memory_order_relaxed);
  };
  parallel_workers(threads, worker);
  return ok.load(std::memory_order_relaxed);
}

template <class Index, class Offset, IndexMode kMode, bool kNegative>
bool run_threads(const GatherPlan& p, int threads) {
  Kernels<Offset> kernels;
  kernels.copy = select_copy<Offset, kMode == IndexMode::kFill>(p);
  // Never null: a plan's element_size is element_size(dtype) of a validated dtype, always 1, 2,
  // 4, 8 or 16. Should that break, run_validated reports an internal error (the reference finds
  // no bad index) instead of this returning garbage.
  if (kernels.copy == nullptr) return false;
  kernels.resolve = select_resolve<Index, Offset, kMode, kNegative>();
  kernels.fused_row = select_fused_row<Index, kMode, kNegative>(p);
  kernels.plain_run = kernels.fused_row == nullptr ? select_plain_run<Index>(p) : nullptr;
  const std::int64_t lookups = p.lookups;
  if (threads > lookups) threads = static_cast<int>(lookups);
  // Pieces of at most kInterruptPollLookups lookups, each preceded by the interrupt poll.
  const std::int64_t pieces = (lookups + kInterruptPollLookups - 1) / kInterruptPollLookups;
  if (threads <= 1) {
    for (std::int64_t begin = 0; begin < lookups; begin += kInterruptPollLookups) {
      const std::int64_t end = std::min(lookups, begin + kInterruptPollLookups);
      if (interrupt_requested(end - begin) || !walk<Index, Offset, kMode, kNegative>(p, kernels, begin, end)) {
        return false;
      }
    }
    return true;
  }
  // Chunks of about equal work (run_chunks: each thread runs its own share of them first), at
  // most kInterruptPollLookups lookups each.
  const std::int64_t by_work = std::max<std::int64_t>(1, p.work_bytes / kBytesPerChunk);
  const std::int64_t chunks = std::min<std::int64_t>(
      lookups, std::max<std::int64_t>({threads, pieces, std::min<std::int64_t>(by_work, threads * kChunksPerThread)}));
  auto chunk = [&](std::int64_t c) {
    const auto begin = static_cast<std::int64_t>(static_cast<__int128>(lookups) * c / chunks);
    const auto end = static_cast<std::int64_t>(static_cast<__int128>(lookups) * (c + 1) / chunks);
    return !interrupt_requested(end - begin) && walk<Index, Offset, kMode, kNegative>(p, kernels, begin, end);
  };
  return run_chunks(threads, chunks, chunk);
}

template <class Index, class Offset>
bool run_index(const GatherPlan& p, int threads) {
  const bool neg = std::is_signed_v<Index> && p.negative_indices;
  switch (p.index_mode) {
    case IndexMode::kError:
      return neg ? run_threads<Index, Offset, IndexMode::kError, std::is_signed_v<Index>>(p, threads)
                 : run_threads<Index, Offset, IndexMode::kError, false>(p, threads);
    case IndexMode::kClamp:
      return neg ? run_threads<Index, Offset, IndexMode::kClamp, std::is_signed_v<Index>>(p, threads)
                 : run_threads<Index, Offset, IndexMode::kClamp, false>(p, threads);
    case IndexMode::kWrap:  // the negative rule never applies in wrap mode
      return run_threads<Index, Offset, IndexMode::kWrap, false>(p, threads);
    case IndexMode::kFill:
      return neg ? run_threads<Index, Offset, IndexMode::kFill, std::is_signed_v<Index>>(p, threads)
                 : run_threads<Index, Offset, IndexMode::kFill, false>(p, threads);
    case IndexMode::kDrop:  // scatter only; validation rejects it for a gather
      return false;
  }
  return false;
}

template <class Index>
bool run_offsets(const GatherPlan& p, int threads) {
  return p.offsets_fit_int32 ? run_index<Index, std::int32_t>(p, threads)
                             : run_index<Index, std::int64_t>(p, threads);
}

bool dispatch_index(const GatherPlan& plan, int threads) noexcept;

}  // namespace

#if defined(MULTIGATHER_HAVE_OPENMP)
namespace {

// Cores not busy with other work: the processors less the 1-minute load average (the calling
// thread's own share excepted), refreshed at most every 250 ms. A fork-join over busy cores
// waits for the OS to schedule every thread of the team; on this project's shared 2-core
// machine that made 2-thread calls 3-10x slower than 1-thread calls (libgomp's OMP_DYNAMIC
// makes the same adjustment from the 15-minute average).
int idle_cores() noexcept {
  static std::atomic<std::int64_t> next_check{0};
  static std::atomic<int> cores{1 << 20};
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now().time_since_epoch()).count();
  if (now >= next_check.load(std::memory_order_relaxed)) {
    next_check.store(now + 250, std::memory_order_relaxed);
    double load[1];
    const int procs = omp_get_num_procs();
    if (getloadavg(load, 1) == 1) {
      const double idle = procs - std::max(0.0, load[0] - 1.0);
      cores.store(std::clamp(static_cast<int>(idle + 0.5), 1, procs), std::memory_order_relaxed);
    }
  }
  return cores.load(std::memory_order_relaxed);
}

}  // namespace
#endif

int cpu_thread_count(std::int64_t work_bytes, std::int64_t items, int num_threads) noexcept {
  const std::int64_t by_work = std::max<std::int64_t>(1, work_bytes / kBytesPerThread);
#if defined(MULTIGATHER_HAVE_OPENMP)
  if (omp_in_parallel()) return 1;
#endif
  if (const TaskPool* pool = current_task_pool()) {
    // A host pool (ExecutionContext::task_pool): its size bounds the workers; no load check,
    // since a worker whose task starts late is skipped rather than waited for.
    const std::int64_t size = std::max(1, pool->num_threads);
    const std::int64_t cap = num_threads > 0 ? std::min<std::int64_t>(num_threads, size) : size;
    return static_cast<int>(std::max<std::int64_t>(1, std::min({cap, by_work, items})));
  }
#if defined(MULTIGATHER_HAVE_OPENMP)
  const std::int64_t cap = num_threads > 0 ? num_threads : omp_get_max_threads();
  const std::int64_t threads = std::min({cap, by_work, items});
  if (threads <= 1) return 1;
  // An explicit num_threads is honoured; the automatic choice leaves busy cores alone.
  if (num_threads > 0) return static_cast<int>(threads);
  return static_cast<int>(std::min<std::int64_t>(threads, idle_cores()));
#else
  (void)by_work;
  (void)items;
  (void)num_threads;
  return 1;
#endif
}

int cpu_thread_count(const GatherPlan& plan) noexcept {
  return cpu_thread_count(plan.work_bytes, plan.lookups, plan.num_threads);
}

namespace {

/// chunk(begin, end) over [0, bytes) of dst, split among threads on dst's cache lines.
template <typename Chunk>
void parallel_chunks(std::byte* dst, std::int64_t bytes, std::int64_t work, int num_threads, Chunk chunk) noexcept {
  constexpr std::int64_t kLine = 64;
  const int threads = cpu_thread_count(work, bytes / kLine, num_threads);
  if (threads <= 1) {
    chunk(0, bytes);
    return;
  }
  // One piece per worker, split on cache lines of the destination (parallel_pieces).
  auto split = [&](int i) -> std::int64_t {
    if (i == 0) return 0;
    if (i == threads) return bytes;
    const std::int64_t at = static_cast<std::int64_t>(static_cast<__int128>(bytes) * i / threads);
    const auto misalign = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(dst + at) % kLine);
    return std::min(bytes, at + (misalign == 0 ? 0 : kLine - misalign));
  };
  auto piece = [&](std::int64_t w) {
    const std::int64_t b = split(static_cast<int>(w)), e = split(static_cast<int>(w) + 1);
    if (e > b) chunk(b, e);
    return true;
  };
  parallel_pieces(threads, threads, piece);
}

}  // namespace

void parallel_copy(std::byte* dst, const std::byte* src, std::int64_t bytes, int num_threads) noexcept {
  if (bytes <= 0) return;  // an empty output may have no buffer at all (null data)
  parallel_chunks(dst, bytes, 2 * bytes, num_threads, [&](std::int64_t b, std::int64_t e) {
    std::memcpy(dst + b, src + b, static_cast<std::size_t>(e - b));
  });
}

void parallel_zero(std::byte* dst, std::int64_t bytes, int num_threads) noexcept {
  if (bytes <= 0) return;
  parallel_chunks(dst, bytes, bytes, num_threads, [&](std::int64_t b, std::int64_t e) {
    std::memset(dst + b, 0, static_cast<std::size_t>(e - b));
  });
}

bool run_cpu_with_threads(const GatherPlan& plan, int threads) noexcept {
  if (plan.numel == 0) return true;
  for (int j = 0; j < plan.k; ++j) {
    if (plan.axis_sizes[static_cast<std::size_t>(j)] != 0) continue;
    // An empty axis: clamp and wrap have no position to resolve to (an error); in fill mode
    // every element is the fill value and the (possibly empty) input is never addressed.
    if (plan.index_mode != IndexMode::kFill) return false;
    GatherPlan all_fill = plan;
    all_fill.input = plan.fill_bytes.data();
    all_fill.input_strides = {};
    all_fill.axis_strides = {};
    all_fill.offsets_fit_int32 = true;
    return dispatch_index(all_fill, threads);
  }
  return dispatch_index(plan, threads);
}

namespace {

bool dispatch_index(const GatherPlan& plan, int threads) noexcept {
  return visit_index_type(plan.index_dtype, [&]<class Index>() { return run_offsets<Index>(plan, threads); });
}

}  // namespace

bool run_cpu(const GatherPlan& plan) noexcept {
  return run_cpu_with_threads(plan, cpu_thread_count(plan));
}

namespace {

template <class Index>
bool indices_in_range_typed(const TensorView& indices, const GatherPlan& plan) noexcept {
  const int c = std::max(plan.k, 1);
  std::int64_t lo[kMaxRank], hi[kMaxRank];
  for (int j = 0; j < c; ++j) {
    const std::int64_t n = plan.axis_sizes[static_cast<std::size_t>(j)];
    lo[j] = std::is_signed_v<Index> && plan.negative_indices ? -n : 0;
    hi[j] = n - 1;
  }
  const auto* base = static_cast<const Index*>(indices.data);
  const int r = indices.rank();
  if (indices.numel() == 0) return true;
  // Each stored value once: a dimension of stride 0 (a broadcast view) counts as size 1, and a
  // last dimension of stride 0 as its first c positions (one value per coordinate).
  Dims sizes = indices.shape;
  for (int d = 0; d + 1 < r; ++d) {
    if (indices.strides[d] == 0) sizes[d] = 1;
  }
  if (r > 0 && indices.strides[r - 1] == 0) sizes[r - 1] = std::min<std::int64_t>(sizes[r - 1], c);
  std::int64_t numel = 1;
  for (int d = 0; d < r; ++d) numel *= sizes[d];
  // Rows along the last dimension (its size is a multiple of c, so every row starts at
  // coordinate 0); a C-contiguous view is one row.
  const bool flat = TensorView(indices).is_contiguous();
  const std::int64_t row = flat ? numel : (r > 0 ? sizes[r - 1] : 1);
  const std::int64_t step = flat ? 1 : (r > 0 ? indices.strides[r - 1] : 0);
  const std::int64_t rows = numel / row;
  // Pieces of about 64 KiB of indices, each a whole number of lookups.
  const std::int64_t piece = std::max<std::int64_t>(c, ((std::int64_t{64} << 10) / static_cast<std::int64_t>(sizeof(Index))) / c * c);
  const std::int64_t pieces_per_row = (row + piece - 1) / piece;
  const std::int64_t total = rows * pieces_per_row;
  const int threads = cpu_thread_count(numel * static_cast<std::int64_t>(sizeof(Index)), total, plan.num_threads);
  const cpu::RangeCheckFn simd = cpu::range_check_simd(sizeof(Index), std::is_signed_v<Index>);
  auto row_offset = [&](std::int64_t q) {  // element offset of row q
    std::int64_t offset = 0;
    for (int d = r - 2; d >= 0; --d) {
      offset += (q % sizes[d]) * indices.strides[d];
      q /= sizes[d];
    }
    return offset;
  };
  // Short rows apart from each other: the next row prefetched whole (element_run.hpp; faster on
  // S2 into at 1 and 2 threads; measured: bench/README.md, "Measurements behind the CPU engine's
  // choices").
  const std::int64_t row_bytes = row * static_cast<std::int64_t>(sizeof(Index));
  const bool prefetch_rows = !flat && step == 1 && row_bytes <= cpu::kPrefetchIndexRowBytes;
  auto piece_ok = [&](std::int64_t t) {
    if (interrupt_requested(std::min(piece, row))) return false;
    const std::int64_t q = t / pieces_per_row, part = t % pieces_per_row;
    const std::int64_t offset = flat ? 0 : row_offset(q);
    if (prefetch_rows && q + 1 < rows) {
      cpu::prefetch_lines(reinterpret_cast<const std::byte*>(base + row_offset(q + 1)), row_bytes);
    }
    const std::int64_t begin = part * piece;
    const std::int64_t n = std::min(piece, row - begin);
    if (step == 1) {
      return simd != nullptr ? simd(base + offset + begin, n, c, lo, hi)
                             : cpu::contiguous_in_range(base + offset + begin, n, c, lo, hi);
    }
    return cpu::values_in_range(base + offset + begin * step, n, step, c, lo, hi);
  };
  if (threads > 1) return parallel_pieces(threads, total, piece_ok);
  bool ok = true;
  for (std::int64_t t = 0; t < total && ok; ++t) ok = piece_ok(t);
  return ok;
}

}  // namespace

bool indices_in_range(const TensorView& indices, const GatherPlan& plan) noexcept {
  if (plan.k == 0) return true;
  return visit_index_type(plan.index_dtype, [&]<class Index>() { return indices_in_range_typed<Index>(indices, plan); });
}

}  // namespace multigather::detail
