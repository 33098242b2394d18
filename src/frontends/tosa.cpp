// TOSA GATHER. Rules: docs/semantics.md section 9 and
// https://www.mlplatform.org/tosa/tosa_spec.html#_gather (GATHER.tosac). Mapping: input [N,K,C],
// indices [N,W,1], axes [1] -> [N,W,C] (exact).
#include "multigather/frontends/tosa.hpp"

#include "frontends/lowering.hpp"

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

}  // namespace multigather::tosa

namespace multigather::frontends {

void append_tosa_ops(std::vector<OpSpec>* ops) {
  ops->push_back({"tosa.gather", "tosa", "element", "GATHER(values, indices)",
                  "output[n, w, c] = values[n, indices[n, w], c]",
                  "https://www.mlplatform.org/tosa/tosa_spec.html#_gather (GATHER.tosac)", "values", "indices", {},
                  [](const TensorView& x, const TensorView& i, const AttributeValues&, Lowering* o) {
                    return tosa::gather(x, i, o);
                  }});
}

}  // namespace multigather::frontends
