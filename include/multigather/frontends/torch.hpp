// multigather/frontends/torch.hpp: PyTorch gathers and scatters (https://docs.pytorch.org/docs/stable/).
// Each op's signature, formula, rules, index rule and source are its registry row's
// (multigather/registry.hpp; docs/quick_reference.md). Each function validates by the
// framework's rules, fills `out` (views, axes, options, output shape) and returns
// InvalidArgument / TypeError with the framework's reason.
#pragma once

#include <optional>

#include "multigather/ops.hpp"

namespace multigather::torch {

/// torch.gather: the registry row "torch.gather" states its signature, formula, rules, index rule
/// and source (docs/quick_reference.md, generated; `multigather explain torch.gather`).
Status gather(const TensorView& input, std::int64_t dim, const TensorView& index, Lowering* out);

/// torch.take: the registry row "torch.take" states its signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain torch.take`).
Status take(const TensorView& input, const TensorView& index, Lowering* out);

/// torch.take_along_dim: the registry row "torch.take_along_dim" states its signature, formula,
/// rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// torch.take_along_dim`).
Status take_along_dim(const TensorView& input, const TensorView& indices,
                      std::optional<std::int64_t> dim, Lowering* out);

/// torch.index_select: the registry row "torch.index_select" states its signature, formula, rules,
/// index rule and source (docs/quick_reference.md, generated; `multigather explain
/// torch.index_select`).
Status index_select(const TensorView& input, std::int64_t dim, const TensorView& index,
                    Lowering* out);

/// torch.scatter, torch.scatter_add, torch.scatter_reduce, torch.index_add, torch.index_copy,
/// torch.index_fill, torch.put, torch.index_put: their registry rows state each op's signature,
/// formula, rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// OP`).
Status scatter(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
               std::string_view reduce, Lowering* out);
/// torch.scatter_add, torch.scatter_reduce, torch.index_add, torch.index_copy, torch.index_fill,
/// torch.put, torch.index_put: their registry rows state each op's signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain OP`).
Status scatter_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                   Lowering* out);
/// torch.scatter_reduce, torch.index_add, torch.index_copy, torch.index_fill, torch.put,
/// torch.index_put: their registry rows state each op's signature, formula, rules, index rule and
/// source (docs/quick_reference.md, generated; `multigather explain OP`).
Status scatter_reduce(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& src,
                      std::string_view reduce, bool include_self, Lowering* out);
/// torch.index_add, torch.index_copy, torch.index_fill, torch.put, torch.index_put: their registry
/// rows state each op's signature, formula, rules, index rule and source (docs/quick_reference.md,
/// generated; `multigather explain OP`).
Status index_add(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                 const Scalar& alpha, Lowering* out);
/// torch.index_copy, torch.index_fill, torch.put, torch.index_put: their registry rows state each
/// op's signature, formula, rules, index rule and source (docs/quick_reference.md, generated;
/// `multigather explain OP`).
Status index_copy(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& source,
                  Lowering* out);
/// torch.index_fill, torch.put, torch.index_put: their registry rows state each op's signature,
/// formula, rules, index rule and source (docs/quick_reference.md, generated; `multigather explain
/// OP`).
Status index_fill(const TensorView& input, std::int64_t dim, const TensorView& index, const TensorView& value,
                  Lowering* out);
/// torch.put, torch.index_put: their registry rows state each op's signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain OP`).
Status put(const TensorView& input, const TensorView& index, const TensorView& source, bool accumulate,
           Lowering* out);
/// torch.index_put: the registry row "torch.index_put" states its signature, formula, rules, index
/// rule and source (docs/quick_reference.md, generated; `multigather explain torch.index_put`).
Status index_put(const TensorView& input, const TensorView& indices, const TensorView& values,
                 const std::vector<std::int64_t>& index_dims, bool accumulate, Lowering* out);

}  // namespace multigather::torch
