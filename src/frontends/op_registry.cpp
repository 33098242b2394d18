// The one registry of framework ops (multigather/registry.hpp): lookup, attribute resolution,
// lowering (multigather/lowering.hpp's lower_op) and the `ops` listing.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/device_memory.hpp"
#include "frontends/recipes.hpp"

namespace multigather {
namespace {

// Attribute names are accepted with dashes or underscores (batch-dims == batch_dims).
std::string canonical_name(std::string_view given) {
  std::string name(given);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The CLI spelling of an attribute, for `multigather ops`: batch_dims -> --batch-dims.
std::string flag_name(const std::string& name) {
  std::string f = "--" + name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::vector<AttrValue> parse_defaults(const OpSpec& op) {
  std::vector<AttrValue> values(op.attrs.size());
  for (std::size_t j = 0; j < op.attrs.size(); ++j) {
    const Status s = parse_attribute(op.attrs[j], op.attrs[j].default_text, &values[j]);
    if (!s.ok()) throw std::logic_error(op.name + ": bad default of " + op.attrs[j].name + ": " + s.message());
  }
  return values;
}

std::vector<OpSpec> build_registry() {
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
  frontends::append_segment_ops(&v);
  return v;
}

// Every op's attribute defaults, parsed once by the one text parser, in op_registry() order.
const std::vector<std::vector<AttrValue>>& registry_defaults() {
  static const std::vector<std::vector<AttrValue>> defaults = [] {
    std::vector<std::vector<AttrValue>> all;
    for (const OpSpec& op : op_registry()) all.push_back(parse_defaults(op));
    return all;
  }();
  return defaults;
}

// Levenshtein distance, case-insensitive (for "did you mean").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string unknown_op_message(std::string_view name) {
  std::string best;
  std::size_t best_distance = 3;  // suggest only close names
  for (const OpSpec& op : op_registry()) {
    const std::size_t d = edit_distance(name, op.name);
    if (d < best_distance) {
      best_distance = d;
      best = op.name;
    }
  }
  std::string m = "unknown op '" + std::string(name) + "'";
  if (!best.empty()) m += " (did you mean " + best + "?)";
  return m;
}

std::string torch_op_name(const OpSpec& op) {
  if (!op.torch_op) return {};
  std::string name = op.name.rfind("torch.", 0) == 0 ? op.name.substr(6) : op.name;
  for (char& c : name) c = c == '.' ? '_' : c;
  return name;
}

std::string index_rule_text(const OpSpec& op) {
  // The wording of each IndexMode, with the negative wrap first and without it.
  struct Wording {
    const char* wrapped;
    const char* unwrapped;
  };
  static const Wording kWording[] = {
      {"negative indices wrap once ([-s, s-1]); any other index out of range is an error (IndexError in Python)",
       "indices must lie in [0, s): a negative or out-of-range index is an error (IndexError in Python)"},
      {"negative indices wrap once, then an out-of-range index clamps to [0, s-1]",
       "no negative wrap: an index clamps to [0, s-1] (-1 -> 0)"},
      {"every index is taken modulo s (floor modulo: -1 -> s-1, s -> 0)",
       "every index is taken modulo s (floor modulo: -1 -> s-1, s -> 0)"},
      {"negative indices wrap once, then an out-of-range index gives fill_value",
       "an index outside [0, s) (negatives included) gives fill_value"},
      {"negative indices wrap once, then an update whose index is out of range is skipped",
       "an update whose index is outside [0, s) (negatives included) is skipped"},
  };
  const IndexRule& r = op.index_rule;
  if (!r.wording.empty()) return r.wording;
  const Wording& w = kWording[static_cast<int>(r.mode)];  // IndexMode's order: error .. drop
  std::string s = r.negative_indices ? w.wrapped : w.unwrapped;
  if (r.attribute.find(',') != std::string::npos) {
    s = "attributes " + r.attribute + " select it; by default " + s;
  } else if (!r.attribute.empty()) {
    s = "attribute " + r.attribute + " selects it; by default " + s;
  }
  return s;
}

const std::vector<OpSpec>& op_registry() {
  static const std::vector<OpSpec> ops = build_registry();
  return ops;
}

const OpSpec* find_op(std::string_view name) noexcept {
  const std::vector<OpSpec>& ops = op_registry();
  // A caller that passes an op's own name (the Python fast path, the C API's handles) is
  // answered by address; anything else by comparing names, the shortest test (the length)
  // first.
  for (const OpSpec& op : ops) {
    if (op.name.data() == name.data() && op.name.size() == name.size()) return &op;
  }
  for (const OpSpec& op : ops) {
    if (op.name.size() == name.size() && op.name == name) return &op;
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
      {"scatter", "the dual operator itself: updates combined into a copy of the input (reductions)"},
      {"scatter_element", "single axis element scatter: the dual of an element gather (updates shaped like indices)"},
      {"scatter_block", "single axis block scatter: the dual of a block gather (updates = X[:a] ++ I ++ X[a+1:])"},
      {"scatter_nd", "multiple contiguous axes block scatter: the dual of an nd gather"},
      {"scatter_windowed", "StableHLO scatter: point or windowed updates, batching dims, any index_vector_dim"},
      {"scatter_advanced", "numpy-style advanced-indexing scatter: the dual of an advanced gather (updates broadcast to a[idx..])"},
      {"segment", "segment reductions: data scattered along segment_ids into the reduction's identity (sum, prod, max, min, mean, sqrt_n)"},
  };
  return classes;
}

Status resolve_attributes(const OpSpec& op, const Attributes& given, AttributeValues* out) {
  const std::vector<OpSpec>& all = op_registry();
  const bool registered = &op >= all.data() && &op < all.data() + all.size();
  const std::vector<AttrValue> own = registered ? std::vector<AttrValue>{} : parse_defaults(op);
  const std::vector<AttrValue>& defaults = registered ? registry_defaults()[static_cast<std::size_t>(&op - all.data())] : own;
  AttributeValues r;
  r.values.reserve(op.attrs.size());
  for (std::size_t j = 0; j < op.attrs.size(); ++j) r.values.emplace_back(op.attrs[j].name, defaults[j]);
  // Attributes seen so far: a bit each (a vector past 64 attributes).
  std::uint64_t seen_bits = 0;
  std::vector<bool> seen_more(op.attrs.size() > 64 ? op.attrs.size() : 0, false);
  auto seen = [&](std::size_t j) -> bool {
    if (j < 64) {
      const bool was = (seen_bits >> j) & 1U;
      seen_bits |= std::uint64_t{1} << j;
      return was;
    }
    const bool was = seen_more[j];
    seen_more[j] = true;
    return was;
  };
  for (const auto& [given_name, arg] : given.items()) {
    // Dashes spelled as underscores (batch-dims == batch_dims); no copy for a name without.
    const bool dashed = given_name.find('-') != std::string::npos;
    const std::string canonical = dashed ? canonical_name(given_name) : std::string();
    const std::string& name = dashed ? canonical : given_name;
    std::size_t j = 0;
    while (j < op.attrs.size() && op.attrs[j].name != name) ++j;
    if (j == op.attrs.size()) {
      std::string list;
      for (const auto& a : op.attrs) list += (list.empty() ? "" : ", ") + a.name;
      return InvalidArgument(op.name + " has no attribute '" + name + "' (attributes: " +
                             (list.empty() ? "none" : list) + ")");
    }
    if (seen(j)) return InvalidArgument(op.name + ": attribute '" + name + "' is given twice");
    const Status s = convert_attribute(op.attrs[j], defaults[j], arg, &r.values[j].second);
    if (!s.ok()) return Status(s.code(), op.name + ": " + s.message(), s.reason());
  }
  *out = std::move(r);
  return Status::Ok();
}

std::string_view device_name(Device device) noexcept {
  switch (device) {
    case Device::kAuto: return "auto";
    case Device::kCPU: return "cpu";
    case Device::kCUDA: return "cuda";
  }
  return "?";
}

namespace {

// Both forms of lower_op: `updates` is null for a gather.
Status lower_any(std::string_view name, const TensorView& input, const TensorView& indices,
                 const TensorView* updates, const Attributes& attrs, Lowering* out, Device device) {
  const OpSpec* op = find_op(name);
  if (op == nullptr) return InvalidArgument(unknown_op_message(name));
  if (op->kind == OpKind::kScatter && updates == nullptr) {
    return InvalidArgument(op->name + " is a scatter: it needs " + op->updates_name +
                           " (the values it writes), besides " + op->input_name + " and " +
                           op->indices_name);
  }
  if (op->kind != OpKind::kScatter && updates != nullptr) {
    return InvalidArgument(op->name + " is a gather: it takes no updates");
  }
  if (!is_valid(input.dtype)) {
    return TypeError(op->name + ": " + op->input_name + " dtype " +
                     std::to_string(static_cast<int>(input.dtype)) + " is not supported");
  }
  Lowering l;
  l.op = op->name;
  l.spec = op;
  l.kind = op->kind == OpKind::kSegment ? OpKind::kScatter : op->kind;  // the core operator
  if (device == Device::kAuto) {  // where the operands live: no lowering reads device memory
    device = detail::any_cuda_memory({&input, &indices, updates}) ? Device::kCUDA : Device::kCPU;
  }
  l.device = device;
  MULTIGATHER_RETURN_IF_ERROR(resolve_attributes(*op, attrs, &l.attributes));
  try {
    if (op->kind == OpKind::kScatter) {
      if (!is_valid(updates->dtype)) {
        return TypeError(op->name + ": " + op->updates_name + " dtype " +
                         std::to_string(static_cast<int>(updates->dtype)) + " is not supported");
      }
      MULTIGATHER_RETURN_IF_ERROR(op->lower_scatter(input, indices, *updates, l.attributes, &l));
    } else {
      MULTIGATHER_RETURN_IF_ERROR(op->lower(input, indices, l.attributes, &l));
    }
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while lowering " + op->name);
  }
  *out = std::move(l);
  return Status::Ok();
}

}  // namespace

Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const Attributes& attrs, Lowering* out, Device device) {
  return lower_any(name, input, indices, nullptr, attrs, out, device);
}

Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const TensorView& updates, const Attributes& attrs, Lowering* out, Device device) {
  return lower_any(name, input, indices, &updates, attrs, out, device);
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

namespace {

/// The offset of `lowered` from `source`'s data when it points inside `source`'s bytes.
bool offset_inside(const void* lowered, const TensorView& source, std::ptrdiff_t* offset) noexcept {
  std::uintptr_t first = 0, last = 0;
  if (!byte_range(source, &first, &last)) return false;
  const auto p = reinterpret_cast<std::uintptr_t>(lowered);
  if (p < first || p > last) return false;
  *offset = static_cast<std::ptrdiff_t>(p - reinterpret_cast<std::uintptr_t>(source.data));
  return true;
}

const char* byte_at(const void* p, std::ptrdiff_t offset) noexcept { return static_cast<const char*>(p) + offset; }

}  // namespace

bool lowering_anchors(const Lowering& l, const TensorView& input, const TensorView& indices,
                      const TensorView* updates, LoweringAnchors* anchors) noexcept {
  if (input.data == nullptr || indices.data == nullptr || input.numel() == 0 || indices.numel() == 0 ||
      (updates != nullptr && (updates->data == nullptr || updates->numel() == 0))) {
    return false;
  }
  std::int64_t output_numel = 0;
  if (l.owned_input || l.owned_indices || l.owned_updates || l.has_scatter_base || l.reads_index_values ||
      !element_count(l.output_shape, &output_numel) || output_numel == 0) {
    return false;
  }
  LoweringAnchors a;
  a.has_error_indices = l.index_errors.indices.data != nullptr;
  a.constant_input = l.input_is_constant;
  // A segment op's core updates are its framework input (data).
  a.updates_in_input = l.spec != nullptr && l.spec->kind == OpKind::kSegment;
  if (a.updates_in_input && !offset_inside(l.updates.data, input, &a.updates)) return false;
  if ((!a.constant_input && !offset_inside(l.input.data, input, &a.input)) || !offset_inside(l.indices.data, indices, &a.indices) ||
      (a.has_error_indices && !offset_inside(l.index_errors.indices.data, indices, &a.error_indices)) ||
      (updates != nullptr && !offset_inside(l.updates.data, *updates, &a.updates))) {
    return false;
  }
  *anchors = a;
  return true;
}

void move_lowering(Lowering* l, const LoweringAnchors& anchors, const void* input, const void* indices,
                   const void* updates) noexcept {
  if (!anchors.constant_input) l->input.data = byte_at(input, anchors.input);
  l->indices.data = byte_at(indices, anchors.indices);
  if (anchors.has_error_indices) l->index_errors.indices.data = byte_at(indices, anchors.error_indices);
  if (anchors.updates_in_input) {
    l->updates.data = byte_at(input, anchors.updates);
  } else if (updates != nullptr) {
    l->updates.data = byte_at(updates, anchors.updates);
  }
}

}  // namespace multigather
