// multigather/scatter.hpp: the dual operator.
//
//     output = scatter_multiaxis(input, indices, updates, axes, options)
//
// G = the shape gather_multiaxis(input, indices, axes) would produce (gather.hpp), under the
// same rules and errors. `updates` has rank r and a shape that broadcasts to G (each
// updates.shape[d] equals G[d] or is 1). `output` has input's shape and dtype and starts as
// input (a copy, or the same memory when the call scatters in place). Then, for every position
// o of G in row-major order:
//
//     i         = the input position gather_multiaxis would read for o (input-broadcast
//                 dimensions map to 0, axis dimensions take the resolved index)
//     output[i] = combine(output[i], updates[o, broadcast])
//
// reduction none: the LAST update (row-major order of o) reaching i wins. add / mul / min / max:
// the updates reaching i combine in row-major order of o, starting from input[i] or, with
// include_input = false, from the first update reaching i (positions no update reaches keep
// input[i]). Integers wrap (two's complement); float16 / bfloat16 combine in their own precision
// (each step rounded to the dtype; with ScatterOptions::wide_accumulator, add and mul combine
// in float32 and round once); NaN propagates through float min and max; bool: add = or,
// mul = and, max = or, min = and; complex min / max: StableHLO's lexicographic order of (real,
// imaginary) as XLA runs it (max keeps output[i] when re == re ? im > im : re > re, else takes
// the update; min with <): a tie or a NaN in the deciding comparison takes the update.
// index_mode drop skips an update whose resolved index is out of range; fill has no meaning
// here and is an error.
//
// Determinism: the output is a function of the arguments alone, bit-identical for every thread
// count and every run (the CPU engine gives each output element one owning thread, which
// combines that element's updates in row-major order).
//
// Adjoint: for y = gather_multiaxis(x, indices, axes, mode), dL/dx = scatter_multiaxis(
// zeros_like(x), indices, dL/dy, axes, reduction = add, mode') with mode' = mode for error /
// clamp / wrap and drop for fill.
//
// Source: docs/spec.md section 4 (normative).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "multigather/gather.hpp"

namespace multigather {

/// Options of scatter_multiaxis (SPEC section 4).
struct ScatterOptions {
  Reduction reduction = Reduction::kNone;
  /// error (an out-of-range index fails the call before anything is written), clamp, wrap, or
  /// drop (the update is skipped: JAX mode='drop', StableHLO, TF on GPU). fill is an error.
  IndexMode index_mode = IndexMode::kError;
  /// v < 0 becomes v + n before index_mode applies (signed index types; ignored in wrap mode).
  bool negative_indices = true;
  /// add / mul / min / max start from input[i] (true) or from the first update reaching i.
  bool include_input = true;
  /// CPU threads, as GatherOptions::num_threads (0 = from the work size). The result does not
  /// depend on it.
  int num_threads = 0;
  /// float16 / bfloat16 with reduction add or mul on the CPU engine: each output element
  /// combines in float32 (its start value and every update widened, exactly) and is rounded
  /// once, to nearest even, when the call ends, as PyTorch's CPU scatter kernels do
  /// (at::opmath_type). false: each combine rounds to the dtype (SPEC section 4's default).
  /// Other dtypes, reductions and the CUDA engine ignore it.
  bool wide_accumulator = false;
};

// ---- Core (exception-free) -------------------------------------------------------------------

/// Shape inference without data: *out receives G (out->output_shape) and the broadcast facts of
/// the gather view. The output of the scatter has input_shape. Errors (InvalidArgument): those
/// of infer_shape; updates rank != input rank ("updates rank 2 must equal input rank 3");
/// an updates dimension that neither equals G nor is 1 ("updates shape [2,5] does not
/// broadcast to the scatter shape [2,3] (the gather shape of input and indices):
/// updates.shape[1] = 5 must be 3 or 1").
Status infer_scatter_shape(const Dims& input_shape, const Dims& indices_shape,
                           const Dims& updates_shape, std::span<const std::int64_t> axes,
                           GatherShape* out) noexcept;

/// Validates everything, then scatters into `output`: a view of input's shape whose dtype has
/// the input's element size (any strides without self-overlap). `output` may be `input`
/// itself (same data and strides: in place); otherwise it must not overlap input. It must not
/// overlap indices or updates. Errors: those of infer_scatter_shape and gather_multiaxis_into;
/// updates dtype != input dtype (TypeError); index_mode fill (InvalidArgument); a reduction
/// the dtype does not support (TypeError: float8 arithmetic); an index out
/// of range under error mode (OutOfRange, worded as gather's). Every check, index values
/// included, happens before the first write: on error `output` is unchanged.
Status scatter_multiaxis_into(const TensorView& input, const TensorView& indices,
                              const TensorView& updates, std::span<const std::int64_t> axes,
                              const MutableTensorView& output,
                              const ScatterOptions& options = {}) noexcept;

/// The reference kernel alone: SPEC section 4 transcribed plainly (one thread, C-order walk of
/// G). Same contract as scatter_multiaxis_into, ScatterOptions::wide_accumulator included
/// (section 5's float32 accumulation); the oracle of every fast path.
Status scatter_multiaxis_reference(const TensorView& input, const TensorView& indices,
                                   const TensorView& updates, std::span<const std::int64_t> axes,
                                   const MutableTensorView& output,
                                   const ScatterOptions& options = {}) noexcept;

// ---- Convenience API (throws multigather::Error) ---------------------------------------------

/// One-shot call: returns a new C-contiguous tensor of input's shape and dtype. Same errors as
/// scatter_multiaxis_into; the index values are not checked in a pass of their own (the new
/// output is dropped on error).
Tensor scatter_multiaxis(const TensorView& input, const TensorView& indices,
                         const TensorView& updates, std::span<const std::int64_t> axes,
                         const ScatterOptions& options = {});
Tensor scatter_multiaxis(const TensorView& input, const TensorView& indices,
                         const TensorView& updates, std::initializer_list<std::int64_t> axes,
                         const ScatterOptions& options = {});

}  // namespace multigather
