// multigather/frontends/dml.hpp: DirectML DML_OPERATOR_GATHER, _GATHER_ELEMENTS, _GATHER_ND1
// (https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_gather_operator_desc,
// ..._gather_elements_operator_desc, ..._gather_nd1_operator_desc). The attributes are the desc
// fields. DirectML tensors all share one DimensionCount N: sizes are right-aligned, padded with
// leading 1s, and the *DimensionCount fields give the original ranks.
// Index rule: signed index types wrap negatives once (DML_FEATURE_LEVEL_3_0); out-of-range
// indices "yield incorrect outputs, but no failure will occur" (reads stay inside the input
// buffer): multigather clamps to [0, D-1]. Index dtypes: int32, int64, uint32, uint64.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::dml {

/// DML_GATHER_OPERATOR_DESC {InputTensor, IndicesTensor, Axis, IndexDimensions}:
///   output[...] = input[..., indices[...], ...];  OutputTensor.Sizes = right-align to N of
///   Input.Sizes[0..Axis] ++ Indices.Sizes[N - IndexDimensions .. N] ++ Input.Sizes[Axis+1 .. N]
/// (the leading entries cropped must be 1; indices sizes before the last IndexDimensions are 1).
Status Gather(const TensorView& input_tensor, const TensorView& indices_tensor, std::int64_t axis,
              std::int64_t index_dimensions, Lowering* out);

/// DML_GATHER_ELEMENTS_OPERATOR_DESC {InputTensor, IndicesTensor, Axis}:
///   output[i, j, k] = input[indices[i, j, k], j, k] (Axis 0); indices sizes must match input
///   sizes on every dimension but Axis; output sizes = indices sizes.
Status GatherElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                      std::int64_t axis, Lowering* out);

/// DML_GATHER_ND1_OPERATOR_DESC {InputTensor, IndicesTensor, InputDimensionCount,
/// IndicesDimensionCount, BatchDimensionCount} (BatchDimensionCount 0 = DML_GATHER_ND):
///   output[batch, ...] = input[batch, indices[batch, ...], ...] on the original-rank tensors;
///   output = right-align to N of Indices[orig][:-1] ++ Input[orig][batch + tuple size:].
Status GatherND(const TensorView& input_tensor, const TensorView& indices_tensor,
                std::int64_t input_dimension_count, std::int64_t indices_dimension_count,
                std::int64_t batch_dimension_count, Lowering* out);

/// DML_SCATTER_ELEMENTS_OPERATOR_DESC {InputTensor, IndicesTensor, UpdatesTensor, Axis}:
///   output = input; output[indices[i, j, k], j, k] = updates[i, j, k] (Axis 0).
/// Same DimensionCount for all three; indices sizes match input sizes on every dimension but
/// Axis; UpdatesTensor sizes == IndicesTensor sizes; updates dtype == input dtype. Index rule as
/// the gathers (DirectML: invalid indices give incorrect outputs; clamped here). Duplicates:
/// undefined in DirectML; the last update in row-major order of indices wins here.
Status ScatterElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                       const TensorView& updates_tensor, std::int64_t axis, Lowering* out);

/// DML_SCATTER_ND_OPERATOR_DESC {InputTensor, IndicesTensor, UpdatesTensor, InputDimensionCount,
/// IndicesDimensionCount}: on the original-rank tensors (leading 1s trimmed), with k the index
/// tuple size <= InputDimensionCount: output = input;
///   output[indices[j.., 0], .., indices[j.., k-1], t..] = updates[j.., t..],
/// updates = right-align to DimensionCount of Indices[orig][:-1] ++ Input[orig][k:].
/// Index rule and duplicates as ScatterElements.
Status ScatterND(const TensorView& input_tensor, const TensorView& indices_tensor, const TensorView& updates_tensor,
                 std::int64_t input_dimension_count, std::int64_t indices_dimension_count, Lowering* out);

}  // namespace multigather::dml
