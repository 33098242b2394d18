// multigather/frontends/coreml.hpp: Core ML MIL gather and scatter ops, iOS17 opset
// (https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html,
// iOS17.scatter_gather).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <string_view>

#include "multigather/ops.hpp"

namespace multigather::coreml {

/// coreml.gather: the registry row "coreml.gather" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain coreml.gather`).
Status gather(const TensorView& x, const TensorView& indices, std::int64_t axis,
              std::int64_t batch_dims, bool validate_indices, Lowering* out);

/// coreml.gather_along_axis: the registry row "coreml.gather_along_axis" states its signature,
/// formula, rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// coreml.gather_along_axis`).
Status gather_along_axis(const TensorView& x, const TensorView& indices, std::int64_t axis,
                         bool validate_indices, Lowering* out);

/// coreml.gather_nd: the registry row "coreml.gather_nd" states its signature, formula, rules,
/// index rule and source (docs/quick_reference.md, generated; `multigather explain
/// coreml.gather_nd`).
Status gather_nd(const TensorView& x, const TensorView& indices, std::int64_t batch_dims,
                 bool validate_indices, Lowering* out);

/// coreml.scatter, coreml.scatter_along_axis, coreml.scatter_nd: their registry rows state each
/// op's signature, formula, rules, index rule and source (docs/quick_reference.md, generated;
/// `multigather explain OP`).
Status scatter(const TensorView& data, const TensorView& indices, const TensorView& updates, std::int64_t axis,
               std::string_view mode, bool validate_indices, Lowering* out);
Status scatter_along_axis(const TensorView& data, const TensorView& indices, const TensorView& updates,
                          std::int64_t axis, std::string_view mode, bool validate_indices, Lowering* out);
Status scatter_nd(const TensorView& data, const TensorView& indices, const TensorView& updates,
                  std::string_view mode, bool validate_indices, Lowering* out);

}  // namespace multigather::coreml
