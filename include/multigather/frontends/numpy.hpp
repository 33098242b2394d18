// multigather/frontends/numpy.hpp: NumPy gathers (https://numpy.org/doc/stable/).
// Index rule: negative indices wrap once and out of range raises IndexError (mode='raise');
// numpy.take also has mode='wrap' (modulo) and mode='clip' (clamp to [0, D-1] WITHOUT the
// negative wrap: -1 -> 0). Any integer dtype is accepted for indices, converted as numpy casts
// them to intp: uint64 values of 2**63 and above wrap to negatives (2**64 - 1 is -1).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::numpy {

/// numpy.take(a, indices, axis=None, mode='raise'), .../generated/numpy.take.html
///   out[i.., j.., k..] = a[i.., indices[j..], k..];  axis=None: a.flatten()[indices[j..]].
/// Output shape a.shape[:axis] ++ indices.shape ++ a.shape[axis+1:]; a 0-D `a` with an axis
/// (0 or -1) is taken as 1-D of size 1. Bool indices are 0 and 1 (numpy's cast). mode: "raise" |
/// "wrap" | "clip". Like numpy's PyArray_TakeFrom: an empty axis raises IndexError when the
/// OUTPUT is not empty; mode "raise" checks the indices once per outer row (a.shape[:axis] not
/// empty) even when a later dimension makes the output empty; so does "wrap" on an empty axis
/// (where numpy 2.4 never returns).
Status take(const TensorView& a, const TensorView& indices, std::optional<std::int64_t> axis,
            std::string_view mode, Lowering* out);

/// numpy.take_along_axis(arr, indices, axis=-1), .../generated/numpy.take_along_axis.html
///   out[i.., j, k..] = arr[i.., indices[i.., j, k..], k..], arr and indices BROADCAST on the
/// other dimensions (same ndim). axis=None: indices must be 1-D and arr is flattened. Integer
/// indices only (bool is a TypeError; numpy raises IndexError there). Checked in numpy's order:
/// axis=None's 1-D rule, the axis, the dtype, the ranks.
Status take_along_axis(const TensorView& arr, const TensorView& indices,
                       std::optional<std::int64_t> axis, Lowering* out);

/// numpy.advanced_index: a[idx_0, .., idx_{k-1}] with integer index arrays on the input
/// dimensions `index_dims` (strictly increasing) and full slices `:` on every other dimension,
/// https://numpy.org/doc/stable/user/basics.indexing.html#integer-array-indexing
/// ENCODING (multigather's, since ops take one indices tensor): the k index arrays, already
/// broadcast to a common shape B, stacked on a last dimension: indices.shape = B ++ [k].
///   adjacent index_dims (s, s+1, .., s+k-1):  out.shape = a.shape[:s] ++ B ++ a.shape[s+k:]
///   separated index_dims:                     out.shape = B ++ (a.shape without index_dims)
///   out[b.., rest..] = a[.., idx_0[b..], .., idx_{k-1}[b..], ..]
/// Negatives wrap once; out of range raises IndexError, also when the result is empty because a
/// dimension without index array is 0 (numpy checks every value of non-empty index arrays).
/// Integer indices only: a bool array in a[...] is a mask, another operation (TypeError).
Status advanced_index(const TensorView& a, const TensorView& indices,
                      const std::vector<std::int64_t>& index_dims, Lowering* out);

/// numpy.put_along_axis(arr, indices, values, axis) (in place in numpy; here the framework
/// output, which may be arr itself): arr[i.., indices[i.., j, k..], k..] = values[..]. The
/// rules of take_along_axis (same rank, broadcasting, axis=None flattens with 1-D indices,
/// integer indices, negatives wrap, out of range an error); values (arr's dtype) broadcast to
/// the take_along_axis output shape. Duplicates: the last value in row-major order wins.
Status put_along_axis(const TensorView& arr, const TensorView& indices, const TensorView& values,
                      std::optional<std::int64_t> axis, Lowering* out);
/// numpy.add.at(a, indices, b) with one integer index array (a[indices] += b along axis 0,
/// unbuffered: every duplicate adds); b (a's dtype) broadcasts to indices.shape ++ a.shape[1:].
Status add_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
/// numpy.put(a, ind, v, mode='raise'): a.flat[ind.flat[j]] = v.flat[j] (flat positions; the
/// last duplicate wins). mode raise (negatives wrap once, else IndexError), wrap, clip (as
/// numpy.take). v (a's dtype) with 1 element is broadcast, with >= ind.size elements its first
/// ind.size are used; numpy's cyclic repetition of a shorter v is refused here (InvalidArgument).
Status put(const TensorView& a, const TensorView& ind, const TensorView& v, std::string_view mode, Lowering* out);
/// numpy.multiply.at / minimum.at / maximum.at: as add_at with *, minimum, maximum (unbuffered:
/// every duplicate applies, in row-major order of indices).
Status multiply_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
Status minimum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);
Status maximum_at(const TensorView& a, const TensorView& indices, const TensorView& b, Lowering* out);

}  // namespace multigather::numpy
