// MLIR tensor.gather and TCP tcp.gather / tcp.gather_nd. Rules: docs/semantics.md sections 10
// and 13, https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop and
// llvm/mlir-tcp docs/gather.md, TcpOps.td.
#include "multigather/frontends/mlir.hpp"

#include <algorithm>

#include "frontends/lowering.hpp"

namespace multigather::mlir {

using namespace frontends;

namespace {
constexpr const char* kUB = "out-of-range indices are undefined behaviour in MLIR; multigather rejects them";
}

Status tensor_gather(const TensorView& source, const TensorView& indices,
                     const std::vector<std::int64_t>& gather_dims, bool rank_reduced, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("tensor.gather", source, indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "indices", indices.dtype));
  const int r = source.rank(), q = indices.rank();
  const int k = static_cast<int>(gather_dims.size());
  if (k == 0) return InvalidArgument(out->op + ": gather_dims must be non-empty");
  for (int i = 0; i < k; ++i) {
    const std::int64_t g = gather_dims[static_cast<std::size_t>(i)];
    if (g < 0 || g >= r) {
      return InvalidArgument(out->op + ": gather_dims[" + str(i) + "] = " + str(g) + " must be in [0, " +
                             str(r) + ") (source rank " + str(r) + ")");
    }
    if (i > 0 && g <= gather_dims[static_cast<std::size_t>(i - 1)]) {
      return InvalidArgument(out->op + ": gather_dims " + shape_str(gather_dims) + " must be strictly increasing");
    }
  }
  if (q < 1 || indices.shape[q - 1] != k) {
    return InvalidArgument(out->op + ": the last dimension of indices " + to_string(indices.shape) +
                           " must equal the number of gather_dims (" + str(k) + ")");
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
    labels.push_back("source dimension " + str(g));
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
}

}  // namespace multigather::frontends
