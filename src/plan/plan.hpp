// Internal: validation of a gather_multiaxis call and the normalized plan that every kernel
// (reference aside) executes. Not installed; kernels and frontends include it.
//
// Pipeline: validate_call (once, before any byte moves) -> make_plan (pure: broadcast becomes
// stride 0, size-1 dimensions are dropped, dimensions contiguous in every operand are
// coalesced) -> a kernel runs the plan.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "multigather/gather.hpp"

namespace multigather::detail {

/// What validation establishes about a call: its shapes and the fill value's bytes.
struct ValidatedCall {
  GatherShape shape;
  std::size_t element_size = 0;
  /// fill_value encoded in the input dtype (only meaningful for IndexMode::kFill).
  alignas(16) std::array<std::byte, 16> fill_bytes{};
  /// Effective negative rule: options.negative_indices, off for unsigned indices and wrap mode.
  bool negative_indices = true;
};

/// Validates everything about a call except index values (SPEC section 1 errors).
Status validate_call(const TensorView& input, const TensorView& indices,
                     std::span<const std::int64_t> axes, const MutableTensorView& output,
                     const GatherOptions& options, ValidatedCall* call) noexcept;

/// The normalized loop nest. For each output position o (a C-order walk over `shape`, which
/// visits output elements in the same order as a C-order walk of the original output shape):
///
///   output_offset = sum_d o[d] * output_strides[d]
///   index_offset  = sum_d o[d] * indices_strides[d]       (position of coordinate 0)
///   input_offset  = sum_d o[d] * input_strides[d]
///                 + sum_j resolve(indices[index_offset + j * coord_stride], axis_sizes[j])
///                         * axis_strides[j]
///
/// All strides and offsets are in elements of the respective operand. input_strides is 0 on
/// axes and on input-broadcast dimensions, indices_strides is 0 on index-broadcast dimensions
/// (and, for the last dimension, already multiplied by the coordinate size c).
struct GatherPlan {
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> input_strides{};
  std::array<std::int64_t, kMaxRank> indices_strides{};
  std::array<std::int64_t, kMaxRank> output_strides{};

  int k = 0;  // coordinates per lookup (len(axes))
  std::array<std::int64_t, kMaxRank> axis_strides{};
  std::array<std::int64_t, kMaxRank> axis_sizes{};
  std::int64_t coord_stride = 0;

  std::int64_t numel = 0;  // output elements
  const std::byte* input = nullptr;
  const std::byte* indices = nullptr;
  std::byte* output = nullptr;
  std::size_t element_size = 0;
  DType index_dtype = DType::kInt64;
  IndexMode index_mode = IndexMode::kError;
  bool negative_indices = true;
  alignas(16) std::array<std::byte, 16> fill_bytes{};
  int num_threads = 0;
};

/// Builds the normalized plan of a validated call. Pure: reads only shapes, strides and
/// pointers.
void make_plan(const TensorView& input, const TensorView& indices,
               const MutableTensorView& output, const ValidatedCall& call,
               const GatherOptions& options, GatherPlan* plan) noexcept;

}  // namespace multigather::detail
