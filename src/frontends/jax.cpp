// jax.numpy.take / take_along_axis. Rules: docs/semantics.md section 7 and 17 ("Inside JAX,
// clip means two different things") and
// https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html (jax.numpy.take_along_axis).
#include "multigather/frontends/jax.hpp"

#include <limits>

#include "frontends/recipes.hpp"

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
  } else if (mode == "promise_in_bounds" && allow_wrap) {
    // jnp.take refuses it (jax 0.10: "Invalid mode 'promise_in_bounds' for np.take");
    // jnp.take_along_axis takes it.
    return InvalidArgument(op + ": Invalid mode 'promise_in_bounds' for np.take");
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

namespace {

struct AtInfo {
  const char* op;
  Reduction reduction;
};

AtInfo at_info(AtUpdate update) {
  switch (update) {
    case AtUpdate::kSet: return {"jax.at.set", Reduction::kNone};
    case AtUpdate::kAdd: return {"jax.at.add", Reduction::kAdd};
    case AtUpdate::kSubtract: return {"jax.at.subtract", Reduction::kAdd};
    case AtUpdate::kMultiply: return {"jax.at.multiply", Reduction::kMul};
    case AtUpdate::kMin: return {"jax.at.min", Reduction::kMin};
    case AtUpdate::kMax: return {"jax.at.max", Reduction::kMax};
  }
  return {"jax.at.set", Reduction::kNone};
}

}  // namespace

Status at(AtUpdate update, const TensorView& x, const TensorView& indices, const TensorView& values,
          const std::vector<std::int64_t>& index_dims, std::string_view mode,
          bool wrap_negative_indices, Lowering* out) {
  const AtInfo info = at_info(update);
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter(info.op, x, indices, values, out));
  if (mode != "drop" && mode != "fill" && mode != "clip" && mode != "promise_in_bounds") {
    return InvalidArgument(out->op + ": mode = '" + std::string(mode) +
                           "' is not a scatter mode (jax accepts None, 'drop', 'fill', 'clip', 'promise_in_bounds')");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, x, values, "x", "values",
                                                  "jax promotes both and casts the result back; multigather does not "
                                                  "cast: the Python wrapper casts values when numpy calls the cast safe"));
  std::vector<std::int64_t> shape;
  MULTIGATHER_RETURN_IF_ERROR(lower_advanced(x, indices, index_dims, out, &shape));
  // No jax mode raises: out->index_errors stays as the advanced index's wording, never used.
  if (mode == "clip" && x.numel() != 0) {
    set_policy(out, IndexMode::kClamp, wrap_negative_indices);
    out->notes.push_back(std::string("mode='clip' ") + (wrap_negative_indices ? "wraps negatives once, then " : "") +
                         "clamps to [0, D-1]");
  } else {
    set_policy(out, IndexMode::kDrop, wrap_negative_indices);
    out->notes.push_back(std::string("mode='") + std::string(mode) + "': " +
                         (wrap_negative_indices ? "negatives wrap once, then " : "") +
                         "an update whose index is out of range is skipped" +
                         (mode == "promise_in_bounds" ? " (XLA's answer to a broken promise)" : ""));
  }
  out->reduction = info.reduction;
  out->include_input = true;
  out->notes.push_back(update == AtUpdate::kSet
                           ? "duplicate indices: JAX applies them in an implementation-defined order; here the last in "
                             "row-major order of x[idx] wins"
                           : "duplicate indices: every update applies (JAX: in an implementation-defined order; here in "
                             "row-major order of x[idx], bit-reproducible)");
  if (update == AtUpdate::kSubtract) {
    MULTIGATHER_RETURN_IF_ERROR(negate_step(values.dtype, "jax.at.subtract: x - values", out));
  }
  return finish_framework_scatter(x, values, shape, out, [&] {
    return out->op + ": Incompatible shapes for broadcasting: values shape " + to_string(values.shape) +
           " and requested shape " + shape_str(shape) + " (x[idx].shape)";
  });
}

}  // namespace multigather::jax

namespace multigather::frontends {

namespace {

template <jax::AtUpdate U>
Status lower_at(const TensorView& x, const TensorView& i, const TensorView& v, const AttributeValues& a, Lowering* o) {
  return jax::at(U, x, i, v, a.get_ints("index_dims"), a.get_enum("mode"), a.get_bool("wrap_negative_indices"), o);
}

}  // namespace

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
  struct At {
    const char* method;
    const char* formula;
    ScatterLowerFn fn;
  };
  for (const At& u : {At{"set", "x[.., idx_0[b..], .., idx_{k-1}[b..], ..] = values[b.., rest..]  (the last duplicate wins)",
                         lower_at<jax::AtUpdate::kSet>},
                      At{"add", "x[.., idx_0[b..], .., idx_{k-1}[b..], ..] += values[b.., rest..]  (duplicates all add)",
                         lower_at<jax::AtUpdate::kAdd>},
                      At{"subtract", "x[.., idx_0[b..], .., idx_{k-1}[b..], ..] -= values[b.., rest..]  (duplicates all subtract)",
                         lower_at<jax::AtUpdate::kSubtract>},
                      At{"multiply", "x[.., idx_0[b..], .., idx_{k-1}[b..], ..] *= values[b.., rest..]  (duplicates all multiply)",
                         lower_at<jax::AtUpdate::kMultiply>},
                      At{"min", "x[.., idx_0[b..], ..] = minimum(x[.., idx_0[b..], ..], values[b.., rest..])  (duplicates all apply)",
                         lower_at<jax::AtUpdate::kMin>},
                      At{"max", "x[.., idx_0[b..], ..] = maximum(x[.., idx_0[b..], ..], values[b.., rest..])  (duplicates all apply)",
                         lower_at<jax::AtUpdate::kMax>}}) {
    OpSpec op{std::string("jax.at.") + u.method, "jax", "scatter_advanced",
              std::string("x.at[idx].") + u.method + "(values, mode=None, wrap_negative_indices=True)  (indices = stack(broadcast(idx..), -1))",
              u.formula, docs + "jax.numpy.ndarray.at.html", "x", "indices",
              {{"index_dims", AttrType::kIntList, "0", {}, "the x dimension each stacked index array indexes (increasing)"},
               {"mode", AttrType::kEnum, "drop", {"drop", "fill", "clip", "promise_in_bounds"}, "out-of-range policy (fill = drop)"},
               {"wrap_negative_indices", AttrType::kBool, "true", {}, "negative indices count from the end"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "values";
    op.lower_scatter = u.fn;
    // jax/_src/ops/scatter.py, lax.GatherScatterMode: negatives wrap once unless
    // wrap_negative_indices is false; then mode None / drop / fill skips an update whose index is
    // out of range, clip clamps it, promise_in_bounds skips it (XLA's answer to a broken promise).
    op.index_rule = {IndexMode::kDrop, true, "mode, wrap_negative_indices"};
    op.rules =
        "a new array of x's shape and dtype (x is never written). indices: the integer index arrays broadcast to "
        "a common shape B and stacked on a last dimension (B ++ [k]), as numpy.advanced_index takes them; "
        "index_dims: the k strictly increasing dimensions of x they index (full slices on the others); adjacent "
        "index dimensions keep their place, separated ones put B first. values: x's dtype (no promotion), "
        "broadcast to x[idx].shape. mode None / drop / fill skip an update whose index is out of range, clip "
        "clamps it to [0, D-1], promise_in_bounds skips it (what XLA's scatter does with a broken promise); no "
        "mode raises. "
        "Duplicates all apply (JAX: in an implementation-defined order); here in row-major order of x[idx], so "
        "set keeps the last and float sums are reproducible; float min and max propagate NaN; complex min and max "
        "are lexicographic on (real, imaginary) as XLA's (a tie or a NaN in the deciding comparison takes the "
        "update)";
    ops->push_back(std::move(op));
  }
  // jax/_src/numpy/indexing.py: mode None or fill (the default): negatives wrap once, anything
  // else out of range becomes fill_value.
  const IndexRule by_mode{IndexMode::kFill, true, "mode"};
  state_facts(ops, {
      {"jax.numpy.take", by_mode,
       "numpy.take's shapes: output a.shape[:axis] ++ indices.shape ++ a.shape[axis+1:] (axis=None flattens a). "
       "fill_value defaults to NaN for inexact dtypes, the minimum for signed integers, the maximum for unsigned "
       "ones, True for bool. mode clip clamps WITHOUT wrapping negatives (-1 -> 0), wrap is modulo; "
       "promise_in_bounds is an error, as jnp.take's. A non-empty take from an empty axis is an IndexError"},
      {"jax.numpy.take_along_axis", by_mode,
       "numpy.take_along_axis's shapes: same rank, the dimensions other than axis broadcast (NumPy "
       "broadcasting); axis=None: 1-D indices into the flattened arr. fill_value defaults as jax.numpy.take's. "
       "mode clip wraps negatives once, then clamps; promise_in_bounds clamps without wrapping (what XLA does "
       "with indices that break the promise). An empty axis gives zeros"},
  });
}

}  // namespace multigather::frontends
