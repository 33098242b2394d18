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

}  // namespace multigather::jax
