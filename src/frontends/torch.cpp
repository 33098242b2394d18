// PyTorch gather, take, take_along_dim, index_select. Rules: docs/semantics.md section 4 and
// https://docs.pytorch.org/docs/stable/generated/torch.gather.html (torch.take, torch.take_along_dim,
// torch.index_select); take_along_dim's PyTorch 2.15 modulo rule: docs/spec.md section 2.
#include "multigather/frontends/torch.hpp"

#include "frontends/lowering.hpp"

namespace multigather::torch {

using namespace frontends;

namespace {

// A 0-D tensor is treated as 1-D of size 1 by torch's shape checks (ensure_nonempty_dim).
TensorView as_1d_if_scalar(const TensorView& v) {
  if (v.rank() != 0) return v;
  return TensorView(v.data, v.dtype, Dims{1}, Dims{1});
}

std::string reject_rule(const std::string& op) {
  return op + " rejects negative indices (pytorch#55143)";
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
  set_error_context(out, i, "index", -1, {"dim " + str(d)}, {x.shape[static_cast<int>(d)]}, false,
                    reject_rule(out->op));
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
    set_error_context(out, flat_i, "indices.flatten()", -1, {"the flattened input"}, {input.numel()},
                      false, reject_rule(out->op));
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
  set_error_context(out, index, "index", -1, {"dim " + str(d)}, {x.shape[a]}, false,
                    reject_rule(out->op));
  // A 0-D input gives a 0-D result (its one index must be 0).
  std::vector<std::int64_t> shape = dims_vec(input.shape);
  if (input.rank() > 0) shape[static_cast<std::size_t>(a)] = n;
  if (input.numel() == 0 && n > 0) {
    // PyTorch checks the indices even when the output is empty (another dimension is 0).
    MULTIGATHER_RETURN_IF_ERROR(check_indices_now(*out));
  }
  return finish(shape, out);
}

}  // namespace multigather::torch

namespace multigather::frontends {

void append_torch_ops(std::vector<OpSpec>* ops) {
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
  ops->push_back({"torch.take_along_dim", "torch", "element", "torch.take_along_dim(input, indices, dim=None)",
                  "out[i][j][k] = input[indices[i][j][k]][j][k]  (dim = 0, broadcasting)",
                  docs + "torch.take_along_dim.html", "input", "indices",
                  {{"dim", AttrType::kOptionalInt, "none", {}, "gather dimension (none: flatten both)"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return torch::take_along_dim(x, i, a.get_optional_int("dim"), o);
                  }});
  ops->push_back({"torch.index_select", "torch", "block", "torch.index_select(input, dim, index)",
                  "out[i.., j, k..] = input[i.., index[j], k..]", docs + "torch.index_select.html",
                  "input", "index", {{"dim", AttrType::kInt, "0", {}, "selected dimension"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return torch::index_select(x, a.get_int("dim"), i, o);
                  }});
}

}  // namespace multigather::frontends
