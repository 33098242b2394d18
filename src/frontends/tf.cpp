// TensorFlow tf.gather / tf.gather_nd. Rules: docs/semantics.md section 6 and
// https://www.tensorflow.org/api_docs/python/tf/gather (tf/gather_nd).
#include "multigather/frontends/tf.hpp"

#include "frontends/recipes.hpp"

namespace multigather::tf {

using namespace frontends;

namespace {

constexpr const char* kRule = "TensorFlow indices must be in [0, D) (negative indices are not supported)";

Status policy(const std::string& op, IndexMode mode, Lowering* out) {
  if (mode != IndexMode::kError && mode != IndexMode::kFill) {
    return InvalidArgument(op + ": index_mode must be error (CPU) or fill (GPU zeros)");
  }
  set_policy(out, mode, false);
  out->options.fill_value = Scalar::from_int(0);
  if (mode == IndexMode::kFill) out->notes.push_back("index_mode=fill: out-of-range indices give 0 (TF on GPU)");
  return Status::Ok();
}

}  // namespace

Status gather(const TensorView& params, const TensorView& indices, std::optional<std::int64_t> axis,
              std::int64_t batch_dims, IndexMode index_mode, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tf.gather", params, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  const int r = params.rank(), q = indices.rank();
  std::int64_t b = batch_dims < 0 ? batch_dims + q : batch_dims;
  if (b < 0 || b > q) {
    return InvalidArgument(out->op + ": batch_dims = " + str(batch_dims) + " must be in [" + str(-q) +
                           ", " + str(q) + "] for indices rank " + str(q));
  }
  // TensorFlow sets axis = batch_dims AS GIVEN when axis is None, before normalizing either:
  // a negative batch_dims then counts from rank(indices) for the batch dims but from
  // rank(params) for the axis (tensorflow/python/ops/array_ops.py gather_v2).
  const std::int64_t given_axis = axis ? *axis : batch_dims;
  std::int64_t a = given_axis;
  if (a < 0) a += r;
  if (a < 0 || a >= r) {
    return InvalidArgument(out->op + ": axis = " + str(given_axis) + " is out of range [" + str(-r) +
                           ", " + str(r) + ") for params rank " + str(r));
  }
  if (b > a) {
    return InvalidArgument(out->op + ": batch_dims (" + str(b) + ") must be less than or equal to axis (" +
                           str(a) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, params, indices, b, "params", "indices"));
  MULTIGATHER_RETURN_IF_ERROR(policy(out->op, index_mode, out));
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {params.shape[static_cast<int>(a)]}, false, kRule);
  return lower_block(out->op, params, indices, a, b, out);
}

Status gather_nd(const TensorView& params, const TensorView& indices, std::int64_t batch_dims,
                 IndexMode index_mode, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tf.gather_nd", params, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  const int r = params.rank(), q = indices.rank();
  if (q < 1) return InvalidArgument(out->op + ": indices must have rank >= 1 (index vectors on the last axis)");
  const std::int64_t b = batch_dims;
  if (b < 0 || b >= q || b > r) {
    return InvalidArgument(out->op + ": batch_dims = " + str(b) + " must be in [0, " + str(std::min(q - 1, r)) +
                           "] for params rank " + str(r) + " and indices rank " + str(q));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, params, indices, b, "params", "indices"));
  const std::int64_t d = indices.shape[q - 1];
  if (d > r - b) {
    return InvalidArgument(out->op + ": index_depth = indices.shape[-1] = " + str(d) +
                           " must be <= rank(params) - batch_dims = " + str(r - b));
  }
  MULTIGATHER_RETURN_IF_ERROR(policy(out->op, index_mode, out));
  set_nd_error_context(out, indices, params, b, "params", false, kRule);
  return lower_nd(out->op, params, indices, b, out);
}

// ---- Scatters ---------------------------------------------------------------------------------

namespace {

Status scatter_policy(const std::string& op, IndexMode mode, Lowering* out) {
  if (mode != IndexMode::kError && mode != IndexMode::kDrop) {
    return InvalidArgument(op + ": index_mode must be error (CPU) or drop (GPU: out-of-range updates are skipped)");
  }
  set_policy(out, mode, false);
  if (mode == IndexMode::kDrop) out->notes.push_back("index_mode = drop: out-of-range updates are skipped (TF on GPU)");
  return Status::Ok();
}

// TensorScatterOp's / ScatterNdOp's shape checks, in TF's order and words.
Status tf_scatter_shapes(const std::string& op, const TensorView& tensor, const TensorView& indices,
                         const TensorView& updates, bool scatter_nd, std::vector<std::int64_t>* want) {
  const int r = tensor.rank(), q = indices.rank(), u = updates.rank();
  if (q < 1) return InvalidArgument(op + ": Indices shape must have rank at least one. Found:" + to_string(indices.shape));
  if (u < 1) return InvalidArgument(op + ": Updates shape must have rank at least one. Found:" + to_string(updates.shape));
  const std::int64_t k = indices.shape[q - 1];
  bool outer = u >= q - 1;
  for (int d = 0; outer && d < q - 1; ++d) outer = updates.shape[d] == indices.shape[d];
  if (!outer) {
    if (scatter_nd) {
      return InvalidArgument(op + ": Dimensions [0," + str(q - 1) + ") of indices[shape=" + to_string(indices.shape) +
                             "] must match dimensions [0," + str(q - 1) + ") of updates[shape=" +
                             to_string(updates.shape) + "]");
    }
    return InvalidArgument(op + ": Outer dimensions of indices and update must match. Indices shape: " +
                           to_string(indices.shape) + ", updates shape:" + to_string(updates.shape));
  }
  bool inner = k <= r && u - (q - 1) == r - k;
  for (int d = 0; inner && d < r - k; ++d) inner = updates.shape[q - 1 + d] == tensor.shape[static_cast<int>(k) + d];
  if (!inner) {
    if (scatter_nd) {
      return InvalidArgument(op + ": Dimensions [" + str(k) + "," + str(r) + ") of input[shape=" +
                             to_string(tensor.shape) + "] must match dimensions [" + str(q - 1) + "," + str(u) +
                             ") of updates[shape=" + to_string(updates.shape) + "]");
    }
    return InvalidArgument(op + ": Inner dimensions of output shape must match inner dimensions of updates shape. "
                           "Output: " + to_string(tensor.shape) + " updates: " + to_string(updates.shape));
  }
  if (!scatter_nd && q == 1) {
    // TensorScatterOp's kernel then validates again with ScatterNd's rule, which reads rank-1
    // indices [k] as k indices of depth 1 (batch_dim = slice_dim = 1; TF 2.21): updates of
    // shape [k] ++ tensor.shape[1:] only, which the rule above refuses unless k == 0.
    if (updates.shape[0] != indices.shape[0]) {
      return InvalidArgument(op + ": Dimensions [0,1) of indices[shape=" + to_string(indices.shape) + "] = " +
                             str(indices.shape[0]) + " must match dimensions [0,1) of updates[shape=" +
                             to_string(updates.shape) + "] = " + str(updates.shape[0]));
    }
    if (u != r) {
      return InvalidArgument(op + ": Dimensions [1," + str(r) + ") of input[shape=" + to_string(tensor.shape) +
                             "] must match dimensions [1," + str(u) + ") of updates[shape=" +
                             to_string(updates.shape) + "]");
    }
  }
  if (tensor.numel() == 0 && (indices.numel() > 0 || updates.numel() > 0)) {
    return InvalidArgument(op + ": Indices and updates specified for empty " + (scatter_nd ? "input" : "output") +
                           " shape");
  }
  want->assign(indices.shape.begin(), indices.shape.end() - 1);
  want->insert(want->end(), tensor.shape.begin() + k, tensor.shape.end());
  return Status::Ok();
}

Status scatter_nd_common(const TensorView& tensor, const TensorView& indices, const TensorView& updates,
                         IndexMode mode, bool scatter_nd, const char* tname, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  std::vector<std::int64_t> want;
  MULTIGATHER_RETURN_IF_ERROR(tf_scatter_shapes(out->op, tensor, indices, updates, scatter_nd, &want));
  MULTIGATHER_RETURN_IF_ERROR(scatter_policy(out->op, mode, out));
  set_nd_error_context(out, indices, tensor, 0, tname, false, kRule);
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, tensor, indices, 0, out));
  return Status::Ok();
}

}  // namespace

Status tensor_scatter_nd(std::string_view kind, const TensorView& tensor, const TensorView& indices,
                         const TensorView& updates, IndexMode mode, Lowering* out) {
  static const std::string names[] = {"tf.tensor_scatter_nd_update", "tf.tensor_scatter_nd_add",
                                      "tf.tensor_scatter_nd_sub", "tf.tensor_scatter_nd_min",
                                      "tf.tensor_scatter_nd_max"};
  const std::string_view kinds[] = {"update", "add", "sub", "min", "max"};
  const Reduction reductions[] = {Reduction::kNone, Reduction::kAdd, Reduction::kAdd, Reduction::kMin, Reduction::kMax};
  int which = -1;
  for (int w = 0; w < 5; ++w) if (kinds[w] == kind) which = w;
  if (which < 0) return InvalidArgument("tf.tensor_scatter_nd: unknown kind '" + std::string(kind) + "'");
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter(names[which].c_str(), tensor, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, tensor, updates, "tensor", "updates",
                                                  "TensorFlow: updates must have tensor's dtype T"));
  MULTIGATHER_RETURN_IF_ERROR(check_complex_order(out->op, "tensor", tensor.dtype, reductions[which],
                                                  std::string(kinds[which]),
                                                  "TensorFlow registers TensorScatterMin / TensorScatterMax for "
                                                  "real number types only"));
  MULTIGATHER_RETURN_IF_ERROR(scatter_nd_common(tensor, indices, updates, mode, false, "tensor", out));
  out->reduction = reductions[which];
  out->include_input = true;
  if (which == 0) {
    out->notes.push_back("duplicate indices: TF's CPU kernel applies the updates in order (the last wins, as "
                         "here); on GPU the order is unspecified");
  }
  if (which == 2) MULTIGATHER_RETURN_IF_ERROR(negate_step(updates.dtype, "tensor - updates", out));
  std::vector<std::int64_t> want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), tensor.shape.begin() + indices.shape[indices.rank() - 1], tensor.shape.end());
  return finish_framework_scatter(tensor, updates, want, out);
}

Status scatter_nd(const TensorView& output_like, const TensorView& indices, const TensorView& updates,
                  IndexMode mode, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("tf.scatter_nd", output_like, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, output_like, updates, "output_like", "updates",
                                                  "the output has updates' dtype"));
  const TensorView shape_only(nullptr, output_like.dtype, output_like.shape);
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  std::vector<std::int64_t> want;
  MULTIGATHER_RETURN_IF_ERROR(tf_scatter_shapes(out->op, shape_only, indices, updates, true, &want));
  MULTIGATHER_RETURN_IF_ERROR(scatter_policy(out->op, mode, out));
  set_nd_error_context(out, indices, shape_only, 0, "shape", false, kRule);
  MULTIGATHER_RETURN_IF_ERROR(zeros_input(output_like.shape, updates.dtype, "tf.scatter_nd", out));
  const TensorView zeros = out->input;
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, zeros, indices, 0, out));
  out->reduction = Reduction::kAdd;
  out->include_input = true;
  return finish_framework_scatter(zeros, updates, want, out);
}

}  // namespace multigather::tf

namespace multigather::frontends {

namespace {
IndexMode mode_of(const AttributeValues& a) {
  return a.get_enum("index_mode") == "fill" ? IndexMode::kFill : IndexMode::kError;
}
}  // namespace

void append_tf_ops(std::vector<OpSpec>* ops) {
  const AttrSpec batch{"batch_dims", AttrType::kInt, "0", {}, "leading batch dimensions (negative: from rank(indices))"};
  const AttrSpec mode{"index_mode", AttrType::kEnum, "error", {"error", "fill"}, "error (TF CPU) or fill with 0 (TF GPU)"};
  ops->push_back({"tf.gather", "tf", "block", "tf.gather(params, indices, axis=None, batch_dims=0)",
                  "output[p.., i.., q..] = params[p.., indices[b.., i..], q..]",
                  "https://www.tensorflow.org/api_docs/python/tf/gather", "params", "indices",
                  {{"axis", AttrType::kOptionalInt, "none", {}, "gather axis (none: batch_dims)"}, batch, mode},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return tf::gather(x, i, a.get_optional_int("axis"), a.get_int("batch_dims"), mode_of(a), o);
                  }});
  ops->push_back({"tf.gather_nd", "tf", "nd", "tf.gather_nd(params, indices, batch_dims=0)",
                  "output[b.., i..] = params[b.., indices[b.., i.., 0], .., indices[b.., i.., d-1], t..]",
                  "https://www.tensorflow.org/api_docs/python/tf/gather_nd", "params", "indices", {batch, mode},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return tf::gather_nd(x, i, a.get_int("batch_dims"), mode_of(a), o);
                  }});
  // Indices must lie in [0, D): negative indices are out of range (TF on CPU raises
  // InvalidArgumentError); index_mode fill gives TF-GPU's zeros.
  const IndexRule gather_rule{IndexMode::kError, false, "index_mode"};
  state_facts(ops, {
      {"tf.gather", gather_rule,
       "indices int32 or int64; batch_dims < 0 counts from rank(indices); axis=None means axis = batch_dims as "
       "given (a negative value then counts from rank(params) for the axis, as TensorFlow does); batch_dims <= "
       "axis; params.shape[:batch_dims] == indices.shape[:batch_dims] (equal, no broadcasting). Output shape "
       "params.shape[:axis] ++ indices.shape[batch_dims:] ++ params.shape[axis+1:]"},
      {"tf.gather_nd", gather_rule,
       "indices int32 or int64, rank >= 1; index depth d = indices.shape[-1] <= rank(params) - batch_dims; "
       "params.shape[:batch_dims] == indices.shape[:batch_dims] (equal, no broadcasting). Output shape "
       "indices.shape[:-1] ++ params.shape[batch_dims + d:]"},
  });
  const AttrSpec smode{"index_mode", AttrType::kEnum, "error", {"error", "drop"},
                       "error (TF CPU) or drop: out-of-range updates skipped (TF GPU)"};
  const std::string api = "https://www.tensorflow.org/api_docs/python/tf/";
  const char* kinds[] = {"update", "add", "sub", "min", "max"};
  const char* formulas[] = {"output = tensor; output[indices[j.., :], t..] = updates[j.., t..]",
                            "output = tensor; output[indices[j.., :], t..] += updates[j.., t..]",
                            "output = tensor; output[indices[j.., :], t..] -= updates[j.., t..]",
                            "output = tensor; output[indices[j.., :], t..] = min(output[..], updates[j.., t..])",
                            "output = tensor; output[indices[j.., :], t..] = max(output[..], updates[j.., t..])"};
  // TF's CPU index rule: out of range, negatives included, is an error; index_mode drop is TF
  // on GPU (such updates are skipped).
  const IndexRule scatter_rule{IndexMode::kError, false, "index_mode"};
  const std::string scatter_rules =
      "output: tensor's shape and dtype. k = indices.shape[-1] <= rank(tensor); updates.shape == "
      "indices.shape[:-1] ++ tensor.shape[k:] (rank >= 1); indices int32 or int64; updates dtype == tensor dtype. ";
  const char* duplicates[] = {
      ("Duplicates: TF's CPU kernel applies the updates in order, so the last wins (as here); on GPU the order "
       "is unspecified"),
      "Duplicates all add up",
      "Duplicates all subtract (the engine adds the negated updates: exact; bool is a TypeError)",
      "Duplicates all combine; a complex tensor is a TypeError (TF registers no complex kernel)",
      "Duplicates all combine; a complex tensor is a TypeError (TF registers no complex kernel)"};
  for (int w = 0; w < 5; ++w) {
    const std::string name = std::string("tf.tensor_scatter_nd_") + kinds[w];
    OpSpec op{name, "tf", "scatter_nd", name + "(tensor, indices, updates)", formulas[w],
              api + "tensor_scatter_nd_" + kinds[w], "tensor", "indices", {smode}, nullptr};
    op.kind = OpKind::kScatter;
    op.index_rule = scatter_rule;
    op.rules = scatter_rules + duplicates[w];
    switch (w) {
      case 0: op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                                    const AttributeValues& a, Lowering* o) {
                return tf::tensor_scatter_nd("update", x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o); }; break;
      case 1: op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                                    const AttributeValues& a, Lowering* o) {
                return tf::tensor_scatter_nd("add", x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o); }; break;
      case 2: op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                                    const AttributeValues& a, Lowering* o) {
                return tf::tensor_scatter_nd("sub", x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o); }; break;
      case 3: op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                                    const AttributeValues& a, Lowering* o) {
                return tf::tensor_scatter_nd("min", x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o); }; break;
      default: op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                                     const AttributeValues& a, Lowering* o) {
                 return tf::tensor_scatter_nd("max", x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o); }; break;
    }
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"tf.scatter_nd", "tf", "scatter_nd", "tf.scatter_nd(indices, updates, shape)",
              "output = zeros(shape); output[indices[j.., :], t..] += updates[j.., t..]  (shape = output_like.shape)",
              api + "scatter_nd", "output_like", "indices", {smode}, nullptr};
    op.kind = OpKind::kScatter;
    op.index_rule = scatter_rule;
    op.rules = "tensor_scatter_nd_add on zeros of shape (updates' dtype): k = indices.shape[-1] <= len(shape); "
               "updates.shape == indices.shape[:-1] ++ shape[k:]; indices int32 or int64; duplicates add up. In the "
               "registry the shape is that of the input operand output_like, whose shape and dtype only are read "
               "(the lowering owns the zeros it starts from)";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return tf::scatter_nd(x, i, u, a.get_enum("index_mode") == "drop" ? IndexMode::kDrop : IndexMode::kError, o);
    };
    ops->push_back(std::move(op));
  }
}

}  // namespace multigather::frontends
