// multigather/frontends/mlir.hpp: MLIR `tensor.gather` and the TCP dialect's `tcp.gather` /
// `tcp.gather_nd` (https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop,
// llvm/mlir-tcp docs/gather.md and TcpOps.td). Out-of-range indices are undefined behaviour in
// both; multigather rejects them (and negatives) with an error.
#pragma once

#include <vector>

#include "multigather/ops.hpp"

namespace multigather::mlir {

/// tensor.gather %source[%indices] gather_dims([...]):
///   result[j.., s..] = source[s with s[gather_dims[i]] = indices[j.., i]]
/// indices [J.., k] with k == len(gather_dims); gather_dims non-empty, in range, STRICTLY
/// increasing. Result J ++ source.shape with gather_dims set to 1 (rank_reduced: dropped).
Status tensor_gather(const TensorView& source, const TensorView& indices,
                     const std::vector<std::int64_t>& gather_dims, bool rank_reduced, Lowering* out);

/// tensor.scatter %source into %dest[%indices] scatter_dims([...]) unique
/// (https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorscatter-tensorscatterop):
///   result = dest;  result[d with d[scatter_dims[i]] = indices[j.., i]] = source[j.., d..].
/// The dual of tensor.gather on dest: source shape = indices.shape[:-1] ++ dest.shape with the
/// scatter_dims set to 1 (full rank) or dropped (rank-reduced; the source's rank says which);
/// source dtype == dest dtype. `unique` must be set (MLIR's verifier); multigather does not check
/// uniqueness: duplicates write the last update in row-major order of indices. Out-of-range
/// indices are undefined in MLIR and rejected here.
Status tensor_scatter(const TensorView& dest, const TensorView& indices, const TensorView& source,
                      const std::vector<std::int64_t>& scatter_dims, bool unique, Lowering* out);

/// tcp.gather %input, %indices {dim}: torch.gather semantics (indices.shape[i] <= input.shape[i]
/// for i != dim, leading part read); output shape = indices shape.
Status tcp_gather(const TensorView& input, const TensorView& indices, std::int64_t dim, Lowering* out);

/// tcp.gather_nd %input, %indices: out = indices.shape[:-1] ++ input.shape[indices.shape[-1]:],
///   out[j.., t..] = input[indices[j.., 0], .., indices[j.., k-1], t..]; no batching; k <= rank.
Status tcp_gather_nd(const TensorView& input, const TensorView& indices, Lowering* out);

}  // namespace multigather::mlir
