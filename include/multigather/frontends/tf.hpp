// multigather/frontends/tf.hpp: TensorFlow tf.gather, tf.gather_nd, tf.tensor_scatter_nd_* and
// tf.scatter_nd (https://www.tensorflow.org/api_docs/python/tf/gather, .../tf/gather_nd, ...).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <optional>
#include <string_view>

#include "multigather/ops.hpp"

namespace multigather::tf {

/// tf.gather: the registry row "tf.gather" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain tf.gather`).
Status gather(const TensorView& params, const TensorView& indices, std::optional<std::int64_t> axis,
              std::int64_t batch_dims, IndexMode index_mode, Lowering* out);

/// tf.gather_nd: the registry row "tf.gather_nd" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain tf.gather_nd`).
Status gather_nd(const TensorView& params, const TensorView& indices, std::int64_t batch_dims,
                 IndexMode index_mode, Lowering* out);

/// tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_add, tf.tensor_scatter_nd_sub,
/// tf.tensor_scatter_nd_min, tf.tensor_scatter_nd_max: their registry rows state each op's
/// signature, formula, rules, index rule and source (docs/quick_reference.md, generated;
/// `multigather explain OP`).
Status tensor_scatter_nd(std::string_view kind, const TensorView& tensor, const TensorView& indices,
                         const TensorView& updates, IndexMode mode, Lowering* out);

/// tf.scatter_nd: the registry row "tf.scatter_nd" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain tf.scatter_nd`).
Status scatter_nd(const TensorView& output_like, const TensorView& indices, const TensorView& updates,
                  IndexMode mode, Lowering* out);

}  // namespace multigather::tf
