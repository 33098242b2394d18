// multigather/frontends/tosa.hpp: TOSA GATHER and SCATTER (https://www.mlplatform.org/tosa/tosa_spec.html#_gather,
// pseudocode GATHER.tosac; MLIR tosa.gather mirrors it).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::tosa {

/// tosa.gather: the registry row "tosa.gather" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain tosa.gather`).
Status gather(const TensorView& values, const TensorView& indices, Lowering* out);

/// tosa.scatter: the registry row "tosa.scatter" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain tosa.scatter`).
Status scatter(const TensorView& values_in, const TensorView& indices, const TensorView& input, Lowering* out);

}  // namespace multigather::tosa
