// multigather/attributes.hpp: the typed attributes of the registry's framework ops.
//
// An op declares its attributes (AttrSpec: framework name, type, default, enum choices). A
// caller gives values either typed (the C++ API, Python, the C API: ints, int lists, bools,
// scalars, enum strings, none) or as text (the CLI's `--axis=1`); both resolve to one AttrValue
// per declared attribute. Text has ONE parser (parse_attribute), so every surface accepts the
// same spellings. Messages name the attribute by its framework name ("attribute axis: 'x' is
// not an integer"), never by a CLI flag.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multigather/options.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace multigather {

/// The type of one op attribute.
enum class AttrType : std::uint8_t {
  kInt,          // 1, -2
  kOptionalInt,  // none or an int (numpy.take axis=None, tf.gather axis=None)
  kIntList,      // [0, 1, 2] (text: "0,1,2", "[0,1,2]", "" = empty list)
  kEnum,         // one of AttrSpec::choices
  kScalar,       // a fill value: 0, -3, 1.5, nan, true
  kOptionalScalar,
  kBool,         // true / false
  /// An optional tensor operand given by name (torch.nn.functional.embedding_bag's offsets and
  /// per_sample_weights): none, or a TensorView the caller keeps alive for the call. Text gives
  /// only "none" (the CLI reads a tensor attribute from a .npy file itself).
  kTensor,
};

/// "int", "int|none", "int list", "enum", "scalar", "scalar|none", "bool", "tensor|none".
std::string_view attr_type_name(AttrType type) noexcept;

/// A resolved attribute value.
struct AttrValue {
  AttrType type = AttrType::kInt;
  bool present = true;  // false: an optional attribute that is none
  std::int64_t i = 0;
  std::vector<std::int64_t> list;
  std::string text;  // kEnum
  Scalar scalar;
  bool b = false;
  TensorView tensor;  // kTensor (present): a view of the caller's tensor
};

/// One attribute of an op: its framework name, type, default (as text, "none" = absent; parsed
/// once by the registry), enum choices and one line of help.
struct AttrSpec {
  std::string name;
  AttrType type = AttrType::kInt;
  std::string default_text;
  std::vector<std::string> choices;
  std::string help;
};

/// One attribute as a caller gives it: typed, or text for parse_attribute.
struct AttrArg {
  enum class Kind : std::uint8_t { kText, kNone, kInt, kIntList, kScalar, kBool, kString, kTensor };
  Kind kind = Kind::kText;
  std::int64_t i = 0;
  std::vector<std::int64_t> list;
  Scalar scalar;
  bool b = false;
  std::string text;  // kText: the text to parse; kString: an enum choice
  TensorView tensor;  // kTensor
};

/// Attributes as given by a caller: name -> value. Names may be spelled with dashes or
/// underscores (batch-dims == batch_dims).
class Attributes {
 public:
  Attributes() = default;
  /// Texts, as the CLI takes them: Attributes{{"axis", "1"}, {"mode", "clip"}}.
  Attributes(std::initializer_list<std::pair<std::string, std::string>> texts);
  Attributes& set(std::string name, std::string text);  // text, parsed by parse_attribute
  Attributes& set_none(std::string name);                // none: the default, or "absent"
  Attributes& set_int(std::string name, std::int64_t value);
  Attributes& set_ints(std::string name, std::vector<std::int64_t> values);
  Attributes& set_scalar(std::string name, Scalar value);
  Attributes& set_float(std::string name, double value) { return set_scalar(std::move(name), Scalar::from_float(value)); }
  Attributes& set_bool(std::string name, bool value);
  Attributes& set_string(std::string name, std::string value);  // an enum choice
  Attributes& set_tensor(std::string name, const TensorView& value);  // kept alive by the caller
  Attributes& set_arg(std::string name, AttrArg value);
  const std::vector<std::pair<std::string, AttrArg>>& items() const noexcept { return items_; }

 private:
  std::vector<std::pair<std::string, AttrArg>> items_;
};

/// THE text parser of attribute values (the CLI's flags, Attributes::set). Accepted spellings:
/// ints in decimal; int lists "2,1", "[2, 1]", "(2, 1)", "" (empty); bools true/false, 1/0,
/// yes/no, on/off in any case; scalars "0", "-3", "1.5", "nan", "-inf", "true"; "none"/"None"
/// for optional types; an enum exactly as one of its choices. InvalidArgument naming the
/// attribute: "attribute axis: 'x' is not an integer".
Status parse_attribute(const AttrSpec& spec, std::string_view text, AttrValue* out);

/// A typed caller value as a value of `spec` (text goes through parse_attribute). An int is
/// accepted where a scalar is expected and as the one element of nothing else; kNone is "the
/// default" for a non-optional attribute (`default_value`). TypeError for a value of another type ("attribute
/// axis: expected int, got int list"), InvalidArgument for a bad enum choice.
Status convert_attribute(const AttrSpec& spec, const AttrValue& default_value, const AttrArg& given,
                         AttrValue* out);

/// Attributes resolved against an op's specs: every attribute present, defaults filled in, in
/// the op's declaration order.
class AttributeValues {
 public:
  std::int64_t get_int(std::string_view name) const;
  std::optional<std::int64_t> get_optional_int(std::string_view name) const;
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  const std::string& get_enum(std::string_view name) const;
  std::optional<Scalar> get_scalar(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  /// A tensor attribute's view, or null when it is none.
  const TensorView* get_tensor(std::string_view name) const;
  /// "axis=1 batch_dims=0" (every attribute, in spec order), for explain.
  std::string to_string() const;

  std::vector<std::pair<std::string, AttrValue>> values;  // in spec order

 private:
  const AttrValue& find(std::string_view name) const;
};

}  // namespace multigather
