// multigather/frontends/tf.hpp: TensorFlow tf.gather and tf.gather_nd
// (https://www.tensorflow.org/api_docs/python/tf/gather, .../tf/gather_nd).
// Index rule: values must lie in [0, D): NEGATIVE INDICES ARE OUT OF RANGE. index_mode "error"
// (default) is TF's CPU behaviour (InvalidArgument); "fill" gives TF-GPU's zeros.
// Index dtypes int32, int64. Batch dimensions must be equal (no broadcasting).
#pragma once

#include <optional>

#include "multigather/ops.hpp"

namespace multigather::tf {

/// tf.gather(params, indices, axis=None, batch_dims=0):
///   output[p.., i.., q..] = params[p.., indices[b.., i..], q..]   (p.. = params.shape[:axis])
/// batch_dims < 0 counts from rank(indices); axis=None means axis = batch_dims as given (a
/// negative value then counts from rank(params) for the axis, as TensorFlow does);
/// batch_dims <= axis; params.shape[:batch_dims] == indices.shape[:batch_dims].
/// Output shape params.shape[:axis] ++ indices.shape[batch_dims:] ++ params.shape[axis+1:].
Status gather(const TensorView& params, const TensorView& indices, std::optional<std::int64_t> axis,
              std::int64_t batch_dims, IndexMode index_mode, Lowering* out);

/// tf.gather_nd(params, indices, batch_dims=0):
///   output[b.., i..] = params[b.., indices[b.., i.., 0], .., indices[b.., i.., d-1], t..]
/// index_depth d = indices.shape[-1] <= rank(params) - batch_dims; indices rank >= 1.
/// Output shape indices.shape[:-1] ++ params.shape[batch_dims + d:].
Status gather_nd(const TensorView& params, const TensorView& indices, std::int64_t batch_dims,
                 IndexMode index_mode, Lowering* out);

}  // namespace multigather::tf
