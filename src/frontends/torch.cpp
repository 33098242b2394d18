// PyTorch gather, take, take_along_dim, index_select. Rules: docs/semantics.md section 4 and
// https://docs.pytorch.org/docs/stable/generated/torch.gather.html (torch.take, torch.take_along_dim,
// torch.index_select); take_along_dim's PyTorch 2.15 modulo rule: docs/spec.md section 2.
#include "multigather/frontends/torch.hpp"

#include "frontends/recipes.hpp"

namespace multigather::torch {

using namespace frontends;

namespace {

// A 0-D tensor is treated as 1-D of size 1 by torch's shape checks (ensure_nonempty_dim).
TensorView as_1d_if_scalar(const TensorView& v) {
  if (v.rank() != 0) return v;
  return TensorView(v.data, v.dtype, Dims{1}, Dims{1});
}

// The error context of an op that rejects negative indices (torch.gather, index_select, ...):
// one label and size; "<op> rejects negative indices (pytorch#55143)" explains a negative value
// only, so it is appended to no other message.
void reject_negatives_context(Lowering* out, const TensorView& indices, const std::string& name,
                              std::string label, std::int64_t size) {
  set_error_context(out, indices, name, -1, {std::move(label)}, {size}, false,
                    out->op + " rejects negative indices (pytorch#55143)");
  out->index_errors.rule_on_negatives = true;
}

// PyTorch's gather with an empty index: "we always return an empty output with the same shape
// without further error checking" (no dtype, rank or size check). The core call: a stride-0
// input view and an int64 view of `shape`, axes [0]; nothing is read.
Status empty_result(const TensorView& input, const TensorView& index, const Dims& shape,
                    Lowering* out) {
  out->input = TensorView(input.data, input.dtype, shape, Dims::filled(shape.size(), 0));
  ViewBuilder ix{index.data, DType::kInt64, dims_vec(shape), dims_vec(contiguous_strides(shape))};
  out->axes = {0};
  out->notes.push_back("the index is empty: an empty result without further checks (any index dtype)");
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  return finish(dims_vec(shape), out);
}

}  // namespace

Status gather(const TensorView& input, std::int64_t dim, const TensorView& index, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("torch.gather", input, index, out));
  // PyTorch's order (gather's meta function): dim against the input (0-D counts as 1-D), then,
  // for an empty index, an empty output of its shape with nothing else checked: any dtype, rank
  // and sizes (PyTorch 2.15 accepts gather(x, 0, torch.empty(0, dtype=torch.uint8))).
  const TensorView x = as_1d_if_scalar(input);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  if (index.numel() == 0) return empty_result(input, index, index.shape, out);
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "index", index.dtype, {DType::kInt64, DType::kInt32}));
  const TensorView i = as_1d_if_scalar(index);
  if (x.rank() != i.rank()) {
    return InvalidArgument(out->op + ": Index tensor must have the same number of dimensions as "
                           "input tensor (index rank " + str(index.rank()) + ", input rank " +
                           str(input.rank()) + ")");
  }
  set_policy(out, IndexMode::kError, false);
  out->wide_accumulator = true;  // the gradient is PyTorch's scatter_add (float32 accumulation)
  reject_negatives_context(out, i, "index", "dim " + str(d), x.shape[static_cast<int>(d)]);
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, x, i, d, ElementRule::kAtMost, "input", "index", out));
  return reshape_output(dims_vec(index.shape), out);  // a 0-D index gives a 0-D output
}

Status take(const TensorView& input, const TensorView& index, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("torch.take", input, index, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "index", index.dtype, {DType::kInt64}));
  if (input.numel() == 0 && index.numel() != 0) {
    return OutOfRange(out->op + ": out of range: tried to take from an empty tensor (input shape " +
                      to_string(input.shape) + ", index shape " + to_string(index.shape) + ")");
  }
  // Flattening merges every dimension: a view when input is contiguous, else the one copy.
  TensorView flat;
  MULTIGATHER_RETURN_IF_ERROR(contiguous(input, "input", out, &out->owned_input, &flat));
  const std::int64_t n = input.numel();
  const int q = index.rank();
  ViewBuilder in = ViewBuilder::of(flat);
  in.add_unit(q > 0 ? q - 1 : 0);
  in.add(n, 1);
  ViewBuilder ix = ViewBuilder::of(index);
  if (q == 0) ix.add(1, 0);
  ix.add_dims(index, 0, q);
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  out->axes = {q > 0 ? q - 1 : 0};
  set_policy(out, IndexMode::kError, true);
  set_error_context(out, index, "index", -1, {"the flattened input"}, {n}, true, "");
  return finish(dims_vec(index.shape), out);
}

Status take_along_dim(const TensorView& input, const TensorView& indices,
                      std::optional<std::int64_t> dim, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("torch.take_along_dim", input, indices, out));
  out->wide_accumulator = true;  // a gather in PyTorch: its gradient is a scatter_add
  if (!dim) {
    // dim=None flattens both tensors: views when contiguous, else copies (noted). PyTorch
    // 2.15 computes input.view(-1).gather(0, indices.view(-1)), so gather's rules apply:
    // negatives and out of range raise, int32 indices are accepted, and an empty index gives an
    // empty result whatever its dtype.
    if (indices.numel() == 0) return empty_result(input, indices, Dims{0}, out);
    MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt64, DType::kInt32}));
    set_policy(out, IndexMode::kError, false);
    TensorView x, i;
    MULTIGATHER_RETURN_IF_ERROR(contiguous(input, "input", out, &out->owned_input, &x));
    MULTIGATHER_RETURN_IF_ERROR(contiguous(indices, "indices", out, &out->owned_indices, &i));
    out->input = TensorView(x.data, x.dtype, Dims{input.numel()});
    const TensorView flat_i(i.data, i.dtype, Dims{indices.numel()});
    reject_negatives_context(out, flat_i, "indices.flatten()", "the flattened input", input.numel());
    const TensorView flat_x = out->input;
    return lower_elements(out->op, flat_x, flat_i, 0, ElementRule::kBroadcast, "input", "indices", out);
  }
  // PyTorch's order with a dim: ranks, then the dtype (int64 only), then dim.
  if (input.rank() != indices.rank()) {
    return InvalidArgument(out->op + ": input and indices should have the same number of "
                           "dimensions, but got " + str(input.rank()) + " dimensions for input, and " +
                           str(indices.rank()) + " dimensions for indices");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt64}));
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", *dim, input.rank(), true, &d));
  // With a dim, PyTorch 2.15 (torch/_refs and ATen) gathers indices % input.size(dim): floor
  // modulo, so -1 reads the last element and size + 1 the second (checked against torch 2.15
  // in tests/python/test_torch.py). Only an empty dim with a non-empty result is an error.
  set_policy(out, IndexMode::kWrap, false);
  set_error_context(out, indices, "indices", -1, {"dim " + str(d)}, {input.shape[static_cast<int>(d)]},
                    false, out->op + " takes indices modulo the size of dim");
  return lower_elements(out->op, input, indices, d, ElementRule::kBroadcast, "input", "indices", out);
}

Status index_select(const TensorView& input, std::int64_t dim, const TensorView& index,
                    Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("torch.index_select", input, index, out));
  // PyTorch's order (index_select_out_cpu_): dim (a 0-D input counts as 1-D), a vector index,
  // one index value for a 0-D input, the dtype, then every index value.
  const TensorView x = as_1d_if_scalar(input);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  if (index.rank() > 1) {
    return InvalidArgument(out->op + ": index_select(): Index is supposed to be a vector (got index shape " +
                           to_string(index.shape) + ")");
  }
  if (input.rank() == 0 && index.numel() != 1) {
    return InvalidArgument(out->op + ": index_select(): Index to scalar can have only 1 value, got " +
                           str(index.numel()) + " value(s)");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "index", index.dtype, {DType::kInt64, DType::kInt32}));
  const int r = x.rank(), a = static_cast<int>(d);
  const std::int64_t n = index.rank() == 1 ? index.shape[0] : 1;
  ViewBuilder ix = ViewBuilder::of(index);
  ix.add_unit(a);
  ix.add(n, index.rank() == 1 ? index.strides[0] : 0);
  ix.add_unit(r - a - 1);
  out->input = x;
  out->axes = {d};
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  set_policy(out, IndexMode::kError, false);
  // The gradient is PyTorch's index_add: float32 accumulation on rank >= 2 (torch.index_add).
  out->wide_accumulator = r >= 2;
  reject_negatives_context(out, index, "index", "dim " + str(d), x.shape[a]);
  // A 0-D input gives a 0-D result (its one index must be 0).
  std::vector<std::int64_t> shape = dims_vec(input.shape);
  if (input.rank() > 0) shape[static_cast<std::size_t>(a)] = n;
  if (input.numel() == 0 && n > 0) {
    // PyTorch checks the indices even when the output is empty (another dimension is 0).
    MULTIGATHER_RETURN_IF_ERROR(check_indices_now(*out));
  }
  return finish(shape, out);
}

// ---- Scatters -------------------------------------------------------------------------------

namespace {

constexpr const char* kScatterDuplicates =
    "duplicate indices with no reduction: PyTorch picks one update nondeterministically; "
    "multigather writes the last in row-major order of index";

// scatter / scatter_add / scatter_reduce: PyTorch's checks in its order (dim, the index dtype,
// self vs src dtype, ranks, sizes), then onnx-like element lowering with src sliced to index.
Status scatter_elements(const TensorView& input, std::int64_t dim, const TensorView& index,
                        const TensorView& src, Reduction reduction, bool include_self, Lowering* out) {
  const TensorView x = as_1d_if_scalar(input), i = as_1d_if_scalar(index), u = as_1d_if_scalar(src);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "index", index.dtype, {DType::kInt64, DType::kInt32}));
  if (src.dtype != input.dtype) {
    return TypeError(out->op + ": scatter(): Expected self.dtype to be equal to src.dtype (self " +
                     std::string(dtype_name(input.dtype)) + ", src " + std::string(dtype_name(src.dtype)) + ")");
  }
  if (i.rank() != x.rank() || u.rank() != x.rank()) {
    return InvalidArgument(out->op + ": Index tensor must have the same number of dimensions as self tensor "
                           "and src tensor (index rank " + str(index.rank()) + ", self rank " +
                           str(input.rank()) + ", src rank " + str(src.rank()) + ")");
  }
  for (int k = 0; k < x.rank(); ++k) {
    if ((k != d && i.shape[k] > x.shape[k]) || i.shape[k] > u.shape[k]) {
      return InvalidArgument(out->op + ": Expected index " + to_string(index.shape) + " to be no larger than self " +
                             to_string(input.shape) + " apart from dimension " + str(d) +
                             " and to be no larger size than src " + to_string(src.shape));
    }
  }
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_element_sizes(out->op, x, i, d, "self", "index", ""));
  out->reduction = reduction;
  out->include_input = include_self;
  out->wide_accumulator = true;  // PyTorch's CPU scatter kernel combines in at::opmath_type
  if (reduction == Reduction::kNone) out->notes.push_back(kScatterDuplicates);
  set_policy(out, IndexMode::kError, false);
  reject_negatives_context(out, i, "index", "dim " + str(d), x.shape[static_cast<int>(d)]);
  // src may be larger than index: its leading part is read (a sliced view).
  TensorView sliced = u;
  for (int k = 0; k < u.rank(); ++k) sliced.shape[k] = i.shape[k];
  if (!(sliced.shape == u.shape)) {
    out->notes.push_back("src sliced to the index shape " + to_string(i.shape) + " (a view: its leading part is read)");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, x, i, d, ElementRule::kAtMost, "self", "index", out));
  return finish_framework_scatter(input, sliced, dims_vec(i.shape), out);
}

// source * alpha as the engines' step on the updates (out->updates_step kScale; PyTorch:
// integer inputs take alpha truncated to an integer), for the dtypes PyTorch's index_add scales.
Status scale_step(DType dtype, const Scalar& alpha, Lowering* out) {
  switch (dtype) {
    case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
    case DType::kComplex64: case DType::kComplex128: case DType::kInt8: case DType::kUInt8: case DType::kInt16:
    case DType::kInt32: case DType::kInt64: break;
    default:
      return TypeError(out->op + ": alpha = " + alpha.to_string() + " != 1 is supported for float32, float64, "
                       "complex64, complex128, int8, uint8, int16, int32 and int64 sources only, and float16 / "
                       "bfloat16 on CUDA operands (source dtype " + std::string(dtype_name(dtype)) + ")");
  }
  if ((dtype == DType::kFloat16 || dtype == DType::kBFloat16) && out->device != Device::kCUDA) {
    // PyTorch's CUDA kernel adds source * alpha rounded to the dtype, as the engines do; its CPU
    // kernel rounds input + alpha * source once, in float32: no exact form here.
    return TypeError(out->op + ": alpha = " + alpha.to_string() + " != 1 is supported for " +
                     std::string(dtype_name(dtype)) + " sources on CUDA operands only (PyTorch's CPU kernel rounds "
                     "input + alpha * source once in float32, which multigather does not reproduce exactly)");
  }
  out->notes.push_back("alpha = " + alpha.to_string() + ": the engine scales source by alpha before the add "
                       "(its gradient: alpha times grad_output's gather)");
  out->updates_step = UpdatesStep{UpdatesStep::Kind::kScale, alpha};
  return Status::Ok();
}

}  // namespace

Status scatter(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
               std::string_view reduce, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.scatter", input, index, src, out));
  Reduction r = Reduction::kNone;
  if (reduce == "add") r = Reduction::kAdd;
  else if (reduce == "multiply") r = Reduction::kMul;
  else if (reduce != "none") {
    return InvalidArgument(out->op + ": reduce argument must be either add or multiply (got '" + std::string(reduce) + "')");
  }
  return scatter_elements(input, dim, index, src, r, true, out);
}

Status scatter_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                   Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.scatter_add", input, index, src, out));
  return scatter_elements(input, dim, index, src, Reduction::kAdd, true, out);
}

Status scatter_reduce(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                      std::string_view reduce, bool include_self, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.scatter_reduce", input, index, src, out));
  Reduction r = Reduction::kAdd;
  if (reduce == "sum") r = Reduction::kAdd;
  else if (reduce == "prod") r = Reduction::kMul;
  else if (reduce == "amax") r = Reduction::kMax;
  else if (reduce == "amin") r = Reduction::kMin;
  else if (reduce == "mean") {
    if (input.dtype == DType::kBool) {
      return TypeError(out->op + ": reduce = 'mean' needs a dtype with division (self dtype bool)");
    }
    out->mean_by_count = true;
    out->notes.push_back("reduce = 'mean': an add, then each element that src reached is divided by the count "
                         "of its updates" + std::string(include_self ? " + 1 (include_self)" : "") +
                         " (a second scatter, of ones); integers divide with floor rounding, as PyTorch");
  } else {
    return InvalidArgument(out->op + ": reduce argument must be either sum, prod, mean, amax or amin, got " +
                           std::string(reduce));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_complex_order(out->op, "self", input.dtype, r,
                                                  "reduce = '" + std::string(reduce) + "'",
                                                  "PyTorch implements amax and amin for no complex dtype"));
  return scatter_elements(input, dim, index, src, r, include_self, out);
}

Status index_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                 const Scalar& alpha, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.index_add", input, index, source, out));
  // PyTorch's order (index_add_cpu_ / index_func_meta_impl): dim, a vector index, the index
  // dtype, the source dtype, the number of indices, the slice shapes, then the index values.
  const TensorView x = as_1d_if_scalar(input), s = as_1d_if_scalar(source);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  if (index.rank() > 1) {
    return InvalidArgument(out->op + ": index_add_(): Index is supposed to be a vector, but got dim: " +
                           str(index.rank()) + " (index shape " + to_string(index.shape) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "index", index.dtype, {DType::kInt64, DType::kInt32}));
  if (source.dtype != input.dtype) {
    return TypeError(out->op + ": index_add_(): self (" + std::string(dtype_name(input.dtype)) + ") and source (" +
                     std::string(dtype_name(source.dtype)) + ") must have the same scalar type");
  }
  const int a = static_cast<int>(d), r = x.rank();
  const std::int64_t n = index.numel();
  if (s.rank() != r || n != s.shape[a]) {
    if (s.rank() == r) {
      return InvalidArgument(out->op + ": index_add_(): Number of indices (" + str(n) +
                             ") should be equal to source.size(dim): (" + str(s.shape[a]) + "), for dim: " + str(d));
    }
  }
  bool same = s.rank() == r;
  for (int k = 0; same && k < r; ++k) same = k == a || s.shape[k] == x.shape[k];
  if (!same) {
    return InvalidArgument(out->op + ": source tensor shape must match self tensor shape, excluding the specified "
                           "dimension. Got self.shape = " + to_string(input.shape) + " source.shape = " +
                           to_string(source.shape));
  }
  TensorView updates = s;
  const bool unit_alpha = (alpha.kind == Scalar::Kind::kInt && alpha.i == 1) ||
                          (alpha.kind == Scalar::Kind::kUInt && alpha.u == 1) ||
                          (alpha.kind == Scalar::Kind::kFloat && alpha.f == 1.0);
  if (!unit_alpha) MULTIGATHER_RETURN_IF_ERROR(scale_step(s.dtype, alpha, out));
  // index_select's lowering: the index along dim, unit dimensions elsewhere.
  ViewBuilder ix = ViewBuilder::of(index);
  ix.add_unit(a);
  ix.add(n, index.rank() == 1 ? index.strides[0] : 0);
  ix.add_unit(r - a - 1);
  out->input = x;
  out->axes = {d};
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  out->reduction = Reduction::kAdd;
  out->include_input = true;
  // PyTorch 2.15's index_add_cpu_ runs a scatter_add (float32 accumulation) for rank >= 2 and
  // alpha 1; a vector, or a scaled source, adds slice by slice in the dtype.
  out->wide_accumulator = unit_alpha && x.rank() >= 2;
  set_policy(out, IndexMode::kError, false);
  reject_negatives_context(out, index, "index", "dim " + str(d), x.shape[a]);
  std::vector<std::int64_t> shape = dims_vec(x.shape);
  shape[static_cast<std::size_t>(a)] = n;
  MULTIGATHER_RETURN_IF_ERROR(finish(shape, out));
  return finish_framework_scatter(input, updates, shape, out);
}

namespace {

// index_select's lowering as a scatter: the index (a vector or a scalar) along dim, unit
// dimensions elsewhere; `updates` (already checked) has input's shape with index.numel() at dim.
Status lower_index_scatter(const TensorView& input, const TensorView& x, std::int64_t d, const TensorView& index,
                           const TensorView& updates, Reduction reduction, bool negatives_wrap, std::string rule,
                           Lowering* out) {
  const int a = static_cast<int>(d), r = x.rank();
  const std::int64_t n = index.numel();
  ViewBuilder ix = ViewBuilder::of(index);
  ix.add_unit(a);
  ix.add(n, index.rank() == 1 ? index.strides[0] : 0);
  ix.add_unit(r - a - 1);
  out->input = x;
  out->axes = {d};
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  out->reduction = reduction;
  out->include_input = true;
  set_policy(out, IndexMode::kError, negatives_wrap);
  set_error_context(out, index, "index", -1, {"dim " + str(d)}, {x.shape[a]}, negatives_wrap, std::move(rule));
  std::vector<std::int64_t> shape = dims_vec(x.shape);
  shape[static_cast<std::size_t>(a)] = n;
  MULTIGATHER_RETURN_IF_ERROR(finish(shape, out));
  return finish_framework_scatter(input, updates, shape, out);
}

}  // namespace

Status index_copy(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                  Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.index_copy", input, index, source, out));
  // PyTorch's order (index_copy_meta): dim, index rank, index dtype, source dtype, sizes, values.
  const TensorView x = as_1d_if_scalar(input), s = as_1d_if_scalar(source);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  if (index.rank() > 1) {
    return InvalidArgument(out->op + ": index_copy_(): Index should have dimension 1 or 0 (got " + str(index.rank()) +
                           ")");
  }
  if (index.dtype != DType::kInt64) {
    return TypeError(out->op + ": index_copy_(): Expected a long tensor for index, but got " +
                     std::string(dtype_name(index.dtype)));
  }
  if (source.dtype != input.dtype) {
    return TypeError(out->op + ": index_copy_(): self and source expected to have the same dtype, but got (self) " +
                     std::string(dtype_name(input.dtype)) + " and (source) " + std::string(dtype_name(source.dtype)));
  }
  const int a = static_cast<int>(d), r = x.rank();
  const std::int64_t n = index.numel();
  bool same = s.rank() == r;
  for (int k = 0; same && k < r; ++k) same = k == a || s.shape[k] == x.shape[k];
  if (!same) {
    return InvalidArgument(out->op + ": index_copy_(): Source/destination tensor must have same slice shapes "
                           "(self.shape = " + to_string(input.shape) + ", source.shape = " + to_string(source.shape) +
                           ", dim " + str(d) + ")");
  }
  if (n != s.shape[a]) {
    return InvalidArgument(out->op + ": index_copy_(): Number of indices (" + str(n) +
                           ") should be equal to source.size(dim) (" + str(s.shape[a]) + ")");
  }
  out->notes.push_back("duplicate indices: PyTorch's result is nondeterministic; multigather writes the last "
                       "source slice in index order");
  return lower_index_scatter(input, x, d, index, s, Reduction::kNone, false,
                             "index_copy_(): indices must be in [0, size) (negatives are out of bounds)", out);
}

Status index_fill(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& value,
                  Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.index_fill", input, index, value, out));
  const TensorView x = as_1d_if_scalar(input);
  std::int64_t d = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, x.rank(), true, &d));
  if (index.rank() > 1) return InvalidArgument(out->op + ": Index has to be a vector/scalar");
  if (index.dtype != DType::kInt64) {
    return TypeError(out->op + ": index_fill_(): Expected dtype int64 for index.");
  }
  if (value.rank() != 0) {
    return InvalidArgument(out->op + ": index_fill_ only supports a 0-dimensional value tensor, but got tensor with " +
                           str(value.rank()) + " dimension(s).");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(
      out->op, input, value, "input", "value",
      "multigather does not cast value; torch.index_fill casts it to input's dtype (the Python wrapper does)"));
  out->notes.push_back("value: a 0-dimensional tensor broadcast to every filled slice (stride 0, no copy)");
  return lower_index_scatter(input, x, d, index, value, Reduction::kNone, true, "", out);
}

Status put(const TensorView& input, const TensorView& index, const TensorView& source, bool accumulate,
           Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.put", input, index, source, out));
  if (index.dtype != DType::kInt64) {
    return TypeError(out->op + ": put_(): Expected a long tensor for index, but got " +
                     std::string(dtype_name(index.dtype)));
  }
  if (source.dtype != input.dtype) {
    return TypeError(out->op + ": put_(): self and source expected to have the same dtype, but got self.dtype = " +
                     std::string(dtype_name(input.dtype)) + " and source.dtype = " +
                     std::string(dtype_name(source.dtype)));
  }
  if (source.numel() != index.numel()) {
    return InvalidArgument(out->op + ": put_(): Expected source and index to have the same number of elements, but "
                           "got source.numel() = " + str(source.numel()) + ", index.numel() = " + str(index.numel()));
  }
  if (input.numel() == 0 && index.numel() != 0) {
    return OutOfRange(out->op + ": put_(): Tried to put elements into an empty tensor");
  }
  // take's lowering on the flattened input (a view when contiguous, else a copy that becomes
  // the core input, the output a reshape of it); index and source flattened alike.
  TensorView flat, idx, src;
  MULTIGATHER_RETURN_IF_ERROR(contiguous(input, "input", out, &out->owned_input, &flat));
  MULTIGATHER_RETURN_IF_ERROR(contiguous(index, "index", out, &out->owned_indices, &idx));
  MULTIGATHER_RETURN_IF_ERROR(contiguous(source, "source", out, &out->owned_updates, &src));
  const std::int64_t n = input.numel(), m = index.numel();
  out->input = TensorView(flat.data, flat.dtype, Dims{n});
  const TensorView flat_i(idx.data, idx.dtype, Dims{m});
  const TensorView flat_s(src.data, src.dtype, Dims{m});
  out->reduction = accumulate ? Reduction::kAdd : Reduction::kNone;
  out->include_input = true;
  set_policy(out, IndexMode::kError, true);
  set_error_context(out, flat_i, "index.flatten()", -1, {"the flattened input"}, {n}, true,
                    "torch.put: index must be in [-numel, numel)");
  if (!accumulate) {
    out->notes.push_back("duplicate indices with accumulate=False: PyTorch leaves the result undefined; "
                         "multigather writes the last source element in index order");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, out->input, flat_i, 0, ElementRule::kBroadcast, "input",
                                             "index", out));
  // The framework output: input's shape, a reshape of the flat core input.
  return finish_framework_scatter(input, flat_s, {m}, out);
}

Status index_put(const TensorView& input, const TensorView& indices, const TensorView& values,
                 const std::vector<std::int64_t>& index_dims, bool accumulate, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("torch.index_put", input, indices, values, out));
  // PyTorch (index_put_ / index_put_with_sort_stub): int64 or int32 index tensors (bool masks
  // arrive as their true positions: the Python wrapper's mask.nonzero), values of input's dtype.
  if (indices.dtype != DType::kInt64 && indices.dtype != DType::kInt32) {
    return TypeError(out->op + ": tensors used as indices must be long or int tensors, got " +
                     std::string(dtype_name(indices.dtype)));
  }
  if (values.dtype != input.dtype) {
    return TypeError(out->op + ": Index put requires the source and destination dtypes match, got " +
                     std::string(dtype_name(input.dtype)) + " for the destination and " +
                     std::string(dtype_name(values.dtype)) + " for the source.");
  }
  std::vector<std::int64_t> shape;
  MULTIGATHER_RETURN_IF_ERROR(lower_advanced(input, indices, index_dims, out, &shape));
  // lower_advanced's policy: negatives wrap once, out of range is an error (PyTorch's rule).
  out->index_errors.rule = "torch.index_put: an index must be in [-size, size)";
  out->reduction = accumulate ? Reduction::kAdd : Reduction::kNone;
  out->include_input = true;
  out->notes.push_back(accumulate ? "accumulate=True: duplicate indices all add, in row-major order of input[indices]"
                                  : "duplicate indices with accumulate=False: PyTorch leaves the result undefined; "
                                    "multigather writes the last in row-major order of input[indices]");
  return finish_framework_scatter(input, values, shape, out, [&] {
    return out->op + ": shape mismatch: value tensor of shape " + to_string(values.shape) +
           " cannot be broadcast to indexing result of shape " + shape_str(shape);
  });
}

}  // namespace multigather::torch

namespace multigather::frontends {

void append_torch_ops(std::vector<OpSpec>* ops) {
  const std::size_t first = ops->size();
  const std::string docs = "https://docs.pytorch.org/docs/stable/generated/";
  ops->push_back({"torch.gather", "torch", "element", "torch.gather(input, dim, index)",
                  "out[i][j][k] = input[index[i][j][k]][j][k]  (dim = 0)", docs + "torch.gather.html",
                  "input", "index", {{"dim", AttrType::kInt, "0", {}, "gather dimension"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return torch::gather(x, a.get_int("dim"), i, o);
                  }});
  ops->push_back({"torch.take", "torch", "flat", "torch.take(input, index)",
                  "out[j..] = input.flatten()[index[j..]]", docs + "torch.take.html", "input", "index", {},
                  [](const TensorView& x, const TensorView& i, const AttributeValues&, Lowering* o) {
                    return torch::take(x, i, o);
                  }});
  ops->push_back({"torch.take_along_dim", "torch", "element", "torch.take_along_dim(input, indices, dim=None, *, out=None)",
                  "out[i][j][k] = input[indices[i][j][k]][j][k]  (dim = 0, broadcasting)",
                  docs + "torch.take_along_dim.html", "input", "indices",
                  {{"dim", AttrType::kOptionalInt, "none", {}, "gather dimension (none: flatten both)"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return torch::take_along_dim(x, i, a.get_optional_int("dim"), o);
                  }});
  ops->push_back({"torch.index_select", "torch", "block", "torch.index_select(input, dim, index, *, out=None)",
                  "out[i.., j, k..] = input[i.., index[j], k..]", docs + "torch.index_select.html",
                  "input", "index", {{"dim", AttrType::kInt, "0", {}, "selected dimension"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return torch::index_select(x, a.get_int("dim"), i, o);
                  }});
  const AttrSpec dim{"dim", AttrType::kInt, "0", {}, "scatter dimension"};
  {
    OpSpec op{"torch.scatter", "torch", "scatter_element", "torch.scatter(input, dim, index, src, reduce=None)",
              "out = input; out[index[i][j][k]][j][k] = src[i][j][k]  (dim = 0; reduce: += or *=)",
              docs + "torch.Tensor.scatter_.html", "input", "index",
              {dim, {"reduce", AttrType::kEnum, "none", {"none", "add", "multiply"},
                     "none (duplicates: PyTorch picks any, last wins here), add or multiply"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "src";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::scatter(x, a.get_int("dim"), i, u, a.get_enum("reduce"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.scatter_add", "torch", "scatter_element", "torch.scatter_add(input, dim, index, src)",
              "out = input; out[index[i][j][k]][j][k] += src[i][j][k]  (dim = 0)",
              docs + "torch.Tensor.scatter_add_.html", "input", "index", {dim}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "src";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::scatter_add(x, a.get_int("dim"), i, u, o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.scatter_reduce", "torch", "scatter_element",
              "torch.scatter_reduce(input, dim, index, src, reduce, *, include_self=True)",
              "out = input; out[index[i][j][k]][j][k] = f(out[..], src[i][j][k])  (dim = 0; f: sum prod amax amin; mean: sum / count)",
              docs + "torch.Tensor.scatter_reduce_.html", "input", "index",
              {dim, {"reduce", AttrType::kEnum, "sum", {"sum", "prod", "mean", "amax", "amin"},
                     "how src values reaching one element combine (mean: sum / count)"},
               {"include_self", AttrType::kBool, "true", {}, "whether input's values take part in the reduction"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "src";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return torch::scatter_reduce(x, a.get_int("dim"), i, u, a.get_enum("reduce"), a.get_bool("include_self"), o);
    };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.index_add", "torch", "scatter_block", "torch.index_add(input, dim, index, source, *, alpha=1)",
              "out = input; out[i.., index[j], k..] += alpha * source[i.., j, k..]",
              docs + "torch.Tensor.index_add_.html", "input", "index",
              {{"dim", AttrType::kInt, "0", {}, "dimension indexed by index"},
               {"alpha", AttrType::kScalar, "1", {}, "scalar multiplier for source (the engines scale it)"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "source";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::index_add(x, a.get_int("dim"), i, u, *a.get_scalar("alpha"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.index_copy", "torch", "scatter_block", "torch.index_copy(input, dim, index, source)",
              "out = input; out[i.., index[j], k..] = source[i.., j, k..]", docs + "torch.Tensor.index_copy_.html",
              "input", "index", {{"dim", AttrType::kInt, "0", {}, "dimension indexed by index"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "source";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::index_copy(x, a.get_int("dim"), i, u, o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.index_fill", "torch", "scatter_block", "torch.index_fill(input, dim, index, value)",
              "out = input; out[i.., index[j], k..] = value  (value 0-dimensional)", docs + "torch.Tensor.index_fill_.html",
              "input", "index", {{"dim", AttrType::kInt, "0", {}, "dimension indexed by index"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "value";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::index_fill(x, a.get_int("dim"), i, u, o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.index_put", "torch", "scatter_advanced", "torch.index_put(input, indices, values, accumulate=False)",
              "out = input; out[.., idx_0[b..], .., idx_{k-1}[b..], ..] (+)= values[b.., rest..]  "
              "(indices = stack(broadcast(idx..), -1), index_dims = the dims they index)",
              docs + "torch.Tensor.index_put_.html", "input", "indices",
              {{"index_dims", AttrType::kIntList, "0", {}, "the input dimension each stacked index tensor indexes (increasing)"},
               {"accumulate", AttrType::kBool, "false", {}, "add instead of write"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "values";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::index_put(x, i, u, a.get_ints("index_dims"), a.get_bool("accumulate"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"torch.put", "torch", "scatter_element", "torch.put(input, index, source, accumulate=False)",
              "out = input; out.flatten()[index.flatten()[j]] (+)= source.flatten()[j]", docs + "torch.Tensor.put_.html",
              "input", "index", {{"accumulate", AttrType::kBool, "false", {}, "add instead of write"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "source";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return torch::put(x, i, u, a.get_bool("accumulate"), o); };
    ops->push_back(std::move(op));
  }
  // Every row of this table is a PyTorch operator too (torch.ops.multigather.<name>).
  for (std::size_t j = first; j < ops->size(); ++j) (*ops)[j].torch_op = true;
  // PyTorch's gradient of a write (scatter, index_copy, index_put, put): every duplicate update
  // gets the output gradient at its target (derivatives.yaml: grad.gather(dim, index),
  // grad.index_select(dim, index), grad.index(indices), grad.take(index)), not only the one
  // written. (index_fill's value sums each filled element once: at::_unique(index) there.)
  for (OpSpec& op : *ops) {
    if (op.name == "torch.scatter" || op.name == "torch.index_copy" || op.name == "torch.index_put" ||
        op.name == "torch.put") {
      op.gradient_to_every_duplicate = true;
    }
  }
  // The rest of each row: the index rule its lowering sets and PyTorch's rules.
  const IndexRule no_negatives{IndexMode::kError, false, ""};
  const IndexRule wrap_once{IndexMode::kError, true, ""};
  state_facts(ops, {
      {"torch.gather", no_negatives,
       "negative indices are rejected, as PyTorch does (pytorch#55143, #146211). input and index have the same number of dimensions (a 0-D tensor counts as 1-D of size 1); "
       "index.size(d) <= input.size(d) for d != dim: the LEADING part of input is read, never broadcast; index "
       "int64 or int32; output shape = index.shape. dim is checked first (against a 0-D input: [-1, 0]); then an "
       "empty index gives an empty output of its shape without further checks, whatever its dtype, rank and sizes "
       "(ATen: \"we always return an empty output with the same shape without further error checking\")"},
      {"torch.take", wrap_once,
       "input treated as 1-D (flattened); index int64 only, any shape; output shape = index.shape; a non-empty "
       "take from an empty input is an error"},
      {"torch.take_along_dim", {IndexMode::kError, false, "dim"},
       "input and indices broadcast on every d != dim. With a dim: same rank (checked first), indices int64, "
       "taken modulo input.size(dim) (floor modulo, as PyTorch 2.15 computes them: the wrap index rule; an empty "
       "dim with a non-empty result is an error). dim=None: gather(input.view(-1), 0, indices.view(-1)), a 1-D "
       "output; indices int32 or int64 (any dtype when empty), negative and out-of-range indices are errors"},
      {"torch.index_select", no_negatives,
       "index 1-D (or 0-D = one element), int32 or int64; output = input.shape with out.size(dim) = len(index). "
       "A 0-D input takes exactly one index (0) and gives a 0-D result. Every index is checked, also when the "
       "output is empty because another input dimension is 0 (as ATen does; on host memory, not for CUDA "
       "operands)"},
      {"torch.scatter", no_negatives,
       "a new tensor of input's shape and dtype. Same rank for input, index and src (0-D counts as 1-D); index "
       "int64 (int32 accepted, as PyTorch 2.15 does); src dtype == input dtype; index.size(d) <= src.size(d) for "
       "every d (src's leading part is read) and <= input.size(d) for d != dim (a smaller size writes only the "
       "leading part, as PyTorch: the rest of the output keeps input's values). reduce none / add / multiply. Duplicates without reduce: PyTorch leaves the pick "
       "undefined; the last update in row-major order of index wins here. (The value= scalar form is not "
       "provided.)"},
      {"torch.scatter_add", no_negatives,
       "torch.scatter's rules with reduce add: every duplicate is added, in row-major order of index "
       "(bit-identical at any thread count)"},
      {"torch.scatter_reduce", no_negatives,
       "torch.scatter's rules; reduce sum, prod, amax, amin or mean; include_self=False: the input's value at a "
       "position some update reaches takes no part. mean divides each reached element by its count of updates "
       "(+1 with include_self), as PyTorch: floating and complex dtypes divide, integers round toward negative "
       "infinity; bool is a TypeError; amax and amin on a complex dtype are a TypeError, as in PyTorch"},
      {"torch.index_add", no_negatives,
       "a new tensor of input's shape and dtype. index a vector (int64 or int32); source.size(dim) == "
       "len(index), source's other sizes == input's, source dtype == input dtype; duplicates all add. alpha != 1 "
       "scales source first, on either engine, as PyTorch's kernels do (alpha rounded to the dtype; integer "
       "inputs: alpha truncated to an integer, as PyTorch 2.15), for float32, float64, complex64, complex128, int8, "
       "uint8, int16, int32 and int64 sources only (float16 / bfloat16: on CUDA operands, PyTorch's CUDA rounding, "
       "the product rounded to the dtype; another source dtype with alpha != 1 is a TypeError); source's "
       "gradient is alpha times grad_output's"},
      {"torch.index_copy", no_negatives,
       "a new tensor of input's shape and dtype. index a vector or a scalar, int64 only; source dtype == input "
       "dtype; source.size(dim) == index.numel() and source's other sizes == input's. Duplicates: "
       "nondeterministic in PyTorch; the last in index order wins here"},
      {"torch.index_fill", wrap_once,
       "a new tensor of input's shape and dtype. value: a number or a 0-dimensional tensor cast to input's dtype "
       "(a 1-dimensional value is an error, as PyTorch's RuntimeError), broadcast to every slice (stride 0, "
       "nothing copied); index a vector or a scalar, int64 only. Duplicates write the same value"},
      {"torch.index_put", wrap_once,
       "a new tensor of input's shape and dtype. indices: the index tensors broadcast to a common shape B and "
       "stacked on a last dimension (B ++ [k]), each indexing the input dimension index_dims[j] (strictly "
       "increasing; the other dimensions are full slices: None entries of PyTorch's tuple); adjacent index "
       "dimensions are replaced in place by B, separated ones put B first. values: input's dtype, broadcast to "
       "input[idx].shape; int64 or int32 indices. Duplicates: undefined in PyTorch without accumulate (the last "
       "in row-major order of input[idx] wins here); accumulate adds every one"},
      {"torch.put", wrap_once,
       "a new tensor of input's shape and dtype; flat positions, as torch.take. index int64 of any shape, "
       "source.numel() == index.numel(), source dtype == input dtype. Duplicates: undefined in PyTorch without "
       "accumulate (the last in index order wins here); accumulate adds every one"},
  });
}

}  // namespace multigather::frontends
