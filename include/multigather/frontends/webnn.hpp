// multigather/frontends/webnn.hpp: WebNN gather, gatherElements, gatherND, scatterElements,
// scatterND (https://www.w3.org/TR/webnn/).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::webnn {

/// webnn.gather: the registry row "webnn.gather" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain webnn.gather`).
Status gather(const TensorView& input, const TensorView& indices, std::int64_t axis, Lowering* out);

/// webnn.gatherElements: the registry row "webnn.gatherElements" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// webnn.gatherElements`).
Status gatherElements(const TensorView& input, const TensorView& indices, std::int64_t axis,
                      Lowering* out);

/// webnn.gatherND: the registry row "webnn.gatherND" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain webnn.gatherND`).
Status gatherND(const TensorView& input, const TensorView& indices, Lowering* out);

/// webnn.scatterElements: the registry row "webnn.scatterElements" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// webnn.scatterElements`).
Status scatterElements(const TensorView& input, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, Lowering* out);

/// webnn.scatterND: the registry row "webnn.scatterND" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain webnn.scatterND`).
Status scatterND(const TensorView& input, const TensorView& indices, const TensorView& updates,
                 Lowering* out);

}  // namespace multigather::webnn
