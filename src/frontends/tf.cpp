// TensorFlow tf.gather / tf.gather_nd. Rules: docs/semantics.md section 6 and
// https://www.tensorflow.org/api_docs/python/tf/gather (tf/gather_nd).
#include "multigather/frontends/tf.hpp"

#include "frontends/lowering.hpp"

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
}

}  // namespace multigather::frontends
