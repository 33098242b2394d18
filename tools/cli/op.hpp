// tools/cli/op.hpp: what an operator contributes to the command line.
//
// `multigather run OP` and `multigather explain OP` dispatch on the op name through the list
// make_cli_ops() returns (framework_ops.cpp): one CliOp per row of the library's op registry
// (multigather/registry.hpp), gather_multiaxis included. Each op's attributes become flags of
// its `run` and `explain` subcommands, spelled with dashes (batch_dims -> --batch-dims), their
// values passed as text to the library's one attribute parser; the tool adds the common flags
// (--input, --indices, --output, --input-dtype, --input-shape, --indices-shape). Adding an op
// to the CLI needs nothing here: a new registry row is a new CLI op.
//
// `multigather ops --format=text|md|json|reference` prints the registry (op_tables.cpp).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace CLI {
class App;
}

namespace multigather::cli {

class CliOp {
 public:
  virtual ~CliOp() = default;
  /// The name typed after `run` / `explain` ("gather_multiaxis", "onnx.Gather", ...).
  virtual std::string_view name() const = 0;
  /// One line for `multigather ops` and the subcommand's help.
  virtual std::string_view summary() const = 0;
  /// Adds the op's attribute flags to `command`, storing their values in this object.
  virtual void add_flags(CLI::App& command) = 0;
  /// Whether the op is a scatter (its run and explain take updates: --updates, --updates-shape).
  virtual bool is_scatter() const = 0;
  /// Computes the output from the parsed flags (`updates`: null for a gather). Errors:
  /// InvalidArgument / TypeError for flag values or inputs the op rejects (exit code 2),
  /// OutOfRange for a bad index (exit code 4).
  virtual Status run(const TensorView& input, const TensorView& indices, const TensorView* updates,
                     Tensor* output) const = 0;
  /// Prints what run would do for these shapes: output shape, broadcasting, formula. No data.
  virtual Status explain(const Dims& input_shape, const Dims& indices_shape, const Dims* updates_shape,
                         std::ostream& out) const = 0;
  /// The picture of explain --svg (multigather::explain_svg): input / indices / updates with
  /// null data draw positions, with data their values (`updates`: null for a gather). Errors:
  /// those of explain_svg.
  virtual Status explain_svg(const TensorView& input, const TensorView& indices, const TensorView* updates,
                             const SvgOptions& options, std::string* svg) const = 0;
};

/// A fresh instance of every op the CLI offers: one per registry row, grouped by equivalence
/// class (gather_multiaxis first), in `multigather ops` order.
std::vector<std::unique_ptr<CliOp>> make_cli_ops();

/// The registry rows in `multigather ops` order: grouped by equivalence class.
std::vector<const OpSpec*> ops_in_listing_order();

/// "batch_dims" -> "--batch-dims": the CLI flag of an attribute.
std::string flag_of(std::string_view attribute);

/// Whether the CLI requires the attribute's flag although the registry gives it a default
/// (gather_multiaxis --axes: docs/cli.md documents it as required, `--axes=` is the empty list).
bool flag_is_required(const OpSpec& op, const AttrSpec& attribute);

/// The texts of `multigather ops --format=...` (op_tables.cpp), generated from the registry:
///  - text: each op's name, then "    [class] signature: formula";
///  - md: docs/cli.md's framework-op table (class | ops | flags);
///  - json: the registry rows (name, family, class, signature, formula, source, operand names,
///    attributes with flag, type, default, choices, help, required);
///  - reference: docs/quick_reference.md (one section per op).
std::string ops_text();
std::string ops_markdown_table();
std::string ops_json();
std::string ops_quick_reference();

}  // namespace multigather::cli
