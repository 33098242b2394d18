// `multigather run/explain OP` for every framework op of the registry (include/multigather/ops.hpp):
// one CliOp per OpSpec, whose flags are the op's attributes spelled the framework's way
// (--axis, --dim, --batch-dims, --mode, --fill-value, --offset-dims=2,3, ...), typed and
// defaulted by the registry. `run` lowers and executes the op; `explain` prints the lowering
// from shapes alone (the indices dtype, which some frameworks restrict, is --indices-dtype).
//
// make_cli_ops (registry.cpp) appends these after gather_multiaxis.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ostream>

#include "multigather/ops.hpp"
#include "op.hpp"

namespace multigather::cli {
namespace {

std::string dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
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
      std::string help = a.help + " (" + std::string(attr_type_name(a.type));
      for (std::size_t c = 0; c < a.choices.size(); ++c) help += (c ? "|" : ": ") + a.choices[c];
      help += ", default " + (a.default_text.empty() ? std::string("empty") : a.default_text) + ")";
      CLI::Option* o = command.add_option("--" + dashed(a.name), values_[i], help)->type_name("VALUE");
      if (a.type == AttrType::kIntList) o->expected(0, 1);  // "--offset-dims=" is the empty list
      options_[i] = o;
    }
    command.add_option("--indices-dtype", indices_dtype_,
                       "explain only: the indices dtype (run reads it from the .npy; default int64)")
        ->type_name("DTYPE");
  }

  Status run(const TensorView& input, const TensorView& indices, Tensor* output) const override {
    return run_op(spec_.name, input, indices, attributes(), output);
  }

  Status explain(const Dims& input_shape, const Dims& indices_shape, std::ostream& out) const override {
    const std::optional<DType> dtype = parse_dtype(indices_dtype_);
    if (!dtype) return InvalidArgument("--indices-dtype: '" + indices_dtype_ + "' is not a dtype name");
    std::string text;
    MULTIGATHER_RETURN_IF_ERROR(
        explain_op(spec_.name, input_shape, DType::kFloat32, indices_shape, *dtype, attributes(), &text));
    out << text;
    return Status::Ok();
  }

 private:
  Attributes attributes() const {
    Attributes a;
    for (std::size_t i = 0; i < spec_.attrs.size(); ++i) {
      if (options_[i] != nullptr && options_[i]->count() > 0) a.set(spec_.attrs[i].name, values_[i]);
    }
    return a;
  }

  const OpSpec& spec_;
  std::string summary_;
  std::vector<std::string> values_;
  std::vector<CLI::Option*> options_;
  std::string indices_dtype_ = "int64";
};

}  // namespace

/// One CliOp per framework op of the registry (gather_multiaxis keeps its own CliOp), grouped by
/// the seed's equivalence classes so that `multigather ops` lists them class by class.
std::vector<std::unique_ptr<CliOp>> make_framework_cli_ops() {
  std::vector<std::unique_ptr<CliOp>> ops;
  for (const auto& [cls, what] : equivalence_classes()) {
    for (const OpSpec& spec : op_registry()) {
      if (spec.equivalence_class == cls && spec.name != "gather_multiaxis") {
        ops.push_back(std::make_unique<RegistryCliOp>(spec));
      }
    }
  }
  return ops;
}

}  // namespace multigather::cli
