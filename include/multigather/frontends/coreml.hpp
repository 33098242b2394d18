// multigather/frontends/coreml.hpp: Core ML MIL gather ops, iOS17 opset
// (https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html,
// iOS17.scatter_gather). Index dtypes: int32, int16, uint16, int8, uint8; Core ML itself has no
// int64 indices, multigather accepts int64 anyway (a note says so).
// Index rule: negatives wrap once (the parameter text: -D <= v < D); validate_indices=true makes
// an out-of-range index an error; false (default) is "undefined but memory safe": multigather
// clamps to [0, D-1].
#pragma once

#include <string_view>

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

/// Core ML iOS17 scatters, `mode` one of update, add, sub, mul, div, max, min (default add):
/// output = data; output[target] = f(output[target], updates[..]). sub adds an owned negated copy
/// of updates (exact); div is refused (multiplying by a reciprocal is not exact, and the core has
/// no division). Index dtypes and rule as the gathers (validate_indices: error, else clamp).
/// Duplicates with mode update: unspecified in Core ML; the last update wins here.
///  scatter(data, indices, updates, axis=0, mode="add", validate_indices=False): block scatter,
///    updates.shape == data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:].
///  scatter_along_axis(...): element scatter, indices rank == data rank, non-axis sizes equal,
///    updates.shape == indices.shape.
///  scatter_nd(data, indices, updates, mode="add", validate_indices=False): K = indices.shape[-1]
///    <= rank(data), updates.shape == indices.shape[:-1] ++ data.shape[K:].
Status scatter(const TensorView& data, const TensorView& indices, const TensorView& updates, std::int64_t axis,
               std::string_view mode, bool validate_indices, Lowering* out);
Status scatter_along_axis(const TensorView& data, const TensorView& indices, const TensorView& updates,
                          std::int64_t axis, std::string_view mode, bool validate_indices, Lowering* out);
Status scatter_nd(const TensorView& data, const TensorView& indices, const TensorView& updates,
                  std::string_view mode, bool validate_indices, Lowering* out);

}  // namespace multigather::coreml
