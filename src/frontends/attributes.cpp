// Typed attribute values (multigather/attributes.hpp): the one text parser, typed conversion,
// and the resolved values the lowerings read.
#include "multigather/attributes.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace multigather {
namespace {

using detail::str;

bool parse_int(std::string_view text, std::int64_t* out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return false;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

// "[2, 1]", "(2, 1)", " 2,1 " -> "2, 1"
/// `t` without its spaces and one pair of enclosing brackets ("[2, 1]", "(2, 1)" -> "2, 1").
/// False for brackets that do not pair up ("[1", "1]", "[1)", "[[1]").
bool strip_brackets(std::string_view t, std::string_view* out) {
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  const bool open = !t.empty() && (t.front() == '[' || t.front() == '(');
  const bool close = !t.empty() && (t.back() == ']' || t.back() == ')');
  if (open != close || (open && t.size() < 2)) return false;
  if (open) {
    if ((t.front() == '[') != (t.back() == ']')) return false;
    t = t.substr(1, t.size() - 2);
  }
  if (t.find_first_of("[]()") != std::string_view::npos) return false;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  *out = t;
  return true;
}

std::string lower(std::string_view t) {
  std::string s(t);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_optional(AttrType t) {
  return t == AttrType::kOptionalInt || t == AttrType::kOptionalScalar || t == AttrType::kTensor;
}

/// "tensor[3, 4] int64".
std::string tensor_text(const TensorView& t) { return "tensor" + to_string(t.shape) + " " + std::string(dtype_name(t.dtype)); }

std::string choices_text(const AttrSpec& spec) {
  std::string list;
  for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
  return list;
}

std::string value_text(const AttrValue& v) {
  if (!v.present) return "none";
  switch (v.type) {
    case AttrType::kInt: case AttrType::kOptionalInt: return str(v.i);
    case AttrType::kIntList: {
      std::string s = "[";
      for (std::size_t i = 0; i < v.list.size(); ++i) s += (i ? "," : "") + str(v.list[i]);
      return s + "]";
    }
    case AttrType::kEnum: return v.text;
    case AttrType::kScalar: case AttrType::kOptionalScalar: return v.scalar.to_string();
    case AttrType::kBool: return v.b ? "true" : "false";
    case AttrType::kTensor: return v.present ? tensor_text(v.tensor) : "none";
  }
  return "?";
}

const char* kind_name(AttrArg::Kind k) {
  switch (k) {
    case AttrArg::Kind::kText: return "text";
    case AttrArg::Kind::kNone: return "none";
    case AttrArg::Kind::kInt: return "int";
    case AttrArg::Kind::kIntList: return "int list";
    case AttrArg::Kind::kScalar: return "float";
    case AttrArg::Kind::kBool: return "bool";
    case AttrArg::Kind::kString: return "string";
    case AttrArg::Kind::kTensor: return "tensor";
  }
  return "?";
}

// The value of a typed attribute argument, as a message quotes it: 3, [1, 2], 'clip', true, 2.5.
std::string value_text(const AttrArg& a) {
  switch (a.kind) {
    case AttrArg::Kind::kInt: return std::to_string(a.i);
    case AttrArg::Kind::kIntList: {
      std::string t = "[";
      for (std::size_t j = 0; j < a.list.size(); ++j) t += (j ? ", " : "") + std::to_string(a.list[j]);
      return t + "]";
    }
    case AttrArg::Kind::kScalar: return a.scalar.to_string();
    case AttrArg::Kind::kBool: return a.b ? "true" : "false";
    case AttrArg::Kind::kString: case AttrArg::Kind::kText: return "'" + a.text + "'";
    case AttrArg::Kind::kNone: return "";
    case AttrArg::Kind::kTensor: return tensor_text(a.tensor);
  }
  return "";
}

}  // namespace

std::string_view attr_type_name(AttrType type) noexcept {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kOptionalInt: return "int|none";
    case AttrType::kIntList: return "int list";
    case AttrType::kEnum: return "enum";
    case AttrType::kScalar: return "scalar";
    case AttrType::kOptionalScalar: return "scalar|none";
    case AttrType::kBool: return "bool";
    case AttrType::kTensor: return "tensor|none";
  }
  return "?";
}

Status parse_attribute(const AttrSpec& spec, std::string_view text, AttrValue* out) {
  AttrValue v;
  v.type = spec.type;
  const std::string what = "attribute " + spec.name + ": '" + std::string(text) + "'";
  if (is_optional(spec.type) && lower(text) == "none") {
    v.present = false;
    *out = std::move(v);
    return Status::Ok();
  }
  switch (spec.type) {
    case AttrType::kInt: case AttrType::kOptionalInt:
      if (!parse_int(text, &v.i)) {
        return InvalidArgument(what + " is not an integer" + (is_optional(spec.type) ? " or none" : ""));
      }
      break;
    case AttrType::kIntList: {
      std::string_view t;
      if (!strip_brackets(text, &t)) {
        return InvalidArgument(what + " has unbalanced brackets (expected a list like 2,1, [2, 1] or (2, 1))");
      }
      std::size_t start = 0;
      while (!t.empty() && start <= t.size()) {
        std::size_t comma = t.find(',', start);
        if (comma == std::string_view::npos) comma = t.size();
        std::int64_t item = 0;
        if (!parse_int(t.substr(start, comma - start), &item)) {
          return InvalidArgument(what + " is not a list of integers (expected a comma-separated "
                                        "list like 2,1; empty: '')");
        }
        v.list.push_back(item);
        start = comma + 1;
      }
      break;
    }
    case AttrType::kEnum:
      v.text = std::string(text);
      if (std::find(spec.choices.begin(), spec.choices.end(), v.text) == spec.choices.end()) {
        return InvalidArgument(what + " is not one of " + choices_text(spec));
      }
      break;
    case AttrType::kScalar: case AttrType::kOptionalScalar:
      if (!Scalar::parse(text, &v.scalar)) {
        return InvalidArgument(what + " is not a number (expected an integer, a float, nan, inf, "
                                      "true or false)");
      }
      break;
    case AttrType::kBool: {
      const std::string t = lower(text);
      if (t == "true" || t == "1" || t == "yes" || t == "on") {
        v.b = true;
      } else if (t == "false" || t == "0" || t == "no" || t == "off") {
        v.b = false;
      } else {
        return InvalidArgument(what + " is not a bool (expected true/false, 1/0, yes/no, on/off)");
      }
      break;
    }
    case AttrType::kTensor:
      return InvalidArgument(what + ": a tensor is given as an array, not as text (text may only be none)");
  }
  *out = std::move(v);
  return Status::Ok();
}

Status convert_attribute(const AttrSpec& spec, const AttrValue& default_value, const AttrArg& given,
                         AttrValue* out) {
  using Kind = AttrArg::Kind;
  if (given.kind == Kind::kText) return parse_attribute(spec, given.text, out);
  if (given.kind == Kind::kNone) {
    if (is_optional(spec.type)) {
      AttrValue v;
      v.type = spec.type;
      v.present = false;
      *out = std::move(v);
    } else {
      *out = default_value;  // none = the default
    }
    return Status::Ok();
  }
  AttrValue v;
  v.type = spec.type;
  auto mismatch = [&] {
    return TypeError("attribute " + spec.name + ": expected " + std::string(attr_type_name(spec.type)) +
                     ", got " + kind_name(given.kind) + " " + value_text(given));
  };
  switch (spec.type) {
    case AttrType::kInt: case AttrType::kOptionalInt:
      if (given.kind == Kind::kScalar && given.scalar.kind == Scalar::Kind::kUInt) {
        // An integer in [2^63, 2^64): a number, just not an int64 one.
        return InvalidArgument("attribute " + spec.name + " = " + given.scalar.to_string() +
                               " is outside the int64 range [-2^63, 2^63)");
      }
      if (given.kind != Kind::kInt) return mismatch();
      v.i = given.i;
      break;
    case AttrType::kIntList:
      if (given.kind == Kind::kIntList) {
        v.list = given.list;
      } else {
        return mismatch();
      }
      break;
    case AttrType::kEnum:
      if (given.kind != Kind::kString) return mismatch();
      v.text = given.text;
      if (std::find(spec.choices.begin(), spec.choices.end(), v.text) == spec.choices.end()) {
        return InvalidArgument("attribute " + spec.name + ": '" + v.text + "' is not one of " +
                               choices_text(spec));
      }
      break;
    case AttrType::kScalar: case AttrType::kOptionalScalar:
      if (given.kind == Kind::kScalar) {
        v.scalar = given.scalar;
      } else if (given.kind == Kind::kInt) {
        v.scalar = Scalar::from_int(given.i);
      } else if (given.kind == Kind::kBool) {
        v.scalar = Scalar::from_int(given.b ? 1 : 0);
      } else {
        return mismatch();
      }
      break;
    case AttrType::kBool:
      if (given.kind != Kind::kBool) return mismatch();
      v.b = given.b;
      break;
    case AttrType::kTensor:
      if (given.kind != Kind::kTensor) return mismatch();
      v.tensor = given.tensor;
      break;
  }
  *out = std::move(v);
  return Status::Ok();
}

Attributes::Attributes(std::initializer_list<std::pair<std::string, std::string>> texts) {
  for (const auto& [name, text] : texts) set(name, text);
}

Attributes& Attributes::set_arg(std::string name, AttrArg value) {
  items_.emplace_back(std::move(name), std::move(value));
  return *this;
}

Attributes& Attributes::set(std::string name, std::string text) {
  AttrArg a;
  a.kind = AttrArg::Kind::kText;
  a.text = std::move(text);
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_none(std::string name) {
  AttrArg a;
  a.kind = AttrArg::Kind::kNone;
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_int(std::string name, std::int64_t value) {
  AttrArg a;
  a.kind = AttrArg::Kind::kInt;
  a.i = value;
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_ints(std::string name, std::vector<std::int64_t> values) {
  AttrArg a;
  a.kind = AttrArg::Kind::kIntList;
  a.list = std::move(values);
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_scalar(std::string name, Scalar value) {
  AttrArg a;
  a.kind = AttrArg::Kind::kScalar;
  a.scalar = value;
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_bool(std::string name, bool value) {
  AttrArg a;
  a.kind = AttrArg::Kind::kBool;
  a.b = value;
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_string(std::string name, std::string value) {
  AttrArg a;
  a.kind = AttrArg::Kind::kString;
  a.text = std::move(value);
  return set_arg(std::move(name), std::move(a));
}

Attributes& Attributes::set_tensor(std::string name, const TensorView& value) {
  AttrArg a;
  a.kind = AttrArg::Kind::kTensor;
  a.tensor = value;
  return set_arg(std::move(name), std::move(a));
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
const TensorView* AttributeValues::get_tensor(std::string_view name) const {
  const AttrValue& v = find(name);
  return v.present ? &v.tensor : nullptr;
}

std::string AttributeValues::to_string() const {
  std::string s;
  for (const auto& [n, v] : values) s += (s.empty() ? "" : " ") + n + "=" + value_text(v);
  return s.empty() ? "(none)" : s;
}

}  // namespace multigather
