// Internal (not installed): the vector-Jacobian product of one lowered call (vjp.cpp), which
// transforms.cpp's execute_vjp / execute_vjp_shard run per example of a batch.
#pragma once

#include <cstddef>

#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"

namespace multigather::detail {

/// Whether `l` is a segment op's lowering (its VJP and its lifting follow the segment rules).
inline bool is_segment(const Lowering& l) { return l.spec != nullptr && l.spec->kind == OpKind::kSegment; }

/// Whether `v` is laid out C-contiguously by PyTorch's rule (is_contiguous): the stride of a
/// size-1 dimension never moves, and a view of at most one element is always dense. Every VJP
/// reads grad_output and writes its gradients at such offsets.
inline bool is_dense(const TensorView& v) { return v.numel() <= 1 || v.is_contiguous(); }

/// The bytes a view spans when it is C-contiguous.
inline std::size_t nbytes(const MutableTensorView& v) {
  return static_cast<std::size_t>(v.numel()) * element_size(v.dtype);
}

/// The VJP of one (possibly lifted by `batch_rank` leading dimensions) lowering on the context's
/// engine: grad_input (the input's shape) and, for a scatter, *grad_updates from grad_output (the
/// output's shape, in any layout: one that is not C-contiguous is copied C-contiguous on the
/// engine first). A CUDA VJP is refused with execute's message where this build or machine has
/// no CUDA engine. `input`: the framework's input (its values are read by a segment max / min /
/// prod only). Errors: InvalidArgument for a grad_output of another shape, a gradient that is
/// not implemented (StatusReason::kNotImplemented) or not defined for the dtype.
Status vjp_one(const Lowering& l, const TensorView* input, int batch_rank, const TensorView& grad_output,
               const MutableTensorView& grad_input, const MutableTensorView* grad_updates,
               const ExecutionContext& context);

}  // namespace multigather::detail
