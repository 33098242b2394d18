// multigather/ops.hpp: the registry of framework gather ops (SPEC section 2).
//
// Every framework gather (onnx.Gather, torch.gather, tf.gather_nd, stablehlo.gather, ...) is a
// LOWERING: a pure function from (input view, indices view, typed attributes) to one call of
// gather_multiaxis (input view, indices view, axes, options) plus the framework's output shape.
// Lowerings only reshape and slice views (no data is copied), except where stated in the op's
// notes (merging non-contiguous dimensions, StableHLO windows). The registry below is the one
// table that the C++ API, the CLI (`multigather ops | run OP | explain OP`), the Python package
// and the tests read; the per-op C++ functions with the framework's argument names live in
// multigather/frontends/<family>.hpp.
//
// Running an op = lower, allocate the framework-shaped output, call gather_multiaxis_into with
// the core-shaped view of that same buffer (a reshape, or for StableHLO a permutation expressed
// by strides). Explaining an op = lower from shapes and dtypes alone (null data pointers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multigather/gather.hpp"

namespace multigather {

// ---- Attributes ------------------------------------------------------------------------------

/// The type of one op attribute (how the CLI parses `--name=text`, how Python converts kwargs).
enum class AttrType : std::uint8_t {
  kInt,          // "1", "-2"
  kOptionalInt,  // "none" or an int (numpy.take axis=None, tf.gather axis=None)
  kIntList,      // "0,1,2" ("" = empty list)
  kEnum,         // one of AttrSpec::choices
  kScalar,       // a fill value: "0", "-3", "1.5", "nan", "true"
  kOptionalScalar,
  kBool,         // "true"/"false"/"1"/"0"
};

std::string_view attr_type_name(AttrType type) noexcept;  // "int", "int?", "int[]", ...

/// One attribute of an op: its framework name, type, default (as text, "none" = absent), the
/// allowed values of an enum and one line of help.
struct AttrSpec {
  std::string name;
  AttrType type = AttrType::kInt;
  std::string default_text;
  std::vector<std::string> choices;
  std::string help;
};

/// A parsed attribute value.
struct AttrValue {
  AttrType type = AttrType::kInt;
  bool present = true;  // false: an optional attribute given as "none"
  std::int64_t i = 0;
  std::vector<std::int64_t> list;
  std::string text;  // kEnum
  Scalar scalar;
  bool b = false;
};

/// Parses `text` as a value of `spec`. Errors (InvalidArgument) name the attribute, the text
/// and the expected form: "--batch_dims: 'x' is not an integer".
Status parse_attribute(const AttrSpec& spec, std::string_view text, AttrValue* out);

/// Attributes as given by a caller: name -> text (CLI, Python) or typed value (C++).
class Attributes {
 public:
  Attributes() = default;
  Attributes(std::initializer_list<std::pair<std::string, std::string>> texts);
  Attributes& set(std::string name, std::string text);
  Attributes& set_int(std::string name, std::int64_t value);
  Attributes& set_ints(std::string name, const std::vector<std::int64_t>& values);
  const std::vector<std::pair<std::string, std::string>>& items() const noexcept { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

/// Attributes resolved against an op's specs: every attribute present, defaults filled in.
class AttributeValues {
 public:
  std::int64_t get_int(std::string_view name) const;
  std::optional<std::int64_t> get_optional_int(std::string_view name) const;
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  const std::string& get_enum(std::string_view name) const;
  std::optional<Scalar> get_scalar(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  /// "axis=1 batch_dims=0" (every attribute, in spec order), for explain.
  std::string to_string() const;

  std::vector<std::pair<std::string, AttrValue>> values;  // in spec order

 private:
  const AttrValue& find(std::string_view name) const;
};

// ---- Lowering --------------------------------------------------------------------------------

/// Where a framework's index value sits, for error messages in the framework's own terms:
/// indices element at framework position p indexes input dimension `axes[p[coordinate_dim]]`
/// (or `axes[0]` when coordinate_dim < 0) whose size is `sizes[...]`.
struct IndexErrorContext {
  TensorView indices;              // the framework's indices (not the lowered view)
  std::string indices_name = "indices";
  int coordinate_dim = -1;         // -1: every element indexes labels[0]
  std::vector<std::string> labels; // "axis 1", "dim 0", "the flattened input"
  std::vector<std::int64_t> sizes;
  bool negatives_wrap = true;      // whether [-D, 0) is valid
  std::string rule;                // the framework's rule, appended: "torch.gather rejects ..."
};

/// The result of lowering one framework op call onto gather_multiaxis.
struct Lowering {
  std::string op;
  TensorView input;    // the core's input view (a reshape/slice of the framework input)
  TensorView indices;  // the core's indices view (actual shape; coordinates folded last)
  std::vector<std::int64_t> axes;
  GatherOptions options;
  Dims logical_indices_shape;
  Dims core_output_shape;
  Dims output_shape;          // the framework's output shape
  /// Strides (elements) of the core output view inside a C-contiguous buffer of output_shape.
  Dims core_output_strides;
  /// Copies made by the lowering (null when none); indices/input point into them.
  std::shared_ptr<Tensor> owned_indices;
  std::shared_ptr<Tensor> owned_input;
  std::vector<std::string> notes;  // printed by explain (copies made, policies chosen)
  IndexErrorContext index_errors;
};

using LowerFn = Status (*)(const TensorView& input, const TensorView& indices,
                           const AttributeValues& attrs, Lowering* out);

/// One registry entry.
struct OpSpec {
  std::string name;               // "onnx.GatherND"
  std::string family;             // "onnx"
  std::string equivalence_class;  // the seed's classes: "element", "block", "nd", ...
  std::string signature;          // "GatherND(data, indices, batch_dims=0)"
  std::string formula;            // "output[b, j.., t..] = data[b, indices[b, j.., :], t..]"
  std::string source;             // the documentation it follows
  std::string input_name = "input";
  std::string indices_name = "indices";
  std::vector<AttrSpec> attrs;
  LowerFn lower = nullptr;
};

/// Every op, in the order `multigather ops` prints them.
const std::vector<OpSpec>& op_registry();
/// The op named `name`, or null.
const OpSpec* find_op(std::string_view name) noexcept;
/// The seed's equivalence classes, in print order, with a one-line description each.
const std::vector<std::pair<std::string, std::string>>& equivalence_classes();

/// Resolves caller attributes against `op`: unknown names, bad values and repeated names are
/// InvalidArgument errors ("onnx.Gather has no attribute 'dim' (attributes: axis)").
Status resolve_attributes(const OpSpec& op, const Attributes& given, AttributeValues* out);

/// Lowers a call (data pointers may be null: shapes and dtypes alone suffice).
/// Errors, all prefixed with the op name and worded by the framework's rule:
///  - InvalidArgument: unknown op or attribute, a bad attribute value, ranks/shapes/axes/batch
///    dims the framework rejects ("onnx.GatherND: batch_dims = 1: data.shape[0] = 2 and
///    indices.shape[0] = 3 must be equal (batch dimensions are not broadcast)");
///  - TypeError: an index dtype the framework does not accept;
///  - OutOfRange (running only): an index outside its range under the framework's error policy,
///    named at its position in the FRAMEWORK's indices ("torch.gather: index[0,1] = -1 is out of
///    range for dim 1 of size 4 (valid range [0, 4)); torch.gather rejects negative indices").
Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const Attributes& attrs, Lowering* out);

/// Runs a lowered call into `output`, a C-contiguous buffer of lowering.output_shape with the
/// input's dtype. On an out-of-range index the message names the FRAMEWORK's indices position
/// and rule.
Status execute_lowering(const Lowering& lowering, const MutableTensorView& output) noexcept;

/// Lower + allocate + execute, exception-free.
Status run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs, Tensor* output) noexcept;
/// Throwing convenience (multigather::Error subclasses).
Tensor run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs = {});
/// Same for an already lowered call.
Tensor execute(const Lowering& lowering);

/// The text of `multigather explain OP`: framework formula, the lowered call (input view shape,
/// indices actual and logical shape, axes, index mode), core output and framework output shapes.
Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                  std::string* text);
std::string explain_lowering(const OpSpec& op, const AttributeValues& attrs,
                             const TensorView& input, const TensorView& indices,
                             const Lowering& lowering);

/// The text of `multigather ops`: every op grouped by equivalence class, with attributes.
std::string list_ops();

}  // namespace multigather
