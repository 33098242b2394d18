// NumPy take, take_along_axis and advanced integer indexing. Rules: docs/semantics.md section 5
// and https://numpy.org/doc/stable/reference/generated/numpy.take.html (numpy.take_along_axis),
// https://numpy.org/doc/stable/user/basics.indexing.html#integer-array-indexing; mapping:
// docs/semantics.md section 16 (block, element broadcasting, advanced indexing rows).
#include "multigather/frontends/numpy.hpp"

#include <algorithm>

#include "frontends/recipes.hpp"

namespace multigather::numpy {

using namespace frontends;

namespace {

// numpy converts index arrays to intp (int64) with a 'same_kind' cast before using them, so
// uint64 values of 2**63 and above wrap to negatives: np.take(a, np.uint64(2**64 - 1)) is a[-1].
TensorView as_intp(const TensorView& v) {
  if (v.dtype != DType::kUInt64) return v;
  return TensorView(v.data, DType::kInt64, v.shape, v.strides);
}

std::int64_t product(const Dims& shape, int from, int to) {
  std::int64_t p = 1;
  for (int d = from; d < to; ++d) p *= shape[d];
  return p;
}

}  // namespace

Status take(const TensorView& a, const TensorView& raw_indices, std::optional<std::int64_t> axis,
            std::string_view mode, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("numpy.take", a, raw_indices, out));
  // With an axis, numpy takes from a 0-D array as from a 1-D array of size 1 (axis 0 or -1).
  const TensorView a1 = a.rank() == 0 && axis ? TensorView(a.data, a.dtype, Dims{1}, Dims{1}) : a;
  std::int64_t ax = 0;
  if (axis) MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", *axis, a1.rank(), true, &ax));
  // Then numpy casts the indices to intp ('same_kind'): bool indices are 0 and 1, uint64 wraps.
  if (raw_indices.dtype != DType::kBool) {
    MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", raw_indices.dtype));
  }
  const TensorView indices = raw_indices.dtype == DType::kBool
      ? TensorView(raw_indices.data, DType::kUInt8, raw_indices.shape, raw_indices.strides)
      : as_intp(raw_indices);
  TensorView x;
  MULTIGATHER_RETURN_IF_ERROR(flatten_or_axis(out->op, "a", a1, axis, out, &x, &ax));
  const int axis_dim = static_cast<int>(ax);
  const std::int64_t size = x.shape[axis_dim], m = indices.numel();
  const std::int64_t outer = product(x.shape, 0, axis_dim), inner = product(x.shape, axis_dim + 1, x.rank());
  // numpy (PyArray_TakeFrom) refuses an empty axis only when the OUTPUT is not empty.
  if (size == 0 && outer != 0 && m != 0 && inner != 0) {
    return OutOfRange(out->op + ": cannot do a non-empty take from an empty axes (axis " + str(ax) +
                      " has size 0, indices shape " + to_string(indices.shape) + ")");
  }
  const std::string label = axis ? "axis " + str(ax) : std::string("the flattened input");
  if (mode == "raise") {
    set_policy(out, IndexMode::kError, true);
  } else if (mode == "wrap") {
    set_policy(out, IndexMode::kWrap, false);
  } else if (mode == "clip") {
    set_policy(out, IndexMode::kClamp, false);
    out->notes.push_back("mode='clip' clamps to [0, D-1] without wrapping negatives (-1 -> 0)");
  } else {
    return InvalidArgument(out->op + ": mode = '" + std::string(mode) + "' must be one of raise, wrap, clip");
  }
  set_error_context(out, indices, "indices", -1, {label}, {size}, true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, x, indices, ax, 0, out));
  // numpy checks the indices once per outer row even when the output is empty because a later
  // dimension is 0 (mode 'raise'; mode 'wrap' on an empty axis never ends in numpy 2.4, here it
  // is the same IndexError). The core reads no index for an empty output.
  if (outer != 0 && m != 0 && inner == 0 && (mode == "raise" || (mode == "wrap" && size == 0))) {
    MULTIGATHER_RETURN_IF_ERROR(check_indices_now(*out));
  }
  return Status::Ok();
}

Status take_along_axis(const TensorView& arr, const TensorView& raw_indices,
                       std::optional<std::int64_t> axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("numpy.take_along_axis", arr, raw_indices, out));
  // numpy's order: axis=None needs 1-D indices, else the axis; then the dtype (bool is not an
  // integer here; numpy raises IndexError, multigather TypeError); then the ranks.
  if (!axis && raw_indices.rank() != 1) {
    return InvalidArgument(out->op + ": when axis=None, `indices` must have a single dimension (got shape " +
                           to_string(raw_indices.shape) + ")");
  }
  std::int64_t ax = 0;
  if (axis) MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", *axis, arr.rank(), true, &ax));
  if (!is_index_type(raw_indices.dtype)) {
    return TypeError(out->op + ": `indices` must be an integer array (got " +
                     std::string(dtype_name(raw_indices.dtype)) + ")");
  }
  const TensorView indices = as_intp(raw_indices);
  set_policy(out, IndexMode::kError, true);
  if (!axis) {
    TensorView x;
    MULTIGATHER_RETURN_IF_ERROR(flatten_or_axis(out->op, "arr", arr, axis, out, &x, &ax));
    set_error_context(out, indices, "indices", -1, {"the flattened arr"}, {arr.numel()}, true, "");
    return lower_elements(out->op, x, indices, 0, ElementRule::kBroadcast, "arr", "indices", out);
  }
  if (indices.rank() != arr.rank()) {
    return InvalidArgument(out->op + ": `indices` and `arr` must have the same number of dimensions (" +
                           str(indices.rank()) + " and " + str(arr.rank()) + ")");
  }
  set_error_context(out, indices, "indices", -1, {"axis " + str(ax)}, {arr.shape[static_cast<int>(ax)]}, true, "");
  return lower_elements(out->op, arr, indices, ax, ElementRule::kBroadcast, "arr", "indices", out);
}

}  // namespace multigather::numpy

namespace multigather::frontends {

Status lower_advanced(const TensorView& a, const TensorView& raw_indices,
                      const std::vector<std::int64_t>& index_dims, Lowering* out,
                      std::vector<std::int64_t>* result_shape) {
  // Integer index arrays only (a bool array in a[...] is a mask, another operation).
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", raw_indices.dtype));
  const TensorView indices = numpy::as_intp(raw_indices);
  const int r = a.rank(), q = indices.rank();
  const int k = static_cast<int>(index_dims.size());
  if (k < 1) return InvalidArgument(out->op + ": index_dims must name at least one dimension");
  if (q < 1 || indices.shape[q - 1] != k) {
    return InvalidArgument(out->op + ": indices shape " + to_string(indices.shape) +
                           " must be B ++ [" + str(k) + "] (the " + str(k) +
                           " broadcast index arrays stacked on the last dimension)");
  }
  if (k > r) {
    return InvalidArgument(out->op + ": too many indices for array: array is " + str(r) +
                           "-dimensional, but " + str(k) + " were indexed");
  }
  std::vector<std::int64_t> dims;
  for (int j = 0; j < k; ++j) {
    std::int64_t d = 0;
    MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "index_dims[" + str(j) + "]", index_dims[static_cast<std::size_t>(j)], r, true, &d));
    if (j > 0 && d <= dims.back()) {
      return InvalidArgument(out->op + ": index_dims " + shape_str(index_dims) +
                             " must be strictly increasing (the order of the index arrays in a[...])");
    }
    dims.push_back(d);
  }
  const bool adjacent = dims.back() - dims.front() == k - 1;
  const int m = q - 1;  // rank of the broadcast index shape B
  std::vector<std::string> labels;
  std::vector<std::int64_t> sizes;
  for (std::int64_t d : dims) {
    labels.push_back("axis " + str(d));
    sizes.push_back(a.shape[static_cast<int>(d)]);
  }
  set_policy(out, IndexMode::kError, true);
  set_error_context(out, indices, "indices", q - 1, labels, sizes, true, "");
  ViewBuilder in = ViewBuilder::of(a), ix = ViewBuilder::of(indices);
  std::vector<std::int64_t>& shape = *result_shape;
  shape.clear();
  if (adjacent) {
    const int s = static_cast<int>(dims.front());
    in.add_dims(a, 0, s + k);
    in.add_unit(m);
    in.add_dims(a, s + k, r);
    ix.add_unit(s + k);
    ix.add_dims(indices, 0, m);
    ix.add_unit(r - s - k);
    for (int j = 0; j < k; ++j) out->axes.push_back(s + j);
    shape.assign(a.shape.begin(), a.shape.begin() + s);
    shape.insert(shape.end(), indices.shape.begin(), indices.shape.end() - 1);
    shape.insert(shape.end(), a.shape.begin() + s + k, a.shape.end());
    out->notes.push_back("adjacent index arrays: the broadcast index shape replaces dimensions " +
                         str(s) + ".." + str(s + k - 1) + " in place");
  } else {
    in.add_unit(m);
    in.add_dims(a, 0, r);
    ix.add_dims(indices, 0, m);
    ix.add_unit(r);
    for (std::int64_t d : dims) out->axes.push_back(m + d);
    shape.assign(indices.shape.begin(), indices.shape.end() - 1);
    for (int d = 0; d < r; ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) shape.push_back(a.shape[d]);
    }
    out->notes.push_back("separated index arrays: the broadcast index shape goes first");
  }
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, k, indices.strides[q - 1], out));
  return finish(shape, out);
}

}  // namespace multigather::frontends

namespace multigather::numpy {

Status advanced_index(const TensorView& a, const TensorView& indices,
                      const std::vector<std::int64_t>& index_dims, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("numpy.advanced_index", a, indices, out));
  std::vector<std::int64_t> shape;
  MULTIGATHER_RETURN_IF_ERROR(lower_advanced(a, indices, index_dims, out, &shape));
  for (std::size_t j = 0; j < out->index_errors.sizes.size(); ++j) {
    if (out->index_errors.sizes[j] == 0 && indices.numel() != 0) {
      return OutOfRange(out->op + ": index arrays are not empty but " + out->index_errors.labels[j] + " has size 0");
    }
  }
  // numpy checks every index of non-empty index arrays, even when the result is empty because
  // a dimension that is not indexed is 0 (np.zeros((3, 0))[[5]] is an IndexError).
  std::int64_t result_numel = 0;
  element_count(out->output_shape, &result_numel);
  if (indices.numel() != 0 && result_numel == 0) {
    MULTIGATHER_RETURN_IF_ERROR(check_indices_now(*out));
  }
  return Status::Ok();
}

// ---- Scatters -------------------------------------------------------------------------------

Status put_along_axis(const TensorView& arr, const TensorView& raw_indices, const TensorView& values,
                      std::optional<std::int64_t> axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("numpy.put_along_axis", arr, raw_indices, values, out));
  // take_along_axis's checks in numpy's order, then the values' dtype; the lowering is
  // take_along_axis's, the values broadcast to its output shape (numpy's fancy assignment).
  if (!axis && raw_indices.rank() != 1) {
    return InvalidArgument(out->op + ": when axis=None, `indices` must have a single dimension (got shape " +
                           to_string(raw_indices.shape) + ")");
  }
  std::int64_t ax = 0;
  if (axis) MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", *axis, arr.rank(), true, &ax));
  if (!is_index_type(raw_indices.dtype)) {
    return TypeError(out->op + ": `indices` must be an integer array (got " +
                     std::string(dtype_name(raw_indices.dtype)) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, arr, values, "arr", "values",
                                                  "multigather does not cast values; cast them to arr's dtype"));
  const TensorView indices = as_intp(raw_indices);
  set_policy(out, IndexMode::kError, true);
  out->reduction = Reduction::kNone;
  out->notes.push_back("duplicate indices: numpy's fancy assignment keeps the last value (row-major order), as here");
  if (!axis) {
    TensorView x;
    MULTIGATHER_RETURN_IF_ERROR(flatten_or_axis(out->op, "arr", arr, axis, out, &x, &ax));
    set_error_context(out, indices, "indices", -1, {"the flattened arr"}, {arr.numel()}, true, "");
    MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, x, indices, 0, ElementRule::kBroadcast, "arr", "indices", out));
  } else {
    if (indices.rank() != arr.rank()) {
      return InvalidArgument(out->op + ": `indices` and `arr` must have the same number of dimensions (" +
                             str(indices.rank()) + " and " + str(arr.rank()) + ")");
    }
    set_error_context(out, indices, "indices", -1, {"axis " + str(ax)}, {arr.shape[static_cast<int>(ax)]}, true, "");
    MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, arr, indices, ax, ElementRule::kBroadcast, "arr", "indices", out));
  }
  const std::vector<std::int64_t> target = dims_vec(out->shape.output_shape);
  return finish_framework_scatter(arr, values, target, out, [&] {
    return out->op + ": shape mismatch: value array of shape " + to_string(values.shape) +
           " could not be broadcast to indexing result of shape " + shape_str(target);
  });
}

Status put(const TensorView& a, const TensorView& raw_ind, const TensorView& v, std::string_view mode,
           Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("numpy.put", a, raw_ind, v, out));
  // np.put(a, ind, v, mode): a.flat[ind[j]] = v.flat[j] in order (the last duplicate wins), v
  // repeated cyclically when shorter than ind. Lowering: take's on the flattened a.
  if (mode == "raise") {
    set_policy(out, IndexMode::kError, true);
  } else if (mode == "wrap") {
    set_policy(out, IndexMode::kWrap, false);
  } else if (mode == "clip") {
    set_policy(out, IndexMode::kClamp, false);
    out->notes.push_back("mode='clip' clamps to [0, D-1] without wrapping negatives (-1 -> 0)");
  } else {
    return InvalidArgument(out->op + ": clipmode must be one of 'clip', 'raise', or 'wrap' (got '" +
                           std::string(mode) + "')");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "ind", raw_ind.dtype));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, a, v, "a", "v",
                                                  "multigather does not cast v; cast it to a's dtype"));
  const std::int64_t n = a.numel(), m = raw_ind.numel(), nv = v.numel();
  if (n == 0 && m != 0) return OutOfRange(out->op + ": cannot replace elements of an empty array");
  if (m != 0 && nv != 1 && nv < m) {
    return InvalidArgument(out->op + ": v has " + str(nv) + " elements, fewer than the " + str(m) +
                           " indices: numpy repeats v cyclically, which multigather does not (the Python wrapper "
                           "tiles v with numpy.resize; pass v with 1 or at least " + str(m) + " elements)");
  }
  const TensorView ind = as_intp(raw_ind);
  TensorView flat, idx, vals;
  MULTIGATHER_RETURN_IF_ERROR(contiguous(a, "a", out, &out->owned_input, &flat));
  MULTIGATHER_RETURN_IF_ERROR(contiguous(ind, "ind", out, &out->owned_indices, &idx));
  TensorView flat_v;
  if (nv == 1 || m == 0) {
    flat_v = TensorView(v.data, v.dtype, Dims{m == 0 ? 0 : 1}, Dims{0});
  } else {
    MULTIGATHER_RETURN_IF_ERROR(contiguous(v, "v", out, &out->owned_updates, &vals));
    flat_v = TensorView(vals.data, vals.dtype, Dims{m}, Dims{1});  // numpy uses v's first m elements
  }
  out->input = TensorView(flat.data, flat.dtype, Dims{n});
  const TensorView flat_i(idx.data, idx.dtype, Dims{m});
  out->reduction = Reduction::kNone;
  out->include_input = true;
  out->notes.push_back("duplicate indices: numpy.put assigns in order, so the last wins, as here");
  set_error_context(out, flat_i, "ind", -1, {"the flattened a"}, {n}, true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, out->input, flat_i, 0, ElementRule::kBroadcast, "a", "ind", out));
  return finish_framework_scatter(a, flat_v, {m}, out);
}

namespace {

// np.<ufunc>.at(a, indices, b) with one integer index array: a[indices] = ufunc(a[indices], b),
// unbuffered (every duplicate applies). a[indices] is numpy.take(a, indices, axis=0): its
// lowering, b broadcast to its shape indices.shape ++ a.shape[1:].
Status ufunc_at(const char* op, Reduction reduction, const TensorView& a, const TensorView& raw_indices,
                const TensorView& b, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter(op, a, raw_indices, b, out));
  if (a.rank() < 1) {
    return InvalidArgument(out->op + ": too many indices for array: array is 0-dimensional, but 1 were indexed");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", raw_indices.dtype));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, a, b, "a", "b",
                                                  "multigather does not cast b; cast it to a's dtype"));
  MULTIGATHER_RETURN_IF_ERROR(check_complex_order(
      out->op, "a", a.dtype, reduction, reduction == Reduction::kMax ? "maximum" : "minimum",
      "numpy's complex maximum / minimum propagate NaN and keep a on ties; multigather's complex min / max "
      "are StableHLO's, where the update wins both: scatter_multiaxis with reduction min / max"));
  const TensorView indices = as_intp(raw_indices);
  set_policy(out, IndexMode::kError, true);
  out->reduction = reduction;
  set_error_context(out, indices, "indices", -1, {"axis 0"}, {a.shape[0]}, true, "");
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, a, indices, 0, 0, out));
  const std::vector<std::int64_t> target = dims_vec(out->output_shape);
  return finish_framework_scatter(a, b, target, out, [&] {
    return out->op + ": operands could not be broadcast together: b shape " + to_string(b.shape) +
           " and a[indices] shape " + shape_str(target);
  });
}

}  // namespace

Status add_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out) {
  return ufunc_at("numpy.add_at", Reduction::kAdd, a, indices, b, out);
}
Status multiply_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out) {
  return ufunc_at("numpy.multiply_at", Reduction::kMul, a, indices, b, out);
}
Status minimum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out) {
  return ufunc_at("numpy.minimum_at", Reduction::kMin, a, indices, b, out);
}
Status maximum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out) {
  return ufunc_at("numpy.maximum_at", Reduction::kMax, a, indices, b, out);
}

}  // namespace multigather::numpy

namespace multigather::frontends {

void append_numpy_ops(std::vector<OpSpec>* ops) {
  const std::string docs = "https://numpy.org/doc/stable/reference/generated/";
  ops->push_back({"numpy.take", "numpy", "block", "numpy.take(a, indices, axis=None, mode='raise')",
                  "out[i.., j.., k..] = a[i.., indices[j..], k..]  (axis=None: a.flatten()[indices])",
                  docs + "numpy.take.html", "a", "indices",
                  {{"axis", AttrType::kOptionalInt, "none", {}, "gather axis (none: flatten a)"},
                   {"mode", AttrType::kEnum, "raise", {"raise", "wrap", "clip"}, "out-of-range policy"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return numpy::take(x, i, a.get_optional_int("axis"), a.get_enum("mode"), o);
                  }});
  ops->push_back({"numpy.take_along_axis", "numpy", "element", "numpy.take_along_axis(arr, indices, axis=-1)",
                  "out[i.., j, k..] = arr[i.., indices[i.., j, k..], k..]  (broadcasting)",
                  docs + "numpy.take_along_axis.html", "arr", "indices",
                  {{"axis", AttrType::kOptionalInt, "-1", {}, "gather axis (none: flatten arr, 1-D indices)"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return numpy::take_along_axis(x, i, a.get_optional_int("axis"), o);
                  }});
  ops->push_back({"numpy.advanced_index", "numpy", "advanced", "a[idx_0, .., idx_{k-1}] (indices = stack(broadcast(idx..), -1))",
                  "out[b.., rest..] = a[.., indices[b.., 0], .., indices[b.., k-1], ..] (index arrays on index_dims)",
                  "https://numpy.org/doc/stable/user/basics.indexing.html#integer-array-indexing", "a", "indices",
                  {{"index_dims", AttrType::kIntList, "0", {}, "the input dimension each stacked index array indexes (increasing)"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return numpy::advanced_index(x, i, a.get_ints("index_dims"), o);
                  }});
  {
    OpSpec op{"numpy.put_along_axis", "numpy", "scatter_element", "numpy.put_along_axis(arr, indices, values, axis)",
              "arr[i.., indices[i.., j, k..], k..] = values[i.., j, k..]  (broadcasting; in place)",
              docs + "numpy.put_along_axis.html", "arr", "indices",
              {{"axis", AttrType::kOptionalInt, "-1", {}, "scatter axis (none: flatten arr, 1-D indices)"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "values";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return numpy::put_along_axis(x, i, u, a.get_optional_int("axis"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"numpy.put", "numpy", "scatter_element", "numpy.put(a, ind, v, mode='raise')",
              "a.flat[ind.flat[j]] = v.flat[j]  (v repeats cyclically; the last duplicate wins; in place)",
              docs + "numpy.put.html", "a", "ind",
              {{"mode", AttrType::kEnum, "raise", {"raise", "wrap", "clip"}, "out-of-range policy"}}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "v";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return numpy::put(x, i, u, a.get_enum("mode"), o); };
    ops->push_back(std::move(op));
  }
  struct UfuncAt {
    const char* name;
    const char* ufunc;
    const char* formula;
    ScatterLowerFn fn;
  };
  for (const UfuncAt& u : {
           UfuncAt{"numpy.add_at", "add", "a[indices[j..], k..] += b[j.., k..]  (unbuffered: duplicates all add; b broadcasts; in place)",
                   [](const TensorView& x, const TensorView& i, const TensorView& v, const AttributeValues&, Lowering* o) { return numpy::add_at(x, i, v, o); }},
           UfuncAt{"numpy.multiply_at", "multiply", "a[indices[j..], k..] *= b[j.., k..]  (unbuffered: duplicates all multiply; b broadcasts; in place)",
                   [](const TensorView& x, const TensorView& i, const TensorView& v, const AttributeValues&, Lowering* o) { return numpy::multiply_at(x, i, v, o); }},
           UfuncAt{"numpy.minimum_at", "minimum", "a[indices[j..], k..] = minimum(a[indices[j..], k..], b[j.., k..])  (unbuffered; b broadcasts; in place)",
                   [](const TensorView& x, const TensorView& i, const TensorView& v, const AttributeValues&, Lowering* o) { return numpy::minimum_at(x, i, v, o); }},
           UfuncAt{"numpy.maximum_at", "maximum", "a[indices[j..], k..] = maximum(a[indices[j..], k..], b[j.., k..])  (unbuffered; b broadcasts; in place)",
                   [](const TensorView& x, const TensorView& i, const TensorView& v, const AttributeValues&, Lowering* o) { return numpy::maximum_at(x, i, v, o); }}}) {
    OpSpec op{u.name, "numpy", "scatter_block", std::string("numpy.") + u.ufunc + ".at(a, indices, b)", u.formula,
              "https://numpy.org/doc/stable/reference/generated/numpy.ufunc.at.html", "a", "indices", {}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "b";
    op.lower_scatter = u.fn;
    ops->push_back(std::move(op));
  }
  // The rest of each row: the index rule its lowering sets and numpy's rules. Indices of any
  // integer dtype are converted as numpy casts them to intp: uint64 values of 2**63 and above
  // wrap to negatives (2**64 - 1 is -1).
  const IndexRule wrap_once{IndexMode::kError, true, ""};
  const IndexRule by_mode{IndexMode::kError, true, "mode"};
  const std::string_view ufunc_at =
      "in place in numpy (the framework output may be a itself). One integer index array: a[indices[j..], k..] "
      "<op>= b[j.., k..] along axis 0, unbuffered (every duplicate applies, in row-major order of indices); b "
      "(a's dtype) broadcasts to indices.shape ++ a.shape[1:]. Out of range is an error before anything is "
      "written (numpy's tuple index forms are the Python wrapper's)";
  state_facts(ops, {
      {"numpy.take", by_mode,
       "output shape a.shape[:axis] ++ indices.shape ++ a.shape[axis+1:] (indices.shape for axis=None: a "
       "flattened); any dtype for a, integer or bool indices (bool is 0 and 1, numpy's cast; uint64 from 2**63 "
       "wraps to negatives); a 0-D a with an axis (0 or -1) is taken as 1-D of size 1. mode raise (negatives "
       "wrap once, otherwise an error), wrap (modulo), clip (clamp to [0, n-1] WITHOUT the negative wrap: -1 -> "
       "0). Like numpy's PyArray_TakeFrom: an empty axis is an IndexError when the OUTPUT is not empty; mode "
       "raise checks the indices once per outer row (a.shape[:axis] not empty) even when a later dimension makes "
       "the output empty; so does wrap on an empty axis (where numpy 2.4 never returns)"},
      {"numpy.take_along_axis", wrap_once,
       "arr and indices have the same ndim and BROADCAST on the dimensions other than axis; axis=None: indices "
       "must be 1-D and arr is flattened. Integer indices only (uint64 wraps as numpy's intp cast; bool is a "
       "TypeError, where numpy raises IndexError). Checked in numpy's order: axis=None's 1-D rule, the axis, the "
       "dtype, the ranks (shapes that do not broadcast are a ValueError; numpy raises IndexError)"},
      {"numpy.advanced_index", wrap_once,
       "a[idx_0, .., idx_{k-1}] with integer index arrays on the strictly increasing input dimensions index_dims "
       "and full slices elsewhere; the k arrays, already broadcast to a common shape B, come stacked on a last "
       "dimension: indices.shape = B ++ [k]. Adjacent index_dims (s, .., s+k-1): output shape a.shape[:s] ++ B ++ "
       "a.shape[s+k:]; separated ones: B ++ (a.shape without index_dims). Integer indices only (a bool array in "
       "a[...] is a mask, another operation: TypeError). Out of range is an error also when the result is empty "
       "because a dimension without index array is 0 (numpy checks every value of non-empty index arrays)"},
      {"numpy.put_along_axis", wrap_once,
       "in place in numpy (the framework output may be arr itself): arr[i.., indices[i.., j, k..], k..] = "
       "values[..]. take_along_axis's rules (same rank, broadcasting, axis=None flattens arr with 1-D indices, "
       "integer indices); values (arr's dtype) broadcast to the take_along_axis output shape. Duplicates: the last "
       "value in row-major order wins (numpy's fancy assignment)"},
      {"numpy.put", by_mode,
       "in place in numpy (the framework output may be a itself): a.flat[ind.flat[j]] = v.flat[j] for every j in "
       "order (flat positions; the last duplicate wins); ind integer, any shape. mode raise / wrap / clip as "
       "numpy.take (an empty a is an error). v (a's dtype) with 1 element is broadcast, with >= ind.size elements "
       "its first ind.size are used; numpy's cyclic repetition of a shorter v is refused here (the Python wrapper "
       "repeats v with numpy.resize)"},
      {"numpy.add_at", wrap_once, ufunc_at},
      {"numpy.multiply_at", wrap_once, ufunc_at},
      {"numpy.minimum_at", wrap_once, std::string_view(
       "as numpy.add_at with minimum (a NaN on either side gives NaN, as numpy.minimum); complex a is a "
       "TypeError (numpy's complex NaN and tie rules are not multigather's)")},
      {"numpy.maximum_at", wrap_once, std::string_view(
       "as numpy.add_at with maximum (a NaN on either side gives NaN, as numpy.maximum); complex a is a "
       "TypeError (numpy's complex NaN and tie rules are not multigather's)")},
  });
}

}  // namespace multigather::frontends
