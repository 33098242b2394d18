// Internal: the CPU scatter engine (scatter_engine.cpp), deterministic at every thread count.
#pragma once

#include "multigather/scatter.hpp"
#include "plan/plan.hpp"

namespace multigather::detail {

/// What a scatter plan does besides the gather plan of its targets (plan/scatter_plan.hpp: the
/// plan's input is the scatter's output, its output the updates viewed with shape G, its index
/// mode fill for drop).
struct ScatterRun {
  DType dtype = DType::kFloat32;
  Reduction reduction = Reduction::kNone;
  bool include_input = true;
  /// The lowest and highest element offsets the output view reaches (its owners' ranges).
  std::int64_t output_lo = 0, output_hi = 0;
  /// Not null: the output (C-contiguous, offsets [0, output_hi]) must first receive these bytes
  /// (the input, C-contiguous, of the output's shape and element size): a one-shot scatter.
  /// run_scatter_cpu copies each slab of the targets just before combining into it (the copied
  /// rows are still in cache when the updates land). Set only where scatter_copies_input says so.
  const std::byte* copy_from = nullptr;
};

/// Whether run_scatter_cpu copies `run.copy_from` into the output itself, slab by slab: where
/// the outermost lookup dimension moves the output across all of it, the plan has lookups and
/// no empty axis, and the threading rule is automatic (or slabs). Otherwise the caller copies
/// the input first and passes copy_from null.
bool scatter_copies_input(const GatherPlan& plan, const ScatterRun& run) noexcept;

enum class ScatterResult : std::uint8_t { kOk, kBadIndex, kOutOfMemory, kInternal };

/// Checks the index values without writing: false when one is out of range under kError, or
/// when an axis is empty under clamp / wrap (and G is not empty). `indices` is the call's
/// indices view, the plan's; under kError its stored values are read once, by the gather's
/// pre-check (cpu.hpp's indices_in_range), with no offsets resolved.
bool scatter_indices_ok(const GatherPlan& plan, const TensorView& indices) noexcept;

/// Lookups of fewer bytes than this (block * element size) that have no slab dimension run on
/// one thread: the bucketing costs more than their combine. The result is the same bytes
/// either way.
inline constexpr std::int64_t kDefaultMinParallelBlockBytes = 64;

/// How run_scatter_cpu splits a call between threads (the bytes written are the same).
enum class ScatterThreading : std::uint8_t {
  kAuto,     ///< slabs where there is a slab dimension, else sorted runs where the targets never
             ///< decrease, else filtered for blocks of 64+ bytes or outputs of 8 MiB or more,
             ///< else one thread
  kBuckets,  ///< tests: the bucket path for every case on more than one thread
  kSlabs,    ///< tests: the slab path wherever there is a slab dimension, however small
  kFiltered, ///< tests: the filtered path (every thread reads all lookups) for every case
  kSorted,   ///< tests: the sorted path wherever targets never decrease (else the buckets)
};
/// Sets the threading rule (tests); returns the old one. Under the test rules an explicit
/// num_threads is used as given, whatever the call's work.
ScatterThreading set_scatter_threading(ScatterThreading threading) noexcept;

/// Combines the updates into the output (which already holds the input). `threads` threads
/// (1: the calling thread, no allocation); the bytes written do not depend on it. Four ways
/// to split (scatter_engine.cpp, ScatterThreading): disjoint slabs of the targets along a lookup
/// dimension that is neither an axis nor broadcast (no allocation); contiguous ranges of lookups
/// cut between runs when the targets never decrease (sorted segment ids; one read-only pass
/// checks the order, no allocation beyond T counters); every thread reading all
/// lookups and combining the targets it owns (no allocation); buckets per owner of the output
/// offsets (16 bytes per lookup). kBadIndex: an index out of range (only possible when
/// scatter_indices_ok was not asked first; the buckets write nothing then, the other paths may
/// leave partial writes); kOutOfMemory: the buckets or the first-reach marks could not be
/// allocated (nothing written).
ScatterResult run_scatter_cpu(const GatherPlan& plan, const ScatterRun& run, int threads) noexcept;

/// The division step of a mean scatter (scatter_mean.cpp; torch.scatter_reduce "mean"): each
/// element of `output` (any strides) reached by count > 0 updates (count: int64 of output's
/// shape, any strides: 0 along dimensions where it does not change) is divided by count +
/// include_input; integers round toward negative infinity,
/// 16-bit floats round the float32 quotient once. sqrt_count (tf.math.unsorted_segment_sqrt_n):
/// the divisor is sqrt(count) in the dtype (floating and complex dtypes only). False for a
/// dtype with no division (bool, float8; integers under sqrt_count).
bool divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input,
                     bool sqrt_count = false) noexcept;

}  // namespace multigather::detail
