// `multigather run/explain OP` for every op of the registry (include/multigather/registry.hpp),
// the core operator gather_multiaxis included: one CliOp per OpSpec, whose flags are the op's
// attributes spelled the framework's way (--axes, --axis, --dim, --batch-dims, --mode,
// --fill-value, --offset-dims=2,3, ...). Flag values are passed as text to the library
// (Attributes::set), whose one parser types, defaults and checks them and words the errors
// ("gather_multiaxis: attribute negative_indices: 'maybe' is not a bool (...)"). `run` lowers
// and executes the op (run_op); `explain` prints the library's explanation of the lowering from
// shapes alone (the indices dtype, which some frameworks restrict, is --indices-dtype).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <deque>
#include <ostream>

#include "../npy.hpp"
#include "multigather/ops.hpp"
#include "op.hpp"

namespace multigather::cli {
namespace {

/// The placeholder `--help` shows for an attribute's value.
const char* value_name(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "INT";
    case AttrType::kOptionalInt: return "INT|none";
    case AttrType::kIntList: return "LIST";
    case AttrType::kEnum: return "CHOICE";
    case AttrType::kScalar: return "V";
    case AttrType::kOptionalScalar: return "V|none";
    case AttrType::kBool: return "BOOL";
    case AttrType::kTensor: return "FILE.npy";
  }
  return "VALUE";
}

class RegistryCliOp final : public CliOp {
 public:
  explicit RegistryCliOp(const OpSpec& spec)
      : spec_(spec), summary_("[" + spec.equivalence_class + "] " + spec.signature + ": " + spec.formula),
        values_(spec.attrs.size()), options_(spec.attrs.size(), nullptr) {}

  std::string_view name() const override { return spec_.name; }
  std::string_view summary() const override { return summary_; }

  void add_flags(CLI::App& command) override {
    for (std::size_t i = 0; i < spec_.attrs.size(); ++i) {
      const AttrSpec& a = spec_.attrs[i];
      const bool required = flag_is_required(spec_, a);
      std::string help = a.help + " (" + std::string(attr_type_name(a.type));
      for (std::size_t c = 0; c < a.choices.size(); ++c) help += (c ? "|" : ": ") + a.choices[c];
      if (a.type == AttrType::kIntList) help += ", e.g. 2,1; the empty list is " + flag_of(a.name) + "=";
      if (a.type == AttrType::kBool) help += ": true/false, 1/0, yes/no, on/off";
      if (a.type == AttrType::kTensor) help += ": a .npy file";
      if (!required) help += "; default " + (a.default_text.empty() ? std::string("empty") : a.default_text);
      help += ")";
      CLI::Option* o = command.add_option(flag_of(a.name), values_[i], help)->type_name(value_name(a.type));
      if (a.type == AttrType::kIntList) o->expected(0, 1);  // "--axes=" is the empty list
      if (required) o->required();
      options_[i] = o;
    }
    command.add_option("--indices-dtype", indices_dtype_,
                       "explain only: the indices dtype (run reads it from the .npy; default int64)")
        ->type_name("DTYPE");
  }

  bool is_scatter() const override { return spec_.kind == OpKind::kScatter; }

  Status run(const TensorView& input, const TensorView& indices, const TensorView* updates,
             Tensor* output) const override {
    Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes(&a));
    if (updates != nullptr) return run_op(spec_.name, input, indices, *updates, a, output);
    return run_op(spec_.name, input, indices, a, output);
  }

  Status explain(const Dims& input_shape, const Dims& indices_shape, const Dims* updates_shape,
                 std::ostream& out) const override {
    const std::optional<DType> dtype = parse_dtype(indices_dtype_);
    if (!dtype) return InvalidArgument("--indices-dtype: '" + indices_dtype_ + "' is not a dtype name");
    std::string text;
    Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes(&a));
    if (updates_shape != nullptr) {
      MULTIGATHER_RETURN_IF_ERROR(explain_op(spec_.name, input_shape, DType::kFloat32, indices_shape, *dtype,
                                             *updates_shape, a, &text));
    } else {
      MULTIGATHER_RETURN_IF_ERROR(explain_op(spec_.name, input_shape, DType::kFloat32, indices_shape, *dtype, a, &text));
    }
    out << text;
    return Status::Ok();
  }

  Status explain_svg(const TensorView& input, const TensorView& indices, const TensorView* updates,
                     const SvgOptions& options, std::string* svg) const override {
    TensorView i = indices;
    if (i.data == nullptr) {
      const std::optional<DType> dtype = parse_dtype(indices_dtype_);
      if (!dtype) return InvalidArgument("--indices-dtype: '" + indices_dtype_ + "' is not a dtype name");
      i = TensorView(nullptr, *dtype, indices.shape);
    }
    Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes(&a));
    if (updates != nullptr) return multigather::explain_svg(spec_.name, input, i, *updates, a, options, svg);
    return multigather::explain_svg(spec_.name, input, i, a, options, svg);
  }

 private:
  /// The flags given, as texts for the library's attribute parser; absent flags take the
  /// registry's defaults. A tensor attribute's flag names a .npy file, read here ("none" is none).
  Status attributes(Attributes* out) const {
    Attributes a;
    for (std::size_t i = 0; i < spec_.attrs.size(); ++i) {
      if (options_[i] == nullptr || options_[i]->count() == 0) continue;
      const AttrSpec& spec = spec_.attrs[i];
      if (spec.type != AttrType::kTensor || values_[i] == "none" || values_[i] == "None") {
        a.set(spec.name, values_[i]);
        continue;
      }
      npy::NpyArray& file = tensors_.emplace_back();
      const Status s = npy::read_npy(values_[i], &file);
      if (!s.ok()) return Status(s.code(), flag_of(spec.name) + ": " + s.message());
      a.set_tensor(spec.name, file.view);
    }
    *out = std::move(a);
    return Status::Ok();
  }

  const OpSpec& spec_;
  std::string summary_;
  std::vector<std::string> values_;
  std::vector<CLI::Option*> options_;
  std::string indices_dtype_ = "int64";
  mutable std::deque<npy::NpyArray> tensors_;  // tensor attributes read from .npy (alive for the call)
};

}  // namespace

std::string flag_of(std::string_view attribute) {
  std::string flag = "--" + std::string(attribute);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

bool flag_is_required(const OpSpec& op, const AttrSpec& attribute) {
  // The registry's AttrSpec has no "required": gather_multiaxis's axes defaults to the empty
  // list there (the C++/Python callers always pass it). The CLI keeps the documented rule that
  // --axes must be given, so that a forgotten --axes is an error instead of a k = 0 copy.
  return op.family == "core" && attribute.name == "axes";
}

std::vector<const OpSpec*> ops_in_listing_order() {
  std::vector<const OpSpec*> ops;
  for (const auto& [cls, what] : equivalence_classes()) {
    for (const OpSpec& spec : op_registry()) {
      if (spec.equivalence_class == cls) ops.push_back(&spec);
    }
  }
  for (const OpSpec& spec : op_registry()) {  // a class missing from the list: last, not lost
    if (std::find(ops.begin(), ops.end(), &spec) == ops.end()) ops.push_back(&spec);
  }
  return ops;
}

std::vector<std::unique_ptr<CliOp>> make_cli_ops() {
  std::vector<std::unique_ptr<CliOp>> ops;
  for (const OpSpec* spec : ops_in_listing_order()) ops.push_back(std::make_unique<RegistryCliOp>(*spec));
  return ops;
}

}  // namespace multigather::cli
