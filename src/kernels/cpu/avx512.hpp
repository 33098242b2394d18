// Internal: the CPU engine's AVX-512 kernels, for x86-64 CPUs with AVX-512F and AVX-512DQ,
// chosen at run time (the library is built for the baseline x86-64; only avx512.cpp's kernels
// use AVX-512, under a target attribute: code is never compiled for AVX-512 where a CPU without
// it could run it). Each kernel was kept because the C++ bench (1 thread, MULTIGATHER_SIMD=0
// against on) measured it faster on the cases named below; the figures are in bench/README.md,
// "Measurements behind the CPU engine's choices", and in the commit messages that introduced them.
// One kernel has an AVX2 tier as well, for CPUs without AVX-512 (this project's CI and bench
// VMs): the index pre-check (range_check_simd).
//
// - The plain element loop (element_run.hpp's gather_plain_run) on AVX-512 gathers. Eight
//   lookups a step: load eight indices (int32 / uint32 widened to 64 bits), one unsigned
//   compare against the axis size (a negative index is huge as unsigned), then one
//   vpgatherqd / vpgatherqq of the eight elements and one store. An index that is not already
//   in [0, size) is never used as an address: its group of eight goes to the scalar plain loop,
//   which stops exactly at it, as gather_plain_run does. Far fewer instructions per lookup than
//   the scalar loop, so more random reads are in flight (flat_take; elements_axis0 on AMD).
//   Where the input moves along the run (GatherElements on a non-last axis: lookup t reads
//   column t of the row its index picks), it is taken on AMD CPUs only: it was measured faster
//   there (Zen 4, elements_axis0) and slower than the scalar loop on an Intel Xeon (Sapphire
//   Rapids class VM, elements_axis0 at 1 thread, also with rows of 1000 and 4000 elements and
//   from a 256 MiB input). flat_take, whose runs all index one span, was faster on both. Where
//   the lookups reach more than kPlainPrefetchSpanBytes (4 MiB, beyond the L2 cache), on an
//   Intel CPU the scalar loop with software prefetch (element_run.hpp) is taken instead: timed
//   in one process against mlp_limit.c's loops (bench/limit_fraction.py) on an Intel Xeon VM, it
//   beat these gathers on flat_take by 10-20%. On an AMD CPU the gathers are taken there, with
//   the eight elements kSimdPrefetchGroups groups ahead prefetched one by one before each
//   gather. On a Zen 4 VM (out=, loops alternated in one process) this beat the scalar prefetch
//   loop and the gathers alone on flat_take at 1 and 2 threads, with huge pages and without, and
//   the gathers alone on elements_axis0 (moving input). (The gathers alone lose to the scalar
//   prefetch loop without huge pages: the prefetches start the page walks early.)
// - The tile resolver (resolve.hpp's resolve_tile) compiled for AVX-512 (flatten inlines its
//   body into an AVX-512 function, where the compiler vectorizes the loop over the lookups;
//   nhwc_xy).
// - copy_chunked_blocks for 64- and 128-byte blocks compiled for AVX-512 (the fixed-size copy
//   becomes whole 64-byte moves; gathernd_batch1, with the resolver).
// - The scatter's combine of a block of float32 / float64 elements (combine_run_simd): the
//   Elementwise loop compiled for AVX-512. Segment sums and maxima over 32-float rows (G2, G4 of
//   docs/bench.md, 1 thread) were faster with the wider loop (together with the deeper prefetch
//   of scatter_engine.cpp's apply_pairs).
// - The scatter's runs into one target row held in zmm registers (combine_runs_simd): a row
//   of up to 8 vectors is loaded once per run of lookups into it, every update of the run
//   combined in, and stored once, with no call per lookup. Faster than the per-lookup loop on
//   segment sums and maxima over 32-float rows (docs/bench.md G1, G2, G4; a C++ loop of
//   lower_op + execute alternating the two in one process): sorted and unsorted sums and sorted
//   maxima at 1 thread, sorted sums and maxima at 2 (the unsorted sum's buckets do not take it).
// - The block mover of copy_large_blocks (copy.hpp) for blocks of 257 bytes to 64 KiB, except
//   on AMD from 2 KiB on where every block's source and destination share their offset within
//   a 64-byte line (avx512_block_max_bytes in avx512.cpp says why): 64-byte moves with
//   the destination aligned (one unaligned move at each end), the whole block (up to 1 KiB)
//   prefetched two blocks ahead. numpy puts large arrays 16 bytes past a page boundary, so each
//   row of a numpy output starts mid-line; there `rep movsb` slows down. Measured in a
//   standalone loop on 512-byte and 1 KiB rows 16 bytes off alignment (mid_axis_block's shape),
//   this mover beats rep movsb; on an Intel Xeon the mover is 5-20% faster up to 64 KiB; on a
//   Zen 4, from 2 KiB on, rep movsb is faster where source and destination share their line
//   offset (a numpy table into a numpy output), slower where they do not (into a one-shot
//   result, which is line-aligned).
#pragma once

#include <cstddef>

#include "kernels/combine.hpp"
#include "kernels/cpu/gathered_segments.hpp"
#include "kernels/cpu/copy.hpp"
#include "kernels/cpu/element_run.hpp"
#include "kernels/cpu/index_check.hpp"
#include "kernels/cpu/resolve.hpp"

namespace multigather::detail::cpu {

/// Groups of eight lookups between the one gathered and the one prefetched, in the AVX-512 plain
/// loop beyond the L2 cache (AMD CPUs; see above): 32 lookups.
inline constexpr int kSimdPrefetchGroups = 4;

/// The AVX-512 plain element loop for element width `width` (4 or 8 bytes) and an index type
/// of `index_bytes` bytes (4 or 8) and signedness `index_signed`, with indices and output
/// contiguous along the run (kUnit); `input_moves`: the run's input_step is not 0;
/// `beyond_l2`: the lookups reach kPlainPrefetchSpanBytes or more (on AMD CPUs the loop then
/// prefetches kSimdPrefetchGroups groups ahead). nullptr when the combination has none, when
/// the CPU lacks AVX-512F / AVX-512DQ, on other architectures, when set_simd_enabled(false),
/// and on a CPU that is not AMD's for input_moves or beyond_l2 (see above: there the scalar
/// loops are faster).
PlainRunFn plain_run_simd(std::size_t width, std::size_t index_bytes, bool index_signed, bool input_moves,
                          bool beyond_l2) noexcept;

/// The prefetching AVX-512 plain loop that plain_run_simd hands out beyond the L2 cache on AMD
/// CPUs, on any CPU with AVX-512 (tests reach it through this), else nullptr.
PlainRunFn plain_run_simd_prefetching(std::size_t width, std::size_t index_bytes, bool index_signed) noexcept;

/// copy_large_blocks<W, Offset, kFill> with the AVX-512 block mover, for element width `width`
/// (1, 2, 4, 8 or 16 bytes) and blocks of `bytes` bytes, more than kChunkedBlockMaxBytes and at
/// most 64 KiB (on AMD, less than 2 KiB when `same_line_offset`: every block's source and
/// destination addresses are equal modulo 64); nullptr for other block sizes and where
/// plain_run_simd would be (no AVX-512, switched off, other widths). Offset: std::int32_t or
/// std::int64_t.
template <class Offset, bool kFill>
CopyFn<Offset> large_blocks_simd(std::size_t width, std::int64_t bytes, bool same_line_offset) noexcept;

/// copy_chunked_blocks<W, Offset, kFill, bytes> (64- and 128-byte blocks: GatherND point
/// sampling, fp16 embeddings) compiled for AVX-512, for element width `width`; nullptr for
/// other block sizes and where plain_run_simd would be.
template <class Offset, bool kFill>
CopyFn<Offset> chunked_blocks_simd(std::size_t width, std::int64_t bytes) noexcept;

/// resolve_tile (resolve.hpp) as a pointer: the tile resolver the engine calls.
template <class Offset>
using ResolveFn = bool (*)(const GatherPlan&, const TileCoordinates&, int, Offset*, std::uint8_t*) noexcept;

/// resolve_tile<Index, Offset, kMode, kNegative> compiled for AVX-512 (the compiler vectorizes
/// its loop over the lookups), or nullptr where plain_run_simd would be. Instantiated for
/// Index and Offset std::int32_t / std::int64_t, every mode and negative rule.
template <class Index, class Offset, IndexMode kMode, bool kNegative>
ResolveFn<Offset> resolve_simd() noexcept;

/// contiguous_in_range (index_check.hpp: the index pre-check over contiguous values) compiled
/// for AVX-512, where the int64 min / max and compares vectorize (the baseline x86-64 has no
/// 64-bit integer min / max), for `index_bytes` 4 or 8 and signed or unsigned indices; on a CPU
/// with AVX2 but not AVX-512, compiled for AVX2 (vpcmpgtq, four int64 a step: the pre-check of a
/// [64, 16] int64 index took 8.0 instructions per index in the baseline loop and 2.6 in AVX2's,
/// callgrind, bench/README.md "Issue 54's per-call work"). nullptr where the switch is off
/// (set_simd_enabled(false), MULTIGATHER_SIMD=0), on CPUs with neither, and for other widths.
RangeCheckFn range_check_simd(std::size_t index_bytes, bool index_signed) noexcept;

/// n consecutive elements combined into dst (combine.hpp's Elementwise<E>::apply: the same
/// per-element arithmetic, so the same bytes) compiled for AVX-512, where the loop runs 16
/// floats a step instead of the baseline's 4 (segment sums and maxima over rows, index_add's
/// rows). For float32 and float64 add, mul, min and max; nullptr for the others and where
/// plain_run_simd would be.
using CombineRunFn = void (*)(std::byte* dst, const std::byte* src, std::int64_t n) noexcept;
CombineRunFn combine_run_simd(DType dtype, Reduction reduction) noexcept;

/// One tile of a scatter's lookups (combine_runs_registers in avx512.cpp): lookup t combines
/// the n elements at src + t * src_step bytes into the n elements at element targets[t] of out,
/// in order, each run of consecutive lookups into one row held in zmm registers (loaded and
/// stored once). The same per-element arithmetic as Elementwise<E>::apply in the same order, so
/// the same bytes. Sorted segment sums and maxima (docs/bench.md G1, G4). For float32 and float64
/// add, mul, min and max with n up to 8 vectors (128 floats, 64 doubles); nullptr for the others
/// and where plain_run_simd would be.
using CombineRunsFn = void (*)(std::byte* out, const std::int64_t* targets, std::int64_t m, const std::byte* src,
                               std::int64_t src_step, std::int64_t n) noexcept;
CombineRunsFn combine_runs_simd(DType dtype, Reduction reduction, std::int64_t n) noexcept;

/// One bag's typed sum (gathered_segments.hpp's sum_bag_rows: the same arithmetic, so the same
/// bytes) compiled for AVX-512, where a row of 64 floats is 4 adds instead of 16: fewer
/// instructions per row, so more random row reads are in flight (embedding_bag, docs/bench.md
/// G3: faster than the baseline loop over the case's rows). Rows of d <= 8 vectors keep the
/// bag's accumulators in registers (bag_sum_registers: faster again on G3's rows, d = 64
/// floats). Measured: bench/README.md, "Measurements behind the CPU engine's choices". For
/// float32 and float64; nullptr for others and where plain_run_simd would be.
BagSumFn bag_sum_simd(DType dtype, std::int64_t d) noexcept;

/// Whether the *_simd functions above may return an AVX-512 kernel: the CPU has AVX-512F/DQ, the
/// environment variable MULTIGATHER_SIMD is not "0" (read once) and set_simd_enabled(false)
/// was not called. (range_check_simd's AVX2 tier follows the same switch.)
bool simd_enabled() noexcept;

/// Switches the SIMD kernels (AVX-512, and range_check_simd's AVX2 tier) off (false) or back on
/// where the CPU has them (true); returns the previous setting of the switch. For tests that
/// compare both paths; not thread-safe against running calls.
bool set_simd_enabled(bool on) noexcept;

}  // namespace multigather::detail::cpu
