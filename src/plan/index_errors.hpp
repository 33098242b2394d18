// Internal: the out-of-range message of a lowered call, from its Lowering (the sentence itself:
// core/index_messages.hpp), for every engine (CPU, CUDA after copying the indices back) and for
// the pictures (explain_svg.cpp).
#pragma once

#include "multigather/lowering.hpp"

namespace multigather::detail {

/// framework_out_of_range (core/index_messages.hpp) for l.op and l.index_errors.
Status find_out_of_range(const Lowering& l, const TensorView& indices);

/// An engine's OutOfRange `core` for `l` in the framework's words: find_out_of_range's message,
/// else the core's own message with the op name and the framework's rule (or `core` itself
/// when the lowering has no error context: the identity lowering).
Status describe_out_of_range(const Lowering& l, const TensorView& indices, const Status& core);

}  // namespace multigather::detail
