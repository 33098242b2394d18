// Internal: the fused gather + segment reduction (gathered_segments.cpp) behind
// torch.nn.functional.embedding_bag's lowering (Lowering::gathered).
#pragma once

#include <cstdint>

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
