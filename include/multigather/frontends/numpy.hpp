// multigather/frontends/numpy.hpp: NumPy gathers and scatters (https://numpy.org/doc/stable/).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::numpy {

/// numpy.take: the registry row "numpy.take" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain numpy.take`).
Status take(const TensorView& a, const TensorView& indices, std::optional<std::int64_t> axis,
            std::string_view mode, Lowering* out);

/// numpy.take_along_axis: the registry row "numpy.take_along_axis" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// numpy.take_along_axis`).
Status take_along_axis(const TensorView& arr, const TensorView& indices,
                       std::optional<std::int64_t> axis, Lowering* out);

/// numpy.advanced_index: the registry row "numpy.advanced_index" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// numpy.advanced_index`).
Status advanced_index(const TensorView& a, const TensorView& indices,
                      const std::vector<std::int64_t>& index_dims, Lowering* out);

/// numpy.put_along_axis, numpy.add_at, numpy.put, numpy.multiply_at, numpy.minimum_at,
/// numpy.maximum_at: their registry rows state each op's signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain OP`).
Status put_along_axis(const TensorView& arr, const TensorView& indices, const TensorView& values,
                      std::optional<std::int64_t> axis, Lowering* out);
/// numpy.add_at, numpy.put, numpy.multiply_at, numpy.minimum_at, numpy.maximum_at: their registry
/// rows state each op's signature, formula, rules, index rule and source (docs/quick_reference.md,
/// generated; `multigather explain OP`).
Status add_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
/// numpy.put, numpy.multiply_at, numpy.minimum_at, numpy.maximum_at: their registry rows state each
/// op's signature, formula, rules, index rule and source (docs/quick_reference.md, generated;
/// `multigather explain OP`).
Status put(const TensorView& a, const TensorView& ind, const TensorView& v, std::string_view mode, Lowering* out);
/// numpy.multiply_at, numpy.minimum_at, numpy.maximum_at: their registry rows state each op's
/// signature, formula, rules, index rule and source (docs/quick_reference.md, generated;
/// `multigather explain OP`).
Status multiply_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
Status minimum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
Status maximum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);

}  // namespace multigather::numpy
