// multigather/frontends/mlir.hpp: MLIR `tensor.gather` / `tensor.scatter` and the TCP dialect's
// `tcp.gather` / `tcp.gather_nd` (https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop,
// llvm/mlir-tcp docs/gather.md and TcpOps.td).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <vector>

#include "multigather/ops.hpp"

namespace multigather::mlir {

/// tensor.gather: the registry row "tensor.gather" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain tensor.gather`).
Status tensor_gather(const TensorView& source, const TensorView& indices,
                     const std::vector<std::int64_t>& gather_dims, bool rank_reduced, Lowering* out);

/// tensor.scatter: the registry row "tensor.scatter" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain tensor.scatter`).
Status tensor_scatter(const TensorView& dest, const TensorView& indices, const TensorView& source,
                      const std::vector<std::int64_t>& scatter_dims, bool unique, Lowering* out);

/// tcp.gather: the registry row "tcp.gather" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain tcp.gather`).
Status tcp_gather(const TensorView& input, const TensorView& indices, std::int64_t dim, Lowering* out);

/// tcp.gather_nd: the registry row "tcp.gather_nd" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain tcp.gather_nd`).
Status tcp_gather_nd(const TensorView& input, const TensorView& indices, Lowering* out);

}  // namespace multigather::mlir
