// Validation of scatter_multiaxis calls: every error of docs/spec.md section 4, with messages
// that name the argument, the value and the rule. The gather that reads the scatter's targets
// is validated by validate.cpp (G, axes, index dtype, the negative rule).
#include <string>

#include "plan/scatter_plan.hpp"
#include "core/text.hpp"

namespace multigather::detail {
namespace {


bool is_float8(DType t) { return t == DType::kFloat8E4M3FN || t == DType::kFloat8E5M2; }

Status check_reduction(Reduction reduction, DType dtype) {
  switch (reduction) {
    case Reduction::kNone: return Status::Ok();
    case Reduction::kAdd: case Reduction::kMul: case Reduction::kMin: case Reduction::kMax: break;
    default:
      return InvalidArgument("reduction " + str(static_cast<int>(reduction)) +
                             " is not one of none, add, mul, min, max");
  }
  const std::string name(reduction_name(reduction));
  if (is_float8(dtype)) {
    return TypeError("reduction " + name + " is not supported for " + std::string(dtype_name(dtype)) +
                     " (8-bit floats have no arithmetic here; only reduction none)");
  }
  return Status::Ok();
}

}  // namespace

GatherOptions gather_options_of(const ScatterOptions& options) noexcept {
  GatherOptions g;
  g.index_mode = options.index_mode == IndexMode::kDrop ? IndexMode::kFill : options.index_mode;
  g.negative_indices = options.negative_indices;
  g.num_threads = options.num_threads;
  return g;
}

Status validate_scatter_operands(const TensorView& input, const TensorView& indices,
                                 const TensorView& updates, std::span<const std::int64_t> axes,
                                 const ScatterOptions& options, ValidatedScatter* call) noexcept {
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_options(options));
  MULTIGATHER_RETURN_IF_ERROR(infer_scatter_shape(input.shape, indices.shape, updates.shape, axes, &call->gather.shape));
  return check_scatter_operands(input, indices, updates, options, call);
}

Status check_scatter_options(const ScatterOptions& options) noexcept {
  try {
    if (options.index_mode == IndexMode::kFill) {
      return InvalidArgument("index_mode fill has no meaning for a scatter (there is no output "
                             "element to fill; drop skips out-of-range updates)");
    }
    switch (options.index_mode) {
      case IndexMode::kError: case IndexMode::kClamp: case IndexMode::kWrap: case IndexMode::kDrop:
        break;
      default:
        return InvalidArgument("index_mode " + str(static_cast<int>(options.index_mode)) +
                               " is not one of error, clamp, wrap, drop");
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

Status check_scatter_operands(const TensorView& input, const TensorView& indices, const TensorView& updates,
                              const ScatterOptions& options, ValidatedScatter* call) noexcept {
  try {
    const GatherShape& g = call->gather.shape;
    MULTIGATHER_RETURN_IF_ERROR(check_operands(input, indices, !g.axes.empty(), gather_options_of(options),
                                               &call->gather));
    if (updates.dtype != input.dtype) {
      return TypeError("updates dtype " + std::string(dtype_name(updates.dtype)) +
                       " must equal input dtype " + std::string(dtype_name(input.dtype)));
    }
    MULTIGATHER_RETURN_IF_ERROR(check_reduction(options.reduction, input.dtype));
    MULTIGATHER_RETURN_IF_ERROR(check_extent(updates.shape, updates.strides,
                                             element_size(updates.dtype), "updates"));
    if (g.output_numel > 0 && updates.data == nullptr) {
      return InvalidArgument("updates data is null but updates has " + str(updates.numel()) + " elements");
    }
    // The updates seen with shape G: a size-1 dimension repeats (stride 0).
    const int r = input.rank();
    call->updates = TensorView(updates.data, updates.dtype, g.output_shape, Dims::filled(r, 0));
    for (int d = 0; d < r; ++d) {
      call->updates.strides[d] = updates.shape[d] == g.output_shape[d] ? updates.strides[d] : 0;
    }
    call->reduction = options.reduction;
    call->include_input = options.include_input;
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

bool accumulates_wide(const ScatterOptions& options, DType dtype) noexcept {
  return options.wide_accumulator && (dtype == DType::kFloat16 || dtype == DType::kBFloat16) &&
         (options.reduction == Reduction::kAdd || options.reduction == Reduction::kMul);
}

bool scatters_in_place(const MutableTensorView& output, const TensorView& input) noexcept {
  if (output.data != input.data || !(output.shape == input.shape) ||
      element_size(output.dtype) != element_size(input.dtype)) {
    return false;
  }
  if (input.numel() <= 1 || output.strides == input.strides) return true;
  // The same elements at the same places: strides equal wherever a dimension has more than
  // one position (a size-1 dimension's stride addresses nothing; reshapes and framework
  // views, numpy's Fortran order among them, set it freely).
  if (output.strides.size() != input.strides.size()) return false;
  for (int d = 0; d < input.rank(); ++d) {
    if (input.shape[d] > 1 && output.strides[d] != input.strides[d]) return false;
  }
  return true;
}

Status validate_scatter_output(const MutableTensorView& output, const TensorView& input,
                               const TensorView& indices, const TensorView& updates,
                               const ValidatedScatter& call, std::string_view output_name) noexcept {
  try {
    if (!(output.shape == input.shape)) {
      return InvalidArgument(std::string(output_name) + " shape " + to_string(output.shape) +
                             " does not match the input shape " + to_string(input.shape) +
                             " (a scatter's output has its input's shape)");
    }
    ValidatedCall target;
    target.shape.output_shape = input.shape;
    target.shape.output_numel = input.numel();
    target.element_size = call.gather.element_size;
    target.input_dtype = call.gather.input_dtype;
    MULTIGATHER_RETURN_IF_ERROR(validate_output(output, target));
    if (!scatters_in_place(output, input) && views_overlap(output, input)) {
      return InvalidArgument(std::string(output_name) + " overlaps input but is not input itself "
                             "(a scatter writes in place only into the same view: same data and "
                             "strides)");
    }
    if (views_overlap(output, indices) || views_overlap(output, updates)) {
      return InvalidArgument(std::string(output_name) + " overlaps indices or updates (a scatter "
                             "cannot write into memory it reads)");
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

}  // namespace multigather::detail

namespace multigather {

Status infer_scatter_shape(const Dims& input_shape, const Dims& indices_shape,
                           const Dims& updates_shape, std::span<const std::int64_t> axes,
                           GatherShape* out) noexcept {
  MULTIGATHER_RETURN_IF_ERROR(infer_shape(input_shape, indices_shape, axes, out));
  try {
    const int r = input_shape.size();
    if (updates_shape.size() != r) {
      return InvalidArgument("updates rank " + std::to_string(updates_shape.size()) +
                             " must equal input rank " + std::to_string(r));
    }
    for (int d = 0; d < r; ++d) {
      const std::int64_t u = updates_shape[d], g = out->output_shape[d];
      if (u != g && u != 1) {
        return InvalidArgument("updates shape " + to_string(updates_shape) +
                               " does not broadcast to the scatter shape " +
                               to_string(out->output_shape) +
                               " (the gather shape of input and indices): updates.shape[" +
                               std::to_string(d) + "] = " + std::to_string(u) + " must be " +
                               std::to_string(g) + " or 1");
      }
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while validating");
  }
}

}  // namespace multigather
