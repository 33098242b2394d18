// jax.numpy.take / take_along_axis. Rules: docs/semantics.md section 7 and 17 ("Inside JAX,
// clip means two different things") and
// https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html (jax.numpy.take_along_axis).
#include "multigather/frontends/jax.hpp"

#include <limits>

#include "frontends/lowering.hpp"

namespace multigather::jax {

using namespace frontends;

namespace {

// jnp's default fill: NaN (inexact), iinfo.min (signed), iinfo.max (unsigned), True (bool).
Scalar default_fill(DType t) {
  switch (t) {
    case DType::kBool: return Scalar::from_int(1);
    case DType::kInt8: return Scalar::from_int(std::numeric_limits<std::int8_t>::min());
    case DType::kInt16: return Scalar::from_int(std::numeric_limits<std::int16_t>::min());
    case DType::kInt32: return Scalar::from_int(std::numeric_limits<std::int32_t>::min());
    case DType::kInt64: return Scalar::from_int(std::numeric_limits<std::int64_t>::min());
    case DType::kUInt8: return Scalar::from_uint(std::numeric_limits<std::uint8_t>::max());
    case DType::kUInt16: return Scalar::from_uint(std::numeric_limits<std::uint16_t>::max());
    case DType::kUInt32: return Scalar::from_uint(std::numeric_limits<std::uint32_t>::max());
    case DType::kUInt64: return Scalar::from_uint(std::numeric_limits<std::uint64_t>::max());
    default: return Scalar::from_float(std::numeric_limits<double>::quiet_NaN());
  }
}

// Sets the policy of `mode`; `wrap_before_clip` distinguishes take_along_axis from take.
Status policy(const std::string& op, std::string_view mode, bool wrap_before_clip, bool allow_wrap,
              DType dtype, std::optional<Scalar> fill_value, Lowering* out) {
  if (mode == "fill") {
    set_policy(out, IndexMode::kFill, true);
    out->options.fill_value = fill_value ? *fill_value : default_fill(dtype);
  } else if (mode == "clip") {
    set_policy(out, IndexMode::kClamp, wrap_before_clip);
    out->notes.push_back(wrap_before_clip ? "mode='clip' wraps negatives once, then clamps"
                                          : "mode='clip' clamps without wrapping negatives (-1 -> 0)");
  } else if (mode == "wrap" && allow_wrap) {
    set_policy(out, IndexMode::kWrap, false);
  } else if (mode == "promise_in_bounds") {
    set_policy(out, IndexMode::kClamp, false);
    out->notes.push_back("mode='promise_in_bounds': XLA clamps (no negative wrap)");
  } else if (mode == "raise") {
    return InvalidArgument(op + ": The 'raise' mode to jnp.take is not supported.");
  } else {
    return InvalidArgument(op + ": mode = '" + std::string(mode) + "' is not supported");
  }
  return Status::Ok();
}

}  // namespace

Status take(const TensorView& a, const TensorView& indices, std::optional<std::int64_t> axis,
            std::string_view mode, std::optional<Scalar> fill_value, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("jax.numpy.take", a, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  TensorView x;
  std::int64_t ax = 0;
  MULTIGATHER_RETURN_IF_ERROR(flatten_or_axis(out->op, "a", a, axis, out, &x, &ax));
  if (x.shape[static_cast<int>(ax)] == 0 && indices.numel() != 0) {
    return OutOfRange(out->op + ": Cannot do a non-empty jnp.take() from an empty axis.");
  }
  MULTIGATHER_RETURN_IF_ERROR(policy(out->op, mode, false, true, a.dtype, fill_value, out));
  return lower_block(out->op, x, indices, ax, 0, out);
}

Status take_along_axis(const TensorView& arr, const TensorView& indices,
                       std::optional<std::int64_t> axis, std::string_view mode,
                       std::optional<Scalar> fill_value, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("jax.numpy.take_along_axis", arr, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  MULTIGATHER_RETURN_IF_ERROR(policy(out->op, mode, true, false, arr.dtype, fill_value, out));
  if (!axis && indices.rank() != 1) {
    return InvalidArgument(out->op + ": when axis is None, indices must have ndim 1 (got shape " +
                           to_string(indices.shape) + ")");
  }
  if (axis && indices.rank() != arr.rank()) {
    return InvalidArgument(out->op + ": indices and arr must have the same number of dimensions; " +
                           str(indices.rank()) + " vs. " + str(arr.rank()));
  }
  TensorView x;
  std::int64_t ax = 0;
  MULTIGATHER_RETURN_IF_ERROR(flatten_or_axis(out->op, "arr", arr, axis, out, &x, &ax));
  if (x.shape[static_cast<int>(ax)] == 0) {
    set_policy(out, IndexMode::kFill, true);
    out->options.fill_value = Scalar::from_int(0);
    out->notes.push_back("the gather axis is empty: jnp.take_along_axis returns zeros");
  }
  return lower_elements(out->op, x, indices, ax, ElementRule::kBroadcast, "arr", "indices", out);
}

}  // namespace multigather::jax

namespace multigather::frontends {

void append_jax_ops(std::vector<OpSpec>* ops) {
  const std::string docs = "https://docs.jax.dev/en/latest/_autosummary/";
  const AttrSpec fill{"fill_value", AttrType::kOptionalScalar, "none", {}, "mode=fill value (none: NaN / int min / uint max / True)"};
  ops->push_back({"jax.numpy.take", "jax", "block", "jax.numpy.take(a, indices, axis=None, mode=None, fill_value=None)",
                  "out[i.., j.., k..] = a[i.., indices[j..], k..]", docs + "jax.numpy.take.html", "a", "indices",
                  {{"axis", AttrType::kOptionalInt, "none", {}, "gather axis (none: flatten a)"},
                   {"mode", AttrType::kEnum, "fill", {"fill", "clip", "wrap", "promise_in_bounds", "raise"}, "out-of-range policy"},
                   fill},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return jax::take(x, i, a.get_optional_int("axis"), a.get_enum("mode"), a.get_scalar("fill_value"), o);
                  }});
  ops->push_back({"jax.numpy.take_along_axis", "jax", "element",
                  "jax.numpy.take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None)",
                  "out[i.., j, k..] = arr[i.., indices[i.., j, k..], k..]  (broadcasting)",
                  docs + "jax.numpy.take_along_axis.html", "arr", "indices",
                  {{"axis", AttrType::kOptionalInt, "-1", {}, "gather axis (none: flatten arr)"},
                   {"mode", AttrType::kEnum, "fill", {"fill", "clip", "promise_in_bounds"}, "out-of-range policy"},
                   fill},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return jax::take_along_axis(x, i, a.get_optional_int("axis"), a.get_enum("mode"), a.get_scalar("fill_value"), o);
                  }});
}

}  // namespace multigather::frontends
