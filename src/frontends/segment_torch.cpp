// The segment family's PyTorch lowerings: torch.segment_reduce and torch_scatter.scatter /
// segment_coo / segment_csr (segments from lengths, offsets or an index, then the block scatter
// into the reduction's identity: segment.hpp), and torch.nn.functional.embedding_bag (the rows of
// weight each bag reads, gathered and reduced in one fused pass: Lowering::gathered), with
// bag_of_rows. Their rows: segment.cpp (append_segment_ops).
#include <algorithm>
#include <cstring>

#include "frontends/segment.hpp"
#include "kernels/segment_ids.hpp"

namespace multigather::frontends {

using detail::index_text;
using detail::read_index_value;

// ---- torch.segment_reduce and torch_scatter ---------------------------------------------------

namespace {

/// Segment ids [batch.., n] (int64, in out->owned_indices) from per-row boundaries `bounds`
/// [batch'.., K] (batch'[d]: batch[d], or 1 where `broadcast`): `offsets` (segment s is rows
/// [bounds[s], bounds[s+1]), K = S + 1) or lengths (segment s the next bounds[s] rows, K = S). A
/// row in no segment gets id S (dropped by index_mode drop). Errors name `name` and the position:
/// a negative length, offsets outside [0, n] or decreasing, and (with `check_sum`) lengths that do
/// not add up to n.
Status ids_from_boundaries(const TensorView& bounds, const char* name, bool offsets, const std::vector<std::int64_t>& batch,
                           std::int64_t n, bool check_sum, bool broadcast, Lowering* out, TensorView* ids,
                           std::int64_t* num_segments) {
  const int b_rank = static_cast<int>(batch.size());
  if (bounds.rank() != b_rank + 1) {
    return InvalidArgument(out->op + ": " + name + " must have rank " + str(b_rank + 1) + " (got shape " +
                           to_string(bounds.shape) + ")");
  }
  for (int d = 0; d < b_rank; ++d) {
    if (bounds.shape[d] != batch[static_cast<std::size_t>(d)] && !(broadcast && bounds.shape[d] == 1)) {
      return InvalidArgument(out->op + ": " + name + ".shape = " + to_string(bounds.shape) + " must start with " +
                             shape_str(batch) + (broadcast ? " (or 1 there)" : "") + ", the data's leading sizes");
    }
  }
  const std::int64_t k = bounds.shape[b_rank];
  if (offsets && k == 0) return InvalidArgument(out->op + ": " + name + " must hold at least one offset per row (its last dimension is 0)");
  const std::int64_t segments = offsets ? k - 1 : k;
  out->reads_index_values = true;
  std::vector<std::int64_t> ids_shape = batch;
  ids_shape.push_back(n);
  *num_segments = segments;
  const Dims shape{std::span<const std::int64_t>(ids_shape)};
  if (bounds.data == nullptr) {  // shapes alone (explain, shape inference): ids of the right shape
    *ids = TensorView(nullptr, DType::kInt64, shape);
    return Status::Ok();
  }
  auto b = std::make_shared<SegmentBoundaries>();
  b->bounds = bounds;
  b->name = name;
  b->offsets = offsets;
  b->check_sum = check_sum;
  b->batch = Dims(std::span<const std::int64_t>(batch));
  b->n = n;
  b->segments = segments;
  if (out->device == Device::kCUDA) {  // the engine computes them on the device (Lowering::segment_ids)
    *ids = TensorView(nullptr, DType::kInt64, shape);
    out->segment_ids = std::move(b);
    return Status::Ok();
  }
  out->owned_indices = std::make_shared<Tensor>(DType::kInt64, shape);
  std::vector<std::int64_t> starts(static_cast<std::size_t>(detail::segment_starts_count(*b)));
  std::uint64_t first_error = detail::kNoSegmentIdsError;
  detail::segment_ids_on_host(detail::segment_ids_params(*b, static_cast<std::int64_t*>(out->owned_indices->data()),
                                                         starts.data(), &first_error));
  if (first_error != detail::kNoSegmentIdsError) return detail::segment_ids_error(out->op, *b, bounds, first_error);
  *ids = out->owned_indices->view();
  return Status::Ok();
}

/// The segments of data along `axis` from `bounds` (ids_from_boundaries), then the block scatter
/// (lower_segments) with index mode drop for the rows in no segment.
Status lower_bounded_segments(const TensorView& data, const TensorView& bounds, const char* name, bool offsets,
                              int axis, bool check_sum, bool broadcast, const Reducer& r,
                              const std::optional<Scalar>& initial, Lowering* out) {
  const std::vector<std::int64_t> shape = dims_from(data, 0);
  TensorView ids;
  std::int64_t segments = 0;
  MULTIGATHER_RETURN_IF_ERROR(ids_from_boundaries(bounds, name, offsets,
                                                  std::vector<std::int64_t>(shape.begin(), shape.begin() + axis),
                                                  data.shape[axis], check_sum, broadcast, out, &ids, &segments));
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, segments, dims_from(data, axis + 1), r, out, axis, initial, name));
  set_policy(out, IndexMode::kDrop, false);
  set_error_context(out, ids, "segment ids", -1, {"the segments"}, {segments}, false, "");
  out->notes.push_back(std::string(name) + (out->segment_ids != nullptr ? " becomes one segment id per row on the device (the engine computes them)"
                                                                        : " was read into one segment id per row") +
                       " (a row in no segment is dropped)" +
                       (initial ? "; every segment starts from initial" : ""));
  return Status::Ok();
}

}  // namespace

Status torch_segment_reduce(const TensorView& data, const TensorView& bounds, const AttributeValues& a, Lowering* out) {
  const bool offsets = a.get_bool("lengths_are_offsets");
  const char* name = offsets ? "offsets" : "lengths";
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch.segment_reduce", data, bounds, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, name, bounds.dtype, {DType::kInt32, DType::kInt64}));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "data", data.dtype,
                                          {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  if (data.rank() == 0) return InvalidArgument(out->op + ": data must have at least one dimension (got a scalar)");
  std::int64_t axis = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "axis", a.get_int("axis"), data.rank(), true, &axis));
  const std::string& reduce = a.get_enum("reduce");
  const std::optional<Scalar> initial = a.get_scalar("initial");
  Reducer r;
  if (reduce == "prod") {
    r.reduction = Reduction::kMul;
    r.identity = Identity::kOne;
  } else if (reduce == "max" || reduce == "amax") {  // amax / amin: PyTorch's own names for them
    r.reduction = Reduction::kMax;
    r.identity = Identity::kNegInf;
  } else if (reduce == "min" || reduce == "amin") {
    r.reduction = Reduction::kMin;
    r.identity = Identity::kPosInf;
  } else if (reduce == "mean") {
    // An empty segment is NaN (0 / 0) without initial: the first update assigns over NaN.
    r.mean = true;
    r.identity = Identity::kNaN;
    r.include_input = initial.has_value();
  }
  return lower_bounded_segments(data, bounds, name, offsets, static_cast<int>(axis), !offsets && !a.get_bool("unsafe"),
                                false, r, initial, out);
}

namespace {

/// torch_scatter's reductions: an empty output element is 0 (1 for mul; min / max too, as
/// torch_scatter fills it), mean divides by the count (floating and complex src: the Python
/// module multigather.torch_scatter computes torch_scatter's integer means over the sum).
Reducer scatter_reducer(const std::string& reduce) {
  Reducer r;
  if (reduce == "mul") {
    r.reduction = Reduction::kMul;
    r.identity = Identity::kOne;
  } else if (reduce == "min" || reduce == "max") {
    r.reduction = reduce == "min" ? Reduction::kMin : Reduction::kMax;
    r.include_input = false;  // the first update assigns; an empty element keeps the 0
  } else if (reduce == "mean") {
    r.mean = true;
  }
  return r;
}

/// torch_scatter's index broadcast (torch_scatter/utils.py, broadcast): a 1-D index lies along
/// `dim` (leading and trailing dimensions of size 1); a longer one aligns with src's leading
/// dimensions; then it expands to src's shape (a size-1 dimension repeats: stride 0).
Status broadcast_index(const TensorView& src, const TensorView& index, std::int64_t dim, int leading, Lowering* out,
                       TensorView* view) {
  ViewBuilder v = ViewBuilder::of(index);
  const int k = index.rank();
  const int first = k == 1 ? static_cast<int>(dim) : 0;  // src dimension of index dimension 0
  for (int d = 0; d < leading; ++d) {
    const int i = d - first;
    if (i < 0 || i >= k) {
      v.add(src.shape[d], 0);
    } else if (index.shape[i] == src.shape[d]) {
      v.add(src.shape[d], index.strides[i]);
    } else if (index.shape[i] == 1) {
      v.add(src.shape[d], 0);
    } else {
      return InvalidArgument(out->op + ": index.shape = " + to_string(index.shape) + " does not broadcast to src.shape = " +
                             to_string(src.shape) + " (index dimension " + str(i) + " of size " + str(index.shape[i]) +
                             " must be " + str(src.shape[d]) + " or 1)");
    }
  }
  return to_view(out->op, v, "index", view);
}

/// dim_size, or the largest index + 1 (0 for an empty index), read from the index.
Status output_size(const TensorView& index, const AttributeValues& a, Lowering* out, std::int64_t* size) {
  if (const std::optional<std::int64_t> given = a.get_optional_int("dim_size")) {
    if (*given < 0) return InvalidArgument(out->op + ": dim_size = " + str(*given) + " must be non-negative");
    *size = *given;
    return Status::Ok();
  }
  if (index.data == nullptr) {
    return NeedsIndexValues(out->op + ": dim_size = None is index.max() + 1: " + std::string(kNeedsIndexValues) +
                           "index (give dim_size for shapes alone)");
  }
  MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, "for dim_size = None, the values of index (their max + 1)", "give dim_size"));
  out->reads_index_values = true;
  return rows_after(out->op, largest_id(index, -1), size);
}

/// torch_scatter's index rule (an index outside [0, dim_size) is an error) and gradient rule (a
/// max / min's goes to the arg element).
void torch_scatter_rules(Lowering* out, const TensorView& index, std::int64_t dim, std::int64_t size) {
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, index, "index", -1, {"dim " + str(dim)}, {size}, false, "torch_scatter's index must be in [0, dim_size)");
  out->gradient_to_first_tie = true;
}

Status check_scatter_operands(const TensorView& src, const TensorView& index, const char* iname, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, iname, index.dtype, {DType::kInt64}));
  if (src.rank() == 0) return InvalidArgument(out->op + ": src must have at least one dimension (got a scalar)");
  if (index.rank() == 0 || index.rank() > src.rank()) {
    return InvalidArgument(out->op + ": " + iname + " rank " + str(index.rank()) + " must be in [1, src rank " +
                           str(src.rank()) + "]");
  }
  return Status::Ok();
}

}  // namespace

Status ts_scatter(const TensorView& src, const TensorView& index, const AttributeValues& a, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch_scatter.scatter", src, index, out));
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_operands(src, index, "index", out));
  std::int64_t dim = 0;
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "dim", a.get_int("dim"), src.rank(), true, &dim));
  const Reducer r = scatter_reducer(a.get_enum("reduce"));
  MULTIGATHER_RETURN_IF_ERROR(check_reducer(src, r, out));
  TensorView expanded;
  MULTIGATHER_RETURN_IF_ERROR(broadcast_index(src, index, dim, src.rank(), out, &expanded));
  std::int64_t size = 0;
  MULTIGATHER_RETURN_IF_ERROR(output_size(index, a, out, &size));
  bool rows = true;  // the index repeats along every dimension after dim (PyG's 1-D index)
  for (int d = static_cast<int>(dim) + 1; d < src.rank(); ++d) rows = rows && expanded.strides[d] == 0;
  if (rows) {
    // Whole rows of src[.., i, :] move together: the block recipe (one id per row, dim batch
    // dimensions before it), as segment_coo, not one index per element.
    ViewBuilder ids = ViewBuilder::of(expanded);
    ids.add_dims(expanded, 0, static_cast<int>(dim) + 1);
    TensorView ids_view;
    MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, ids, "index", &ids_view));
    MULTIGATHER_RETURN_IF_ERROR(lower_segments(src, ids_view, size, dims_from(src, static_cast<int>(dim) + 1), r, out,
                                               static_cast<int>(dim), std::nullopt, "index"));
  } else {
    std::vector<std::int64_t> out_shape = dims_from(src, 0);
    out_shape[static_cast<std::size_t>(dim)] = size;
    TensorView identity;
    MULTIGATHER_RETURN_IF_ERROR(identity_view(src, out_shape, r, std::nullopt, out, &identity));
    MULTIGATHER_RETURN_IF_ERROR(
        lower_elements(out->op, identity, expanded, dim, ElementRule::kBroadcast, "out", "index", out));
    MULTIGATHER_RETURN_IF_ERROR(finish_segments(identity, src, index, "index", dims_from(src, 0), r, out));
  }
  torch_scatter_rules(out, index, dim, size);
  // torch_scatter's sum and mean are PyTorch's scatter_add_ (float32 accumulation on the CPU);
  // its mul is a kernel of its own, in the dtype.
  out->wide_accumulator = out->reduction == Reduction::kAdd;
  return Status::Ok();
}

Status ts_segment_coo(const TensorView& src, const TensorView& index, const AttributeValues& a, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch_scatter.segment_coo", src, index, out));
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_operands(src, index, "index", out));
  const int k = index.rank();
  TensorView expanded;
  MULTIGATHER_RETURN_IF_ERROR(broadcast_index(src, index, 0, k, out, &expanded));
  std::int64_t size = 0;
  MULTIGATHER_RETURN_IF_ERROR(output_size(index, a, out, &size));
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(src, expanded, size, dims_from(src, k), scatter_reducer(a.get_enum("reduce")),
                                             out, k - 1, std::nullopt, "index"));
  torch_scatter_rules(out, index, k - 1, size);
  return Status::Ok();
}

Status ts_segment_csr(const TensorView& src, const TensorView& indptr, const AttributeValues& a, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch_scatter.segment_csr", src, indptr, out));
  MULTIGATHER_RETURN_IF_ERROR(check_scatter_operands(src, indptr, "indptr", out));
  MULTIGATHER_RETURN_IF_ERROR(lower_bounded_segments(src, indptr, "indptr", true, indptr.rank() - 1, false, true,
                                                     scatter_reducer(a.get_enum("reduce")), std::nullopt, out));
  out->gradient_to_first_tie = true;
  return Status::Ok();
}

// ---- torch.nn.functional.embedding_bag ---------------------------------------------------------

namespace {

/// per_sample_weights (of input's shape and weight's dtype) as a vector view over the N update
/// rows: a view where its strides allow one, else a contiguous copy the GatheredRows owns.
Status sample_weights(const Lowering& l, const TensorView& psw, const TensorView& input, const TensorView& weight,
                      GatheredRows* g) {
  if (!(psw.shape == input.shape)) {
    return InvalidArgument(l.op + ": per_sample_weights.shape = " + to_string(psw.shape) + " must equal input.shape = " +
                           to_string(input.shape));
  }
  if (psw.dtype != weight.dtype) {
    return TypeError(l.op + ": per_sample_weights dtype " + std::string(dtype_name(psw.dtype)) + " must equal weight dtype " +
                     std::string(dtype_name(weight.dtype)));
  }
  const std::int64_t n = psw.numel();
  if (psw.rank() == 1 || (psw.rank() == 2 && psw.strides[0] == psw.shape[1] * psw.strides[1])) {
    g->scale = TensorView(psw.data, psw.dtype, Dims{n}, Dims{psw.strides[psw.rank() - 1]});
    return Status::Ok();
  }
  if (psw.data == nullptr) {
    g->scale = TensorView(nullptr, psw.dtype, Dims{n});
    return Status::Ok();
  }
  if (l.device == Device::kCUDA) {
    return InvalidArgument(l.op + ": per_sample_weights of shape " + to_string(psw.shape) + " and strides " +
                           to_string(psw.strides) + " is not one vector of rows; on a CUDA device pass it contiguous");
  }
  g->owned_scale = std::make_shared<Tensor>(psw.dtype, Dims{n});
  const std::size_t es = element_size(psw.dtype);
  auto* dst = static_cast<std::byte*>(g->owned_scale->data());
  for (std::int64_t i = 0; i < psw.shape[0]; ++i) {
    for (std::int64_t j = 0; j < psw.shape[1]; ++j, dst += es) {
      std::memcpy(dst, static_cast<const std::byte*>(psw.data) + (i * psw.strides[0] + j * psw.strides[1]) * static_cast<std::int64_t>(es), es);
    }
  }
  g->scale = g->owned_scale->view();
  return Status::Ok();
}

/// input's values (int32 / int64, rank 1 or 2, any strides) in C order as table rows, in one
/// typed pass; `bad` is the C-order position of the first one outside [0, v_size) (-1: none).
void read_rows(const TensorView& input, std::int64_t v_size, std::vector<std::int64_t>* rows, std::int64_t* bad) {
  const std::int64_t outer = input.rank() == 2 ? input.shape[0] : 1, inner = input.shape[input.rank() - 1];
  const std::int64_t outer_stride = input.rank() == 2 ? input.strides[0] : 0, inner_stride = input.strides[input.rank() - 1];
  rows->resize(static_cast<std::size_t>(outer * inner));
  const auto each = [&]<class T>(const T* base) {
    std::int64_t* out = rows->data();
    for (std::int64_t i = 0; i < outer; ++i) {
      const T* p = base + i * outer_stride;
      for (std::int64_t j = 0; j < inner; ++j) {
        const std::int64_t v = static_cast<std::int64_t>(p[j * inner_stride]);
        if (v < 0 || v >= v_size) {
          *bad = i * inner + j;
          return;
        }
        *out++ = v;
      }
    }
  };
  switch (input.dtype) {
    case DType::kInt64: each(static_cast<const std::int64_t*>(input.data)); break;
    case DType::kInt32: each(static_cast<const std::int32_t*>(input.data)); break;
    case DType::kInt16: each(static_cast<const std::int16_t*>(input.data)); break;
    case DType::kInt8: each(static_cast<const std::int8_t*>(input.data)); break;
    default: each(static_cast<const std::uint8_t*>(input.data)); break;  // kUInt8
  }
}

/// Whether input (rank 1 or 2) holds int64 values in C order with no gaps: the fused kernel
/// then reads them in place.
bool c_ordered_int64(const TensorView& input) {
  if (input.dtype != DType::kInt64) return false;
  const int last = input.rank() - 1;
  if (input.shape[last] > 1 && input.strides[last] != 1) return false;
  return input.rank() == 1 || input.shape[0] <= 1 || input.strides[0] == input.shape[1];
}

/// Whether every p[i] is in [0, v_size): one branch-free pass of unsigned compares (a negative
/// id is a huge unsigned value).
inline bool ids_below(const std::int64_t* p, std::int64_t n, std::uint64_t v_size) {
  std::uint64_t out = 0;
  for (std::int64_t i = 0; i < n; ++i) out |= static_cast<std::uint64_t>(p[i]) >= v_size ? 1u : 0u;
  return out == 0;
}

#if defined(__x86_64__)
/// ids_below compiled for AVX2, which has the 64-bit vector compare the baseline lacks.
__attribute__((target("avx2"), flatten)) bool ids_below_avx2(const std::int64_t* p, std::int64_t n,
                                                            std::uint64_t v_size) {
  return ids_below(p, n, v_size);
}
#endif

/// ids_below, the AVX2 build where the CPU has it (asked once; a plain branch, not an ifunc,
/// whose resolver runs before ThreadSanitizer's runtime and crashed it).
bool all_below(const std::int64_t* p, std::int64_t n, std::uint64_t v_size) {
#if defined(__x86_64__)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  if (avx2) return ids_below_avx2(p, n, v_size);
#endif
  return ids_below(p, n, v_size);
}

/// The table rows of embedding_bag's ids, each checked against [0, v_size): C-ordered int64
/// ids in place after one read-only range pass (all_below; no copy), others copied (read_rows,
/// which also finds the first id out of range when the pass fails). `bad`: as read_rows.
void table_rows(const TensorView& input, std::int64_t v_size, GatheredRows* g, std::int64_t* bad) {
  const std::int64_t n = input.numel();
  if (n > 0 && c_ordered_int64(input)) {
    const auto* p = static_cast<const std::int64_t*>(input.data);
    if (all_below(p, n, static_cast<std::uint64_t>(v_size))) {
      g->rows = p;
      return;
    }
  }
  read_rows(input, v_size, &g->owned_rows, bad);
  g->rows = g->owned_rows.data();
}

/// The bags' first update rows, bag_starts [B + 1], from torch's offsets (or a 2-D input's fixed
/// bags, as F.embedding_bag makes them: offsets = arange(0, N, L)), with PyTorch's checks.
Status bag_starts_of(const Lowering& l, const TensorView& input, const TensorView* offsets, bool include_last_offset,
                     std::vector<std::int64_t>* starts) {
  const std::int64_t n = input.numel();
  std::vector<std::int64_t> given;  // int32 / int64 values (checked), any stride: one typed pass
  if (input.rank() == 2) {
    given.resize(static_cast<std::size_t>(input.shape[0]));
    for (std::int64_t b = 0; b < input.shape[0]; ++b) given[static_cast<std::size_t>(b)] = b * input.shape[1];
  } else {
    given.resize(static_cast<std::size_t>(offsets->numel()));
    const std::int64_t step = offsets->numel() > 1 ? offsets->strides[0] : 0;
    const auto each = [&]<class T>(const T* p) {
      for (std::size_t b = 0; b < given.size(); ++b) given[b] = static_cast<std::int64_t>(p[static_cast<std::int64_t>(b) * step]);
    };
    if (offsets->dtype == DType::kInt64) each(static_cast<const std::int64_t*>(offsets->data));
    else each(static_cast<const std::int32_t*>(offsets->data));
  }
  if (include_last_offset && given.empty()) {
    return InvalidArgument(l.op + ": include_last_offset: number of offsets should be at least 1");
  }
  const std::size_t bags = include_last_offset ? given.size() - 1 : given.size();
  if (!given.empty() && given[0] != 0) {
    return InvalidArgument(l.op + ": offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           "from position 0. However, got " + index_text(given[0]));
  }
  for (std::size_t b = 1; b < given.size(); ++b) {
    if (given[b] < given[b - 1]) {
      return InvalidArgument(l.op + ": offsets must not decrease (offsets[" + str(static_cast<std::int64_t>(b)) + "] = " +
                             index_text(given[b]) + " follows " + index_text(given[b - 1]) + ")");
    }
  }
  if (!given.empty() && given.back() > n) {
    return InvalidArgument(l.op + ": offsets[-1] can not be greater than input's length " + str(n) +
                           ", but got offsets[-1] of " + index_text(given.back()));
  }
  if (include_last_offset && given.back() != n) {
    // PyTorch's documented rule, which it does not check: its sum then drops the rows after the
    // last offset while its mean counts them and its max reads them (PyTorch 2.15).
    return InvalidArgument(l.op + ": include_last_offset: offsets[-1] = " + index_text(given.back()) +
                           " must equal input's length " + str(n) + " (the last offset ends the last bag, as in CSR)");
  }
  starts->assign(bags + 1, n);
  for (std::size_t b = 0; b < given.size(); ++b) (*starts)[b] = static_cast<std::int64_t>(given[b]);
  return Status::Ok();
}

/// PyTorch's checks of embedding_bag's offsets and ids, read in host memory, into g's bag_starts
/// and rows: the CPU lowering's, and the words of a failure the CUDA engine found
/// (GatheredRows::check_values).
Status bag_values(const Lowering& l, const TensorView& input, const TensorView* offsets, bool include_last_offset,
                  std::int64_t v_size, GatheredRows* g) {
  MULTIGATHER_RETURN_IF_ERROR(bag_starts_of(l, input, offsets, include_last_offset, &g->bag_starts));
  std::int64_t bad = -1;
  table_rows(input, v_size, g, &bad);
  if (bad < 0) return Status::Ok();
  const std::int64_t at = input.rank() == 2 ? bad / input.shape[1] : bad;
  const std::string where = input.rank() == 2 ? str(at) + "," + str(bad % input.shape[1]) : str(at);
  const std::int64_t stride_at = input.rank() == 2 ? at * input.strides[0] + (bad % input.shape[1]) * input.strides[1]
                                                   : at * input.strides[0];
  const auto* p = static_cast<const std::byte*>(input.data) + stride_at * static_cast<std::int64_t>(element_size(input.dtype));
  return OutOfRange(l.op + ": input[" + where + "] = " + index_text(read_index_value(p, input.dtype)) +
                    " is out of range [0, " + str(v_size) + ") (index out of range in self: the rows of weight)");
}

}  // namespace

Status torch_embedding_bag(const TensorView& weight, const TensorView& input, const AttributeValues& a, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch.nn.functional.embedding_bag", weight, input, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "weight", weight.dtype,
                                          {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  // PyTorch 2.15's CPU embedding_bag takes int8, uint8 and int16 ids too (not int32's unsigned
  // kin); its offsets stay int32 / int64.
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "input", input.dtype,
                                          {DType::kInt32, DType::kInt64, DType::kInt16, DType::kInt8, DType::kUInt8}));
  if (weight.rank() != 2) {
    return InvalidArgument(out->op + ": weight has to be a 2D Tensor (num_embeddings, embedding_dim), but got Tensor of "
                           "dimension " + str(weight.rank()));
  }
  if (input.rank() != 1 && input.rank() != 2) {
    return InvalidArgument(out->op + ": input has to be 1D or 2D Tensor, but got Tensor of dimension " + str(input.rank()));
  }
  const TensorView* offsets = a.get_tensor("offsets");
  const TensorView* psw = a.get_tensor("per_sample_weights");
  const std::string& mode = a.get_enum("mode");
  // F.embedding_bag: a 2-D input's bags are its rows, include_last_offset or not.
  const bool include_last_offset = a.get_bool("include_last_offset") && input.rank() == 1;
  if (input.rank() == 2 && offsets != nullptr) {
    return InvalidArgument(out->op + ": if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                           "of fixed length sequences (got offsets of shape " + to_string(offsets->shape) + ")");
  }
  if (input.rank() == 1 && offsets == nullptr) {
    return InvalidArgument(out->op + ": offsets has to be a 1D Tensor but got None (a 1-D input needs offsets)");
  }
  if (offsets != nullptr) {
    MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "offsets", offsets->dtype, {DType::kInt32, DType::kInt64}));
    if (offsets->rank() != 1) {
      return InvalidArgument(out->op + ": offsets has to be a 1D Tensor, but got Tensor of dimension " + str(offsets->rank()));
    }
  }
  if (psw != nullptr && mode != "sum") {
    return InvalidArgument(out->op + ": per_sample_weights was not None. per_sample_weights is only supported for "
                           "mode='sum' (got mode='" + mode + "')");
  }
  const std::int64_t v_size = weight.shape[0], d_size = weight.shape[1], n = input.numel();
  std::int64_t skip_row = -1;
  if (const std::optional<std::int64_t> p = a.get_optional_int("padding_idx")) {
    if (*p >= v_size || *p < -v_size) {
      return InvalidArgument(out->op + ": padding_idx = " + str(*p) + " must be within [-num_embeddings, num_embeddings) = [" +
                             str(-v_size) + ", " + str(v_size) + ")");
    }
    skip_row = *p < 0 ? *p + v_size : *p;
  }
  auto g = std::make_shared<GatheredRows>();
  g->table = weight;
  g->skip_row = skip_row;
  if (psw != nullptr) MULTIGATHER_RETURN_IF_ERROR(sample_weights(*out, *psw, input, weight, g.get()));
  out->reads_index_values = true;
  // The bags; the core scatter's indices are one bag id per update row (B: in no bag, or
  // padding), shapes only (bag_of_rows).
  std::int64_t bags = 0;
  TensorView ids(nullptr, DType::kInt64, Dims{n});
  // Values are known where there is data, or nothing to read (an empty tensor's data may be null).
  const auto known = [](const TensorView* t) { return t == nullptr || t->data != nullptr || t->numel() == 0; };
  const bool on_device = out->device == Device::kCUDA;  // the CUDA engine reads and checks them
  const bool have_values = !on_device && known(&input) && known(offsets);
  if (have_values) {
    MULTIGATHER_RETURN_IF_ERROR(bag_values(*out, input, offsets, include_last_offset, v_size, g.get()));
    bags = static_cast<std::int64_t>(g->bag_starts.size()) - 1;
    // The core indices (each row's bag) stay shapes only: the fused kernel reads bag_starts.
  } else if (input.rank() == 2) {
    bags = input.shape[0];
  } else {
    bags = include_last_offset ? offsets->shape[0] - 1 : offsets->shape[0];
    if (bags < 0) return InvalidArgument(out->op + ": include_last_offset: number of offsets should be at least 1");
  }
  if (on_device && known(&input) && known(offsets)) {
    g->ids = input;
    if (offsets != nullptr) g->offsets = *offsets;
    g->include_last_offset = include_last_offset;
    g->bags = bags;
    g->check_values = [op = out->op, include_last_offset, v_size](const TensorView& ids, const TensorView* offs) {
      Lowering words;
      words.op = op;
      GatheredRows scratch;
      return bag_values(words, ids, offs, include_last_offset, v_size, &scratch);
    };
  }
  Reducer r;
  if (mode == "max") {
    r.reduction = Reduction::kMax;
    r.include_input = false;  // the first row assigns; an empty bag keeps the 0
  } else if (mode == "mean") {
    r.mean = true;
  }
  TensorView identity;
  MULTIGATHER_RETURN_IF_ERROR(identity_view(weight, {bags, d_size}, r, std::nullopt, out, &identity));
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, identity, ids, 0, 0, out));
  const TensorView gathered(nullptr, weight.dtype, Dims{n, d_size});
  MULTIGATHER_RETURN_IF_ERROR(finish_segments(identity, gathered, ids, "input", {n, d_size}, r, out));
  out->updates_computed = true;
  out->gathered = std::move(g);
  set_policy(out, IndexMode::kDrop, false);
  set_error_context(out, ids, "bag ids", -1, {"the bags"}, {bags}, false, "");
  out->notes.push_back("each bag's rows of weight are read and reduced straight into its output row (fused): the "
                       "gathered rows are never written; an empty bag is 0 in every mode" +
                       std::string(skip_row >= 0 ? "; rows equal to padding_idx take no part (nor count in a mean)" : ""));
  return Status::Ok();
}

}  // namespace multigather::frontends

namespace multigather {

std::vector<std::int64_t> bag_of_rows(const GatheredRows& g) {
  if (g.rows == nullptr || g.bag_starts.empty()) return {};
  const std::int64_t bags = static_cast<std::int64_t>(g.bag_starts.size()) - 1;
  std::vector<std::int64_t> bag(static_cast<std::size_t>(g.bag_starts[static_cast<std::size_t>(bags)]), bags);
  for (std::int64_t b = 0; b < bags; ++b) {
    for (std::int64_t n = g.bag_starts[static_cast<std::size_t>(b)]; n < g.bag_starts[static_cast<std::size_t>(b) + 1]; ++n) {
      if (g.rows[n] != g.skip_row) bag[static_cast<std::size_t>(n)] = b;
    }
  }
  return bag;
}

}  // namespace multigather
