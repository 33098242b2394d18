// multigather/frontends/jax.hpp: jax.numpy.take and jax.numpy.take_along_axis
// (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.take.html, ...take_along_axis.html).
// Index rules (jax/_src/numpy/indexing.py): mode "fill" (default): negatives wrap once, then an
// out-of-range index gives fill_value (default NaN for inexact dtypes, the minimum for signed,
// the maximum for unsigned integers, True for bool); "clip": take clamps WITHOUT wrapping
// negatives (-1 -> 0) while take_along_axis wraps first; "wrap" (take only): modulo;
// "promise_in_bounds": no wrap, XLA's clamp.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::jax {

/// jax.numpy.take(a, indices, axis=None, mode=None, fill_value=None):
///   out[i.., j.., k..] = a[i.., indices[j..], k..]; axis=None flattens a. A non-empty take from
/// an empty axis raises IndexError.
Status take(const TensorView& a, const TensorView& indices, std::optional<std::int64_t> axis,
            std::string_view mode, std::optional<Scalar> fill_value, Lowering* out);

/// jax.numpy.take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
///   out[i.., j, k..] = arr[i.., indices[i.., j, k..], k..] with NumPy broadcasting;
/// axis=None: 1-D indices into the flattened arr; an empty axis gives zeros.
Status take_along_axis(const TensorView& arr, const TensorView& indices,
                       std::optional<std::int64_t> axis, std::string_view mode,
                       std::optional<Scalar> fill_value, Lowering* out);

/// The indexed updates x.at[idx].set / add / subtract / multiply / min / max
/// (https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html).
enum class AtUpdate : std::uint8_t { kSet, kAdd, kSubtract, kMultiply, kMin, kMax };

/// x.at[idx].<update>(values, mode=None, wrap_negative_indices=True) with integer index arrays
/// on the strictly increasing dims `index_dims` and full slices elsewhere, the arrays given
/// broadcast and stacked as numpy.advanced_index takes them (indices.shape = B ++ [k]); values
/// (x's dtype) broadcast to x[idx].shape. Returns a new array (the framework output):
///   x[.., idx_0[b..], .., idx_{k-1}[b..], ..] <op>= values[b.., rest..]
/// Index rule (jax/_src/ops/scatter.py, lax GatherScatterMode): negatives wrap once (unless
/// wrap_negative_indices is false); then mode "drop" / "fill" / None (default) skips an update
/// whose index is out of range, "clip" clamps it to [0, D-1], "promise_in_bounds" is a promise
/// XLA answers by skipping the update (as here). Duplicates all apply (JAX: in an
/// implementation-defined order); here in row-major order of x[idx], so set keeps the last.
Status at(AtUpdate update, const TensorView& x, const TensorView& indices, const TensorView& values,
          const std::vector<std::int64_t>& index_dims, std::string_view mode,
          bool wrap_negative_indices, Lowering* out);

}  // namespace multigather::jax
