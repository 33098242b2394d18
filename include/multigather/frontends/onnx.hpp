// multigather/frontends/onnx.hpp: ONNX Gather, GatherElements, GatherND (opset 13) and
// ScatterElements, ScatterND (opset 18) lowered onto the core operators.
// Run the result with multigather::execute(out) or execute_lowering(out, view).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::onnx {

/// onnx.Gather: the registry row "onnx.Gather" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain onnx.Gather`).
Status Gather(const TensorView& data, const TensorView& indices, std::int64_t axis, Lowering* out);

/// onnx.GatherElements: the registry row "onnx.GatherElements" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// onnx.GatherElements`).
Status GatherElements(const TensorView& data, const TensorView& indices, std::int64_t axis,
                      Lowering* out);

/// onnx.GatherND: the registry row "onnx.GatherND" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain onnx.GatherND`).
Status GatherND(const TensorView& data, const TensorView& indices, std::int64_t batch_dims,
                Lowering* out);

/// onnx.ScatterElements: the registry row "onnx.ScatterElements" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// onnx.ScatterElements`).
Status ScatterElements(const TensorView& data, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, std::string_view reduction, Lowering* out);

/// onnx.ScatterND: the registry row "onnx.ScatterND" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain onnx.ScatterND`).
Status ScatterND(const TensorView& data, const TensorView& indices, const TensorView& updates,
                 std::string_view reduction, Lowering* out);

}  // namespace multigather::onnx
