// The one registry of framework ops: typed attributes, lookup, lowering, explain, `ops` listing.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "frontends/lowering.hpp"

namespace multigather {

using frontends::str;

std::string_view attr_type_name(AttrType type) noexcept {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kOptionalInt: return "int|none";
    case AttrType::kIntList: return "int list";
    case AttrType::kEnum: return "enum";
    case AttrType::kScalar: return "scalar";
    case AttrType::kOptionalScalar: return "scalar|none";
    case AttrType::kBool: return "bool";
  }
  return "?";
}

namespace {

bool parse_int(std::string_view text, std::int64_t* out) {
  if (text.empty()) return false;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

std::string trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '[')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == ']')) t.remove_suffix(1);
  return std::string(t);
}

std::string value_text(const AttrValue& v) {
  if (!v.present) return "none";
  switch (v.type) {
    case AttrType::kInt: case AttrType::kOptionalInt: return str(v.i);
    case AttrType::kIntList: return frontends::shape_str(v.list);
    case AttrType::kEnum: return v.text;
    case AttrType::kScalar: case AttrType::kOptionalScalar: return v.scalar.to_string();
    case AttrType::kBool: return v.b ? "true" : "false";
  }
  return "?";
}

// The CLI spelling of an attribute: batch_dims -> --batch-dims.
std::string flag_name(const std::string& name) {
  std::string f = "--" + name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

// Attribute names are accepted with dashes or underscores (batch-dims == batch_dims).
std::string canonical_name(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

Status parse_attribute(const AttrSpec& spec, std::string_view text, AttrValue* out) {
  AttrValue v;
  v.type = spec.type;
  const std::string flag = flag_name(spec.name);
  const bool optional = spec.type == AttrType::kOptionalInt || spec.type == AttrType::kOptionalScalar;
  if (optional && (text == "none" || text == "None")) {
    v.present = false;
    *out = v;
    return Status::Ok();
  }
  switch (spec.type) {
    case AttrType::kInt: case AttrType::kOptionalInt:
      if (!parse_int(text, &v.i)) {
        return InvalidArgument(flag + ": '" + std::string(text) + "' is not an integer" +
                               (optional ? " or none" : ""));
      }
      break;
    case AttrType::kIntList: {
      const std::string t = trim(text);
      std::size_t start = 0;
      while (!t.empty() && start <= t.size()) {
        std::size_t comma = t.find(',', start);
        if (comma == std::string::npos) comma = t.size();
        std::int64_t item = 0;
        if (!parse_int(trim(std::string_view(t).substr(start, comma - start)), &item)) {
          return InvalidArgument(flag + ": '" + std::string(text) +
                                 "' is not a comma-separated list of integers");
        }
        v.list.push_back(item);
        start = comma + 1;
      }
      break;
    }
    case AttrType::kEnum: {
      v.text = std::string(text);
      if (std::find(spec.choices.begin(), spec.choices.end(), v.text) == spec.choices.end()) {
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        return InvalidArgument(flag + ": '" + v.text + "' is not one of " + list);
      }
      break;
    }
    case AttrType::kScalar: case AttrType::kOptionalScalar:
      if (!Scalar::parse(text, &v.scalar)) {
        return InvalidArgument(flag + ": '" + std::string(text) + "' is not a number");
      }
      break;
    case AttrType::kBool:
      if (text == "true" || text == "True" || text == "1") v.b = true;
      else if (text == "false" || text == "False" || text == "0") v.b = false;
      else return InvalidArgument(flag + ": '" + std::string(text) + "' is not true or false");
      break;
  }
  *out = v;
  return Status::Ok();
}

Attributes::Attributes(std::initializer_list<std::pair<std::string, std::string>> texts)
    : items_(texts) {}

Attributes& Attributes::set(std::string name, std::string text) {
  items_.emplace_back(std::move(name), std::move(text));
  return *this;
}

Attributes& Attributes::set_int(std::string name, std::int64_t value) {
  return set(std::move(name), str(value));
}

Attributes& Attributes::set_ints(std::string name, const std::vector<std::int64_t>& values) {
  std::string t = frontends::shape_str(values);  // "[1,2]": lists parse with or without brackets
  return set(std::move(name), t);
}

const AttrValue& AttributeValues::find(std::string_view name) const {
  for (const auto& [n, v] : values) {
    if (n == name) return v;
  }
  throw InvalidArgumentError("internal: attribute '" + std::string(name) + "' is not declared");
}

std::int64_t AttributeValues::get_int(std::string_view name) const { return find(name).i; }
std::optional<std::int64_t> AttributeValues::get_optional_int(std::string_view name) const {
  const AttrValue& v = find(name);
  return v.present ? std::optional<std::int64_t>(v.i) : std::nullopt;
}
const std::vector<std::int64_t>& AttributeValues::get_ints(std::string_view name) const {
  return find(name).list;
}
const std::string& AttributeValues::get_enum(std::string_view name) const { return find(name).text; }
std::optional<Scalar> AttributeValues::get_scalar(std::string_view name) const {
  const AttrValue& v = find(name);
  return v.present ? std::optional<Scalar>(v.scalar) : std::nullopt;
}
bool AttributeValues::get_bool(std::string_view name) const { return find(name).b; }

std::string AttributeValues::to_string() const {
  std::string s;
  for (const auto& [n, v] : values) s += (s.empty() ? "" : " ") + n + "=" + value_text(v);
  return s.empty() ? "(none)" : s;
}

Status resolve_attributes(const OpSpec& op, const Attributes& given, AttributeValues* out) {
  AttributeValues r;
  for (const auto& [given_name, text] : given.items()) {
    const std::string name = canonical_name(given_name);
    auto it = std::find_if(op.attrs.begin(), op.attrs.end(),
                           [&](const AttrSpec& a) { return a.name == name; });
    if (it == op.attrs.end()) {
      std::string list;
      for (const auto& a : op.attrs) list += (list.empty() ? "" : ", ") + a.name;
      return InvalidArgument(op.name + " has no attribute '" + name + "' (attributes: " +
                             (list.empty() ? "none" : list) + ")");
    }
    for (const auto& [n, v] : r.values) {
      if (n == name) return InvalidArgument(op.name + ": attribute '" + name + "' is given twice");
    }
    AttrValue v;
    MULTIGATHER_RETURN_IF_ERROR(parse_attribute(*it, text, &v));
    r.values.emplace_back(name, v);
  }
  AttributeValues ordered;
  for (const AttrSpec& a : op.attrs) {
    auto it = std::find_if(r.values.begin(), r.values.end(), [&](const auto& p) { return p.first == a.name; });
    if (it != r.values.end()) {
      ordered.values.push_back(*it);
      continue;
    }
    AttrValue v;
    MULTIGATHER_RETURN_IF_ERROR(parse_attribute(a, a.default_text, &v));
    ordered.values.emplace_back(a.name, v);
  }
  *out = std::move(ordered);
  return Status::Ok();
}

const std::vector<OpSpec>& op_registry() {
  static const std::vector<OpSpec> ops = [] {
    std::vector<OpSpec> v;
    frontends::append_core_ops(&v);
    frontends::append_onnx_ops(&v);
    frontends::append_torch_ops(&v);
    frontends::append_numpy_ops(&v);
    frontends::append_tf_ops(&v);
    frontends::append_jax_ops(&v);
    frontends::append_coreml_ops(&v);
    frontends::append_tosa_ops(&v);
    frontends::append_mlir_ops(&v);
    frontends::append_stablehlo_ops(&v);
    frontends::append_webnn_ops(&v);
    frontends::append_dml_ops(&v);
    return v;
  }();
  return ops;
}

const OpSpec* find_op(std::string_view name) noexcept {
  for (const OpSpec& op : op_registry()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

const std::vector<std::pair<std::string, std::string>>& equivalence_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes = {
      {"multiaxis", "the operator itself: any axes, any order, broadcasting"},
      {"element", "single axis element gather: same rank, output shape = indices shape"},
      {"flat", "single axis element gather on the flattened input"},
      {"block", "single axis block gather: output = X[:a] ++ I[b:] ++ X[a+1:]"},
      {"nd", "multiple contiguous axes block gather: coordinates on the last indices dimension"},
      {"advanced", "numpy-style advanced indexing: several index arrays, adjacent or separated"},
      {"windowed", "StableHLO gather: point gathers, windows, batching dims, any index_vector_dim"},
  };
  return classes;
}

Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const Attributes& attrs, Lowering* out) {
  const OpSpec* op = find_op(name);
  if (op == nullptr) {
    return InvalidArgument("unknown op '" + std::string(name) + "' (`multigather ops` lists them)");
  }
  if (!is_valid(input.dtype)) {
    return TypeError(op->name + ": " + op->input_name + " dtype " +
                     str(static_cast<int>(input.dtype)) + " is not supported");
  }
  AttributeValues values;
  MULTIGATHER_RETURN_IF_ERROR(resolve_attributes(*op, attrs, &values));
  Lowering l;
  l.op = op->name;
  try {
    MULTIGATHER_RETURN_IF_ERROR(op->lower(input, indices, values, &l));
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  *out = std::move(l);
  return Status::Ok();
}

std::string explain_lowering(const OpSpec& op, const AttributeValues& attrs,
                             const TensorView& input, const TensorView& indices,
                             const Lowering& l) {
  std::string axes = frontends::shape_str(l.axes);
  std::string mode(index_mode_name(l.options.index_mode));
  if (l.options.index_mode == IndexMode::kFill) mode += " (fill_value " + l.options.fill_value.to_string() + ")";
  std::string s;
  s += "op:                 " + op.name + "    [" + op.equivalence_class + "]\n";
  s += "signature:          " + op.signature + "\n";
  s += "formula:            " + op.formula + "\n";
  s += "follows:            " + op.source + "\n";
  s += "attributes:         " + attrs.to_string() + "\n";
  s += op.input_name + ":" + std::string(op.input_name.size() < 19 ? 19 - op.input_name.size() : 1, ' ') +
       to_string(input.shape) + " " + std::string(dtype_name(input.dtype)) + "\n";
  s += op.indices_name + ":" + std::string(op.indices_name.size() < 19 ? 19 - op.indices_name.size() : 1, ' ') +
       to_string(indices.shape) + " " + std::string(dtype_name(indices.dtype)) + "\n";
  s += "lowered call:       gather_multiaxis(input " + to_string(l.input.shape) + ", indices " +
       to_string(l.indices.shape) + ", axes " + axes + ")\n";
  s += "  input view:       shape " + to_string(l.input.shape) + " strides " + to_string(l.input.strides) + "\n";
  s += "  indices view:     actual " + to_string(l.indices.shape) + " logical " +
       to_string(l.logical_indices_shape) + " strides " + to_string(l.indices.strides) + "\n";
  s += "  axes:             " + axes + "\n";
  s += "  index mode:       " + mode + ", negative_indices=" +
       (l.options.negative_indices ? "true" : "false") + "\n";
  s += "core output:        " + to_string(l.core_output_shape) + "\n";
  if (!(l.core_output_strides == contiguous_strides(l.core_output_shape))) {
    s += "  written with strides " + to_string(l.core_output_strides) + " into the output\n";
  }
  s += "output:             " + to_string(l.output_shape) + "\n";
  for (const std::string& n : l.notes) s += "note: " + n + "\n";
  return s;
}

Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                  std::string* text) {
  try {
    const TensorView input(nullptr, input_dtype, input_shape);
    const TensorView indices(nullptr, indices_dtype, indices_shape);
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, input, indices, attrs, &l));
    const OpSpec* op = find_op(name);
    AttributeValues values;
    MULTIGATHER_RETURN_IF_ERROR(resolve_attributes(*op, attrs, &values));
    *text = explain_lowering(*op, values, input, indices, l);
    return Status::Ok();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
}

std::string list_ops() {
  std::string s;
  for (const auto& [cls, what] : equivalence_classes()) {
    s += cls + ": " + what + "\n";
    for (const OpSpec& op : op_registry()) {
      if (op.equivalence_class != cls) continue;
      s += "  " + op.name + std::string(op.name.size() < 30 ? 30 - op.name.size() : 1, ' ') + op.signature + "\n";
      for (const AttrSpec& a : op.attrs) {
        s += "      " + flag_name(a.name) + " (" + std::string(attr_type_name(a.type));
        if (!a.choices.empty()) {
          std::string c;
          for (const auto& x : a.choices) c += (c.empty() ? ": " : "|") + x;
          s += c;
        }
        s += ", default " + (a.default_text.empty() ? std::string("\"\"") : a.default_text) + ") " + a.help + "\n";
      }
    }
  }
  return s;
}

}  // namespace multigather
