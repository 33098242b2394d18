// Core ML MIL gather / gather_along_axis / gather_nd (iOS17). Rules: docs/semantics.md section 8
// and https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html
// (iOS17.scatter_gather).
#include "multigather/frontends/coreml.hpp"

#include "frontends/lowering.hpp"

namespace multigather::coreml {

using namespace frontends;

namespace {

Status common(const std::string& op, const TensorView& x, const TensorView& indices,
              bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(op, "indices", indices.dtype,
                                          {DType::kInt32, DType::kInt16, DType::kUInt16, DType::kInt8,
                                           DType::kUInt8, DType::kInt64}));
  if (indices.dtype == DType::kInt64) {
    out->notes.push_back("int64 indices are accepted although Core ML has no int64 indices");
  }
  if (x.rank() < 1) return InvalidArgument(op + ": x must have rank >= 1");
  set_policy(out, validate_indices ? IndexMode::kError : IndexMode::kClamp, true);
  if (!validate_indices) {
    out->notes.push_back("validate_indices=False: out of range is \"undefined but memory safe\"; "
                         "multigather clamps to [0, D-1]");
  }
  return Status::Ok();
}

}  // namespace

Status gather(const TensorView& x, const TensorView& indices, std::int64_t axis,
              std::int64_t batch_dims, bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("coreml.gather", x, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, x, indices, validate_indices, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, x.rank(), true, &a));
  const std::int64_t b = batch_dims;
  if (b < 0 || b >= x.rank() || b > indices.rank() || b > a) {
    return InvalidArgument(out->op + ": batch_dims = " + str(b) + " must satisfy 0 <= batch_dims < rank(x) = " +
                           str(x.rank()) + ", batch_dims <= rank(indices) = " + str(indices.rank()) +
                           " and batch_dims <= axis = " + str(a));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, x, indices, b, "x", "indices"));
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {x.shape[static_cast<int>(a)]}, true, "");
  return lower_block(out->op, x, indices, a, b, out);
}

Status gather_along_axis(const TensorView& x, const TensorView& indices, std::int64_t axis,
                         bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("coreml.gather_along_axis", x, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, x, indices, validate_indices, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, x.rank(), true, &a));
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {x.shape[static_cast<int>(a)]}, true, "");
  return lower_elements(out->op, x, indices, a, ElementRule::kEqual, "x", "indices", out);
}

Status gather_nd(const TensorView& x, const TensorView& indices, std::int64_t batch_dims,
                 bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("coreml.gather_nd", x, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, x, indices, validate_indices, out));
  const int r = x.rank(), q = indices.rank();
  if (q < 1) return InvalidArgument(out->op + ": indices must have rank >= 1");
  const std::int64_t b = batch_dims;
  if (b < 0 || b >= q) {
    return InvalidArgument(out->op + ": batch_dims = " + str(b) + " must be in [0, rank(indices) - 1] = [0, " +
                           str(q - 1) + "]");
  }
  const std::int64_t k = indices.shape[q - 1];
  if (k + b > r) {
    return InvalidArgument(out->op + ": indices.shape[-1] + batch_dims = " + str(k) + " + " + str(b) +
                           " must be <= rank(x) = " + str(r));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, x, indices, b, "x", "indices"));
  set_nd_error_context(out, indices, x, b, "x", true, "");
  return lower_nd(out->op, x, indices, b, out);
}

}  // namespace multigather::coreml

namespace multigather::frontends {

void append_coreml_ops(std::vector<OpSpec>* ops) {
  const std::string docs = "https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html "
                           "(iOS17.scatter_gather.";
  const AttrSpec validate{"validate_indices", AttrType::kBool, "false", {}, "true: out of range is an error"};
  const AttrSpec axis{"axis", AttrType::kInt, "0", {}, "gather axis"};
  const AttrSpec batch{"batch_dims", AttrType::kInt, "0", {}, "leading batch dimensions"};
  ops->push_back({"coreml.gather", "coreml", "block", "gather(x, indices, axis=0, batch_dims=0, validate_indices=False)",
                  "out[p.., i.., q..] = x[p.., indices[b.., i..], q..]", docs + "gather)", "x", "indices",
                  {axis, batch, validate},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return coreml::gather(x, i, a.get_int("axis"), a.get_int("batch_dims"), a.get_bool("validate_indices"), o);
                  }});
  ops->push_back({"coreml.gather_along_axis", "coreml", "element", "gather_along_axis(x, indices, axis=0, validate_indices=False)",
                  "out[i][j][k] = x[indices[i][j][k]][j][k]  (axis 0)", docs + "gather_along_axis)", "x", "indices",
                  {axis, validate},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return coreml::gather_along_axis(x, i, a.get_int("axis"), a.get_bool("validate_indices"), o);
                  }});
  ops->push_back({"coreml.gather_nd", "coreml", "nd", "gather_nd(x, indices, batch_dims=0, validate_indices=False)",
                  "out[b.., i..] = x[b.., indices[b.., i.., 0], .., indices[b.., i.., K-1], t..]", docs + "gather_nd)",
                  "x", "indices", {batch, validate},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return coreml::gather_nd(x, i, a.get_int("batch_dims"), a.get_bool("validate_indices"), o);
                  }});
}

}  // namespace multigather::frontends
