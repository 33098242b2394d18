// multigather/frontends/stablehlo.hpp: StableHLO gather, in full
// (https://github.com/openxla/stablehlo/blob/main/docs/spec.md#gather).
//
//   result[result_index] = operand[operand_index], where
//     batch_index  = result_index at the dims not in offset_dims
//     start_index  = start_indices[batch_index with ':' inserted at index_vector_dim]
//                    (the scalar itself when index_vector_dim == rank(start_indices))
//     full_start_index[start_index_map[i]] = clamp(start_index[i], 0, dim(operand, d) - slice_sizes[d])
//     full_batching_index[operand_batching_dims[i]] = batch_index[start_indices_batching_dims[i]
//                                                      (minus 1 if after index_vector_dim)]
//     full_offset_index = result_index at offset_dims, with 0s at collapsed and batching dims
//     operand_index = full_start_index + full_batching_index + full_offset_index
//
// Index rule: the START is clamped to [0, D - slice_size] with NO negative wrap (-1 -> 0);
// unsigned indices clamp as unsigned. Lowering: a point gather (slice size 1 on every indexed
// dim) is one gather_multiaxis call on views ([1]*m ++ operand, start_indices re-viewed so that
// the coordinates are folded last, axes = start_index_map shifted by m, index_mode clamp without
// negative wrap); free batch dims come first, batching dims pair with their operand dims, and the
// result order (offset_dims) is reached through the output view's strides, never a transpose
// copy. Windowed slices (slice size != 1 on an indexed dim) materialize int64 coordinates
// clamp(start, 0, D - s) + iota(s) (the only copy; the clamp applies to the start, StableHLO
// PR #1541). Non-indexed dims with slice_sizes[d] < dim(d) slice the operand view to [0, s).
#pragma once

#include <string_view>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::stablehlo {

/// The `dimension_numbers` of stablehlo.gather.
struct GatherDimensionNumbers {
  std::vector<std::int64_t> offset_dims;
  std::vector<std::int64_t> collapsed_slice_dims;
  std::vector<std::int64_t> operand_batching_dims;
  std::vector<std::int64_t> start_indices_batching_dims;
  std::vector<std::int64_t> start_index_map;
  std::int64_t index_vector_dim = 0;
};

/// stablehlo.gather(operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted).
/// Validates constraints C1-C22 of the spec (errors name the constraint). Rejected as
/// inexpressible: slice_sizes[d] == 0 on a collapsed or batching dim (the result keeps an element
/// that reads from an empty window).
Status gather(const TensorView& operand, const TensorView& start_indices,
              const GatherDimensionNumbers& dimension_numbers,
              const std::vector<std::int64_t>& slice_sizes, bool indices_are_sorted, Lowering* out);

/// The `scatter_dimension_numbers` of stablehlo.scatter.
struct ScatterDimensionNumbers {
  std::vector<std::int64_t> update_window_dims;
  std::vector<std::int64_t> inserted_window_dims;
  std::vector<std::int64_t> input_batching_dims;
  std::vector<std::int64_t> scatter_indices_batching_dims;
  std::vector<std::int64_t> scatter_dims_to_operand_dims;
  std::int64_t index_vector_dim = 0;
};

/// stablehlo.scatter(inputs, scatter_indices, updates, scatter_dimension_numbers,
/// indices_are_sorted, unique_indices, update_computation) with ONE input
/// (https://github.com/openxla/stablehlo/blob/main/docs/spec.md#scatter):
///   for every update_index of updates: result_index = full_start_index + full_batching_index
///   + full_window_index (the spec's definitions); results[result_index] =
///   f(results[result_index], updates[update_index]).
/// update_computation: "assign" (returns the update), "add", "mul", "min", "max".
/// Index rule: XLA's, which jax.lax.scatter follows (mode FILL_OR_DROP or PROMISE_IN_BOUNDS): an
/// update whose start is outside [0, D - window] on any indexed dim is skipped with its whole
/// window (the spec's text checks each result_index; XLA skips the window), no negative wrap.
/// Duplicates combine in row-major order of G (free scatter_indices dims, then operand dims).
/// Validates constraints C2, C4, C6-C22 (errors name the constraint). Lowering: scatter_multiaxis
/// on views when every window is a whole dimension except size-1 windows on indexed dims; else
/// int64 coordinates start + iota(window) materialized (a window that does not fit gets
/// out-of-range coordinates: dropped).
Status scatter(const TensorView& operand, const TensorView& scatter_indices, const TensorView& updates,
               const ScatterDimensionNumbers& dimension_numbers, std::string_view update_computation,
               bool indices_are_sorted, bool unique_indices, Lowering* out);

}  // namespace multigather::stablehlo
