// multigather/frontends/torch.hpp: PyTorch gathers (https://docs.pytorch.org/docs/stable/).
// Index rules: torch.gather, torch.take_along_dim and torch.index_select REJECT negative indices
// (pytorch#55143, #146211); torch.take wraps them once. Out of range is an error (CPU behaviour).
#pragma once

#include <optional>

#include "multigather/ops.hpp"

namespace multigather::torch {

/// torch.gather(input, dim, index), docs .../generated/torch.gather.html
///   out[i][j][k] = input[index[i][j][k]][j][k]  (dim = 0; likewise for other dims)
/// Same number of dimensions (a 0-D tensor counts as 1-D of size 1); index.size(d) <=
/// input.size(d) for d != dim: the LEADING part of input is read (never broadcast). Output shape =
/// index shape. index int64 or int32. dim is checked first (against a 0-D input: [-1, 0]); then
/// an empty index gives an empty output of its shape without further checks, whatever its dtype,
/// rank and sizes (ATen: "we always return an empty output with the same shape without further
/// error checking").
Status gather(const TensorView& input, std::int64_t dim, const TensorView& index, Lowering* out);

/// torch.take(input, index), docs .../generated/torch.take.html
///   out[j..] = input.flatten()[index[j..]]; index int64; negatives wrap once;
/// a non-empty take from an empty input is an error. Output shape = index shape.
Status take(const TensorView& input, const TensorView& index, Lowering* out);

/// torch.take_along_dim(input, indices, dim=None), docs .../generated/torch.take_along_dim.html
///   out[i][j][k] = input[indices[i][j][k]][j][k]  (dim = 0), input and indices BROADCAST on
/// d != dim; dim=None: input.flatten()[indices.flatten()]. With a dim: same rank (checked first),
/// indices int64, taken modulo input.size(dim) (floor modulo, as PyTorch 2.15 computes them; an
/// empty dim is an error). dim=None is gather(input.view(-1), 0, indices.view(-1)): indices
/// int32/int64 (any dtype when empty), negatives and out-of-range indices are rejected.
Status take_along_dim(const TensorView& input, const TensorView& indices,
                      std::optional<std::int64_t> dim, Lowering* out);

/// torch.index_select(input, dim, index), docs .../generated/torch.index_select.html
///   out[i.., j, k..] = input[i.., index[j], k..]; index 1-D (or 0-D = one element), int32/int64;
/// output = input.shape with out[dim] = len(index). A 0-D input takes exactly one index (0) and
/// gives a 0-D result. Negatives rejected. Every index is checked, also when the output is empty
/// because another input dimension is 0 (as ATen does; on host memory: not for Device::kCUDA).
Status index_select(const TensorView& input, std::int64_t dim, const TensorView& index,
                    Lowering* out);

/// torch.scatter(input, dim, index, src, reduce=None) (Tensor.scatter_ out of place):
///   out = input; out[index[i][j][k]][j][k] = src[i][j][k] (dim 0), reduce "add" / "multiply".
/// Same rank for input, index and src (0-D counts as 1-D); index int64 (int32 accepted, as
/// PyTorch 2.15 does); src dtype == input dtype; index.size(d) <= src.size(d) for every d (src's
/// leading part is read) and <= input.size(d) for d != dim (a smaller size is refused as not
/// supported yet). Negative indices are errors. Duplicates without reduce: PyTorch leaves the
/// pick undefined; the last update in row-major order of index wins here.
Status scatter(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
               std::string_view reduce, Lowering* out);
/// torch.scatter_add(input, dim, index, src): scatter with reduce add (all duplicates summed).
Status scatter_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                   Lowering* out);
/// torch.scatter_reduce(input, dim, index, src, reduce, include_self=True): reduce sum, prod,
/// amax, amin, or mean (Lowering::mean_by_count: an add, then execute divides each reached
/// element by its count of updates, +1 with include_self; integers with floor rounding).
Status scatter_reduce(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                      std::string_view reduce, bool include_self, Lowering* out);
/// torch.index_add(input, dim, index, source, alpha=1):
///   out = input; out[.., index[j], ..] += alpha * source[.., j, ..]
/// index a vector (int64/int32); source.size(dim) == index.numel(), other dims equal input's;
/// alpha != 1: source * alpha is copied once (integer inputs: alpha truncated, as PyTorch).
Status index_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                 const Scalar& alpha, Lowering* out);
/// torch.index_copy(input, dim, index, source): out = input; out[.., index[j], ..] = source[.., j, ..]
/// index a vector or scalar (int64 only); source dtype == input dtype; source.size(dim) ==
/// index.numel(), other dims equal input's. Indices in [0, size) (negatives are errors, as
/// PyTorch). Duplicates: nondeterministic in PyTorch; the last in index order wins here.
Status index_copy(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                  Lowering* out);
/// torch.index_fill(input, dim, index, value): out = input; out[.., index[j], ..] = value.
/// value: a 0-dimensional tensor of input's dtype (broadcast, stride 0); index a vector or
/// scalar (int64); negative indices wrap once (as PyTorch), out of range is an error.
Status index_fill(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& value,
                  Lowering* out);
/// torch.put(input, index, source, accumulate=False): flat positions, as torch.take:
///   out = input; out.flatten()[index.flatten()[j]] = source.flatten()[j]  (+= when accumulate).
/// index int64 (any shape), source.numel() == index.numel(), source dtype == input dtype;
/// negatives wrap once, out of range is an error. Duplicates: undefined without accumulate
/// (the last in index order wins here); accumulate adds every one.
Status put(const TensorView& input, const TensorView& index, const TensorView& source, bool accumulate,
           Lowering* out);
/// torch.index_put(input, indices, values, accumulate=False): out = input; out[idx] = values
/// (+= when accumulate) with PyTorch's (numpy's) advanced indexing: `indices` are the index
/// tensors broadcast to a common shape B and stacked on a last dimension (B ++ [k]), each
/// indexing the input dimension `index_dims[j]` (strictly increasing; the other dimensions are
/// full slices: None entries of PyTorch's tuple); adjacent index dimensions are replaced in
/// place by B, separated ones put B first. values: input's dtype, broadcast to input[idx].shape.
/// int64 / int32 indices; negatives wrap once, out of range is an error. Duplicates: undefined
/// in PyTorch without accumulate (the last in row-major order of input[idx] wins here);
/// accumulate adds every one. Source: https://pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html
Status index_put(const TensorView& input, const TensorView& indices, const TensorView& values,
                 const std::vector<std::int64_t>& index_dims, bool accumulate, Lowering* out);

}  // namespace multigather::torch
