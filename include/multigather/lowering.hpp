// multigather/lowering.hpp: step 1 of the one pipeline, lower(op, attributes, operands).
//
//     lower_op(op, input, indices, attributes) -> Lowering -> execute(Lowering, output, context)
//
// Every framework gather (onnx.Gather, torch.gather, tf.gather_nd, stablehlo.gather, ...) and
// the core operator itself (gather_multiaxis: the identity lowering) is a LOWERING: a pure
// function from (input view, indices view, typed attributes) to one validated call of
// gather_multiaxis (input view, indices view, axes, options, inferred shape) plus the
// framework's output shape and the strides that place the core output inside it. Lowerings
// reshape and slice views; they copy data only where an op's notes say so (merging
// non-contiguous dimensions, StableHLO windows). Shapes and dtypes alone suffice (null data
// pointers): that is shape inference and `explain`. Step 2, execute, is multigather/execute.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "multigather/gather.hpp"
#include "multigather/registry.hpp"
#include "multigather/scatter.hpp"

namespace multigather {

/// Where a call's operands live, and so which engine runs it.
enum class Device : std::uint8_t {
  kAuto = 0,  // execute: CUDA when the operands are CUDA memory (CUDA builds), else CPU
  kCPU = 1,
  kCUDA = 2,
};
std::string_view device_name(Device device) noexcept;  // "auto", "cpu", "cuda"

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

/// The result of lowering one op call onto gather_multiaxis (or, for a scatter op, onto
/// scatter_multiaxis): made once per call, it carries the validated core shape, so execute
/// infers nothing again.
///
/// A scatter's Lowering reads the same fields with these meanings: `input`, `indices`, `axes`
/// and `options` are the core scatter's (its index_mode may be drop); `shape` is G, the shape
/// of the gather that reads the targets; `updates` broadcasts to G; `core_output_shape` is the
/// core input's shape (a scatter's output has its input's shape), `output_shape` the framework's
/// output shape, `core_output_strides` the core output's place inside it.
struct Lowering {
  std::string op;
  const OpSpec* spec = nullptr;  // the registry row
  OpKind kind = OpKind::kGather;
  AttributeValues attributes;    // resolved, in spec order (explain prints them)
  Device device = Device::kCPU;  // where the operands live (lowerings never read device memory)
  TensorView input;    // the core's input view (a reshape/slice of the framework input)
  TensorView indices;  // the core's indices view (actual shape; coordinates folded last)
  std::vector<std::int64_t> axes;
  GatherOptions options;
  GatherShape shape;  // infer_shape(input, indices, axes), computed once
  Dims logical_indices_shape;
  Dims core_output_shape;
  Dims output_shape;  // the framework's output shape
  /// Strides (elements) of the core output view inside a C-contiguous buffer of output_shape.
  Dims core_output_strides;
  /// Copies made by the lowering (null when none); indices/input point into them.
  std::shared_ptr<Tensor> owned_indices;
  std::shared_ptr<Tensor> owned_input;
  std::vector<std::string> notes;  // printed by explain (copies made, policies chosen)
  IndexErrorContext index_errors;
  // Scatter ops only:
  TensorView updates;  // the core's updates view (rank r; each dimension G's size or 1)
  Reduction reduction = Reduction::kNone;
  bool include_input = true;
  std::shared_ptr<Tensor> owned_updates;  // a copy made by the lowering (a scalar value, alpha)
  /// The core scatter's options (reduction, index policy, include_input, threads).
  ScatterOptions scatter_options() const noexcept {
    ScatterOptions o;
    o.reduction = reduction;
    o.index_mode = options.index_mode;
    o.negative_indices = options.negative_indices;
    o.include_input = include_input;
    o.num_threads = options.num_threads;
    return o;
  }
};

/// Lowers a call of registry op `name` (data pointers may be null: shapes and dtypes alone
/// suffice). `device` says where the data lives: a lowering that would have to read or copy
/// the data on the host (StableHLO windows, non-contiguous flattening) fails on kCUDA with an
/// InvalidArgument saying so, instead of touching device memory.
/// Errors, all prefixed with the op name and worded by the framework's rule:
///  - InvalidArgument: unknown op or attribute, a bad attribute value, ranks/shapes/axes/batch
///    dims the framework rejects ("onnx.GatherND: batch_dims = 1: data.shape[0] = 2 and
///    indices.shape[0] = 3 must be equal (batch dimensions are not broadcast)");
///  - TypeError: an index dtype the framework does not accept, an attribute of the wrong type.
Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const Attributes& attrs, Lowering* out, Device device = Device::kCPU);

/// Lowers a call of scatter op `name` (spec->kind == OpKind::kScatter) with the framework's
/// `updates`. The same errors as the gather form; a gather op called with updates, or a scatter
/// op called without (the form above), is an InvalidArgument naming the op and what it takes.
Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const TensorView& updates, const Attributes& attrs, Lowering* out,
                Device device = Device::kCPU);

/// The text of `multigather explain OP`, built from the Lowering of shapes and dtypes alone:
/// the framework's signature, formula and source, the attributes, the lowered core call (views,
/// axes, index policy), the per-dimension table (which dimension is an axis, which operand
/// broadcasts), the formula written out for these shapes, and the framework output shape.
Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                  std::string* text);
/// explain_op for a scatter op, with the updates' shape (its dtype is the input's).
Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Dims& updates_shape,
                  const Attributes& attrs, std::string* text);
/// The same text for an existing lowering (input/indices: the framework's operands).
std::string explain_lowering(const Lowering& lowering, const TensorView& input,
                             const TensorView& indices);

}  // namespace multigather
