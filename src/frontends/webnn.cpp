// WebNN gather / gatherElements / gatherND. Rules: docs/semantics.md section 12 and
// https://www.w3.org/TR/webnn/ (index rule: WPT conformance tests, clamp).
#include "multigather/frontends/webnn.hpp"

#include "frontends/recipes.hpp"

namespace multigather::webnn {

using namespace frontends;

namespace {

Status check_common(const std::string& op, const TensorView& input, const TensorView& indices) {
  if (input.rank() < 1) return InvalidArgument(op + ": input must have rank >= 1 (got a scalar)");
  return check_dtype(op, "indices", indices.dtype, {DType::kInt32, DType::kUInt32, DType::kInt64});
}

Status unsigned_axis(const std::string& op, std::int64_t axis, int rank) {
  if (axis < 0 || axis >= rank) {
    return InvalidArgument(op + ": axis = " + str(axis) + " must be in [0, " + str(rank) +
                           ") (an unsigned long less than the input rank " + str(rank) + ")");
  }
  return Status::Ok();
}

void clamp_policy(Lowering* out) {
  set_policy(out, IndexMode::kClamp, true);
  out->notes.push_back("out-of-range indices clamp to [0, N-1] after wrapping negatives once "
                       "(what the WPT conformance tests expect; webnn#486)");
}

}  // namespace

Status gather(const TensorView& input, const TensorView& indices, std::int64_t axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("webnn.gather", input, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_common(out->op, input, indices));
  MULTIGATHER_RETURN_IF_ERROR(unsigned_axis(out->op, axis, input.rank()));
  clamp_policy(out);
  return lower_block(out->op, input, indices, axis, 0, out);
}

Status gatherElements(const TensorView& input, const TensorView& indices, std::int64_t axis,
                      Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("webnn.gatherElements", input, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_common(out->op, input, indices));
  MULTIGATHER_RETURN_IF_ERROR(unsigned_axis(out->op, axis, input.rank()));
  clamp_policy(out);
  return lower_elements(out->op, input, indices, axis, ElementRule::kEqual, "input", "indices", out);
}

Status gatherND(const TensorView& input, const TensorView& indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("webnn.gatherND", input, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_common(out->op, input, indices));
  if (indices.rank() < 1) return InvalidArgument(out->op + ": indices must have rank >= 1 (got a scalar)");
  const std::int64_t c = indices.shape[indices.rank() - 1];
  if (c > input.rank()) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(c) +
                           " is greater than the input rank " + str(input.rank()));
  }
  clamp_policy(out);
  return lower_nd(out->op, input, indices, 0, out);
}

// ---- Scatters (WebNN "operator set wave 3"; rules: the WPT conformance and validation tests) ----

namespace {

constexpr const char* kScatterDuplicates =
    "duplicate indices: WebNN leaves the result unspecified; multigather writes the last update "
    "in row-major order of indices";

Status scatter_common(const std::string& op, const TensorView& input, const TensorView& indices,
                      const TensorView& updates, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_common(op, input, indices));
  MULTIGATHER_RETURN_IF_ERROR(
      check_updates_dtype(op, input, updates, "input", "updates", "updates must have input's data type"));
  clamp_policy(out);
  out->notes.push_back(kScatterDuplicates);
  out->reduction = Reduction::kNone;
  out->include_input = true;
  return Status::Ok();
}

}  // namespace

Status scatterElements(const TensorView& input, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("webnn.scatterElements", input, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(out->op, input, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(unsigned_axis(out->op, axis, input.rank()));
  if (indices.rank() != input.rank()) {
    return InvalidArgument(out->op + ": indices rank " + str(indices.rank()) + " must equal input rank " +
                           str(input.rank()));
  }
  for (int d = 0; d < input.rank(); ++d) {
    if (d != axis && indices.shape[d] != input.shape[d]) {
      return InvalidArgument(out->op + ": indices.shape[" + str(d) + "] = " + str(indices.shape[d]) +
                             " must equal input.shape[" + str(d) + "] = " + str(input.shape[d]) +
                             " (every dimension but axis " + str(axis) + ")");
    }
  }
  if (!(updates.shape == indices.shape)) {
    return InvalidArgument(out->op + ": updates shape " + to_string(updates.shape) +
                           " must equal indices shape " + to_string(indices.shape));
  }
  MULTIGATHER_RETURN_IF_ERROR(
      lower_elements(out->op, input, indices, axis, ElementRule::kEqual, "input", "indices", out));
  return finish_framework_scatter(input, updates, dims_vec(indices.shape), out);
}

Status scatterND(const TensorView& input, const TensorView& indices, const TensorView& updates,
                 Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("webnn.scatterND", input, indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(out->op, input, indices, updates, out));
  if (indices.rank() < 1) return InvalidArgument(out->op + ": indices must have rank >= 1 (got a scalar)");
  const std::int64_t c = indices.shape[indices.rank() - 1];
  if (c > input.rank()) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(c) +
                           " is greater than the input rank " + str(input.rank()));
  }
  std::vector<std::int64_t> want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), input.shape.begin() + c, input.shape.end());
  if (dims_vec(updates.shape) != want) {
    return InvalidArgument(out->op + ": updates shape " + to_string(updates.shape) +
                           " must equal indices.shape[:-1] ++ input.shape[c:] = " + shape_str(want) +
                           " (c = indices.shape[-1] = " + str(c) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, input, indices, 0, out));
  return finish_framework_scatter(input, updates, want, out);
}

}  // namespace multigather::webnn

namespace multigather::frontends {

void append_webnn_ops(std::vector<OpSpec>* ops) {
  const AttrSpec axis{"axis", AttrType::kInt, "0", {}, "gather axis (unsigned, < rank)"};
  const std::string src = "https://www.w3.org/TR/webnn/ (index rule: WPT conformance tests, clamp)";
  ops->push_back({"webnn.gather", "webnn", "block", "gather(input, indices, {axis=0})",
                  "output[i.., j.., k..] = input[i.., clamp(indices[j..]), k..]", src + " #api-mlgraphbuilder-gather",
                  "input", "indices", {axis},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return webnn::gather(x, i, a.get_int("axis"), o);
                  }});
  ops->push_back({"webnn.gatherElements", "webnn", "element", "gatherElements(input, indices, {axis=0})",
                  "output[i][j][k] = input[clamp(indices[i][j][k])][j][k]  (axis 0)",
                  src + " #api-mlgraphbuilder-gatherelements", "input", "indices", {axis},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return webnn::gatherElements(x, i, a.get_int("axis"), o);
                  }});
  ops->push_back({"webnn.gatherND", "webnn", "nd", "gatherND(input, indices)",
                  "output[j..] = input[clamp(indices[j.., 0]), .., clamp(indices[j.., c-1]), t..]",
                  src + " #api-mlgraphbuilder-gathernd", "input", "indices", {},
                  [](const TensorView& x, const TensorView& i, const AttributeValues&, Lowering* o) {
                    return webnn::gatherND(x, i, o);
                  }});
  {
    OpSpec op{"webnn.scatterElements", "webnn", "scatter_element", "scatterElements(input, indices, updates, {axis=0})",
              "output = input; output[i][clamp(indices[i][j][k])][k] = updates[i][j][k]  (axis 1)",
              src + " #api-mlgraphbuilder-scatterelements", "input", "indices",
              {{"axis", AttrType::kInt, "0", {}, "scatter axis (unsigned, < rank)"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return webnn::scatterElements(x, i, u, a.get_int("axis"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"webnn.scatterND", "webnn", "scatter_nd", "scatterND(input, indices, updates)",
              "output = input; output[clamp(indices[j.., 0]), .., clamp(indices[j.., c-1]), t..] = updates[j.., t..]",
              src + " #api-mlgraphbuilder-scatternd", "input", "indices", {}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues&,
                          Lowering* o) { return webnn::scatterND(x, i, u, o); };
    ops->push_back(std::move(op));
  }
  // Index rule (all five): negative indices wrap once, then out-of-range values CLAMP to
  // [0, N-1]. The spec only says values "must be in range" and allows implementations to insert
  // clamp(); the WPT conformance tests expect the clamp (10 -> N-1, -10 -> 0).
  const IndexRule wrap_then_clamp{IndexMode::kClamp, true, ""};
  const std::string common = "input rank >= 1; indices int32, uint32 or int64. ";
  const std::string duplicates = "Duplicates: unspecified by WebNN; the last update in row-major order wins here";
  const std::string gather = common +
      "axis unsigned, < rank; output shape input.shape[:axis] ++ indices.shape ++ input.shape[axis+1:] (0-D "
      "indices allowed)";
  const std::string elements = common +
      "axis unsigned, < rank; indices rank == input rank and indices.shape[d] == input.shape[d] for every d != "
      "axis; output shape = indices.shape";
  const std::string nd = common +
      "indices rank >= 1; c = indices.shape[-1] <= rank(input); output shape indices.shape[:-1] ++ "
      "input.shape[c:]";
  const std::string scatter_elements = common +
      "output: input's shape and dtype. axis unsigned, < rank; indices rank == input rank with input's sizes on "
      "every dimension but axis; updates.shape == indices.shape, updates dtype == input dtype. " + duplicates;
  const std::string scatter_nd = common +
      "output: input's shape and dtype. c = indices.shape[-1] <= rank(input); updates.shape == "
      "indices.shape[:-1] ++ input.shape[c:], updates dtype == input dtype. " + duplicates;
  // WebNN's builder methods throw TypeError for every invalid argument (shapes, ranks, axis,
  // dtypes: the spec's "throw a TypeError" steps; the WPT validation tests expect TypeError):
  // Python raises multigather.ArgumentTypeError (a TypeError that is also a ValueError).
  for (OpSpec& op : *ops) {
    if (op.family == "webnn") op.argument_error = ArgumentError::kTypeError;
  }
  state_facts(ops, {
      {"webnn.gather", wrap_then_clamp, gather},
      {"webnn.gatherElements", wrap_then_clamp, elements},
      {"webnn.gatherND", wrap_then_clamp, nd},
      {"webnn.scatterElements", wrap_then_clamp, scatter_elements},
      {"webnn.scatterND", wrap_then_clamp, scatter_nd},
  });
}

}  // namespace multigather::frontends
