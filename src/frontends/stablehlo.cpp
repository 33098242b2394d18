// StableHLO gather: validation (spec constraints C1-C22), point gathers as one core call on
// views, windowed gathers with materialized clamp(start) + iota coordinates, batching dims, any
// index_vector_dim. Rules: docs/semantics.md section 11 and
// https://github.com/openxla/stablehlo/blob/main/docs/spec.md#gather; mapping: docs/semantics.md
// section 16.
#include "multigather/frontends/stablehlo.hpp"
#include "core/odometer.hpp"

#include <algorithm>

#include "core/index_value.hpp"
#include "frontends/recipes.hpp"

namespace multigather::stablehlo {

using namespace frontends;

namespace {

using Vec = std::vector<std::int64_t>;

bool contains(const Vec& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Status err(const std::string& what, const char* op = "stablehlo.gather") {
  return InvalidArgument(std::string(op) + ": " + what);
}

// Each entry in [0, bound), optionally strictly increasing; unique always.
Status check_dims(const Vec& v, const char* name, std::int64_t bound, bool sorted, const char* c_in,
                  const char* c_sorted, const char* op = "stablehlo.gather") {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= bound) {
      return err(std::string(name) + "[" + str(static_cast<std::int64_t>(i)) + "] = " + str(v[i]) +
                 " must be in [0, " + str(bound) + ") (" + c_in + ")", op);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (v[j] == v[i]) return err(std::string(name) + " " + shape_str(v) + " repeats " + str(v[i]) + " (" + c_sorted + ")", op);
      if (sorted && v[j] > v[i]) return err(std::string(name) + " " + shape_str(v) + " must be sorted (" + c_sorted + ")", op);
    }
  }
  return Status::Ok();
}

// Materializes int64 coordinates of shape `logical` (its last dim times c) into
// out->owned_indices (out->indices views it): for every logical position (row-major),
// fill(pos, base, dst) writes c coordinates, where base is the element offset in `si` of the
// lookup's index vector (its free dims, then the si dims paired with operand batching dims;
// paired[d] < 0 for the other operand dims).
template <class Fill>
Status materialize(const Dims& logical, int c, const TensorView& si, const Vec& free_dims, const Vec& paired,
                   Fill fill, Lowering* out) {
  Dims actual = logical;
  actual[actual.size() - 1] *= c;
  try {
    out->owned_indices = std::make_shared<Tensor>(DType::kInt64, actual);
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  auto* dst = out->owned_indices->data_as<std::int64_t>();
  const int rank = logical.size(), m = static_cast<int>(free_dims.size());
  std::int64_t count = 0;
  element_count(logical, &count);
  Dims pos = Dims::filled(rank, 0);
  for (std::int64_t n = 0; n < count; ++n, dst += c) {
    std::int64_t base = 0;
    for (int f = 0; f < m; ++f) base += pos[f] * si.strides[static_cast<int>(free_dims[static_cast<std::size_t>(f)])];
    for (std::size_t d = 0; d < paired.size(); ++d) {
      if (paired[d] >= 0) base += pos[m + static_cast<int>(d)] * si.strides[static_cast<int>(paired[d])];
    }
    fill(pos, base, dst);
    detail::next_position(pos, logical);
  }
  out->indices = out->owned_indices->view();
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
  out->indices_computed = true;
  if (si.data == nullptr && si.numel() > 0) {  // explain: shapes only
    out->indices = TensorView(nullptr, DType::kInt64, actual);
    return finish(result_shape, out);
  }
  if (out->device == Device::kCUDA) {
    return InvalidArgument(out->op + ": windowed slices (slice_sizes > 1 on an indexed "
                           "dimension) materialize their indices on the host; on a CUDA device "
                           "this lowering is not supported: copy start_indices to the host");
  }
  const std::size_t es = element_size(si.dtype);
  MULTIGATHER_RETURN_IF_ERROR(materialize(logical, static_cast<int>(k), si, free_dims, paired,
      [&](const Dims& pos, std::int64_t base, std::int64_t* dst) {
        for (std::int64_t j = 0; j < k; ++j) {
          const int d = static_cast<int>(dn.start_index_map[static_cast<std::size_t>(j)]);
          const std::int64_t off = base + (ivd < Q ? j * si.strides[static_cast<int>(ivd)] : 0);
          __int128 start = 0;
          detail::read_index(static_cast<const std::byte*>(si.data) + off * static_cast<std::int64_t>(es), si.dtype, &start);
          const std::int64_t s = slice_sizes[static_cast<std::size_t>(d)];
          const std::int64_t hi = operand.shape[d] - (s == 0 ? 0 : s);
          const std::int64_t clamped = start < 0 ? 0 : (start > hi ? hi : static_cast<std::int64_t>(start));
          *dst++ = clamped + (s == 1 ? 0 : pos[m + d]);
        }
      }, out));
  return finish(result_shape, out);
}

// ---- Scatter ---------------------------------------------------------------------------------

namespace {

constexpr const char* kScatter = "stablehlo.scatter";

Status scatter_err(const std::string& what) { return err(what, kScatter); }

// The constraints of the spec's scatter (C2, C4, C7-C22) on shapes and dimension numbers.
Status check_scatter(const TensorView& operand, const TensorView& si, const TensorView& updates,
                     const ScatterDimensionNumbers& dn) {
  const int R = operand.rank(), Q = si.rank(), U = updates.rank();
  const std::int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > Q) return scatter_err("index_vector_dim = " + str(ivd) + " must be in [0, " + str(Q) + "] (C22)");
  const std::int64_t n_dims = static_cast<std::int64_t>(dn.update_window_dims.size() + dn.inserted_window_dims.size() +
                                                        dn.input_batching_dims.size());
  if (n_dims != R) {
    return scatter_err("size(update_window_dims) + size(inserted_window_dims) + size(input_batching_dims) = " +
                       str(n_dims) + " must equal rank(inputs[0]) = " + str(R) + " (C2)");
  }
  const std::int64_t k = static_cast<std::int64_t>(dn.scatter_dims_to_operand_dims.size());
  const std::int64_t vec = ivd < Q ? si.shape[static_cast<int>(ivd)] : 1;
  if (k != vec) {
    return scatter_err("size(scatter_dims_to_operand_dims) = " + str(k) + " must equal the index vector size " +
                       str(vec) + " (C19)");
  }
  const std::int64_t want_rank = static_cast<std::int64_t>(dn.update_window_dims.size()) + Q - (ivd < Q ? 1 : 0);
  if (U != want_rank) {
    return scatter_err("rank(updates) = " + str(U) + " must equal size(update_window_dims) + rank(scatter_indices) " +
                       "without index_vector_dim = " + str(want_rank) + " (C4)");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.update_window_dims, "update_window_dims", U, true, "C8", "C7", kScatter));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.inserted_window_dims, "inserted_window_dims", R, true, "C11", "C10", kScatter));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.input_batching_dims, "input_batching_dims", R, true, "C13", "C12", kScatter));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.scatter_indices_batching_dims, "scatter_indices_batching_dims", Q, false,
                                         "C15", "C14", kScatter));
  MULTIGATHER_RETURN_IF_ERROR(check_dims(dn.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims", R, false,
                                         "C21", "C20", kScatter));
  for (std::int64_t d : dn.inserted_window_dims) {
    if (contains(dn.input_batching_dims, d)) return scatter_err("dimension " + str(d) + " is both inserted and a batching dim (C9)");
  }
  for (std::int64_t d : dn.scatter_dims_to_operand_dims) {
    if (contains(dn.input_batching_dims, d)) {
      return scatter_err("scatter_dims_to_operand_dims entry " + str(d) + " is an input batching dim (C20)");
    }
  }
  if (contains(dn.scatter_indices_batching_dims, ivd)) {
    return scatter_err("index_vector_dim " + str(ivd) + " is a scatter_indices batching dim (C16)");
  }
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return scatter_err("input_batching_dims and scatter_indices_batching_dims must have the same size (C17)");
  }
  for (std::size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int d = static_cast<int>(dn.input_batching_dims[i]), p = static_cast<int>(dn.scatter_indices_batching_dims[i]);
    if (operand.shape[d] != si.shape[p]) {
      return scatter_err("dim(inputs[0], " + str(d) + ") = " + str(operand.shape[d]) + " must equal dim(scatter_indices, " +
                         str(p) + ") = " + str(si.shape[p]) + " (C18)");
    }
  }
  // C4: the update scatter dims take scatter_indices' sizes (without index_vector_dim), in order;
  // the update window dims are at most the operand's window dims.
  int u = 0, p = 0;
  for (int ud = 0; ud < U; ++ud) {
    if (contains(dn.update_window_dims, ud)) continue;
    if (p == ivd) ++p;
    if (updates.shape[ud] != si.shape[p]) {
      return scatter_err("dim(updates, " + str(ud) + ") = " + str(updates.shape[ud]) + " must equal dim(scatter_indices, " +
                         str(p) + ") = " + str(si.shape[p]) + " (C4: an update scatter dim)");
    }
    ++p;
  }
  for (int d = 0; d < R; ++d) {
    if (contains(dn.inserted_window_dims, d) || contains(dn.input_batching_dims, d)) continue;
    const int ud = static_cast<int>(dn.update_window_dims[static_cast<std::size_t>(u++)]);
    if (updates.shape[ud] > operand.shape[d]) {
      return scatter_err("dim(updates, " + str(ud) + ") = " + str(updates.shape[ud]) + " must be at most dim(inputs[0], " +
                         str(d) + ") = " + str(operand.shape[d]) + " (C4: an update window dim)");
    }
  }
  return Status::Ok();
}

Reduction reduction_of(std::string_view computation) {
  if (computation == "add") return Reduction::kAdd;
  if (computation == "mul") return Reduction::kMul;
  if (computation == "min") return Reduction::kMin;
  if (computation == "max") return Reduction::kMax;
  return Reduction::kNone;  // assign
}

}  // namespace

Status scatter(const TensorView& operand, const TensorView& scatter_indices, const TensorView& updates,
               const ScatterDimensionNumbers& dn, std::string_view update_computation,
               bool /*indices_are_sorted: a promise, unused*/, bool /*unique_indices: a promise, unused*/,
               Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter(kScatter, operand, scatter_indices, updates, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "scatter_indices", scatter_indices.dtype));
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(out->op, operand, updates, "inputs", "updates", "C6"));
  MULTIGATHER_RETURN_IF_ERROR(check_scatter(operand, scatter_indices, updates, dn));
  const TensorView& si = scatter_indices;
  const int R = operand.rank(), Q = si.rank(), U = updates.rank();
  const std::int64_t ivd = dn.index_vector_dim;
  const std::int64_t k = static_cast<std::int64_t>(dn.scatter_dims_to_operand_dims.size());

  // Per operand dim: its window size w (1 on inserted dims) and its updates dim (-1: none);
  // per scatter_indices dim: its updates dim.
  Vec update_scatter_dims;
  for (int ud = 0; ud < U; ++ud) {
    if (!contains(dn.update_window_dims, ud)) update_scatter_dims.push_back(ud);
  }
  auto update_dim_of_index_dim = [&](std::int64_t p) { return update_scatter_dims[static_cast<std::size_t>(p - (p > ivd ? 1 : 0))]; };
  Vec window(static_cast<std::size_t>(R), 1), update_dim(static_cast<std::size_t>(R), -1), paired(static_cast<std::size_t>(R), -1);
  for (std::size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    paired[static_cast<std::size_t>(dn.input_batching_dims[i])] = dn.scatter_indices_batching_dims[i];
  }
  {
    std::size_t u = 0;
    for (int d = 0; d < R; ++d) {
      const auto ud = static_cast<std::size_t>(d);
      if (paired[ud] >= 0) {
        update_dim[ud] = update_dim_of_index_dim(paired[ud]);
        window[ud] = operand.shape[d];
      } else if (!contains(dn.inserted_window_dims, d)) {
        update_dim[ud] = dn.update_window_dims[u++];
        window[ud] = updates.shape[static_cast<int>(update_dim[ud])];
      }
    }
  }
  // Windows that are not a whole dimension (a window on an indexed dim, or less than the
  // operand on another) need coordinates start + iota(window), materialized.
  Vec axes_dims;  // operand dims addressed by materialized coordinates, ascending
  bool windowed = false;
  for (int d = 0; d < R; ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (paired[ud] >= 0) continue;
    const bool indexed = contains(dn.scatter_dims_to_operand_dims, d);
    if (indexed || window[ud] < operand.shape[d]) axes_dims.push_back(d);
    windowed |= (indexed && window[ud] != 1) || (!indexed && window[ud] < operand.shape[d]);
  }

  // Core dims: m free dims of scatter_indices, then the R operand dims.
  ViewBuilder in = ViewBuilder::of(operand), ix = ViewBuilder::of(si), up = ViewBuilder::of(updates);
  Vec free_dims;
  for (int p = 0; p < Q; ++p) {
    if (p == ivd || contains(dn.scatter_indices_batching_dims, p)) continue;
    free_dims.push_back(p);
    in.add_unit();
    ix.add(si.shape[p], si.strides[p]);
    const int ud = static_cast<int>(update_dim_of_index_dim(p));
    up.add(updates.shape[ud], updates.strides[ud]);
  }
  const int m = static_cast<int>(free_dims.size());
  for (int d = 0; d < R; ++d) {
    const auto ud = static_cast<std::size_t>(d);
    in.add(operand.shape[d], operand.strides[d]);
    if (update_dim[ud] >= 0) {
      up.add(updates.shape[static_cast<int>(update_dim[ud])], updates.strides[static_cast<int>(update_dim[ud])]);
    } else {
      up.add_unit();
    }
    if (paired[ud] >= 0) {
      ix.add(si.shape[static_cast<int>(paired[ud])], si.strides[static_cast<int>(paired[ud])]);
    } else if (windowed && contains(axes_dims, d)) {
      ix.add(window[ud], 0);
    } else {
      ix.add_unit();
    }
  }
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, in, "input", &out->input));
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, up, "updates", &out->updates));
  {  // size-1 core dims take row-major strides (an in-place output then has the input's strides)
    const Dims row_major = contiguous_strides(out->input.shape);
    for (int d = 0; d < out->input.rank(); ++d) {
      if (out->input.shape[d] == 1) out->input.strides[d] = row_major[d];
    }
  }
  set_policy(out, IndexMode::kDrop, false);
  out->reduction = reduction_of(update_computation);
  out->include_input = true;
  out->notes.push_back("out-of-range windows are skipped whole, as XLA (and jax.lax.scatter) do: an update whose start "
                       "is outside [0, D - window] on any indexed dim writes nothing (the StableHLO spec's text "
                       "checks each element's result_index instead); no negative wrap");
  out->notes.push_back(out->reduction == Reduction::kNone
                           ? "duplicates: StableHLO's schedule is implementation-defined; here the last in row-major order of G wins"
                           : "duplicates all combine, in row-major order of G (StableHLO: an implementation-defined schedule)");

  if (!windowed) {
    for (std::int64_t d : dn.scatter_dims_to_operand_dims) out->axes.push_back(m + d);
    const std::int64_t coord_stride = ivd < Q ? si.strides[static_cast<int>(ivd)] : 0;
    MULTIGATHER_RETURN_IF_ERROR(fold_coordinates(out->op, ix, static_cast<int>(k), coord_stride, out));
    return finish_scatter(dims_vec(operand.shape), out);
  }

  // Windowed: int64 coordinates [L.., |axes_dims|]: start + iota(window) on indexed dims, iota on
  // the others; a window that does not fit gets coordinates D (out of range: dropped whole).
  for (std::int64_t d : axes_dims) out->axes.push_back(m + d);
  const int c = static_cast<int>(axes_dims.size());
  const Dims logical(std::span<const std::int64_t>(ix.shape));
  Dims actual = logical;
  actual[actual.size() - 1] *= c;
  out->notes.push_back("windows: int64 indices " + to_string(actual) +
                       " materialized as start + iota(window) (the only copy)");
  out->logical_indices_shape = logical;
  out->indices_computed = true;
  if (si.data == nullptr && si.numel() > 0) {  // explain: shapes only
    out->indices = TensorView(nullptr, DType::kInt64, actual);
    return finish_scatter(dims_vec(operand.shape), out);
  }
  if (out->device == Device::kCUDA) {
    return InvalidArgument(out->op + ": windowed updates materialize their indices on the host; on a CUDA device "
                           "this lowering is not supported: copy scatter_indices to the host");
  }
  const std::size_t es = element_size(si.dtype);
  MULTIGATHER_RETURN_IF_ERROR(materialize(logical, c, si, free_dims, paired,
      [&](const Dims& pos, std::int64_t base, std::int64_t* dst) {
        bool fits = true;
        for (int a = 0; a < c; ++a) {
          const int d = static_cast<int>(axes_dims[static_cast<std::size_t>(a)]);
          std::int64_t start = 0;
          const auto j = std::find(dn.scatter_dims_to_operand_dims.begin(), dn.scatter_dims_to_operand_dims.end(), d);
          if (j != dn.scatter_dims_to_operand_dims.end()) {
            const std::int64_t off = base + (ivd < Q ? (j - dn.scatter_dims_to_operand_dims.begin()) * si.strides[static_cast<int>(ivd)] : 0);
            __int128 v = 0;
            detail::read_index(static_cast<const std::byte*>(si.data) + off * static_cast<std::int64_t>(es), si.dtype, &v);
            fits = fits && v >= 0 && v <= operand.shape[d] - window[static_cast<std::size_t>(d)];
            start = fits ? static_cast<std::int64_t>(v) : 0;
          }
          dst[a] = start + pos[m + d];
        }
        if (!fits) {  // out of range on every coordinate: the core drops the whole window
          for (int a = 0; a < c; ++a) dst[a] = operand.shape[static_cast<int>(axes_dims[static_cast<std::size_t>(a)])];
        }
      }, out));
  return finish_scatter(dims_vec(operand.shape), out);
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
  OpSpec op{"stablehlo.scatter", "stablehlo", "scatter_windowed",
            "stablehlo.scatter(inputs, scatter_indices, updates, scatter_dimension_numbers, indices_are_sorted, unique_indices, update_computation)",
            "results[full_start_index + full_batching_index + full_window_index] = f(results[..], updates[update_index])  (windows that do not fit: skipped)",
            "https://github.com/openxla/stablehlo/blob/main/docs/spec.md#scatter", "inputs", "scatter_indices",
            {list("update_window_dims", "updates dims of the window (sorted)"),
             list("inserted_window_dims", "operand dims of size-1 windows without an updates dim (sorted)"),
             list("input_batching_dims", "operand dims paired with scatter_indices batching dims (sorted)"),
             list("scatter_indices_batching_dims", "scatter_indices dims paired with input_batching_dims"),
             list("scatter_dims_to_operand_dims", "operand dim addressed by each index-vector entry (any order)"),
             {"index_vector_dim", AttrType::kInt, "0", {}, "scatter_indices dim holding the index vector (may equal its rank)"},
             {"indices_are_sorted", AttrType::kBool, "false", {}, "a promise; unused"},
             {"unique_indices", AttrType::kBool, "false", {}, "a promise; unused (duplicates combine deterministically)"},
             {"update_computation", AttrType::kEnum, "assign", {"assign", "add", "mul", "min", "max"},
              "the region, restricted to these bodies (assign returns the update)"}},
            nullptr};
  op.kind = OpKind::kScatter;
  op.updates_name = "updates";
  op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a, Lowering* o) {
    stablehlo::ScatterDimensionNumbers dn;
    dn.update_window_dims = a.get_ints("update_window_dims");
    dn.inserted_window_dims = a.get_ints("inserted_window_dims");
    dn.input_batching_dims = a.get_ints("input_batching_dims");
    dn.scatter_indices_batching_dims = a.get_ints("scatter_indices_batching_dims");
    dn.scatter_dims_to_operand_dims = a.get_ints("scatter_dims_to_operand_dims");
    dn.index_vector_dim = a.get_int("index_vector_dim");
    return stablehlo::scatter(x, i, u, dn, a.get_enum("update_computation"), a.get_bool("indices_are_sorted"),
                              a.get_bool("unique_indices"), o);
  };
  ops->push_back(std::move(op));
  state_facts(ops, {
      // The START is clamped to [0, D - slice_size] with NO negative wrap (-1 -> 0).
      {"stablehlo.gather", {IndexMode::kClamp, false, ""},
       "the START of each slice is clamped to [0, dim(operand, d) - slice_sizes[d]] (no negative wrap: -1 -> 0; "
       "unsigned start_indices clamp as unsigned; StableHLO PR #1541). Any integer start_indices. Result shape: "
       "batch dims (start_indices without index_vector_dim) and offset dims (slice_sizes without collapsed and "
       "batching dims) interleaved by offset_dims. Constraints C1-C22 of the spec are checked (errors name the "
       "constraint); slice_sizes[d] == 0 on a collapsed or batching dim is refused as inexpressible. Point "
       "gathers (slice size 1 on every indexed dim) are one gather_multiaxis call on views; windowed slices "
       "materialize int64 coordinates clamp(start, 0, D - s) + iota(s). Never IndexError: starts are clamped"},
      // XLA's rule, which jax.lax.scatter follows (FILL_OR_DROP, PROMISE_IN_BOUNDS).
      {"stablehlo.scatter", {IndexMode::kDrop, false, ""},
       "one input; output: its shape and dtype; updates of the input's dtype; any integer scatter_indices. "
       "rank(updates) = size(update_window_dims) + rank(scatter_indices) - 1 (+ 0 when index_vector_dim = "
       "rank(scatter_indices)); the update scatter dims take scatter_indices' sizes, the window dims are at most "
       "the operand's. update_computation assign (the update replaces; the last duplicate wins), add, mul, min, "
       "max (complex: lexicographic on (real, imaginary), a tie or a NaN in the deciding comparison taking the "
       "update, as XLA). An update whose window does not fit (its start on an indexed dim outside [0, D - window]) is "
       "skipped WHOLE, as XLA does (the spec's text checks each element's result_index); no negative wrap. "
       "Duplicates combine in row-major order of the core gather shape (free scatter_indices dims, then operand "
       "dims; StableHLO leaves the schedule implementation-defined). Constraints C2, C4, C6-C22 are checked "
       "(errors name the constraint). Never IndexError: windows that do not fit are skipped"},
  });
}

}  // namespace multigather::frontends
