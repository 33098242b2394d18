// MLIR tensor.gather and TCP tcp.gather / tcp.gather_nd. Rules: docs/semantics.md sections 10
// and 13, https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop and
// llvm/mlir-tcp docs/gather.md, TcpOps.td.
#include "multigather/frontends/mlir.hpp"

#include <algorithm>

#include "frontends/recipes.hpp"

namespace multigather::mlir {

using namespace frontends;

namespace {
constexpr const char* kUB = "out-of-range indices are undefined behaviour in MLIR; multigather rejects them";
}

namespace {

// tensor.gather's lowering (also tensor.scatter's, on dest): `dims_name` names the attribute
// in messages; `src` the gathered tensor.
Status lower_tensor_gather(const TensorView& source, const TensorView& indices,
                           const std::vector<std::int64_t>& gather_dims, bool rank_reduced, const std::string& dims_name,
                           const std::string& src, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  const int r = source.rank(), q = indices.rank();
  const int k = static_cast<int>(gather_dims.size());
  if (k == 0) return InvalidArgument(out->op + ": " + dims_name + " must be non-empty");
  for (int i = 0; i < k; ++i) {
    const std::int64_t g = gather_dims[static_cast<std::size_t>(i)];
    if (g < 0 || g >= r) {
      return InvalidArgument(out->op + ": " + dims_name + "[" + str(i) + "] = " + str(g) + " must be in [0, " +
                             str(r) + ") (" + src + " rank " + str(r) + ")");
    }
    if (i > 0 && g <= gather_dims[static_cast<std::size_t>(i - 1)]) {
      return InvalidArgument(out->op + ": " + dims_name + " " + shape_str(gather_dims) + " must be strictly increasing");
    }
  }
  if (q < 1 || indices.shape[q - 1] != k) {
    return InvalidArgument(out->op + ": the last dimension of indices " + to_string(indices.shape) +
                           " must equal the number of " + dims_name + " (" + str(k) + ")");
  }
  const int j = q - 1;
  ViewBuilder in = ViewBuilder::of(source), ix = ViewBuilder::of(indices);
  in.add_unit(j);
  in.add_dims(source, 0, r);
  ix.add_dims(indices, 0, j);
  ix.add_unit(r);
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, k, indices.strides[q - 1], out));
  std::vector<std::string> labels;
  std::vector<std::int64_t> sizes;
  for (std::int64_t g : gather_dims) {
    out->axes.push_back(j + g);
    labels.push_back(src + " dimension " + str(g));
    sizes.push_back(source.shape[static_cast<int>(g)]);
  }
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, indices, "indices", q - 1, labels, sizes, false, kUB);
  std::vector<std::int64_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  for (int d = 0; d < r; ++d) {
    const bool gathered = std::find(gather_dims.begin(), gather_dims.end(), d) != gather_dims.end();
    if (!gathered) shape.push_back(source.shape[d]);
    else if (!rank_reduced) shape.push_back(1);
  }
  return finish(shape, out);
}

}  // namespace

Status tensor_gather(const TensorView& source, const TensorView& indices,
                     const std::vector<std::int64_t>& gather_dims, bool rank_reduced, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tensor.gather", source, indices, out));
  return lower_tensor_gather(source, indices, gather_dims, rank_reduced, "gather_dims", "source", out);
}

Status tensor_scatter(const TensorView& dest, const TensorView& indices, const TensorView& source,
                      const std::vector<std::int64_t>& scatter_dims, bool unique, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("tensor.scatter", dest, indices, source, out));
  if (!unique) {
    return InvalidArgument(out->op + ": requires 'unique' attribute to be set (MLIR only defines tensor.scatter "
                           "with coordinates guaranteed unique)");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, dest, source, "dest", "source",
                                                  "MLIR: source and dest have the same element type"));
  // The source may be full rank (scatter dims kept as 1s) or rank-reduced (dropped): its rank says which.
  const bool rank_reduced =
      indices.rank() >= 1 && source.rank() == indices.rank() - 1 + dest.rank() - static_cast<int>(scatter_dims.size());
  MULTIGATHER_RETURN_IF_ERROR(
      lower_tensor_gather(dest, indices, scatter_dims, rank_reduced && !scatter_dims.empty(), "scatter_dims", "dest", out));
  const std::vector<std::int64_t> want = dims_vec(out->output_shape);
  if (dims_vec(source.shape) != want) {
    std::vector<std::int64_t> full(indices.shape.begin(), indices.shape.end() - 1), reduced = full;
    for (int d = 0; d < dest.rank(); ++d) {
      const bool s = std::find(scatter_dims.begin(), scatter_dims.end(), d) != scatter_dims.end();
      full.push_back(s ? 1 : dest.shape[d]);
      if (!s) reduced.push_back(dest.shape[d]);
    }
    return InvalidArgument(out->op + ": source shape " + to_string(source.shape) + " must be " + shape_str(full) +
                           " (or rank-reduced " + shape_str(reduced) +
                           "): indices.shape[:-1] ++ dest.shape with the scatter_dims set to 1");
  }
  out->reduction = Reduction::kNone;
  out->include_input = true;
  out->notes.push_back("unique: MLIR guarantees the coordinates are unique; multigather does not check it "
                       "(duplicates: the last update in row-major order of indices wins)");
  return finish_framework_scatter(dest, source, want, out);
}

Status tcp_gather(const TensorView& input, const TensorView& indices, std::int64_t dim, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tcp.gather", input, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  std::int64_t d = 0;
  if (input.rank() < 1) return InvalidArgument(out->op + ": input must have rank >= 1");
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", dim, input.rank(), false, &d));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, indices, "indices", -1, {"dim " + str(d)}, {input.shape[static_cast<int>(d)]}, false, kUB);
  return lower_elements(out->op, input, indices, d, ElementRule::kAtMost, "input", "indices", out);
}

Status tcp_gather_nd(const TensorView& input, const TensorView& indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tcp.gather_nd", input, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  const int r = input.rank(), q = indices.rank();
  if (q < 1) return InvalidArgument(out->op + ": indices must have rank >= 1");
  const std::int64_t k = indices.shape[q - 1];
  if (k > r) {
    return InvalidArgument(out->op + ": indices.shape[-1] = " + str(k) + " must be <= input rank " + str(r));
  }
  set_policy(out, IndexMode::kError, false);
  set_nd_error_context(out, indices, input, 0, "input", false, kUB);
  return lower_nd(out->op, input, indices, 0, out);
}

}  // namespace multigather::mlir

namespace multigather::frontends {

void append_mlir_ops(std::vector<OpSpec>* ops) {
  ops->push_back({"tensor.gather", "mlir", "nd", "tensor.gather %source[%indices] gather_dims([...])",
                  "result[j.., s..] = source[s with s[gather_dims[i]] = indices[j.., i]]",
                  "https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop", "source", "indices",
                  {{"gather_dims", AttrType::kIntList, "0", {}, "strictly increasing source dimensions"},
                   {"rank_reduced", AttrType::kBool, "false", {}, "drop the gathered unit dimensions"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return mlir::tensor_gather(x, i, a.get_ints("gather_dims"), a.get_bool("rank_reduced"), o);
                  }});
  {
    OpSpec op{"tensor.scatter", "mlir", "scatter_nd",
              "tensor.scatter %source into %dest[%indices] scatter_dims([...]) unique",
              "result = dest; result[d with d[scatter_dims[i]] = indices[j.., i]] = source[j.., d..]",
              "https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorscatter-tensorscatterop", "dest", "indices",
              {{"scatter_dims", AttrType::kIntList, "0", {}, "strictly increasing dest dimensions"},
               {"unique", AttrType::kBool, "true", {}, "the coordinates are unique (MLIR requires it)"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "source";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return mlir::tensor_scatter(x, i, u, a.get_ints("scatter_dims"), a.get_bool("unique"), o); };
    ops->push_back(std::move(op));
  }
  ops->push_back({"tcp.gather", "mlir", "element", "tcp.gather %input, %indices {dim}",
                  "out[i][j][k] = input[indices[i][j][k]][j][k]  (dim 0)",
                  "llvm/mlir-tcp docs/gather.md, TcpOps.td (tcp.gather)", "input", "indices",
                  {{"dim", AttrType::kInt, "0", {}, "gather dimension"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return mlir::tcp_gather(x, i, a.get_int("dim"), o);
                  }});
  ops->push_back({"tcp.gather_nd", "mlir", "nd", "tcp.gather_nd %input, %indices",
                  "out[j.., t..] = input[indices[j.., 0], .., indices[j.., k-1], t..]",
                  "llvm/mlir-tcp docs/gather.md, TcpOps.td (tcp.gather_nd)", "input", "indices", {},
                  [](const TensorView& x, const TensorView& i, const AttributeValues&, Lowering* o) {
                    return mlir::tcp_gather_nd(x, i, o);
                  }});
  // Out-of-range indices are undefined behaviour in MLIR; multigather rejects them (and
  // negatives) with an error.
  const IndexRule in_range{IndexMode::kError, false, ""};
  state_facts(ops, {
      {"tensor.gather", in_range,
       "out-of-range indices are undefined behaviour in MLIR and errors here. indices [J.., k] (any integer dtype) with k == len(gather_dims); gather_dims non-empty, in range, "
       "STRICTLY increasing. Result J ++ source.shape with the gather_dims set to 1 (rank_reduced: dropped)"},
      {"tensor.scatter", in_range,
       "out-of-range indices are undefined behaviour in MLIR and errors here. the dual of tensor.gather on dest: result = dest's shape and dtype; indices [J.., k] (any integer dtype) "
       "with k == len(scatter_dims), strictly increasing; source shape = J ++ dest.shape with the scatter_dims "
       "set to 1 (full rank) or dropped (rank-reduced; the source's rank says which); source dtype == dest dtype. "
       "unique must be set (MLIR's verifier); multigather does not check uniqueness: duplicates write the last "
       "update in row-major order of indices"},
      {"tcp.gather", in_range,
       "out-of-range indices are undefined behaviour in MLIR and errors here. torch.gather's rule: same rank, indices.shape[i] <= input.shape[i] for i != dim (the leading part of "
       "input is read, never broadcast); output shape = indices.shape"},
      {"tcp.gather_nd", in_range,
       "out-of-range indices are undefined behaviour in MLIR and errors here. no batching; k = indices.shape[-1] <= rank(input); output shape indices.shape[:-1] ++ "
       "input.shape[k:]"},
  });
}

}  // namespace multigather::frontends
