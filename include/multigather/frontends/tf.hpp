// multigather/frontends/tf.hpp: TensorFlow tf.gather and tf.gather_nd
// (https://www.tensorflow.org/api_docs/python/tf/gather, .../tf/gather_nd).
// Index rule: values must lie in [0, D): NEGATIVE INDICES ARE OUT OF RANGE. index_mode "error"
// (default) is TF's CPU behaviour (InvalidArgument); "fill" gives TF-GPU's zeros.
// Index dtypes int32, int64. Batch dimensions must be equal (no broadcasting).
#pragma once

#include <optional>
#include <string_view>

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

/// tf.tensor_scatter_nd_{update,add,sub,min,max}(tensor, indices, updates) (`kind` is the
/// suffix): output = tensor; output[indices[j.., :], t..] = f(output[..], updates[j.., t..]).
/// k = indices.shape[-1] <= rank(tensor); updates.shape == indices.shape[:-1] ++ tensor.shape[k:];
/// indices int32 / int64; updates dtype == tensor dtype. Index rule: TF CPU (out of range,
/// negatives included, is an error) or `mode` drop (TF GPU: such updates are skipped). sub adds
/// -updates (an owned negated copy). Duplicates: update: the CPU kernel applies them in order
/// (the last wins, as here), GPU order is unspecified; the others combine.
Status tensor_scatter_nd(std::string_view kind, const TensorView& tensor, const TensorView& indices,
                         const TensorView& updates, IndexMode mode, Lowering* out);

/// tf.scatter_nd(indices, updates, shape): tensor_scatter_nd_add on zeros of `shape` (updates'
/// dtype). In the registry the output shape comes from the input operand `output_like`, whose
/// shape and dtype only are read (the lowering owns the zeros it starts from).
Status scatter_nd(const TensorView& output_like, const TensorView& indices, const TensorView& updates,
                  IndexMode mode, Lowering* out);

}  // namespace multigather::tf
