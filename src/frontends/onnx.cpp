// ONNX Gather / GatherElements / GatherND (opset 13). Rules: docs/semantics.md sections 1-3 and
// https://onnx.ai/onnx/operators/onnx__Gather.html (onnx__GatherElements, onnx__GatherND).
#include "multigather/frontends/onnx.hpp"

#include "frontends/recipes.hpp"

namespace multigather::onnx {

using namespace frontends;

namespace {

constexpr const char* kRule = "ONNX indices must lie in [-s, s-1]";

Status check_ranks(const std::string& op, const TensorView& data, const TensorView& indices,
                   int min_indices_rank) {
  if (data.rank() < 1) return InvalidArgument(op + ": data must have rank >= 1 (got a 0-D tensor)");
  if (indices.rank() < min_indices_rank) {
    return InvalidArgument(op + ": indices must have rank >= " + str(min_indices_rank) +
                           " (got a 0-D tensor)");
  }
  return Status::Ok();
}

// The shared part of Gather and GatherElements: int32/int64 indices, ranks, the axis, the rule.
Status single_axis(const TensorView& data, const TensorView& indices, std::int64_t axis,
                   int min_indices_rank, Lowering* out, std::int64_t* a) {
  // The indices type first: ONNX Runtime checks the operator's type constraints when it loads
  // the model, before shape inference looks at ranks.
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  MULTIGATHER_RETURN_IF_ERROR(check_ranks(out->op, data, indices, min_indices_rank));
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, data.rank(), true, a));
  set_policy(out, IndexMode::kError, true);
  set_error_context(out, indices, "indices", -1, {"axis " + str(*a)}, {data.shape[static_cast<int>(*a)]}, true, kRule);
  return Status::Ok();
}

}  // namespace

Status Gather(const TensorView& data, const TensorView& indices, std::int64_t axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("onnx.Gather", data, indices, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(single_axis(data, indices, axis, 0, out, &a));
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, data, indices, a, 0, out));
  // ONNX: "it is an error if any of the index values are out of bounds", and ONNX Runtime checks
  // every index before copying, also when the output is empty because another data dimension is
  // 0 (where the core reads no index). GatherND in ONNX Runtime 1.31 does not: nor does it here.
  std::int64_t output_numel = 0;
  element_count(out->output_shape, &output_numel);
  if (indices.numel() != 0 && output_numel == 0) MULTIGATHER_RETURN_IF_ERROR(check_indices_now(*out));
  return Status::Ok();
}

Status GatherElements(const TensorView& data, const TensorView& indices, std::int64_t axis,
                      Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("onnx.GatherElements", data, indices, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(single_axis(data, indices, axis, 1, out, &a));
  return lower_elements(out->op, data, indices, a, ElementRule::kAtMost, "data", "indices", out);
}

Status GatherND(const TensorView& data, const TensorView& indices, std::int64_t batch_dims,
                Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("onnx.GatherND", data, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt64}));
  MULTIGATHER_RETURN_IF_ERROR(check_ranks(out->op, data, indices, 1));
  const int r = data.rank(), q = indices.rank();
  const std::int64_t b = batch_dims;
  if (b < 0 || b >= std::min(q, r)) {
    return InvalidArgument(out->op + ": batch_dims = " + str(b) + " must be in [0, min(q, r)) = [0, " +
                           str(std::min(q, r)) + ") for data rank " + str(r) + " and indices rank " + str(q));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, data, indices, b, "data", "indices"));
  const std::int64_t k = indices.shape[q - 1];
  if (k < 1 || k > r - b) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(k) +
                           " must be in [1, r - batch_dims] = [1, " + str(r - b) + "]");
  }
  set_policy(out, IndexMode::kError, true);
  set_nd_error_context(out, indices, data, b, "data", true, kRule);
  return lower_nd(out->op, data, indices, b, out);
}

// ---- Scatters (opset 18) ----------------------------------------------------------------------

namespace {

constexpr const char* kDuplicatesNote =
    "reduction = none with duplicate indices: ONNX leaves the result undefined (\"should not have "
    "duplicates\"); multigather writes the last update in row-major order of indices";

Status scatter_reduction(const std::string& op, std::string_view name, DType dtype, Lowering* out) {
  if (!parse_reduction(name, &out->reduction)) {
    return InvalidArgument(op + ": reduction = '" + std::string(name) + "' must be one of none, add, mul, max, min");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_complex_order(op, "data", dtype, out->reduction,
                                                  "reduction = '" + std::string(name) + "'",
                                                  "ONNX's Max and Min take no complex type"));
  if (out->reduction == Reduction::kNone) out->notes.push_back(kDuplicatesNote);
  out->include_input = true;
  return Status::Ok();
}

}  // namespace

Status ScatterElements(const TensorView& data, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, std::string_view reduction, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("onnx.ScatterElements", data, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, data, updates, "data", "updates", "both are type T"));
  MULTIGATHER_RETURN_IF_ERROR(scatter_reduction(out->op, reduction, data.dtype, out));
  MULTIGATHER_RETURN_IF_ERROR(check_ranks(out->op, data, indices, 1));
  if (indices.rank() != data.rank()) {
    return InvalidArgument(out->op + ": indices rank " + str(indices.rank()) + " must equal data rank " +
                           str(data.rank()));
  }
  if (!(updates.shape == indices.shape)) {
    return InvalidArgument(out->op + ": updates shape " + to_string(updates.shape) +
                           " must equal indices shape " + to_string(indices.shape));
  }
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, data.rank(), true, &a));
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_element_sizes(
      out->op, data, indices, a, "data", "indices",
      "the index size must not exceed the data size on every dimension but axis " + str(a)));
  set_policy(out, IndexMode::kError, true);
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {data.shape[static_cast<int>(a)]}, true, kRule);
  MULTIGATHER_RETURN_IF_ERROR(
      lower_elements(out->op, data, indices, a, ElementRule::kAtMost, "data", "indices", out));
  return finish_framework_scatter(data, updates, dims_vec(indices.shape), out);
}

Status ScatterND(const TensorView& data, const TensorView& indices, const TensorView& updates,
                 std::string_view reduction, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("onnx.ScatterND", data, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt64}));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, data, updates, "data", "updates", "both are type T"));
  MULTIGATHER_RETURN_IF_ERROR(scatter_reduction(out->op, reduction, data.dtype, out));
  MULTIGATHER_RETURN_IF_ERROR(check_ranks(out->op, data, indices, 1));
  const int r = data.rank(), q = indices.rank();
  const std::int64_t k = indices.shape[q - 1];
  if (k < 1 || k > r) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(k) + " must be in [1, rank(data)] = [1, " +
                           str(r) + "]");
  }
  std::vector<std::int64_t> want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (dims_vec(updates.shape) != want) {
    return InvalidArgument(out->op + ": updates shape " + to_string(updates.shape) +
                           " must equal indices.shape[:-1] ++ data.shape[k:] = " + shape_str(want) +
                           " (k = indices.shape[-1] = " + str(k) + ")");
  }
  set_policy(out, IndexMode::kError, true);
  set_nd_error_context(out, indices, data, 0, "data", true, kRule);
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, data, indices, 0, out));
  return finish_framework_scatter(data, updates, want, out);
}

}  // namespace multigather::onnx

namespace multigather::frontends {

void append_onnx_ops(std::vector<OpSpec>* ops) {
  const AttrSpec axis{"axis", AttrType::kInt, "0", {}, "gather axis in [-r, r-1]"};
  const AttrSpec reduction{"reduction", AttrType::kEnum, "none", {"none", "add", "mul", "max", "min"},
                           "how updates combine with data (none: duplicates undefined in ONNX, last wins here)"};
  ops->push_back({"onnx.Gather", "onnx", "block", "Gather(data, indices, axis=0)",
                  "output[i.., j.., k..] = data[i.., indices[j..], k..]  (i.. = axis leading dims)",
                  "https://onnx.ai/onnx/operators/onnx__Gather.html (opset 13)", "data", "indices",
                  {axis},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return onnx::Gather(x, i, a.get_int("axis"), o);
                  }});
  ops->push_back({"onnx.GatherElements", "onnx", "element", "GatherElements(data, indices, axis=0)",
                  "output[i][j][k] = data[indices[i][j][k]][j][k]  (axis 0)",
                  "https://onnx.ai/onnx/operators/onnx__GatherElements.html (opset 13; ONNX "
                  "Runtime's indices.shape[d] <= data.shape[d] rule)",
                  "data", "indices", {axis},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return onnx::GatherElements(x, i, a.get_int("axis"), o);
                  }});
  ops->push_back({"onnx.GatherND", "onnx", "nd", "GatherND(data, indices, batch_dims=0)",
                  "output[b.., j..] = data[b.., indices[b.., j.., 0], .., indices[b.., j.., k-1], t..]",
                  "https://onnx.ai/onnx/operators/onnx__GatherND.html (opset 13)", "data", "indices",
                  {{"batch_dims", AttrType::kInt, "0", {}, "leading batch dimensions shared by data and indices"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return onnx::GatherND(x, i, a.get_int("batch_dims"), o);
                  }});
  {
    OpSpec op{"onnx.ScatterElements", "onnx", "scatter_element",
              "ScatterElements(data, indices, updates, axis=0, reduction='none')",
              "output = data; output[i][indices[i][j][k]][k] = f(output[..], updates[i][j][k])  (axis 1)",
              "https://onnx.ai/onnx/operators/onnx__ScatterElements.html (opset 18)", "data", "indices",
              {axis, reduction}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return onnx::ScatterElements(x, i, u, a.get_int("axis"), a.get_enum("reduction"), o);
    };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"onnx.ScatterND", "onnx", "scatter_nd", "ScatterND(data, indices, updates, reduction='none')",
              "output = data; output[indices[j.., :], t..] = f(output[..], updates[j.., t..])",
              "https://onnx.ai/onnx/operators/onnx__ScatterND.html (opset 18)", "data", "indices",
              {reduction}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return onnx::ScatterND(x, i, u, a.get_enum("reduction"), o);
    };
    ops->push_back(std::move(op));
  }
  // The rest of each row: the index rule its lowering sets and ONNX's rules.
  const IndexRule wrap_once{IndexMode::kError, true, ""};
  state_facts(ops, {
      {"onnx.Gather", wrap_once,
       "data rank r >= 1, any dtype; indices int32 or int64 (the opset-13 schema; any other dtype is a TypeError, "
       "checked before the ranks, as ONNX Runtime refuses such a model when it loads it), rank q >= 0 (0-D drops "
       "the axis); axis in [-r, r-1]; output shape data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:]. "
       "Every index is checked, also when the output is empty because another data dimension is 0 (as ONNX "
       "Runtime does; on host memory, not for CUDA operands)"},
      {"onnx.GatherElements", wrap_once,
       "data rank r >= 1; indices of the same rank, int32 or int64; axis in [-r, r-1]; indices.shape[d] <= "
       "data.shape[d] for d != axis (ONNX Runtime's reading: the leading part of data is read, a size-1 index "
       "dimension never broadcasts); output shape = indices.shape"},
      {"onnx.GatherND", wrap_once,
       "data rank r >= 1, indices rank q >= 1; 0 <= b = batch_dims < min(q, r); data.shape[:b] == "
       "indices.shape[:b] (exactly, no broadcasting); 1 <= k = indices.shape[-1] <= r - b; indices int64 only. "
       "(ONNX Runtime 1.31 also runs k = 0, unequal batch dimensions and b >= r, which the spec rules out; those "
       "are errors here.) An empty output checks no index (ONNX Runtime neither). Output shape "
       "indices.shape[:-1] ++ data.shape[b+k:] (rank q + r - k - 1 - b)"},
      {"onnx.ScatterElements", wrap_once,
       "output: data's shape and dtype. data rank r >= 1; indices int32 or int64 of data's rank; updates.shape == "
       "indices.shape, updates dtype == data dtype; axis in [-r, r-1]; indices.shape[d] > data.shape[d] (d != "
       "axis) is an error; a smaller size writes only the leading window, as ONNX Runtime does (the rest of the output "
       "keeps data's values). "
       "reduction none / add / mul / max / min (max / min on complex data: a TypeError); with none, duplicates "
       "are undefined in ONNX and the last update in row-major order of indices wins here"},
      {"onnx.ScatterND", wrap_once,
       "output: data's shape and dtype. indices int64 only, rank q >= 1; 1 <= k = indices.shape[-1] <= "
       "rank(data); updates.shape == indices.shape[:-1] ++ data.shape[k:], updates dtype == data dtype "
       "(lowered as onnx.GatherND with batch_dims 0). reduction none / add / mul / max / min (max / min on "
       "complex data: a TypeError); with none, duplicates are undefined in ONNX and the last update in "
       "row-major order of indices wins here"},
  });
}

}  // namespace multigather::frontends
