// Internal: the CPU engine. Runs a normalized GatherPlan.
//
// Kernels, chosen from the plan: index resolution (resolve.hpp) templated on the index type,
// index mode, negative rule and offset width (32-bit when the plan allows), fused with the
// bounds check, over tiles of 1024 lookups; then a copy stage (copy.hpp) templated on the
// element width: element gathers with software prefetch, width-specialized loops for blocks
// below 64 bytes, 32-byte chunk loops for 64-256 byte blocks (every line of a block prefetched
// ahead), rep movsb / memcpy above. Where the CPU has AVX-512, four of these kernels run
// compiled for it, chosen at run time (avx512.hpp). Element plans with one coordinate (flat take,
// GatherElements) run on the plain element loop (element_run.hpp; on AVX-512 gathers where
// they pay, avx512.hpp) while the indices are in range as they are, the check a
// never-taken branch, and fall back to the tiles from the first
// index that needs the negative rule or the mode; GatherElements along the last axis (rows that
// each read their own small span of the input) runs on a fused row kernel that prefetches the
// next row's span while gathering one. Lookups are split into chunks of about equal work,
// dealt round-robin to OpenMP threads, each of which takes the unstarted chunks of the others
// once its own are done; the thread count follows the estimated bytes (small calls stay on the
// calling thread). cursor.hpp is the odometer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/plan.hpp"

namespace multigather::detail {

/// Executes `plan` on the CPU with cpu_thread_count(plan) threads. Returns false when some
/// index was out of range under IndexMode::kError (or when a lookup hit an empty axis in
/// clamp/wrap mode); the caller then asks the reference kernel for the exact message. Never
/// reads or writes out of bounds: an out-of-range index is never dereferenced. Allocates
/// nothing.
bool run_cpu(const GatherPlan& plan) noexcept;

/// Same, on min(threads, lookups) OpenMP threads whatever the size of the call (tests use it to
/// force the parallel path on small cases).
bool run_cpu_with_threads(const GatherPlan& plan, int threads) noexcept;

/// Whether every value of `indices` (the call's indices view, any strides) is in range for the
/// plan's axes under IndexMode::kError: coordinate j of each lookup (the last dimension's
/// position modulo max(plan.k, 1)) in [0, axis_sizes[j]), or [-axis_sizes[j], axis_sizes[j])
/// with plan.negative_indices. Reads the indices once (each stored value once, even where the
/// call broadcasts them), writes nothing; run before run_cpu when the output is the caller's
/// and must be left unchanged by a bad index. True when plan.k == 0 (no index is read).
bool indices_in_range(const TensorView& indices, const GatherPlan& plan) noexcept;

/// Threads run_cpu uses: 1 without OpenMP or inside a parallel region; else about one per
/// kBytesPerThread of work, at most plan.num_threads (when > 0) or omp_get_max_threads(), and
/// at most the cores that the 1-minute load average leaves idle (a busy machine gets 1 thread:
/// fork-join over busy cores costs more than it gains).
int cpu_thread_count(const GatherPlan& plan) noexcept;

/// The same rule for any CPU work: `work_bytes` moved, at most `items` threads, num_threads as
/// in GatherOptions (0: automatic).
int cpu_thread_count(std::int64_t work_bytes, std::int64_t items, int num_threads) noexcept;

/// dst[0, bytes) = src[0, bytes) (not overlapping), split on the destination's cache lines
/// between cpu_thread_count(2 * bytes, ...) threads: one thread copies a large block at about
/// half the memory bandwidth that two reach.
void parallel_copy(std::byte* dst, const std::byte* src, std::int64_t bytes, int num_threads) noexcept;
/// memset(dst, 0, bytes) on the same threads (a fresh buffer's pages are first touched by them).
void parallel_zero(std::byte* dst, std::int64_t bytes, int num_threads) noexcept;

/// Work (GatherPlan::work_bytes) below which a call stays on one thread, and per extra thread.
inline constexpr std::int64_t kBytesPerThread = std::int64_t{256} << 10;

}  // namespace multigather::detail
