// Internal: the reference kernel, a plain transcription of the SPEC formula over the caller's
// original views. It is the oracle of every fast path and also produces the precise
// out-of-range message when a fast kernel reports that some index was bad.
#pragma once

#include "core/index_resolve.hpp"  // resolve_index_value: the one resolver
#include "core/index_value.hpp"    // read_index_value, index_text: shared with the scatter reference
#include "plan/plan.hpp"

namespace multigather::detail {

/// Walks the output positions in C order, applying SPEC section 1 literally. With
/// output.data == nullptr it only looks for the first out-of-range index (in output order) and
/// returns its error; nothing is written.
Status reference_gather(const TensorView& input, const TensorView& indices,
                        const ValidatedCall& call, const GatherOptions& options,
                        const MutableTensorView& output) noexcept;

}  // namespace multigather::detail
