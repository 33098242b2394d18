// Internal (not installed): the CPU engine behind every entry point of src/api.
#pragma once

#include "plan/plan.hpp"

namespace multigather::detail {

/// Plans and runs a fully validated call (operands, output and overlap checked) on the CPU
/// engine; on a bad index, the reference kernel words the message. No validation here.
Status run_validated(const TensorView& input, const TensorView& indices,
                     const MutableTensorView& output, const ValidatedCall& call,
                     const GatherOptions& options) noexcept;

}  // namespace multigather::detail
