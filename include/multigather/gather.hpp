// multigather/gather.hpp: the one operator.
//
//     output = gather_multiaxis(input, indices, axes, options)
//
// r = input.rank = indices.rank = output.rank, k = len(axes), c = max(k, 1).
// The last dimension of `indices` holds the coordinates: its size must be a multiple of c, and
// the LOGICAL indices shape L is indices.shape with the last entry divided by c.
//
//     output.shape[d] = L[d]                            for d in axes
//     output.shape[d] = broadcast(input.shape[d], L[d]) for d not in axes (equal, or one is 1)
//
//     output[o] = input[i]  where, for every output position o,
//       q[e]         = (L[e] == 1 ? 0 : o[e])                 for every e   (index broadcasting)
//       i[d]         = (input.shape[d] == 1 ? 0 : o[d])       for d not in axes
//       i[axes[j]]   = resolve(indices[q0, ..., q_{r-2}, q_{r-1} * c + j], input.shape[axes[j]])
//
// resolve(v, n): if negative_indices and v < 0 (signed index types only, not in wrap mode):
// v += n; then by index_mode: error (v outside [0, n) fails the call), clamp (to [0, n-1]),
// wrap (v mod n, floor modulo), fill (an out-of-range v makes the element fill_value).
// k == 0: no coordinates, the output is `input` broadcast to the output shape.
// Source: docs/spec.md section 1 (normative).
//
// Two layers:
//  - the core, exception-free: infer_shape() and gather_multiaxis_into() return a Status;
//  - the convenience API, which throws multigather::Error subclasses: gather_multiaxis()
//    returning a new Tensor, output_shape().
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "multigather/dtype.hpp"
#include "multigather/options.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace multigather {

/// Everything the shapes alone determine (no data): what explain prints and what a runtime
/// needs to allocate the output. All axes are normalized to [0, r).
struct GatherShape {
  Dims output_shape;
  Dims logical_indices_shape;        // L
  Dims axes;                         // normalized, in the caller's order
  int coordinate_size = 1;           // c = max(k, 1)
  /// For each dimension d: is it in axes; did input / indices broadcast along it (size 1
  /// stretched to a larger output size).
  std::array<bool, kMaxRank> is_axis{};
  std::array<bool, kMaxRank> input_broadcast{};
  std::array<bool, kMaxRank> indices_broadcast{};
  std::int64_t output_numel = 0;
};

// ---- Core (exception-free) -------------------------------------------------------------------

/// Output shape and broadcast facts from shapes and axes only (shape inference for runtimes).
/// Errors (InvalidArgument): rank above kMaxRank; indices rank != input rank; negative sizes;
/// axes[j] outside [-r, r) or repeated; last indices dimension not a multiple of c; a non-axis
/// dimension whose sizes are neither equal nor 1; an element count overflowing 64 bits.
Status infer_shape(const Dims& input_shape, const Dims& indices_shape,
                   std::span<const std::int64_t> axes, GatherShape* out) noexcept;

/// TypeError unless `dtype` is an index dtype (int8-64, uint8-64): "indices dtype float32 is
/// not an integer type (expected int8, ...)".
Status check_indices_dtype(DType dtype) noexcept;

/// Validates once, then gathers into `output`, a caller-provided view of the inferred shape
/// whose dtype has the input's element size (any strides; it must not overlap input/indices).
/// Errors: those of infer_shape; indices dtype not an integer type (TypeError); unsupported
/// input dtype (TypeError); output of the wrong shape or element size; null data for a
/// non-empty view; fill_value not representable; an index out of range under kError
/// (OutOfRange: "indices[3,1] = 7 is out of range for axis 2 of size 5 (valid range [-5, 5))").
/// On error the output is unchanged: under kError the indices are read once in a pass of their
/// own before the first write (their bytes again, sequentially; the other modes cannot fail
/// after validation).
Status gather_multiaxis_into(const TensorView& input, const TensorView& indices,
                             std::span<const std::int64_t> axes, const MutableTensorView& output,
                             const GatherOptions& options = {}) noexcept;

/// Allocates the output of a validated call (gather_multiaxis_alloc): sets *output to a view of
/// new memory of `dtype` and `shape` (any strides, not overlapping input or indices) and
/// returns true, or returns false when it cannot. Called once, on the calling thread.
using OutputAllocator = bool (*)(void* context, DType dtype, const Dims& shape,
                                 MutableTensorView* output);

/// The one-shot call with the caller's allocator (a language binding allocating its own array
/// type, an arena): validates the operands once (every error of gather_multiaxis_into but the
/// output's), asks `allocate` for an output of the output shape, then gathers into it. Returns
/// the same errors as gather_multiaxis_into, plus kInternal "the output allocator failed" when
/// `allocate` returns false; `allocate` is not called when the operands are invalid.
Status gather_multiaxis_alloc(const TensorView& input, const TensorView& indices,
                              std::span<const std::int64_t> axes, const GatherOptions& options,
                              OutputAllocator allocate, void* context) noexcept;

/// The reference kernel alone (the SPEC formula, transcribed plainly; no fast paths, one
/// thread). Same contract as gather_multiaxis_into; it is the oracle every fast path is tested
/// against.
Status gather_multiaxis_reference(const TensorView& input, const TensorView& indices,
                                  std::span<const std::int64_t> axes,
                                  const MutableTensorView& output,
                                  const GatherOptions& options = {}) noexcept;

// ---- Convenience API (throws multigather::Error) ---------------------------------------------

/// One-shot call: allocates and returns the output (C-contiguous, the input's dtype).
Tensor gather_multiaxis(const TensorView& input, const TensorView& indices,
                        std::span<const std::int64_t> axes, const GatherOptions& options = {});
Tensor gather_multiaxis(const TensorView& input, const TensorView& indices,
                        std::initializer_list<std::int64_t> axes,
                        const GatherOptions& options = {});

/// infer_shape that throws; returns the whole GatherShape.
GatherShape output_shape(const Dims& input_shape, const Dims& indices_shape,
                         std::span<const std::int64_t> axes);

}  // namespace multigather
