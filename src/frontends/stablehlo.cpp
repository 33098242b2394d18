// StableHLO gather: validation (spec constraints C1-C22), point gathers as one core call on
// views, windowed gathers with materialized clamp(start) + iota coordinates, batching dims, any
// index_vector_dim. Rules: docs/semantics.md section 11 and
// https://github.com/openxla/stablehlo/blob/main/docs/spec.md#gather; mapping: docs/semantics.md
// section 16.
#include "multigather/frontends/stablehlo.hpp"

#include <algorithm>

#include "frontends/lowering.hpp"

namespace multigather::stablehlo {

using namespace frontends;

namespace {

using Vec = std::vector<std::int64_t>;

bool contains(const Vec& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Status err(const std::string& what) { return InvalidArgument("stablehlo.gather: " + what); }

// Each entry in [0, bound), optionally strictly increasing; unique always.
Status check_dims(const Vec& v, const char* name, std::int64_t bound, bool sorted, const char* c_in,
                  const char* c_sorted) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= bound) {
      return err(std::string(name) + "[" + str(static_cast<std::int64_t>(i)) + "] = " + str(v[i]) +
                 " must be in [0, " + str(bound) + ") (" + c_in + ")");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (v[j] == v[i]) return err(std::string(name) + " " + shape_str(v) + " repeats " + str(v[i]) + " (" + c_sorted + ")");
      if (sorted && v[j] > v[i]) return err(std::string(name) + " " + shape_str(v) + " must be sorted (" + c_sorted + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Status gather(const TensorView& operand, const TensorView& start_indices,
              const GatherDimensionNumbers& dn, const std::vector<std::int64_t>& slice_sizes,
              bool /*indices_are_sorted: a promise, unused*/, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("stablehlo.gather", operand, start_indices, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "start_indices", start_indices.dtype));
  const TensorView& si = start_indices;
  const int R = operand.rank(), Q = si.rank();
  const std::int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > Q) return err("index_vector_dim = " + str(ivd) + " must be in [0, " + str(Q) + "] (C2)");
  if (static_cast<int>(slice_sizes.size()) != R) {
    return err("slice_sizes has " + str(static_cast<std::int64_t>(slice_sizes.size())) + " entries but operand rank is " + str(R) + " (C20)");
  }
  if (static_cast<std::int64_t>(dn.offset_dims.size() + dn.collapsed_slice_dims.size() + dn.operand_batching_dims.size()) != R) {
    return err("size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims) = " +
               str(static_cast<std::int64_t>(dn.offset_dims.size() + dn.collapsed_slice_dims.size() + dn.operand_batching_dims.size())) +
               " must equal rank(operand) = " + str(R) + " (C1)");
  }
  const std::int64_t k = static_cast<std::int64_t>(dn.start_index_map.size());
  const std::int64_t vec = ivd < Q ? si.shape[static_cast<int>(ivd)] : 1;
  if (k != vec) {
    return err("size(start_index_map) = " + str(k) + " must equal the index vector size " + str(vec) + " (C3)");
  }
  const std::int64_t result_rank = static_cast<std::int64_t>(dn.offset_dims.size()) + Q - (ivd < Q ? 1 : 0);
  if (result_rank > kMaxRank) {
    return err("the result rank " + str(result_rank) + " exceeds the maximum rank " + str(kMaxRank));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.offset_dims, "offset_dims", result_rank, true, "C5", "C4"));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.collapsed_slice_dims, "collapsed_slice_dims", R, true, "C8", "C7"));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.operand_batching_dims, "operand_batching_dims", R, true, "C11", "C10"));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.start_indices_batching_dims, "start_indices_batching_dims", Q, false, "C14", "C13"));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.start_index_map, "start_index_map", R, false, "C19", "C18"));
  for (std::int64_t d : dn.collapsed_slice_dims) {
    if (contains(dn.operand_batching_dims, d)) return err("dimension " + str(d) + " is both collapsed and a batching dim (C6)");
  }
  for (std::int64_t d : dn.start_index_map) {
    if (contains(dn.operand_batching_dims, d)) return err("start_index_map entry " + str(d) + " is an operand batching dim (C18)");
  }
  if (contains(dn.start_indices_batching_dims, ivd)) return err("index_vector_dim " + str(ivd) + " is a start_indices batching dim (C15)");
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return err("operand_batching_dims and start_indices_batching_dims must have the same size (C16)");
  }
  for (std::size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int d = static_cast<int>(dn.operand_batching_dims[i]), p = static_cast<int>(dn.start_indices_batching_dims[i]);
    if (operand.shape[d] != si.shape[p]) {
      return err("dim(operand, " + str(d) + ") = " + str(operand.shape[d]) + " must equal dim(start_indices, " +
                 str(p) + ") = " + str(si.shape[p]) + " (C17)");
    }
  }
  for (int d = 0; d < R; ++d) {
    const std::int64_t s = slice_sizes[static_cast<std::size_t>(d)];
    if (s < 0 || s > operand.shape[d]) {
      return err("slice_sizes[" + str(d) + "] = " + str(s) + " must be in [0, " + str(operand.shape[d]) + "] (C21)");
    }
    const bool collapsed = contains(dn.collapsed_slice_dims, d), batching = contains(dn.operand_batching_dims, d);
    if ((collapsed || batching) && s > 1) {
      return err("slice_sizes[" + str(d) + "] = " + str(s) + " must be <= 1 on a " +
                 (collapsed ? "collapsed (C9)" : "batching (C12)") + " dimension");
    }
    if ((collapsed || batching) && s == 0) {
      return err("slice_sizes[" + str(d) + "] = 0 on a " + std::string(collapsed ? "collapsed" : "batching") +
                 " dimension cannot be lowered: the result keeps an element for a window that is empty");
    }
  }

  // Result shape and where each source dimension lands in it.
  Vec batch_result_dims, result_shape(static_cast<std::size_t>(result_rank), 0);
  for (std::int64_t e = 0; e < result_rank; ++e) {
    if (!contains(dn.offset_dims, e)) batch_result_dims.push_back(e);
  }
  auto batch_result_dim = [&](int p) { return batch_result_dims[static_cast<std::size_t>(p - (p > ivd ? 1 : 0))]; };
  Vec offset_result_dim(static_cast<std::size_t>(R), -1);
  {
    std::size_t u = 0;
    for (int d = 0; d < R; ++d) {
      if (contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d)) continue;
      offset_result_dim[static_cast<std::size_t>(d)] = dn.offset_dims[u++];
      result_shape[static_cast<std::size_t>(offset_result_dim[static_cast<std::size_t>(d)])] = slice_sizes[static_cast<std::size_t>(d)];
    }
    for (int p = 0; p < Q; ++p) {
      if (p != ivd) result_shape[static_cast<std::size_t>(batch_result_dim(p))] = si.shape[p];
    }
  }
  const Dims result_strides = contiguous_strides(Dims(std::span<const std::int64_t>(result_shape)));

  // Core dims: m free batch dims of start_indices, then the R operand dims.
  bool windowed = false;
  for (std::int64_t d : dn.start_index_map) windowed |= slice_sizes[static_cast<std::size_t>(d)] != 1;
  ViewBuilder in = ViewBuilder::of(operand), ix = ViewBuilder::of(si);
  Vec core_out_strides, free_dims;
  for (int p = 0; p < Q; ++p) {
    if (p == ivd || contains(dn.start_indices_batching_dims, p)) continue;
    free_dims.push_back(p);
    in.add_unit();
    ix.add(si.shape[p], si.strides[p]);
    core_out_strides.push_back(result_strides[static_cast<int>(batch_result_dim(p))]);
  }
  const int m = static_cast<int>(free_dims.size());
  Vec paired(static_cast<std::size_t>(R), -1);  // operand batching dim -> start_indices dim
  for (std::size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    paired[static_cast<std::size_t>(dn.operand_batching_dims[i])] = dn.start_indices_batching_dims[i];
  }
  for (int d = 0; d < R; ++d) {
    const std::int64_t s = slice_sizes[static_cast<std::size_t>(d)];
    const std::int64_t p = paired[static_cast<std::size_t>(d)];
    const std::int64_t res = offset_result_dim[static_cast<std::size_t>(d)];
    if (p >= 0) {  // batching: input and indices have equal sizes, no axis
      in.add(operand.shape[d], operand.strides[d]);
      ix.add(si.shape[static_cast<int>(p)], si.strides[static_cast<int>(p)]);
      core_out_strides.push_back(result_strides[static_cast<int>(batch_result_dim(static_cast<int>(p)))]);
    } else if (contains(dn.start_index_map, d)) {  // indexed: an axis
      in.add(operand.shape[d], operand.strides[d]);
      ix.add(s == 1 ? 1 : s, 0);
      core_out_strides.push_back(res >= 0 ? result_strides[static_cast<int>(res)] : 0);
    } else {  // offset-only (or collapsed with start 0): slice the operand to [0, s)
      in.add(s, operand.strides[d]);
      ix.add_unit();
      core_out_strides.push_back(res >= 0 ? result_strides[static_cast<int>(res)] : 0);
      if (s < operand.shape[d]) {
        out->notes.push_back("operand dimension " + str(d) + " sliced to [0, " + str(s) + ") (a view)");
      }
    }
  }
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, in, "input", &out->input));
  for (std::int64_t d : dn.start_index_map) out->axes.push_back(m + d);
  set_policy(out, IndexMode::kClamp, false);
  out->notes.push_back("start indices clamp to [0, D - slice_size] without negative wrap");
  out->core_output_strides = Dims(std::span<const std::int64_t>(core_out_strides));

  if (!windowed) {
    const std::int64_t coord_stride = ivd < Q ? si.strides[static_cast<int>(ivd)] : 0;
    MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, static_cast<int>(k), coord_stride, out));
    return finish(result_shape, out);
  }

  // Windowed: materialize coordinates clamp(start, 0, D - s) + iota(s) as int64 [L.., k].
  const Dims logical(std::span<const std::int64_t>(ix.shape));
  Dims actual = logical;
  if (actual.size() > 0) actual[actual.size() - 1] *= k;
  out->notes.push_back("windowed slice: int64 indices " + to_string(actual) +
                       " materialized as clamp(start, 0, D - s) + iota(s) (the only copy)");
  out->logical_indices_shape = logical;
  if (si.data == nullptr && si.numel() > 0) {  // explain: shapes only
    out->indices = TensorView(nullptr, DType::kInt64, actual);
    return finish(result_shape, out);
  }
  if (out->device == Device::kCUDA) {
    return InvalidArgument(out->op + ": windowed slices (slice_sizes > 1 on an indexed "
                           "dimension) materialize their indices on the host; on a CUDA device "
                           "this lowering is not supported: copy start_indices to the host");
  }
  try {
    out->owned_indices = std::make_shared<Tensor>(DType::kInt64, actual);
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  auto* dst = out->owned_indices->data_as<std::int64_t>();
  const int rank = logical.size();
  std::int64_t count = 0;
  element_count(logical, &count);
  Dims pos = Dims::filled(rank, 0);
  const std::size_t es = element_size(si.dtype);
  for (std::int64_t n = 0; n < count; ++n) {
    // start_indices position of this lookup (the index-vector entry is added per coordinate).
    std::int64_t base = 0;
    for (int f = 0; f < m; ++f) base += pos[f] * si.strides[static_cast<int>(free_dims[static_cast<std::size_t>(f)])];
    for (int d = 0; d < R; ++d) {
      const std::int64_t p = paired[static_cast<std::size_t>(d)];
      if (p >= 0) base += pos[m + d] * si.strides[static_cast<int>(p)];
    }
    for (std::int64_t j = 0; j < k; ++j) {
      const int d = static_cast<int>(dn.start_index_map[static_cast<std::size_t>(j)]);
      const std::int64_t off = base + (ivd < Q ? j * si.strides[static_cast<int>(ivd)] : 0);
      __int128 start = 0;
      read_index(static_cast<const std::byte*>(si.data) + off * static_cast<std::int64_t>(es), si.dtype, &start);
      const std::int64_t s = slice_sizes[static_cast<std::size_t>(d)];
      const std::int64_t hi = operand.shape[d] - (s == 0 ? 0 : s);
      const std::int64_t clamped = start < 0 ? 0 : (start > hi ? hi : static_cast<std::int64_t>(start));
      *dst++ = clamped + (s == 1 ? 0 : pos[m + d]);
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < logical[d]) break;
      pos[d] = 0;
    }
  }
  out->indices = out->owned_indices->view();
  return finish(result_shape, out);
}

}  // namespace multigather::stablehlo

namespace multigather::frontends {

void append_stablehlo_ops(std::vector<OpSpec>* ops) {
  auto list = [](const char* name, const char* help) { return AttrSpec{name, AttrType::kIntList, "", {}, help}; };
  ops->push_back({"stablehlo.gather", "stablehlo", "windowed",
                  "stablehlo.gather(operand, start_indices, dimension_numbers, slice_sizes, indices_are_sorted)",
                  "result[ri] = operand[clamp(start_indices[bi, :], 0, D - s) + full_batching_index + full_offset_index]",
                  "https://github.com/openxla/stablehlo/blob/main/docs/spec.md#gather", "operand", "start_indices",
                  {list("offset_dims", "result dims of the slice (sorted)"),
                   list("collapsed_slice_dims", "operand dims of size-1 slices dropped from the result"),
                   list("operand_batching_dims", "operand dims paired with start_indices batching dims"),
                   list("start_indices_batching_dims", "start_indices dims paired with operand_batching_dims"),
                   list("start_index_map", "operand dim addressed by each index-vector entry (any order)"),
                   {"index_vector_dim", AttrType::kInt, "0", {}, "start_indices dim holding the index vector (may equal its rank)"},
                   list("slice_sizes", "slice size per operand dim"),
                   {"indices_are_sorted", AttrType::kBool, "false", {}, "a promise; unused"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    stablehlo::GatherDimensionNumbers dn;
                    dn.offset_dims = a.get_ints("offset_dims");
                    dn.collapsed_slice_dims = a.get_ints("collapsed_slice_dims");
                    dn.operand_batching_dims = a.get_ints("operand_batching_dims");
                    dn.start_indices_batching_dims = a.get_ints("start_indices_batching_dims");
                    dn.start_index_map = a.get_ints("start_index_map");
                    dn.index_vector_dim = a.get_int("index_vector_dim");
                    return stablehlo::gather(x, i, dn, a.get_ints("slice_sizes"), a.get_bool("indices_are_sorted"), o);
                  }});
}

}  // namespace multigather::frontends
