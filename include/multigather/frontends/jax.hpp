// multigather/frontends/jax.hpp: jax.numpy.take, jax.numpy.take_along_axis and x.at[idx] updates
// (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html, ...take_along_axis.html).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::jax {

/// jax.numpy.take: the registry row "jax.numpy.take" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain jax.numpy.take`).
Status take(const TensorView& a, const TensorView& indices, std::optional<std::int64_t> axis,
            std::string_view mode, std::optional<Scalar> fill_value, Lowering* out);

/// jax.numpy.take_along_axis: the registry row "jax.numpy.take_along_axis" states its signature,
/// formula, rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// jax.numpy.take_along_axis`).
Status take_along_axis(const TensorView& arr, const TensorView& indices,
                       std::optional<std::int64_t> axis, std::string_view mode,
                       std::optional<Scalar> fill_value, Lowering* out);

/// The indexed updates x.at[idx].set / add / subtract / multiply / min / max
/// (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html).
enum class AtUpdate : std::uint8_t { kSet, kAdd, kSubtract, kMultiply, kMin, kMax };

/// jax.at.set, jax.at.add, jax.at.subtract, jax.at.multiply, jax.at.min, jax.at.max: their registry
/// rows state each op's signature, formula, rules, index rule and source (docs/quick_reference.md,
/// generated; `multigather explain OP`).
Status at(AtUpdate update, const TensorView& x, const TensorView& indices, const TensorView& values,
          const std::vector<std::int64_t>& index_dims, std::string_view mode,
          bool wrap_negative_indices, Lowering* out);

}  // namespace multigather::jax
