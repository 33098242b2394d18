// Core ML MIL gather / gather_along_axis / gather_nd (iOS17). Rules: docs/semantics.md section 8
// and https://apple.github.io/coremltools/source/coremltools.converters.mil.mil.ops.defs.html
// (iOS17.scatter_gather).
#include "multigather/frontends/coreml.hpp"

#include "frontends/recipes.hpp"

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

// ---- Scatters (iOS17) -------------------------------------------------------------------------

namespace {

// The mode, the updates dtype and the index rule; *negate: sub (updates negated at the end).
Status scatter_common(const TensorView& data, const TensorView& indices, const TensorView& updates,
                      std::string_view mode, bool validate_indices, bool* negate, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, data, indices, validate_indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, data, updates, "data", "updates", "both are type T"));
  *negate = false;
  if (mode == "update") {
    out->reduction = Reduction::kNone;
    out->notes.push_back("mode = update with duplicate indices: Core ML leaves the result unspecified; "
                         "multigather writes the last update in row-major order of indices");
  } else if (mode == "add") {
    out->reduction = Reduction::kAdd;
  } else if (mode == "sub") {
    out->reduction = Reduction::kAdd;
    *negate = true;
  } else if (mode == "mul") {
    out->reduction = Reduction::kMul;
  } else if (mode == "max") {
    out->reduction = Reduction::kMax;
  } else if (mode == "min") {
    out->reduction = Reduction::kMin;
  } else if (mode == "div") {
    return InvalidArgument(out->op + ": mode = 'div' is not supported by multigather (data / updates has no "
                           "exact form as one scatter_multiaxis call: multiplying by 1 / updates rounds twice)");
  } else {
    return InvalidArgument(out->op + ": mode = '" + std::string(mode) +
                           "' must be one of update, add, sub, mul, div, max, min");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_complex_order(out->op, "data", data.dtype, out->reduction,
                                                  "mode = '" + std::string(mode) + "'",
                                                  "Core ML's scatter takes fp16, fp32 and int32 data"));
  out->include_input = true;
  return Status::Ok();
}

Status finish_coreml(const TensorView& data, const TensorView& updates, bool negate,
                     const std::vector<std::int64_t>& shape, Lowering* out) {
  if (negate) MULTIGATHER_RETURN_IF_ERROR(negate_step(updates.dtype, "mode = sub", out));
  return finish_framework_scatter(data, updates, shape, out);
}

Status updates_shape_is(const std::string& op, const TensorView& updates, const std::vector<std::int64_t>& want,
                        const std::string& rule) {
  if (dims_vec(updates.shape) == want) return Status::Ok();
  return InvalidArgument(op + ": updates shape " + to_string(updates.shape) + " must equal " + rule + " = " +
                         shape_str(want));
}

}  // namespace

Status scatter(const TensorView& data, const TensorView& indices, const TensorView& updates, std::int64_t axis,
               std::string_view mode, bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("coreml.scatter", data, indices, updates, out));
  bool negate = false;
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(data, indices, updates, mode, validate_indices, &negate, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, data.rank(), true, &a));
  std::vector<std::int64_t> want(data.shape.begin(), data.shape.begin() + a);
  want.insert(want.end(), indices.shape.begin(), indices.shape.end());
  want.insert(want.end(), data.shape.begin() + a + 1, data.shape.end());
  MULTIGATHER_RETURN_IF_ERROR(
      updates_shape_is(out->op, updates, want, "data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:]"));
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {data.shape[static_cast<int>(a)]}, true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, data, indices, a, 0, out));
  return finish_coreml(data, updates, negate, want, out);
}

Status scatter_along_axis(const TensorView& data, const TensorView& indices, const TensorView& updates,
                          std::int64_t axis, std::string_view mode, bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("coreml.scatter_along_axis", data, indices, updates, out));
  bool negate = false;
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(data, indices, updates, mode, validate_indices, &negate, out));
  std::int64_t a = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", axis, data.rank(), true, &a));
  if (indices.rank() != data.rank()) {
    return InvalidArgument(out->op + ": indices rank " + str(indices.rank()) + " must equal data rank " +
                           str(data.rank()));
  }
  MULTIGATHER_RETURN_IF_ERROR(updates_shape_is(out->op, updates, dims_vec(indices.shape), "indices shape"));
  set_error_context(out, indices, "indices", -1, {"axis " + str(a)}, {data.shape[static_cast<int>(a)]}, true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, data, indices, a, ElementRule::kEqual, "data", "indices", out));
  return finish_coreml(data, updates, negate, dims_vec(indices.shape), out);
}

Status scatter_nd(const TensorView& data, const TensorView& indices, const TensorView& updates,
                  std::string_view mode, bool validate_indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("coreml.scatter_nd", data, indices, updates, out));
  bool negate = false;
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(data, indices, updates, mode, validate_indices, &negate, out));
  if (indices.rank() < 1) return InvalidArgument(out->op + ": indices must have rank >= 1");
  const std::int64_t k = indices.shape[indices.rank() - 1];
  if (k > data.rank()) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(k) + " must be <= rank(data) = " +
                           str(data.rank()));
  }
  std::vector<std::int64_t> want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  MULTIGATHER_RETURN_IF_ERROR(updates_shape_is(out->op, updates, want, "indices.shape[:-1] ++ data.shape[K:]"));
  set_nd_error_context(out, indices, data, 0, "data", true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, data, indices, 0, out));
  return finish_coreml(data, updates, negate, want, out);
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
  const AttrSpec mode{"mode", AttrType::kEnum, "add", {"update", "add", "sub", "mul", "div", "max", "min"},
                      "how updates combine (div: refused, not exact); update: duplicates unspecified, last wins here"};
  {
    OpSpec op{"coreml.scatter", "coreml", "scatter_block",
              "scatter(data, indices, updates, axis=0, mode='add', validate_indices=False)",
              "output = data; output[p.., indices[i..], q..] = f(output[..], updates[p.., i.., q..])", docs + "scatter)",
              "data", "indices", {axis, mode, validate}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return coreml::scatter(x, i, u, a.get_int("axis"), a.get_enum("mode"), a.get_bool("validate_indices"), o);
    };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"coreml.scatter_along_axis", "coreml", "scatter_element",
              "scatter_along_axis(data, indices, updates, axis=0, mode='add', validate_indices=False)",
              "output = data; output[indices[i][j][k]][j][k] = f(output[..], updates[i][j][k])  (axis 0)",
              docs + "scatter_along_axis)", "data", "indices", {axis, mode, validate}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return coreml::scatter_along_axis(x, i, u, a.get_int("axis"), a.get_enum("mode"), a.get_bool("validate_indices"), o);
    };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"coreml.scatter_nd", "coreml", "scatter_nd",
              "scatter_nd(data, indices, updates, mode='add', validate_indices=False)",
              "output = data; output[indices[i.., :], t..] = f(output[..], updates[i.., t..])", docs + "scatter_nd)",
              "data", "indices", {mode, validate}, nullptr};
    op.kind = OpKind::kScatter;
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      return coreml::scatter_nd(x, i, u, a.get_enum("mode"), a.get_bool("validate_indices"), o);
    };
    ops->push_back(std::move(op));
  }
  // The rest of each row. Index dtypes: int32, int16, uint16, int8, uint8; Core ML itself has no
  // int64 indices, multigather accepts int64 anyway (a note says so). Index rule: negatives wrap
  // once (the parameter text: -D <= v < D); validate_indices=true makes an out-of-range index an
  // error; false (default) is "undefined but memory safe": multigather clamps to [0, D-1].
  const IndexRule by_validate{IndexMode::kClamp, true, "validate_indices"};
  const std::string dtypes = "Index dtypes int32, int16, uint16, int8, uint8 (int64 accepted). ";
  const std::string scatter_modes =
      "; updates dtype == data dtype. mode update, add (the default), sub (the engine negates the updates, exactly, "
      "before the add), mul, max, min (max / min on complex data: a TypeError); div is refused (multiplying by a "
      "reciprocal is not exact, and the core has no division). Duplicates with mode update: unspecified in Core ML; the last in row-major order wins here";
  const std::string gather = dtypes +
      "tf.gather semantics with batch_dims: output shape K = D[:axis] ++ N[batch_dims:] ++ D[axis+1:] (D = "
      "x.shape, N = indices.shape)";
  const std::string along = dtypes + "Same rank; the sizes other than axis are EQUAL; output shape = indices.shape";
  const std::string nd = dtypes +
      "K = indices.shape, K[-1] + batch_dims <= rank(x); output shape V = K[:-1] ++ D[batch_dims + K[-1]:]";
  const std::string scatter = dtypes +
      "Block scatter: updates.shape == data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:]" + scatter_modes;
  const std::string scatter_along = dtypes +
      "Element scatter: indices rank == data rank, with data's sizes on every dimension but axis; updates.shape "
      "== indices.shape" + scatter_modes;
  const std::string scatter_nd = dtypes +
      "K = indices.shape[-1] <= rank(data); updates.shape == indices.shape[:-1] ++ data.shape[K:]" + scatter_modes;
  state_facts(ops, {
      {"coreml.gather", by_validate, gather},
      {"coreml.gather_along_axis", by_validate, along},
      {"coreml.gather_nd", by_validate, nd},
      {"coreml.scatter", by_validate, scatter},
      {"coreml.scatter_along_axis", by_validate, scatter_along},
      {"coreml.scatter_nd", by_validate, scatter_nd},
  });
}

}  // namespace multigather::frontends
