// Internal: the out-of-range message of a framework op, built in one place from the Lowering's
// IndexErrorContext (the framework's indices, their name and labels, the rule), for every engine
// (CPU, CUDA after copying the indices back), for lowerings that check indices up front
// (frontends/recipes.hpp check_indices_now) and for the pictures (explain_svg.cpp).
#pragma once

#include "multigather/lowering.hpp"

namespace multigather::detail {

/// The first framework index (C order) outside its range by l.index_errors, read from
/// `indices` (host memory laid out like l.index_errors.indices), as OutOfRange in the
/// framework's words ("torch.gather: index[0,1] = -1 is out of range for dim 1 of size 4 (valid
/// range [0, 4)); ..."); Ok when every value is in range or there is no error context.
Status find_out_of_range(const Lowering& l, const TensorView& indices);

/// An engine's OutOfRange `core` for `l` in the framework's words: find_out_of_range's message,
/// else the core's own message with the op name and the framework's rule (or `core` itself
/// when the lowering has no error context: the identity lowering).
Status describe_out_of_range(const Lowering& l, const TensorView& indices, const Status& core);

}  // namespace multigather::detail
