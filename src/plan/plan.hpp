// Internal: validation of a gather_multiaxis call and the normalized plan that every kernel
// (reference aside) executes. Not installed; kernels and frontends include it.
//
// Pipeline: validate_call (once, before any byte moves) -> make_plan (pure: broadcast becomes
// stride 0, size-1 dimensions are dropped, dimensions contiguous in every operand are
// coalesced, the contiguous inner block over which the index does not change is found, a
// kernel kind is chosen) -> a kernel runs the plan.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "multigather/gather.hpp"

namespace multigather::detail {

/// What validation establishes about a call: its shapes and the fill value's bytes.
struct ValidatedCall {
  GatherShape shape;
  DType input_dtype = DType::kFloat32;
  std::size_t element_size = 0;
  /// fill_value encoded in the input dtype (only meaningful for IndexMode::kFill).
  alignas(16) std::array<std::byte, 16> fill_bytes{};
  /// Effective negative rule: options.negative_indices, off for unsigned indices and wrap mode.
  bool negative_indices = true;
};

/// Validates input, indices, axes and options (everything but the output view and the index
/// values): shapes, dtypes, view extents, the output's byte size, null data, the fill value.
/// Enough to allocate the output (call->shape.output_shape).
Status validate_operands(const TensorView& input, const TensorView& indices,
                         std::span<const std::int64_t> axes, const GatherOptions& options,
                         ValidatedCall* call) noexcept;

/// validate_operands for a call whose shape is already inferred (call->shape set, e.g. by a
/// Lowering): dtypes, index mode, view extents, the output's byte size, null data (indices data
/// only when `reads_indices`, i.e. axes is not empty), the fill value.
Status check_operands(const TensorView& input, const TensorView& indices, bool reads_indices,
                      const GatherOptions& options, ValidatedCall* call) noexcept;

/// Validates a caller's output view against validated operands: element size, shape, extent,
/// null data, and no self-overlap (a stride 0 or interleaved strides: writes would race).
Status validate_output(const MutableTensorView& output, const ValidatedCall& call) noexcept;

/// InvalidArgument "<output_name> overlaps input or indices (...)" when the output's bytes
/// intersect the input's or the indices' (gather cannot write into memory it reads).
Status check_no_overlap(const MutableTensorView& output, const TensorView& input,
                        const TensorView& indices, std::string_view output_name) noexcept;

/// InvalidArgument when a view's strides do not match its rank or reach byte offsets that
/// overflow 64 bits ("<name> strides [...] with shape [...] reach byte offsets that overflow").
Status check_extent(const Dims& shape, const Dims& strides, std::size_t element_size,
                    const char* name) noexcept;

/// validate_operands, then validate_output: every docs/spec.md section 1 error but the index
/// values and the overlap of output with the operands (check_no_overlap, which the entry points
/// call after this; planner tests validate placeholder pointers).
Status validate_call(const TensorView& input, const TensorView& indices,
                     std::span<const std::int64_t> axes, const MutableTensorView& output,
                     const GatherOptions& options, ValidatedCall* call) noexcept;

/// Which loop shape a kernel runs (the same choice for the CPU and CUDA backends).
enum class PlanKind : std::uint8_t {
  /// The innermost plan dimension is a block of `block` elements, contiguous in input and
  /// output (stride 1) with the index constant along it (indices stride 0, or no index read at
  /// all: k == 0): one index resolution per block, then one block copy.
  kBlock = 0,
  /// One index resolution per output element (GatherElements, flat take, strided views).
  kElement = 1,
};

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
///
/// Dimensions are never reordered (the walk stays in output C order). Lookups: the first
/// `lookup_rank` dimensions enumerate the `lookups` index resolutions; for kBlock the last
/// dimension (rank - 1) is the block (shape[rank-1] == block, input/output stride 1, indices
/// stride 0 unless k == 0); for kElement lookup_rank == rank and block == 1. The CPU and CUDA
/// backends both take kind, block, lookup_rank, lookups and unit_bytes from here.
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

  // Derived by make_plan from the fields above (kernel selection).
  PlanKind kind = PlanKind::kElement;
  std::int64_t block = 1;          // elements per lookup (1 for kElement)
  int lookup_rank = 0;             // dimensions enumerating lookups (rank - 1 for kBlock)
  std::int64_t lookups = 0;        // numel / block
  /// The widest copy unit of 16, 8, 4, 2 or 1 bytes that divides every byte quantity a block
  /// copy adds to a pointer: the input and output addresses, the block's bytes, the input and
  /// output strides of the lookup dimensions and the axis strides (all in bytes). The CUDA
  /// kernel moves rows in units of this width.
  int unit_bytes = 1;
  /// Every element offset the call can reach in the input, the indices and the output, from
  /// its data pointer, lies in [-2^31, 2^31): kernels may use 32-bit offset arithmetic.
  bool offsets_fit_int32 = false;
  /// Estimated bytes the call moves (output written + input gathered + indices read); the CPU
  /// engine picks its thread count from it.
  std::int64_t work_bytes = 0;
};

/// Largest |offset| that k coordinates add: sum_j |strides[j]| * (sizes[j] - 1), in the unit of
/// `strides`; an empty axis (size 0) adds nothing.
std::int64_t axes_reach(const std::int64_t* strides, const std::int64_t* sizes, int k) noexcept;

/// Builds the normalized plan of a validated call. Pure: reads only shapes, strides and
/// pointers.
void make_plan(const TensorView& input, const TensorView& indices,
               const MutableTensorView& output, const ValidatedCall& call,
               const GatherOptions& options, GatherPlan* plan) noexcept;

}  // namespace multigather::detail
