// multigather/frontends/webnn.hpp: WebNN gather, gatherElements, gatherND
// (https://www.w3.org/TR/webnn/, sections gather / gatherElements / gatherND).
// Index rule (all three): negative indices wrap once, then out-of-range values CLAMP to
// [0, N-1]. The spec only says values "must be in range" and allows implementations to insert
// clamp(); the WPT conformance tests expect the clamp (10 -> N-1, -10 -> 0), and so does
// multigather. Index dtypes: int32, uint32, int64. Input rank >= 1.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::webnn {

/// webnn.gather(input, indices, {axis = 0}):
///   output[i.., j.., k..] = input[i.., indices[j..], k..];  axis is unsigned, < rank.
/// Output shape input.shape[:axis] ++ indices.shape ++ input.shape[axis+1:] (0-D indices allowed).
Status gather(const TensorView& input, const TensorView& indices, std::int64_t axis, Lowering* out);

/// webnn.gatherElements(input, indices, {axis = 0}):
///   output[i][j][k] = input[indices[i][j][k]][j][k]  (axis 0);
/// indices.shape[d] == input.shape[d] for every d != axis; output shape = indices shape.
Status gatherElements(const TensorView& input, const TensorView& indices, std::int64_t axis,
                      Lowering* out);

/// webnn.gatherND(input, indices):  output[j..] = input[indices[j.., 0], ..., indices[j.., c-1], t..]
/// c = indices.shape[-1] <= rank(input); indices rank >= 1; output indices.shape[:-1] ++ input.shape[c:].
Status gatherND(const TensorView& input, const TensorView& indices, Lowering* out);

/// webnn.scatterElements(input, indices, updates, {axis = 0}): output = input;
///   output[i][indices[i][j][k]][k] = updates[i][j][k]  (axis 1).
/// indices rank == input rank, indices.shape[d] == input.shape[d] for d != axis, updates shape
/// == indices shape, updates dtype == input dtype. Index rule as gather (wrap once, clamp).
/// Duplicates: unspecified by WebNN; the last update in row-major order wins here.
Status scatterElements(const TensorView& input, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, Lowering* out);

/// webnn.scatterND(input, indices, updates): output = input;
///   output[indices[j.., 0], ..., indices[j.., c-1], t..] = updates[j.., t..];
/// c = indices.shape[-1] <= rank(input), updates.shape == indices.shape[:-1] ++ input.shape[c:].
/// Index rule and duplicates as scatterElements.
Status scatterND(const TensorView& input, const TensorView& indices, const TensorView& updates,
                 Lowering* out);

}  // namespace multigather::webnn
