// Internal (not installed): the CPU engine behind every entry point of src/api (run_validated.cpp).
#pragma once

#include "plan/plan.hpp"

namespace multigather::detail {

/// Plans and runs a fully validated call (operands, output and overlap checked) on the CPU
/// engine; on a bad index, the reference kernel words the message. No validation here.
/// `keep_output_on_error`: the output is the caller's (out=, *_into): under index_mode error
/// the indices are checked in a pass of their own before the first write (indices_in_range),
/// so that a bad index leaves the output unchanged. A new output (a one-shot call's) skips it:
/// the engine checks each index as it goes and may have written part of it.
Status run_validated(const TensorView& input, const TensorView& indices,
                     const MutableTensorView& output, const ValidatedCall& call,
                     const GatherOptions& options, bool keep_output_on_error) noexcept;

/// output = input (same shape and dtype, validated by the caller's rules) on the CPU: a threaded
/// memcpy where both are C-contiguous, else a gather_multiaxis call with no axes (which runs on
/// one thread when the views coalesce into one block).
Status copy_view(const TensorView& input, const MutableTensorView& output, int num_threads);

/// The indices of a gather with no axes at rank `rank` (a broadcast int64 zero, never read):
/// with them a gather copies a view (copy_view here, the CUDA backend's copy on the device).
TensorView no_axes_indices(int rank);

}  // namespace multigather::detail
