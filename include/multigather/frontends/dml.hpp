// multigather/frontends/dml.hpp: DirectML DML_OPERATOR_GATHER, _GATHER_ELEMENTS, _GATHER_ND1,
// _SCATTER_ELEMENTS, _SCATTER_ND
// (https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_gather_operator_desc,
// ..._gather_elements_operator_desc, ..._gather_nd1_operator_desc). The attributes are the desc
// fields.
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include "multigather/ops.hpp"

namespace multigather::dml {

/// dml.Gather: the registry row "dml.Gather" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain dml.Gather`).
Status Gather(const TensorView& input_tensor, const TensorView& indices_tensor, std::int64_t axis,
              std::int64_t index_dimensions, Lowering* out);

/// dml.GatherElements: the registry row "dml.GatherElements" states its signature, formula, rules,
/// index rule and source (docs/quick_reference.md, generated; `multigather explain
/// dml.GatherElements`).
Status GatherElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                      std::int64_t axis, Lowering* out);

/// dml.GatherND: the registry row "dml.GatherND" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain dml.GatherND`).
Status GatherND(const TensorView& input_tensor, const TensorView& indices_tensor,
                std::int64_t input_dimension_count, std::int64_t indices_dimension_count,
                std::int64_t batch_dimension_count, Lowering* out);

/// dml.ScatterElements: the registry row "dml.ScatterElements" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// dml.ScatterElements`).
Status ScatterElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                       const TensorView& updates_tensor, std::int64_t axis, Lowering* out);

/// dml.ScatterND: the registry row "dml.ScatterND" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain dml.ScatterND`).
Status ScatterND(const TensorView& input_tensor, const TensorView& indices_tensor, const TensorView& updates_tensor,
                 std::int64_t input_dimension_count, std::int64_t indices_dimension_count, Lowering* out);

}  // namespace multigather::dml
