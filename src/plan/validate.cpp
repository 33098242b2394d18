// Validation of gather_multiaxis calls: every error of docs/spec.md section 1, with messages that name
// the argument, the value and the rule.
#include <string>

#include "plan/plan.hpp"
#include "core/text.hpp"

namespace multigather {
namespace {

using detail::str;

Status check_shape(const Dims& shape, const char* name) {
  if (shape.overflowed()) {
    return InvalidArgument(std::string(name) + " rank " + str(shape.size()) +
                           " exceeds the maximum rank " + str(kMaxRank));
  }
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      return InvalidArgument(std::string(name) + ".shape[" + str(d) + "] = " + str(shape[d]) +
                             " is negative");
    }
  }
  std::int64_t n = 0;
  if (!element_count(shape, &n)) {
    return InvalidArgument(std::string(name) + " shape " + to_string(shape) +
                           " has an element count that overflows 64 bits");
  }
  return Status::Ok();
}

// The largest |offset| (in bytes) a view can reach must fit in int64, so that kernels can use
// plain 64-bit pointer arithmetic.
Status check_view_extent(const Dims& shape, const Dims& strides, std::size_t element_size,
                         const char* name) {
  if (strides.size() != shape.size()) {
    return InvalidArgument(std::string(name) + " has " + str(strides.size()) + " strides for rank " +
                           str(shape.size()));
  }
  std::int64_t n = 0;
  if (element_count(shape, &n) && n == 0) return Status::Ok();
  std::int64_t extent = 0;
  for (int d = 0; d < shape.size(); ++d) {
    std::int64_t s = strides[d];
    if (s == INT64_MIN) s = INT64_MAX;  // forces the overflow below
    std::int64_t term = 0;
    if (__builtin_mul_overflow(s < 0 ? -s : s, shape[d] - 1, &term) ||
        __builtin_add_overflow(extent, term, &extent)) {
      extent = -1;
      break;
    }
  }
  std::int64_t bytes = 0;
  if (extent < 0 ||
      __builtin_mul_overflow(extent, static_cast<std::int64_t>(element_size), &bytes)) {
    return InvalidArgument(std::string(name) + " strides " + to_string(strides) + " with shape " +
                           to_string(shape) + " reach byte offsets that overflow 64 bits");
  }
  return Status::Ok();
}

}  // namespace

Status infer_shape(const Dims& input_shape, const Dims& indices_shape,
                   std::span<const std::int64_t> axes, GatherShape* out) noexcept {
  try {
    MULTIGATHER_RETURN_IF_ERROR(check_shape(input_shape, "input"));
    MULTIGATHER_RETURN_IF_ERROR(check_shape(indices_shape, "indices"));
    const int r = input_shape.size();
    if (indices_shape.size() != r) {
      return InvalidArgument("indices rank " + str(indices_shape.size()) +
                             " must equal input rank " + str(r));
    }
    GatherShape s;
    if (axes.size() > static_cast<std::size_t>(kMaxRank)) {
      return InvalidArgument("axes has " + str(static_cast<std::int64_t>(axes.size())) +
                             " entries but input rank is " + str(r));
    }
    for (std::size_t j = 0; j < axes.size(); ++j) {
      const std::int64_t a = axes[j];
      if (a < -r || a >= r) {
        return InvalidArgument("axes[" + str(static_cast<std::int64_t>(j)) + "] = " + str(a) +
                               " is out of range [" + str(-r) + ", " + str(r) +
                               ") for input rank " + str(r));
      }
      const std::int64_t axis = a < 0 ? a + r : a;
      if (s.is_axis[static_cast<std::size_t>(axis)]) {
        return InvalidArgument("axes[" + str(static_cast<std::int64_t>(j)) + "] = " + str(a) +
                               " repeats axis " + str(axis) + " (axes must be distinct)");
      }
      s.is_axis[static_cast<std::size_t>(axis)] = true;
      s.axes.push_back(axis);
    }
    const int k = static_cast<int>(axes.size());
    s.coordinate_size = k > 1 ? k : 1;
    s.logical_indices_shape = indices_shape;
    if (r > 0) {
      const std::int64_t last = indices_shape[r - 1];
      if (last % s.coordinate_size != 0) {
        return InvalidArgument("indices.shape[" + str(r - 1) + "] = " + str(last) +
                               " is not a multiple of the coordinate size " +
                               str(s.coordinate_size) + " (len(axes))");
      }
      s.logical_indices_shape[r - 1] = last / s.coordinate_size;
    }
    s.output_shape = Dims::filled(r, 0);
    for (int d = 0; d < r; ++d) {
      const std::int64_t in = input_shape[d];
      const std::int64_t li = s.logical_indices_shape[d];
      if (s.is_axis[static_cast<std::size_t>(d)]) {
        s.output_shape[d] = li;
        continue;
      }
      if (in != li && in != 1 && li != 1) {
        return InvalidArgument("input.shape[" + str(d) + "] = " + str(in) +
                               " and logical indices shape[" + str(d) + "] = " + str(li) +
                               " are not broadcastable: dimension " + str(d) +
                               " is not in axes, so the sizes must be equal or one of them 1");
      }
      const std::int64_t o = (in == 1) ? li : in;  // 1 with 0 gives 0
      s.output_shape[d] = o;
      s.input_broadcast[static_cast<std::size_t>(d)] = (in == 1 && o != 1);
      s.indices_broadcast[static_cast<std::size_t>(d)] = (li == 1 && o != 1);
    }
    if (!element_count(s.output_shape, &s.output_numel)) {
      return InvalidArgument("output shape " + to_string(s.output_shape) +
                             " has an element count that overflows 64 bits");
    }
    *out = s;
    return Status::Ok();
  } catch (...) {  // std::bad_alloc from message strings: the core never lets exceptions out
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status check_indices_dtype(DType dtype) noexcept {
  if (is_index_type(dtype)) return Status::Ok();
  try {
    return TypeError("indices dtype " + std::string(dtype_name(dtype)) +
                     " is not an integer type (expected int8, int16, int32, int64, uint8, "
                     "uint16, uint32 or uint64)");
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

namespace detail {

Status check_operands(const TensorView& input, const TensorView& indices, bool reads_indices,
                      const GatherOptions& options, ValidatedCall* call) noexcept {
  try {
    if (!is_valid(input.dtype)) {
      return TypeError("input dtype " + str(static_cast<int>(input.dtype)) + " is not supported");
    }
    MULTIGATHER_RETURN_IF_ERROR(check_indices_dtype(indices.dtype));
    switch (options.index_mode) {
      case IndexMode::kError: case IndexMode::kClamp: case IndexMode::kWrap: case IndexMode::kFill:
        break;
      case IndexMode::kDrop:
        return InvalidArgument("index_mode drop applies to scatter only (a gather has no update "
                               "to skip; use fill)");
      default:
        return InvalidArgument("index_mode " + str(static_cast<int>(options.index_mode)) +
                               " is not one of error, clamp, wrap, fill");
    }
    if (options.num_threads < 0) {
      return InvalidArgument("num_threads = " + str(options.num_threads) + " is negative");
    }
    call->input_dtype = input.dtype;
    call->element_size = element_size(input.dtype);
    MULTIGATHER_RETURN_IF_ERROR(check_view_extent(input.shape, input.strides, call->element_size, "input"));
    MULTIGATHER_RETURN_IF_ERROR(check_view_extent(indices.shape, indices.strides,
                                                  element_size(indices.dtype), "indices"));
    std::int64_t out_bytes = 0;
    if (__builtin_mul_overflow(call->shape.output_numel,
                               static_cast<std::int64_t>(call->element_size), &out_bytes)) {
      return InvalidArgument("output shape " + to_string(call->shape.output_shape) + " of " +
                             std::string(dtype_name(input.dtype)) +
                             " has a byte size that overflows 64 bits");
    }
    if (call->shape.output_numel > 0) {
      if (input.data == nullptr && input.numel() > 0) {
        return InvalidArgument("input data is null but input has " + str(input.numel()) + " elements");
      }
      if (indices.data == nullptr && indices.numel() > 0 && reads_indices) {
        return InvalidArgument("indices data is null but indices has " + str(indices.numel()) +
                               " elements");
      }
    }
    call->negative_indices = options.negative_indices && !is_unsigned_integer(indices.dtype) &&
                             options.index_mode != IndexMode::kWrap;
    call->fill_bytes = {};
    if (options.index_mode == IndexMode::kFill) {
      MULTIGATHER_RETURN_IF_ERROR(
          encode_scalar(options.fill_value, input.dtype, call->fill_bytes.data(), "fill_value"));
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status validate_operands(const TensorView& input, const TensorView& indices,
                         std::span<const std::int64_t> axes, const GatherOptions& options,
                         ValidatedCall* call) noexcept {
  MULTIGATHER_RETURN_IF_ERROR(infer_shape(input.shape, indices.shape, axes, &call->shape));
  return check_operands(input, indices, !axes.empty(), options, call);
}

Status validate_output(const MutableTensorView& output, const ValidatedCall& call) noexcept {
  try {
    if (!is_valid(output.dtype) || element_size(output.dtype) != call.element_size) {
      return InvalidArgument("output dtype " + std::string(dtype_name(output.dtype)) +
                             " has element size " + str(static_cast<std::int64_t>(element_size(output.dtype))) +
                             " but input dtype " + std::string(dtype_name(call.input_dtype)) +
                             " has element size " + str(static_cast<std::int64_t>(call.element_size)));
    }
    if (!(output.shape == call.shape.output_shape)) {
      return InvalidArgument("output shape " + to_string(output.shape) +
                             " does not match the inferred output shape " +
                             to_string(call.shape.output_shape));
    }
    MULTIGATHER_RETURN_IF_ERROR(check_view_extent(output.shape, output.strides, call.element_size, "output"));
    if (call.shape.output_numel > 0 && output.data == nullptr) {
      return InvalidArgument("output data is null but output has " +
                             str(call.shape.output_numel) + " elements");
    }
    if (has_self_overlap(output.shape, output.strides)) {
      return InvalidArgument("output strides " + to_string(output.strides) + " with shape " +
                             to_string(output.shape) + " address one element from several "
                             "positions (a stride 0 or interleaved strides): writes through it "
                             "would race and lose data");
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status check_no_overlap(const MutableTensorView& output, const TensorView& input,
                        const TensorView& indices, std::string_view output_name) noexcept {
  if (!views_overlap(output, input) && !views_overlap(output, indices)) return Status::Ok();
  try {
    return InvalidArgument(std::string(output_name) + " overlaps input or indices (gather cannot "
                           "write into memory it reads)");
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status check_extent(const Dims& shape, const Dims& strides, std::size_t element_size,
                    const char* name) noexcept {
  try {
    return check_view_extent(shape, strides, element_size, name);
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status validate_call(const TensorView& input, const TensorView& indices,
                     std::span<const std::int64_t> axes, const MutableTensorView& output,
                     const GatherOptions& options, ValidatedCall* call) noexcept {
  MULTIGATHER_RETURN_IF_ERROR(validate_operands(input, indices, axes, options, call));
  return validate_output(output, *call);
}

}  // namespace detail
}  // namespace multigather
