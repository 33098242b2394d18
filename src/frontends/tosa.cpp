// TOSA GATHER. Rules: docs/semantics.md section 9 and
// https://www.mlplatform.org/tosa/tosa_spec.html#_gather (GATHER.tosac). Mapping: input [N,K,C],
// indices [N,W,1], axes [1] -> [N,W,C] (exact). SCATTER is its dual: the same views, input [N,W,C]
// as the updates (#_scatter, SCATTER.tosac).
#include "multigather/frontends/tosa.hpp"

#include "frontends/recipes.hpp"

namespace multigather::tosa {

using namespace frontends;

Status gather(const TensorView& values, const TensorView& indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tosa.gather", values, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  if (values.rank() != 3 || indices.rank() != 2) {
    return InvalidArgument(out->op + ": values must be rank 3 [N,K,C] and indices rank 2 [N,W] (got " +
                           to_string(values.shape) + " and " + to_string(indices.shape) + ")");
  }
  if (values.shape[0] != indices.shape[0]) {
    return InvalidArgument(out->op + ": values.shape[0] = " + str(values.shape[0]) + " and indices.shape[0] = " +
                           str(indices.shape[0]) + " must be equal (N)");
  }
  ViewBuilder ix = ViewBuilder::of(indices);
  ix.add_dims(indices, 0, 2);
  ix.add_unit();
  out->input = values;
  out->axes = {1};
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, indices, "indices", -1, {"K (values dimension 1)"}, {values.shape[1]}, false,
                    "TOSA REQUIRE(0 <= k < K)");
  return finish({values.shape[0], indices.shape[1], values.shape[2]}, out);
}

Status scatter(const TensorView& values_in, const TensorView& indices, const TensorView& input, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("tosa.scatter", values_in, indices, input, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "indices", indices.dtype, {DType::kInt32, DType::kInt64}));
  if (values_in.rank() != 3 || indices.rank() != 2 || input.rank() != 3) {
    return InvalidArgument(out->op + ": values_in must be rank 3 [N,K,C], indices rank 2 [N,W] and input rank 3 "
                           "[N,W,C] (got " + to_string(values_in.shape) + ", " + to_string(indices.shape) + " and " +
                           to_string(input.shape) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, values_in, input, "values_in", "input",
                                                  "TOSA: input and values_in have the same type"));
  const std::vector<std::int64_t> g = {values_in.shape[0], indices.shape[1], values_in.shape[2]};
  if (indices.shape[0] != values_in.shape[0] || dims_vec(input.shape) != g) {
    return InvalidArgument(out->op + ": indices " + to_string(indices.shape) + " must be [N,W] and input " +
                           to_string(input.shape) + " must be [N,W,C] = " + shape_str(g) +
                           " for values_in [N,K,C] = " + to_string(values_in.shape));
  }
  ViewBuilder ix = ViewBuilder::of(indices);
  ix.add_dims(indices, 0, 2);
  ix.add_unit();
  out->input = values_in;
  out->axes = {1};
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, 1, 1, out));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, indices, "indices", -1, {"K (values_in dimension 1)"}, {values_in.shape[1]}, false,
                    "TOSA REQUIRE(0 <= k < K)");
  out->reduction = Reduction::kNone;
  out->include_input = true;
  out->notes.push_back("duplicate indices: TOSA requires each [n, k] to be written at most once (REQUIRE fails "
                       "otherwise); multigather writes the last update in row-major order of indices");
  MULTIGATHER_RETURN_IF_ERROR(finish(g, out));
  return finish_framework_scatter(values_in, input, g, out);
}

}  // namespace multigather::tosa

namespace multigather::frontends {

void append_tosa_ops(std::vector<OpSpec>* ops) {
  ops->push_back({"tosa.gather", "tosa", "element", "GATHER(values, indices)",
                  "output[n, w, c] = values[n, indices[n, w], c]",
                  "https://www.mlplatform.org/tosa/tosa_spec.html#_gather (GATHER.tosac)", "values", "indices", {},
                  [](const TensorView& x, const TensorView& i, const AttributeValues&, Lowering* o) {
                    return tosa::gather(x, i, o);
                  }});
  OpSpec op{"tosa.scatter", "tosa", "scatter_element", "SCATTER(values_in, indices, input)",
            "values_out = values_in; values_out[n, indices[n, w], c] = input[n, w, c]",
            "https://www.mlplatform.org/tosa/tosa_spec.html#_scatter (SCATTER.tosac)", "values_in", "indices", {},
            nullptr};
  op.kind = OpKind::kScatter;
  op.updates_name = "input";
  op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues&,
                        Lowering* o) { return tosa::scatter(x, i, u, o); };
  ops->push_back(std::move(op));
  // TOSA REQUIRE(0 <= k < K): negatives and out-of-range indices are errors.
  const IndexRule require_in_range{IndexMode::kError, false, ""};
  state_facts(ops, {
      {"tosa.gather", require_in_range,
       "values [N,K,C], indices [N,W] (int32; int64 of newer profiles accepted), output [N,W,C]"},
      {"tosa.scatter", require_in_range,
       "values_in [N,K,C], indices [N,W] (int32; int64 accepted), input [N,W,C] of values_in's dtype; output "
       "values_out [N,K,C] of values_in's dtype. TOSA also REQUIREs every [n, k] to be written at most once; "
       "multigather does not check it: duplicates write the last update in row-major order of indices"},
  });
}

}  // namespace multigather::frontends
