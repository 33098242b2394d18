// multigather/frontends/tosa.hpp: TOSA GATHER (https://www.mlplatform.org/tosa/tosa_spec.html#_gather,
// pseudocode GATHER.tosac; MLIR tosa.gather mirrors it).
#pragma once

#include "multigather/ops.hpp"

namespace multigather::tosa {

/// tosa.gather(values, indices):  output[n, w, c] = values[n, indices[n, w], c]
/// values [N,K,C], indices [N,W] (int32; int64 of newer profiles accepted), output [N,W,C].
/// REQUIRE(0 <= k < K): negatives and out-of-range indices are errors.
Status gather(const TensorView& values, const TensorView& indices, Lowering* out);

}  // namespace multigather::tosa
