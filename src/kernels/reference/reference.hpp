// Internal: the reference kernel, a plain transcription of the SPEC formula over the caller's
// original views. It is the oracle of every fast path and also produces the precise
// out-of-range message when a fast kernel reports that some index was bad.
#pragma once

#include "plan/plan.hpp"

namespace multigather::detail {

/// One index element of any index dtype at byte address `p` (0 for a non-index dtype), exactly
/// (uint64 values above INT64_MAX included). Shared by the gather and scatter references.
__int128 read_index_value(const std::byte* p, DType t) noexcept;

/// Walks the output positions in C order, applying SPEC section 1 literally. With
/// output.data == nullptr it only looks for the first out-of-range index (in output order) and
/// returns its error; nothing is written.
Status reference_gather(const TensorView& input, const TensorView& indices,
                        const ValidatedCall& call, const GatherOptions& options,
                        const MutableTensorView& output) noexcept;

}  // namespace multigather::detail
