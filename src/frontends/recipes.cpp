// The shared building blocks of every frontend: views built dimension by dimension, coordinate
// folding and the seed's three recipes (element, block, nd). Execution is src/api/execute.cpp.
#include "frontends/recipes.hpp"

#include "core/index_messages.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace multigather::frontends {

std::string shape_str(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += str(v[i]);
  }
  return s + "]";
}

std::vector<std::int64_t> dims_vec(const Dims& d) { return {d.begin(), d.end()}; }

void ViewBuilder::add_dims(const TensorView& v, int from, int to) {
  for (int d = from; d < to; ++d) add(v.shape[d], v.strides[d]);
}

Status begin_op(const char* op, const TensorView& input, const TensorView& indices, Lowering* out) {
  out->op = op;
  for (const TensorView* v : {&input, &indices}) {
    const char* name = v == &input ? "input" : "indices";
    if (v->shape.overflowed()) {
      return InvalidArgument(out->op + ": " + name + " rank " + str(v->rank()) + " exceeds the maximum rank " +
                             str(kMaxRank));
    }
    if (v->strides.size() != v->shape.size()) {
      return InvalidArgument(out->op + ": " + name + " has " + str(v->strides.size()) + " strides for rank " +
                             str(v->rank()));
    }
  }
  return Status::Ok();
}

Status begin_scatter(const char* op, const TensorView& input, const TensorView& indices,
                     const TensorView& updates, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op(op, input, indices, out));
  if (updates.shape.overflowed()) {
    return InvalidArgument(out->op + ": updates rank " + str(updates.rank()) + " exceeds the maximum rank " +
                           str(kMaxRank));
  }
  if (updates.strides.size() != updates.shape.size()) {
    return InvalidArgument(out->op + ": updates has " + str(updates.strides.size()) + " strides for rank " +
                           str(updates.rank()));
  }
  return Status::Ok();
}

Status check_scatter_element_sizes(const std::string& op, const TensorView& x, const TensorView& indices,
                                   std::int64_t axis, const std::string& xname, const std::string& iname,
                                   const std::string& too_big) {
  for (int d = 0; d < x.rank() && d < indices.rank(); ++d) {
    if (d == axis) continue;
    const std::int64_t xs = x.shape[d], is = indices.shape[d];
    const std::string pair = iname + ".shape[" + str(d) + "] = " + str(is) + " and " + xname + ".shape[" +
                             str(d) + "] = " + str(xs);
    if (is > xs) return InvalidArgument(op + ": " + pair + ": " + too_big);
    // is < xs: a partial write (the leading part; the rest keeps the input's values).
  }
  return Status::Ok();
}

Status to_view(const std::string& op, const ViewBuilder& b, const char* what, TensorView* out) {
  if (b.shape.size() > static_cast<std::size_t>(kMaxRank)) {
    return InvalidArgument(op + ": the lowered " + what + " view " + shape_str(b.shape) +
                           " has rank " + str(static_cast<std::int64_t>(b.shape.size())) +
                           ", above the maximum rank " + str(kMaxRank));
  }
  *out = TensorView(b.data, b.dtype, Dims(std::span<const std::int64_t>(b.shape)),
                    Dims(std::span<const std::int64_t>(b.strides)));
  return Status::Ok();
}

Status check_dtype(const std::string& op, const std::string& name, DType dtype,
                   std::initializer_list<DType> allowed) {
  std::string list;
  for (DType t : allowed) {
    if (t == dtype) return Status::Ok();
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(t));
  }
  return TypeError(op + ": " + name + " dtype " + std::string(dtype_name(dtype)) +
                   " is not supported (" + op + " accepts " + list + ")");
}

Status check_integer(const std::string& op, const std::string& name, DType dtype) {
  if (is_index_type(dtype)) return Status::Ok();
  return TypeError(op + ": " + name + " dtype " + std::string(dtype_name(dtype)) +
                   " is not an integer type");
}

Status normalize_axis(const std::string& op, const std::string& name, std::int64_t value,
                      int rank, bool allow_negative, std::int64_t* out) {
  const std::int64_t lo = allow_negative ? -rank : 0;
  if (value < lo || value >= rank) {
    return InvalidArgument(op + ": " + name + " = " + str(value) + " is out of range [" +
                           str(lo) + ", " + str(rank - 1) + "] for input rank " + str(rank));
  }
  *out = value < 0 ? value + rank : value;
  return Status::Ok();
}

Status contiguous(const TensorView& v, const std::string& what, Lowering* out,
                  std::shared_ptr<Tensor>* owner, TensorView* result) {
  if (v.is_contiguous() || v.numel() <= 1) {
    *result = TensorView(v.data, v.dtype, v.shape);
    return Status::Ok();
  }
  if (out->device == Device::kCUDA) {
    return InvalidArgument(out->op + ": " + what + " is not contiguous and its dimensions cannot "
                           "be merged by a view; on a CUDA device multigather does not copy it: "
                           "make it contiguous first");
  }
  out->notes.push_back(what + " is not contiguous: its dimensions cannot be merged by a view, so "
                       "it is copied once into a contiguous buffer");
  if (v.data == nullptr) {  // explain: shapes only
    *result = TensorView(nullptr, v.dtype, v.shape);
    return Status::Ok();
  }
  try {
    *owner = std::make_shared<Tensor>(Tensor::copy_of(v));
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while copying " + what);
  }
  *result = (*owner)->view();
  return Status::Ok();
}

Status flatten_or_axis(const std::string& op, const std::string& name, const TensorView& a,
                       std::optional<std::int64_t> axis, Lowering* out, TensorView* x,
                       std::int64_t* axis_out) {
  *axis_out = 0;
  if (axis) {
    *x = a;
    return normalize_axis(op, "axis", *axis, a.rank(), true, axis_out);
  }
  TensorView flat;
  MULTIGATHER_RETURN_IF_ERROR(contiguous(a, name, out, &out->owned_input, &flat));
  *x = TensorView(flat.data, flat.dtype, Dims{a.numel()});
  return Status::Ok();
}

void set_nd_error_context(Lowering* out, const TensorView& indices, const TensorView& x,
                          std::int64_t batch_dims, const std::string& xname, bool negatives_wrap,
                          std::string rule) {
  const int q = indices.rank();
  std::vector<std::string> labels;
  std::vector<std::int64_t> sizes;
  for (std::int64_t j = 0; j < indices.shape[q - 1]; ++j) {
    labels.push_back(xname + " dimension " + str(batch_dims + j));
    sizes.push_back(x.shape[static_cast<int>(batch_dims + j)]);
  }
  set_error_context(out, indices, "indices", q - 1, std::move(labels), std::move(sizes), negatives_wrap,
                    std::move(rule));
}

Status fold_coordinates(const std::string& op, const ViewBuilder& logical, int k,
                        std::int64_t coord_stride, Lowering* out) {
  if (k <= 1 || logical.shape.empty()) {  // nothing to fold: the logical view is the actual one
    MULTIGATHER_RETURN_IF_ERROR(to_view(op, logical, "indices", &out->indices));
    out->logical_indices_shape = Dims(std::span<const std::int64_t>(logical.shape));
    return Status::Ok();
  }
  ViewBuilder actual = logical;
  {
    const std::size_t last = actual.shape.size() - 1;
    if (actual.shape[last] == 1) {
      actual.shape[last] = k;
      actual.strides[last] = coord_stride;
    } else if (actual.strides[last] == k * coord_stride) {
      actual.shape[last] *= k;
      actual.strides[last] = coord_stride;
    } else {
      // The coordinate dimension cannot merge with the last logical dimension: copy.
      ViewBuilder with_coords = logical;
      with_coords.add(k, coord_stride);
      TensorView strided;
      MULTIGATHER_RETURN_IF_ERROR(to_view(op, with_coords, "indices", &strided));
      TensorView dense;
      MULTIGATHER_RETURN_IF_ERROR(contiguous(
          strided, "the indices (coordinates merged into dimension " + str(static_cast<std::int64_t>(last)) + ")",
          out, &out->owned_indices, &dense));
      actual.data = dense.data;
      actual.shape[last] *= k;
      actual.strides = dims_vec(contiguous_strides(Dims(std::span<const std::int64_t>(actual.shape))));
    }
  }
  MULTIGATHER_RETURN_IF_ERROR(to_view(op, actual, "indices", &out->indices));
  out->logical_indices_shape = Dims(std::span<const std::int64_t>(logical.shape));
  return Status::Ok();
}

namespace {

// The one infer_shape of a lowering: the core shape, kept in out->shape, and (unless a lowering
// set them) the row-major strides of the core output inside the framework output.
Status infer_core(Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(infer_shape(out->input.shape, out->indices.shape, out->axes, &out->shape));
  out->core_output_shape = out->shape.output_shape;
  if (out->core_output_strides.size() != out->shape.output_shape.size()) {
    out->core_output_strides = contiguous_strides(out->shape.output_shape);
  }
  return Status::Ok();
}

}  // namespace

Status finish_core_shaped(Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(infer_core(out));
  out->logical_indices_shape = out->shape.logical_indices_shape;
  out->output_shape = out->shape.output_shape;
  return Status::Ok();
}

Status finish_scatter(Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(infer_scatter_shape(out->input.shape, out->indices.shape,
                                                  out->updates.shape, out->axes, &out->shape));
  out->logical_indices_shape = out->shape.logical_indices_shape;
  out->core_output_shape = out->input.shape;
  if (out->core_output_strides.size() != out->input.shape.size()) {
    out->core_output_strides = contiguous_strides(out->input.shape);
  }
  if (out->output_shape.size() != out->input.shape.size() || out->output_shape.empty()) {
    out->output_shape = out->input.shape;
  }
  return Status::Ok();
}

namespace {

// Sets the framework output shape, a reshape of `core` (the core call's output, or for a
// scatter its input): InvalidArgument beyond kMaxRank, kInternal (a lowering bug) for another
// element count.
Status set_output_shape(const std::vector<std::int64_t>& output_shape, const Dims& core,
                        const char* core_name, Lowering* out) {
  if (output_shape.size() > static_cast<std::size_t>(kMaxRank)) {
    return InvalidArgument(out->op + ": output rank " +
                           str(static_cast<std::int64_t>(output_shape.size())) +
                           " exceeds the maximum rank " + str(kMaxRank));
  }
  out->output_shape = Dims(std::span<const std::int64_t>(output_shape));
  std::int64_t a = 0, b = 0;
  element_count(out->output_shape, &b);
  element_count(core, &a);
  if (a != b) {
    return Status(StatusCode::kInternal, out->op + ": lowering bug: " + core_name + " " +
                                             to_string(core) + " and output " +
                                             to_string(out->output_shape) + " differ in size");
  }
  return Status::Ok();
}

}  // namespace

Status finish_scatter(const std::vector<std::int64_t>& output_shape, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(finish_scatter(out));
  return set_output_shape(output_shape, out->input.shape, "core input", out);
}

Status check_updates_dtype(const std::string& op, const TensorView& data, const TensorView& updates,
                           const std::string& dname, const std::string& uname, const std::string& rule) {
  if (updates.dtype == data.dtype) return Status::Ok();
  return TypeError(op + ": " + uname + " dtype " + std::string(dtype_name(updates.dtype)) + " must equal " +
                   dname + " dtype " + std::string(dtype_name(data.dtype)) + (rule.empty() ? "" : " (" + rule + ")"));
}

Status check_complex_order(const std::string& op, const std::string& name, DType dtype, Reduction reduction,
                           const std::string& what, const std::string& rule) {
  if ((dtype != DType::kComplex64 && dtype != DType::kComplex128) ||
      (reduction != Reduction::kMin && reduction != Reduction::kMax)) {
    return Status::Ok();
  }
  return TypeError(op + ": " + name + " dtype " + std::string(dtype_name(dtype)) + " is not supported with " + what +
                   " (" + rule + ")");
}

Status negate_step(DType t, const std::string& why, Lowering* out) {
  switch (t) {
    case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
    case DType::kComplex64: case DType::kComplex128:
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16: case DType::kInt32:
    case DType::kUInt32: case DType::kInt64: case DType::kUInt64:
      break;
    default:
      return TypeError(out->op + ": " + why + " needs -updates, which multigather cannot form exactly for dtype " +
                       std::string(dtype_name(t)));
  }
  out->notes.push_back(why + ": the engine negates the updates before the add (sign flips are exact)");
  out->updates_step.kind = UpdatesStep::Kind::kNegate;
  return Status::Ok();
}

Status zeros_input(const Dims& shape, DType dtype, const std::string& why, Lowering* out) {
  // One zero element (16 bytes: every dtype's zero is all-zero bytes), broadcast: constant
  // static storage, as a segment op's identity; the engines fill the output from it (the CUDA
  // engine on the device), nothing is allocated or written here.
  alignas(16) static constexpr std::byte kZero[16] = {};
  out->notes.push_back(why + ": the output starts from zeros (one constant element, broadcast)");
  out->input = TensorView(kZero, dtype, shape, Dims::filled(shape.size(), 0));
  out->input_is_constant = true;
  return Status::Ok();
}

Status finish_framework_scatter(const TensorView& data, const TensorView& updates,
                                const std::vector<std::int64_t>& framework_shape, Lowering* out,
                                const std::function<std::string()>& broadcast_message) {
  // 1. updates broadcast to the framework shape (a view: stride 0 where it repeats).
  const auto no_broadcast = [&] {
    return InvalidArgument(broadcast_message ? broadcast_message()
                                             : out->op + ": updates shape " + to_string(updates.shape) +
                                                   " does not broadcast to " + shape_str(framework_shape));
  };
  const int R = static_cast<int>(framework_shape.size()), u = updates.rank();
  if (u > R) return no_broadcast();
  ViewBuilder b = ViewBuilder::of(updates);
  for (int d = 0; d < R; ++d) {
    const int ud = d - (R - u);
    const std::int64_t n = framework_shape[static_cast<std::size_t>(d)];
    if (ud < 0) {
      b.add(n, 0);
    } else if (updates.shape[ud] == n) {
      b.add(n, updates.strides[ud]);
    } else if (updates.shape[ud] == 1) {
      b.add(n, 0);
    } else {
      return no_broadcast();
    }
  }
  // 2. The same elements with G's shape: the non-unit dimensions of both, in order, when they
  // are the same sequence (the recipes only insert or drop unit dimensions); else a copy.
  const Dims& g = out->shape.output_shape;
  std::vector<std::int64_t> fs_sizes, fs_strides, g_sizes;
  for (int d = 0; d < R; ++d) {
    if (b.shape[static_cast<std::size_t>(d)] != 1) {
      fs_sizes.push_back(b.shape[static_cast<std::size_t>(d)]);
      fs_strides.push_back(b.strides[static_cast<std::size_t>(d)]);
    }
  }
  for (int d = 0; d < g.size(); ++d) if (g[d] != 1) g_sizes.push_back(g[d]);
  ViewBuilder core = ViewBuilder::of(updates);
  if (fs_sizes == g_sizes) {
    std::size_t j = 0;
    for (int d = 0; d < g.size(); ++d) {
      if (g[d] == 1) core.add(1, 0);
      else { core.add(g[d], fs_strides[j]); ++j; }
    }
  } else {
    TensorView broadcast, dense;
    MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, b, "updates", &broadcast));
    MULTIGATHER_RETURN_IF_ERROR(contiguous(broadcast, "updates (reshaped to the core shape " + to_string(g) + ")",
                                           out, &out->owned_updates, &dense));
    core = ViewBuilder::of(dense);
    const Dims st = contiguous_strides(g);
    for (int d = 0; d < g.size(); ++d) core.add(g[d], st[d]);
  }
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, core, "updates", &out->updates));
  // 3. Size-1 dimensions the recipe inserted into the input view (stride 0) take the row-major
  // stride instead (never used to address an element): an in-place output, the framework's
  // data viewed in the core shape, then has the input view's very strides.
  {
    const Dims row_major = contiguous_strides(out->input.shape);
    for (int d = 0; d < out->input.rank(); ++d) {
      if (out->input.shape[d] == 1) out->input.strides[d] = row_major[d];
    }
  }
  // 4. The scatter's own completion: the gather's output strides do not apply.
  out->core_output_strides = Dims();
  out->output_shape = Dims();
  // A partial write: the core input is a leading part of data (same rank, the same strides,
  // sizes at most data's); the output starts as all of data, the core writes its leading part.
  const TensorView& in = out->input;
  bool part = in.rank() == data.rank() && !(in.shape == data.shape) && in.data == data.data;
  for (int d = 0; part && d < in.rank(); ++d) {
    part = in.shape[d] <= data.shape[d] && (in.shape[d] == 1 || in.strides[d] == data.strides[d]);
  }
  if (part) {
    out->has_scatter_base = true;
    out->scatter_base = data;
    out->core_output_strides = contiguous_strides(data.shape);
    MULTIGATHER_RETURN_IF_ERROR(finish_scatter(out));
    out->output_shape = data.shape;
    out->notes.push_back("a partial write: the output starts as a copy of all of " + to_string(data.shape) +
                         "; the scatter writes into its leading part " + to_string(in.shape));
    return Status::Ok();
  }
  return finish_scatter(dims_vec(data.shape), out);
}

Status reshape_output(const std::vector<std::int64_t>& output_shape, Lowering* out) {
  return set_output_shape(output_shape, out->shape.output_shape, "core output", out);
}

Status finish(const std::vector<std::int64_t>& output_shape, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(infer_core(out));
  return reshape_output(output_shape, out);
}

void state_facts(std::vector<OpSpec>* ops, std::initializer_list<RowFacts> facts) {
  for (const RowFacts& f : facts) {
    auto row = std::find_if(ops->begin(), ops->end(), [&](const OpSpec& op) { return op.name == f.op; });
    if (row == ops->end()) throw std::logic_error("state_facts: no registry row " + std::string(f.op));
    row->index_rule = f.index_rule;
    row->rules = std::string(f.rules);
  }
}

void set_policy(Lowering* out, IndexMode mode, bool negative_indices) {
  out->options.index_mode = mode;
  out->options.negative_indices = negative_indices;
}

void set_error_context(Lowering* out, const TensorView& indices, const std::string& indices_name,
                       int coordinate_dim, std::vector<std::string> labels,
                       std::vector<std::int64_t> sizes, bool negatives_wrap, std::string rule) {
  IndexErrorContext& c = out->index_errors;
  c.indices = indices;
  c.indices_name = indices_name;
  c.coordinate_dim = coordinate_dim;
  c.labels = std::move(labels);
  c.sizes = std::move(sizes);
  c.negatives_wrap = negatives_wrap;
  c.rule = std::move(rule);
}

// ---- Recipes ---------------------------------------------------------------------------------

namespace {

// A ViewBuilder of `v`'s data with room for `rank` dimensions (one allocation per vector
// instead of one per doubling).
ViewBuilder builder_of(const TensorView& v, int rank) {
  ViewBuilder b = ViewBuilder::of(v);
  b.shape.reserve(static_cast<std::size_t>(rank > 0 ? rank : 0));
  b.strides.reserve(static_cast<std::size_t>(rank > 0 ? rank : 0));
  return b;
}

}  // namespace

Status lower_block(const std::string& op, const TensorView& x, const TensorView& indices,
                   std::int64_t axis, std::int64_t batch_dims, Lowering* out) {
  const int r = x.rank(), q = indices.rank();
  const int a = static_cast<int>(axis), b = static_cast<int>(batch_dims);
  ViewBuilder in = builder_of(x, r + q - b);
  in.add_dims(x, 0, a + 1);
  in.add_unit(q - b);
  in.add_dims(x, a + 1, r);
  ViewBuilder ix = builder_of(indices, r + q - b);
  ix.add_dims(indices, 0, b);
  ix.add_unit(a - b + 1);
  ix.add_dims(indices, b, q);
  ix.add_unit(r - a - 1);
  MULTIGATHER_RETURN_IF_ERROR(to_view(op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(op, ix, 1, 1, out));
  out->axes = {axis};
  std::vector<std::int64_t> shape;
  shape.reserve(static_cast<std::size_t>(r - 1 + q - b));
  shape.assign(x.shape.begin(), x.shape.begin() + a);
  shape.insert(shape.end(), indices.shape.begin() + b, indices.shape.end());
  shape.insert(shape.end(), x.shape.begin() + a + 1, x.shape.end());
  return finish(shape, out);
}

Status lower_elements(const std::string& op, const TensorView& x, const TensorView& indices,
                      std::int64_t axis, ElementRule rule, const std::string& xname,
                      const std::string& iname, Lowering* out) {
  const int r = x.rank();
  if (indices.rank() != r) {
    return InvalidArgument(op + ": " + iname + " rank " + str(indices.rank()) + " must equal " +
                           xname + " rank " + str(r));
  }
  TensorView sliced = x;
  for (int d = 0; d < r; ++d) {
    if (d == axis) continue;
    const std::int64_t xs = x.shape[d], is = indices.shape[d];
    // The pair of sizes, worded only for a message (no strings on the way of a valid call).
    const auto pair = [&] {
      return iname + ".shape[" + str(d) + "] = " + str(is) + " and " + xname + ".shape[" +
             str(d) + "] = " + str(xs);
    };
    switch (rule) {
      case ElementRule::kEqual:
        if (is != xs) {
          return InvalidArgument(op + ": " + pair() + " must be equal (only axis " + str(axis) +
                                 " may differ)");
        }
        break;
      case ElementRule::kAtMost:
        if (is > xs) {
          return InvalidArgument(op + ": " + pair() + ": the index size must not exceed the " +
                                 xname + " size on every dimension but " + str(axis));
        }
        sliced.shape[d] = is;  // read the leading part, never broadcast
        break;
      case ElementRule::kBroadcast:
        if (is != xs && is != 1 && xs != 1) {
          return InvalidArgument(op + ": " + pair() + " are not broadcastable (dimension " +
                                 str(d) + " is not the gather axis)");
        }
        break;
    }
  }
  if (rule == ElementRule::kAtMost && !(sliced.shape == x.shape)) {
    out->notes.push_back(xname + " sliced to " + to_string(sliced.shape) + " (a view: the " +
                         "leading part is read, size-1 index dimensions do not broadcast)");
  }
  out->input = sliced;
  out->axes = {axis};
  // One coordinate per position: the indices view is the framework's, as is (fold_coordinates
  // with k = 1 would copy it dimension by dimension into the same view).
  out->indices = TensorView(indices.data, indices.dtype, indices.shape, indices.strides);
  out->logical_indices_shape = indices.shape;
  return finish_core_shaped(out);
}

Status check_batch_equal(const std::string& op, const TensorView& x, const TensorView& indices,
                         std::int64_t batch_dims, const std::string& xname,
                         const std::string& iname) {
  for (int d = 0; d < batch_dims; ++d) {
    if (x.shape[d] != indices.shape[d]) {
      return InvalidArgument(op + ": batch_dims = " + str(batch_dims) + ": " + xname + ".shape[" +
                             str(d) + "] = " + str(x.shape[d]) + " and " + iname + ".shape[" +
                             str(d) + "] = " + str(indices.shape[d]) +
                             " must be equal (batch dimensions are not broadcast)");
    }
  }
  return Status::Ok();
}

Status lower_nd(const std::string& op, const TensorView& x, const TensorView& indices,
                std::int64_t batch_dims, Lowering* out) {
  const int r = x.rank(), q = indices.rank(), b = static_cast<int>(batch_dims);
  const int k = static_cast<int>(indices.shape[q - 1]);
  // The seed's gatherNdBlocks: index dims J overlap the indexed dims (the output takes the
  // logical indices size on axes), so the lowered rank is max(b + k, q - 1) + len(T).
  const int lead = std::max(b + k, q - 1);
  ViewBuilder in = builder_of(x, lead + r - b - k);
  in.add_dims(x, 0, b + k);
  in.add_unit(lead - (b + k));
  in.add_dims(x, b + k, r);
  ViewBuilder ix = builder_of(indices, lead + r - b - k);
  ix.add_dims(indices, 0, q - 1);
  ix.add_unit(lead - (q - 1) + (r - b - k));
  MULTIGATHER_RETURN_IF_ERROR(to_view(op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(op, ix, k, indices.strides[q - 1], out));
  out->axes.clear();
  for (int j = 0; j < k; ++j) out->axes.push_back(b + j);
  if (k == 0) out->notes.push_back("indices.shape[-1] = 0: no coordinates, whole slices are copied");
  std::vector<std::int64_t> shape;
  shape.reserve(static_cast<std::size_t>(q - 1 + r - b - k));
  shape.assign(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), x.shape.begin() + b + k, x.shape.end());
  return finish(shape, out);
}

// ---- Execution -------------------------------------------------------------------------------

Status check_indices_now(const Lowering& l) {
  if (l.device == Device::kCUDA) return Status::Ok();
  return detail::framework_out_of_range(l.op, l.index_errors, l.index_errors.indices);
}

}  // namespace multigather::frontends
