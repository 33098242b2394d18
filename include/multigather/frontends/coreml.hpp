// multigather/frontends/coreml.hpp: Core ML MIL gather ops, iOS17 opset
// (https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html,
// iOS17.scatter_gather). Index dtypes: int32, int16, uint16, int8, uint8; Core ML itself has no
// int64 indices, multigather accepts int64 anyway (a note says so).
// Index rule: negatives wrap once (the parameter text: -D <= v < D); validate_indices=true makes
// an out-of-range index an error; false (default) is "undefined but memory safe": multigather
// clamps to [0, D-1].
#pragma once

#include "multigather/ops.hpp"

namespace multigather::coreml {

/// coreml.gather(x, indices, axis=0, batch_dims=0, validate_indices=False):
///   K = D[:axis] ++ N[batch_dims:] ++ D[axis+1:]  (tf.gather semantics with batch_dims)
///   out[p.., i.., q..] = x[p.., indices[b.., i..], q..]
Status gather(const TensorView& x, const TensorView& indices, std::int64_t axis,
              std::int64_t batch_dims, bool validate_indices, Lowering* out);

/// coreml.gather_along_axis(x, indices, axis=0, validate_indices=False):
///   out[i][j][k] = x[indices[i][j][k]][j][k] (axis 0); same rank, non-axis sizes EQUAL.
Status gather_along_axis(const TensorView& x, const TensorView& indices, std::int64_t axis,
                         bool validate_indices, Lowering* out);

/// coreml.gather_nd(x, indices, batch_dims=0, validate_indices=False):
///   V = K[:-1] ++ D[batch_dims + K[-1]:];  out[b.., i..] = x[b.., indices[b.., i.., :], t..]
/// K[-1] + batch_dims <= rank(x).
Status gather_nd(const TensorView& x, const TensorView& indices, std::int64_t batch_dims,
                 bool validate_indices, Lowering* out);

}  // namespace multigather::coreml
