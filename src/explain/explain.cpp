// `explain` for every op (multigather/lowering.hpp): built from the Lowering alone, so the text
// shows exactly the call that execute runs.
#include <cstring>
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "explain/explain_text.hpp"
#include "frontends/recipes.hpp"

namespace multigather {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? std::string(sep) : "") + parts[i];
  return s;
}

std::string label(const std::string& name) {
  return name + ":" + std::string(name.size() < 19 ? 19 - name.size() : 1, ' ');
}

// The per-dimension table of the core call: which dimension is an axis, which operand
// broadcasts.
std::string dimension_table(const Lowering& l) {
  const GatherShape& s = l.shape;
  const Dims& in = l.input.shape;
  const int r = in.size();
  if (r == 0) return "";
  std::ostringstream out;
  out << "  dim  input  indices  output  how\n";
  for (int d = 0; d < r; ++d) {
    const auto u = static_cast<std::size_t>(d);
    std::string how;
    if (s.is_axis[u]) {
      const auto j = std::find(s.axes.begin(), s.axes.end(), d) - s.axes.begin();
      how = "axis (axes[" + std::to_string(j) + "]): size from indices; coordinate " +
            std::to_string(j) + " indexes input size " + std::to_string(in[d]);
    } else if (s.input_broadcast[u]) {
      how = "input broadcast (1 -> " + std::to_string(s.output_shape[d]) + ")";
    } else if (s.indices_broadcast[u]) {
      how = "indices broadcast (1 -> " + std::to_string(s.output_shape[d]) + ")";
    } else {
      how = "equal";
    }
    out << "  " << std::setw(3) << d << "  " << std::setw(5) << in[d] << "  " << std::setw(7)
        << s.logical_indices_shape[d] << "  " << std::setw(6) << s.output_shape[d] << "  " << how
        << "\n";
  }
  return out.str();
}

// The formula written out for these shapes, e.g.
// "output[o0,o1,o2,o3] = input[o0, indices[0,o1,o2,o3], 0, o3]".
std::string written_formula(const Lowering& l) {
  const GatherShape& s = l.shape;
  const Dims& in = l.input.shape;
  const int r = in.size();
  if (r == 0) return "output[] = input[]  (rank 0: a copy of the scalar)";
  const int c = s.coordinate_size;
  const Dims& L = s.logical_indices_shape;
  const auto o = [](int d) { return "o" + std::to_string(d); };
  std::vector<std::string> outs, ins;
  for (int d = 0; d < r; ++d) outs.push_back(o(d));
  for (int d = 0; d < r; ++d) {
    const auto u = static_cast<std::size_t>(d);
    if (!s.is_axis[u]) {
      ins.push_back(in[d] == 1 ? "0" : o(d));
      continue;
    }
    const auto j = std::find(s.axes.begin(), s.axes.end(), d) - s.axes.begin();
    std::vector<std::string> q;
    for (int e = 0; e < r; ++e) {
      const std::string qe = L[e] == 1 ? "0" : o(e);
      if (e < r - 1 || c == 1) {
        q.push_back(qe);
      } else if (qe == "0") {
        q.push_back(std::to_string(j));
      } else {
        q.push_back(std::to_string(c) + "*" + qe + (j ? "+" + std::to_string(j) : ""));
      }
    }
    ins.push_back("indices[" + join(q, ",") + "]");
  }
  std::string f = "output[" + join(outs, ",") + "] = input[" + join(ins, ", ") + "]";
  if (s.axes.empty()) f += "  (k = 0: indices values are never read)";
  return f;
}

// How an index value v for an axis of size n becomes a position.
std::string resolution(const Lowering& l) {
  const GatherOptions& options = l.options;
  if (l.axes.empty()) return "no index values are read (index_mode does not apply)";
  const std::string mode(index_mode_name(options.index_mode));
  const bool unsigned_indices = is_unsigned_integer(l.indices.dtype);
  std::string neg = options.negative_indices && !unsigned_indices &&
                            options.index_mode != IndexMode::kWrap
                        ? "v < 0 becomes v + n (signed index dtypes), then "
                        : "";
  std::string rule;
  switch (options.index_mode) {
    case IndexMode::kError: rule = "v outside [0, n) is an error (IndexError; CLI exit code 4)"; break;
    case IndexMode::kClamp: rule = "v is clamped to [0, n-1]"; break;
    case IndexMode::kWrap: rule = "v becomes v mod n (floor modulo)"; break;
    case IndexMode::kFill:
      rule = "v outside [0, n) makes the element fill_value = " + options.fill_value.to_string();
      break;
    case IndexMode::kDrop: rule = "an update whose v is outside [0, n) is skipped"; break;
  }
  return "each index v for an axis of size n (index_mode=" + mode + "): " + neg + rule;
}

// What happens when several updates reach one element.
std::string duplicate_rule(const Lowering& l) {
  if (l.reduction == Reduction::kNone) return "updates reaching one element: the LAST in row-major order of G wins";
  return std::string("updates reaching one element combine in row-major order of G, starting from ") +
         (l.include_input ? "the input element" : "the first update; include_input=false");
}

// The scatter lines: the updates, the combine and the duplicate rule.
std::string scatter_lines(const Lowering& l) {
  std::string s;
  s += "  updates view:     shape " + to_string(l.updates.shape) + " strides " + to_string(l.updates.strides) +
       " (broadcast to G = " + to_string(l.shape.output_shape) + ")\n";
  s += "  reduction:        " + std::string(reduction_name(l.reduction)) + " (" + duplicate_rule(l) + ")\n";
  s += "  determinism:      the same bytes at every thread count and every run\n";
  return s;
}

}  // namespace

namespace detail {
std::string explain_formula(const Lowering& l) { return written_formula(l); }
std::string explain_resolution(const Lowering& l) { return resolution(l); }
std::string explain_dimension_table(const Lowering& l) { return dimension_table(l); }
std::string explain_duplicate_rule(const Lowering& l) { return duplicate_rule(l); }
}  // namespace detail

// The text of a gather's lowering (and the base of a scatter's).
static std::string explain_lowering_gather(const Lowering& l, const TensorView& input, const TensorView& indices) {
  static const OpSpec kNoSpec;
  const OpSpec& op = l.spec != nullptr ? *l.spec : kNoSpec;
  const std::string axes = frontends::shape_str(l.axes);
  std::string mode(index_mode_name(l.options.index_mode));
  if (l.options.index_mode == IndexMode::kFill) mode += " (fill_value " + l.options.fill_value.to_string() + ")";
  std::string s;
  s += "op:                 " + op.name + "    [" + op.equivalence_class + "]\n";
  s += "signature:          " + op.signature + "\n";
  s += "formula:            " + op.formula + "\n";
  s += "follows:            " + op.source + "\n";
  s += "attributes:         " + l.attributes.to_string() + "\n";
  s += label(op.input_name) + to_string(input.shape) + " " + std::string(dtype_name(input.dtype)) + "\n";
  s += label(op.indices_name) + to_string(indices.shape) + " " + std::string(dtype_name(indices.dtype)) + "\n";
  s += "lowered call:       gather_multiaxis(input " + to_string(l.input.shape) + ", indices " +
       to_string(l.indices.shape) + ", axes " + axes + ")\n";
  s += "  input view:       shape " + to_string(l.input.shape) + " strides " + to_string(l.input.strides) + "\n";
  s += "  indices view:     actual " + to_string(l.indices.shape) + " logical " +
       to_string(l.logical_indices_shape) + " strides " + to_string(l.indices.strides) + "\n";
  s += "  axes:             " + axes + "  (k = " + std::to_string(l.axes.size()) +
       ", coordinate size c = " + std::to_string(l.shape.coordinate_size) + ")\n";
  s += "  index mode:       " + mode + ", negative_indices=" +
       (l.options.negative_indices ? "true" : "false") + "\n";
  // A scatter's core output has its core input's shape (G is the shape of its updates).
  std::int64_t core_numel = l.shape.output_numel;
  if (l.kind == OpKind::kScatter) element_count(l.core_output_shape, &core_numel);
  s += "core output:        " + to_string(l.core_output_shape) + "  (" +
       std::to_string(core_numel) + " elements)\n";
  if (!(l.core_output_strides == contiguous_strides(l.core_output_shape))) {
    s += "  written with strides " + to_string(l.core_output_strides) + " into the output\n";
  }
  s += "output:             " + to_string(l.output_shape) + "\n";
  for (const std::string& n : l.notes) s += "note: " + n + "\n";
  const std::string table = dimension_table(l);
  if (!table.empty()) s += "\n" + table;
  s += "\n  " + written_formula(l) + "\n";
  s += "  " + resolution(l) + "\n";
  return s;
}

std::string explain_lowering(const Lowering& l, const TensorView& input, const TensorView& indices) {
  if (l.kind == OpKind::kScatter) {
    // The gather text with the scatter's call; the formula reads "input[...]" as the target.
    std::string s = explain_lowering_gather(l, input, indices);
    const std::string gather_call = "lowered call:       gather_multiaxis(";
    const auto at = s.find(gather_call);
    if (at != std::string::npos) {
      s.replace(at, gather_call.size(), "lowered call:       scatter_multiaxis(updates " +
                                            to_string(l.updates.shape) + ", ");
    }
    const auto core = s.find("core output:");
    if (core != std::string::npos) {
      s.insert(core, scatter_lines(l) + "  G (gather shape): " + to_string(l.shape.output_shape) +
                         "  (" + std::to_string(l.shape.output_numel) + " updates)\n");
    }
    s += "  scatter: for every o of G in row-major order, output[i(o)] = combine(output[i(o)], "
         "updates[o]), where i(o) is the input position in the formula above\n";
    return s;
  }
  return explain_lowering_gather(l, input, indices);
}

Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Dims& updates_shape,
                  const Attributes& attrs, std::string* text) {
  try {
    const TensorView input(nullptr, input_dtype, input_shape);
    const TensorView indices(nullptr, indices_dtype, indices_shape);
    const TensorView updates(nullptr, input_dtype, updates_shape);
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, input, indices, updates, attrs, &l));
    *text = explain_lowering(l, input, indices);
    const std::string updates_line = "updates:            " + to_string(updates_shape) + " " +
                                     std::string(dtype_name(input_dtype)) + "\n";
    const auto at = text->find("lowered call:");
    if (at != std::string::npos) text->insert(at, updates_line);
    return Status::Ok();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while explaining " + std::string(name));
  }
}

Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                  std::string* text) {
  try {
    const TensorView input(nullptr, input_dtype, input_shape);
    TensorView indices(nullptr, indices_dtype, indices_shape);
    Lowering l;
    Status s = lower_op(name, input, indices, attrs, &l);
    // A segment op whose output size is read from its ids (tf.math.segment_*, num_segments =
    // None) is explained with every id 0, and says so.
    const OpSpec* spec = find_op(name);
    Tensor zero_ids;
    const bool zeros = !s.ok() && s.code() == StatusCode::kInvalidArgument && spec != nullptr &&
                       spec->kind == OpKind::kSegment && s.reason() == StatusReason::kNeedsIndexValues;
    if (zeros) {
      zero_ids = Tensor(indices_dtype, indices_shape);
      if (zero_ids.nbytes() > 0) std::memset(zero_ids.data(), 0, zero_ids.nbytes());
      indices = zero_ids.view();
      s = lower_op(name, input, indices, attrs, &l);
    }
    MULTIGATHER_RETURN_IF_ERROR(s);
    *text = explain_lowering(l, input, indices);
    if (zeros) {
      *text += "shapes alone: the output size depends on the values of " + spec->indices_name +
               "; explained with every id 0\n";
    }
    return Status::Ok();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while explaining " + std::string(name));
  }
}

}  // namespace multigather
