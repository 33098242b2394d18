// tools/cli/op.hpp: what an operator contributes to the command line.
//
// `multigather run OP` and `multigather explain OP` dispatch on the op name through the list
// make_cli_ops() returns (registry.cpp). Each op adds its own attribute flags (gather_multiaxis:
// --axes, --index-mode, --negative-indices, --fill-value) to its `run` and `explain`
// subcommands; the tool adds the common ones (--input, --indices, --output, --input-dtype,
// --input-shape, --indices-shape). Adding an op is one class and one line in registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace CLI {
class App;
}

namespace multigather::cli {

class CliOp {
 public:
  virtual ~CliOp() = default;
  /// The name typed after `run` / `explain` ("gather_multiaxis", later "onnx.Gather", ...).
  virtual std::string_view name() const = 0;
  /// One line for `multigather ops`.
  virtual std::string_view summary() const = 0;
  /// Adds the op's attribute flags to `command`, storing their values in this object.
  virtual void add_flags(CLI::App& command) = 0;
  /// Computes the output from the parsed flags. Errors: InvalidArgument / TypeError for flag
  /// values or inputs the op rejects (exit code 2), OutOfRange for a bad index (exit code 4).
  virtual Status run(const TensorView& input, const TensorView& indices, Tensor* output) const = 0;
  /// Prints what run would do for these shapes: output shape, broadcasting, formula. No data.
  virtual Status explain(const Dims& input_shape, const Dims& indices_shape,
                         std::ostream& out) const = 0;
};

/// A fresh instance of every op the CLI offers, in `multigather ops` order.
std::vector<std::unique_ptr<CliOp>> make_cli_ops();

std::unique_ptr<CliOp> make_gather_multiaxis_cli_op();

/// One CliOp per framework op of the registry (framework_ops.cpp): flags = the op's attributes.
std::vector<std::unique_ptr<CliOp>> make_framework_cli_ops();

/// Parses a comma-separated integer list: "2,1", "-1", "[4, 2, 1]"; "" and "[]" are empty.
/// Errors name `flag`: "--axes: 'x' is not an integer (expected a comma-separated list like
/// 2,1)".
Status parse_int_list(std::string_view text, std::string_view flag, std::vector<std::int64_t>* out);

/// Parses true/false (also 1/0, yes/no, on/off). Errors name `flag`.
Status parse_bool_flag(std::string_view text, std::string_view flag, bool* out);

}  // namespace multigather::cli
