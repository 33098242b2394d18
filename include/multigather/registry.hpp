// multigather/registry.hpp: the registry of framework ops (docs/spec.md section 2).
//
// One row (OpSpec) per framework gather: its name, family, equivalence class, signature,
// formula, source document, operand names, typed attributes and lowering function. The row is
// the one source of an op's facts: the CLI (`multigather ops | run OP | explain OP`), the C and
// Python APIs, `explain`, docs/cli.md's op table and the Python wrappers' checks all read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/options.hpp"
#include "multigather/tensor.hpp"

namespace multigather {

struct Lowering;

using LowerFn = Status (*)(const TensorView& input, const TensorView& indices,
                           const AttributeValues& attrs, Lowering* out);
/// A scatter's lowering: also the framework's updates.
using ScatterLowerFn = Status (*)(const TensorView& input, const TensorView& indices,
                                  const TensorView& updates, const AttributeValues& attrs,
                                  Lowering* out);

/// Which core operator an op lowers onto.
enum class OpKind : std::uint8_t {
  kGather = 0,   // gather_multiaxis (docs/spec.md sections 1-3)
  kScatter = 1,  // scatter_multiaxis (sections 4-5): the op also takes updates
  /// A segment reduction (section 6): called as a gather, (data, segment_ids) and attributes,
  /// lowered onto scatter_multiaxis of the data into the reduction's identity (the Lowering's
  /// kind is kScatter, its updates a view of the framework's data); data is the differentiable
  /// operand.
  kSegment = 2,
};

/// An op's index rule: what its lowering sets as the core's index policy (Lowering::options'
/// index_mode and negative_indices). `attribute` names the op's attribute that selects the
/// policy ("" when the framework fixes it); then mode / negative_indices are the policy of the
/// attribute's default value.
struct IndexRule {
  IndexMode mode = IndexMode::kError;
  bool negative_indices = true;
  std::string attribute;
  /// The rule in words where the policy alone does not say it (tf.math.unsorted_segment_*: a
  /// negative id is dropped, one too large is an error the lowering raises); "" = the policy's.
  std::string wording{};
};

/// How a framework reports an invalid argument (an InvalidArgument status: a shape, rank, axis
/// or attribute that breaks the op's rules): Python raises ValueError, or, for a framework whose
/// API throws TypeError for every invalid argument (WebNN's MLGraphBuilder methods),
/// multigather.ArgumentTypeError, a subclass of both TypeError and ValueError. Dtype errors
/// are TypeError and index errors IndexError either way.
enum class ArgumentError : std::uint8_t {
  kValueError = 0,
  kTypeError = 1,
};

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
  LowerFn lower = nullptr;               // gathers
  OpKind kind = OpKind::kGather;
  std::string updates_name = "updates";  // scatters: the framework's name of the updates
  ScatterLowerFn lower_scatter = nullptr;  // scatters
  IndexRule index_rule{};  // the policy the lowering sets (tests/registry_rows_test.cpp checks it)
  /// The framework's shape / dtype rules and constraints, as one paragraph of text.
  std::string rules{};
  /// The gradient of a scatter with reduction none where several updates reach one element:
  /// false, only the update that wins (the derivative of what the forward computes: JAX's
  /// rule, scatter_multiaxis); true, every one of them (PyTorch's derivatives.yaml: scatter's
  /// src gets grad.gather(dim, index), index_copy's source grad.index_select(dim, index)).
  bool gradient_to_every_duplicate = false;
  /// The Python exception of the op's invalid arguments (see ArgumentError).
  ArgumentError argument_error = ArgumentError::kValueError;
  /// Whether the row has a PyTorch operator, torch.ops.multigather.<torch_op_name(row)>, with
  /// its backward (python/torch_library registers one for every such row; multigather.torch_ops
  /// holds their handles). Every torch-family row has one but embedding_bag (a custom op of
  /// multigather.torch_ops); so do the two core rows.
  bool torch_op = false;
};

/// The name of `op`'s PyTorch operator: the row's name without "torch.", dots made underscores
/// (torch.index_add -> index_add, torch_scatter.segment_coo -> torch_scatter_segment_coo,
/// gather_multiaxis itself); "" for a row without one (OpSpec::torch_op false).
std::string torch_op_name(const OpSpec& op);

/// The index rule of `op` as one line: "negative indices wrap once ([-s, s-1]); any other index
/// out of range is an error (IndexError in Python)".
std::string index_rule_text(const OpSpec& op);

/// Every op, in the order `multigather ops` prints them.
const std::vector<OpSpec>& op_registry();
/// The op named `name`, or null.
const OpSpec* find_op(std::string_view name) noexcept;
/// "unknown op 'onnx.Gatherr' (did you mean onnx.Gather?)".
std::string unknown_op_message(std::string_view name);
/// The seed's equivalence classes, in print order, with a one-line description each.
const std::vector<std::pair<std::string, std::string>>& equivalence_classes();

/// Resolves caller attributes against `op`. InvalidArgument for an unknown or repeated name
/// ("onnx.Gather has no attribute 'dim' (attributes: axis)") or a bad text or enum value;
/// TypeError for a typed value of the wrong type. Messages start with the op name.
Status resolve_attributes(const OpSpec& op, const Attributes& given, AttributeValues* out);

/// The text of `multigather ops`: every op grouped by equivalence class, with attributes.
std::string list_ops();

}  // namespace multigather
