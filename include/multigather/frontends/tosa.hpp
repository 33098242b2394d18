// multigather/frontends/tosa.hpp: TOSA GATHER (https://www.mlplatform.org/tosa/tosa_spec.html#_gather,
// pseudocode GATHER.tosac; MLIR tosa.gather mirrors it).
#pragma once

#include "multigather/ops.hpp"

namespace multigather::tosa {

/// tosa.gather(values, indices):  output[n, w, c] = values[n, indices[n, w], c]
/// values [N,K,C], indices [N,W] (int32; int64 of newer profiles accepted), output [N,W,C].
/// REQUIRE(0 <= k < K): negatives and out-of-range indices are errors.
Status gather(const TensorView& values, const TensorView& indices, Lowering* out);

/// tosa.scatter(values_in, indices, input) (#_scatter, SCATTER.tosac):
///   values_out = values_in;  values_out[n, indices[n, w], c] = input[n, w, c]
/// values_in [N,K,C], indices [N,W] (int32; int64 accepted), input [N,W,C] of values_in's dtype,
/// values_out [N,K,C]. REQUIRE(0 <= k < K) as gather. TOSA also REQUIREs every [n, k] to be
/// written at most once; multigather does not check it: duplicates write the last update in
/// row-major order of indices.
Status scatter(const TensorView& values_in, const TensorView& indices, const TensorView& input, Lowering* out);

}  // namespace multigather::tosa
