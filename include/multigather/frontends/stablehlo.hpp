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
// Index rule and rules: the registry rows. Lowering: a point gather (slice size 1 on every indexed
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

/// stablehlo.gather: the registry row "stablehlo.gather" states its signature, formula, rules,
/// index rule and source (docs/quick_reference.md, generated; `multigather explain
/// stablehlo.gather`).
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

/// stablehlo.scatter: the registry row "stablehlo.scatter" states its signature, formula, rules,
/// index rule and source (docs/quick_reference.md, generated; `multigather explain
/// stablehlo.scatter`).
Status scatter(const TensorView& operand, const TensorView& scatter_indices, const TensorView& updates,
               const ScatterDimensionNumbers& dimension_numbers, std::string_view update_computation,
               bool indices_are_sorted, bool unique_indices, Lowering* out);

}  // namespace multigather::stablehlo
