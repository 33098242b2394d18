// The segment family: jax.ops.segment_* and tf.math.(unsorted_)segment_*, each one scatter of
// the data into the reduction's identity (docs/spec.md section 6). A segment op takes
// (data, segment_ids) as a gather does and lowers onto scatter_multiaxis:
//
//     output = scatter_multiaxis(identity[S, F..], ids', data', axes=[0], reduction)
//
// where F = data.shape[ids.rank:] (jax: data.shape[1:]), the core input is ONE element of the
// reduction's identity broadcast to [S] ++ F (strides 0: static storage, never copied), ids'
// and data' are the block scatter's views of segment_ids and data (lower_block), and the core
// output is the framework output. Mean and sqrt_n divide by the count of each segment after the
// sum (Lowering::mean_by_count, sqrt_count), as torch.scatter_reduce(mean) does.
//
// Sources: https://docs.jax.dev/en/latest/_autosummary/jax.ops.segment_sum.html (jax/_src/ops/
// scatter.py: _segment_update, _get_identity), https://www.tensorflow.org/api_docs/python/tf/math/
// segment_sum and unsorted_segment_sum (tensorflow/core/kernels/segment_reduction_ops_impl.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/index_value.hpp"
#include "core/odometer.hpp"
#include "frontends/recipes.hpp"

namespace multigather::frontends {
namespace {

using detail::index_text;
using detail::next_position;
using detail::read_index_value;
using detail::visit_index_type;

/// What an output element no update reaches holds, and what the reduction starts from.
enum class Identity : std::uint8_t { kZero, kOne, kLowest, kHighest, kNegInf, kPosInf, kNaN, kCount };

/// The largest finite value of a floating dtype.
double max_finite(DType t) {
  switch (t) {
    case DType::kFloat16: return 65504.0;
    case DType::kBFloat16: return 3.3895313892515355e38;
    case DType::kFloat32: return std::numeric_limits<float>::max();
    case DType::kFloat8E4M3FN: return 448.0;
    case DType::kFloat8E5M2: return 57344.0;
    default: return std::numeric_limits<double>::max();
  }
}

Scalar identity_value(DType t, Identity which) {
  const bool is_float = t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64 ||
                        t == DType::kFloat8E4M3FN || t == DType::kFloat8E5M2 || t == DType::kComplex64 ||
                        t == DType::kComplex128;
  const bool low = which == Identity::kLowest || which == Identity::kNegInf;
  switch (which) {
    case Identity::kZero: return Scalar::from_int(0);
    case Identity::kOne: return Scalar::from_int(1);
    case Identity::kNaN:  // torch.segment_reduce's empty mean (floating dtypes only; 0 elsewhere)
      return is_float ? Scalar::from_float(std::numeric_limits<double>::quiet_NaN()) : Scalar::from_int(0);
    default: break;
  }
  if (t == DType::kBool) return Scalar::from_int(low ? 0 : 1);
  if (is_float) {
    const bool infinite = (which == Identity::kNegInf || which == Identity::kPosInf) && t != DType::kFloat8E4M3FN;
    const double v = infinite ? std::numeric_limits<double>::infinity() : max_finite(t);
    return Scalar::from_float(low ? -v : v);
  }
  Scalar s;
  visit_index_type(t, [&]<class T>() {
    if constexpr (std::is_signed_v<T>) {
      s = Scalar::from_int(low ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max());
    } else {
      s = low ? Scalar::from_uint(0) : Scalar::from_uint(std::numeric_limits<T>::max());
    }
    return true;
  });
  return s;
}

/// One element of `which` in `dtype`, in static storage (built once; never written again).
const void* identity_element(DType dtype, Identity which) {
  using Element = std::array<std::byte, 16>;
  static const std::array<Element, kDTypeCount * static_cast<int>(Identity::kCount)> table = [] {
    std::array<Element, kDTypeCount * static_cast<int>(Identity::kCount)> t{};
    for (int d = 0; d < kDTypeCount; ++d) {
      for (int w = 0; w < static_cast<int>(Identity::kCount); ++w) {
        const auto dtype = static_cast<DType>(d);
        (void)encode_scalar(identity_value(dtype, static_cast<Identity>(w)), dtype,
                            t[static_cast<std::size_t>(d * static_cast<int>(Identity::kCount) + w)].data(), "identity");
      }
    }
    return t;
  }();
  return table[static_cast<std::size_t>(static_cast<int>(dtype) * static_cast<int>(Identity::kCount) +
                                        static_cast<int>(which))]
      .data();
}

/// How one segment op reduces.
struct Reducer {
  Reduction reduction = Reduction::kAdd;
  Identity identity = Identity::kZero;  // the core input's value
  bool include_input = true;            // false: the first update assigns (TF's sorted max: empty = 0)
  bool mean = false;                    // divide by the count (mean), or its square root (sqrt_n)
  bool sqrt_n = false;
};

bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64 ||
         t == DType::kComplex64 || t == DType::kComplex128;
}

bool is_complex(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }

/// begin_scatter for a segment op. On CUDA operands its core scatter runs on the CUDA engine,
/// which fills the output with the identity (a host element) before the combine; the steps that
/// read index values on the host refuse them (host_values_only).
Status begin_segment(const char* op, const TensorView& data, const TensorView& ids, Lowering* out) {
  return begin_scatter(op, data, ids, data, out);
}

/// A lowering step that reads `what` on the host: an error on CUDA operands, which the host must
/// not read (`instead`: how to avoid the step).
Status host_values_only(const Lowering& l, const std::string& what, const char* instead) {
  if (l.device != Device::kCUDA) return Status::Ok();
  return InvalidArgument(l.op + ": " + what + " are read on the host, and the operands are on a CUDA device (" +
                         instead + ")");
}

Status check_reducer(const TensorView& data, const Reducer& r, Lowering* out) {
  if (is_complex(data.dtype) && (r.reduction == Reduction::kMax || r.reduction == Reduction::kMin)) {
    return TypeError(out->op + ": data dtype " + std::string(dtype_name(data.dtype)) +
                     " has no order (complex max and min are not segment reductions)");
  }
  if (r.mean && !is_floating(data.dtype)) {
    return TypeError(out->op + ": data dtype " + std::string(dtype_name(data.dtype)) +
                     " must be a floating or complex type (the mean divides)");
  }
  return Status::Ok();
}

/// The core input: ONE element broadcast to `shape` (strides 0): the reduction's identity in
/// static storage, or `initial` (torch.segment_reduce's) in a one-element tensor the lowering owns.
Status identity_view(const TensorView& data, const std::vector<std::int64_t>& shape, const Reducer& r,
                     const std::optional<Scalar>& initial, Lowering* out, TensorView* identity) {
  std::int64_t numel = 0;
  if (!element_count(Dims(std::span<const std::int64_t>(shape)), &numel)) {
    // TensorFlow's own words for its ops (its TensorShape refuses the output shape).
    if (out->op.rfind("tf.", 0) == 0) {
      return InvalidArgument(out->op + ": Encountered overflow when multiplying the dimensions of the output shape " +
                             shape_str(shape) + " (its element count overflows 64 bits)");
    }
    return InvalidArgument(out->op + ": the output shape " + shape_str(shape) + " has an element count that overflows 64 bits");
  }
  const void* element = identity_element(data.dtype, r.identity);
  if (initial) {
    out->owned_input = std::make_shared<Tensor>(data.dtype, Dims{1});
    MULTIGATHER_RETURN_IF_ERROR(encode_scalar(*initial, data.dtype, out->owned_input->data(), out->op + ": initial"));
    element = out->owned_input->data();
  }
  ViewBuilder x{element, data.dtype, {}, {}};
  for (std::int64_t s : shape) x.add(s, 0);
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, x, "output", identity));
  out->input_is_constant = true;
  return Status::Ok();
}

/// After the gather recipe ran on (identity, ids): `data` (of `framework_shape` after
/// broadcasting) becomes the core updates, and the reducer's flags are set.
Status finish_segments(const TensorView& identity, const TensorView& data, const TensorView& ids,
                       const char* ids_name, const std::vector<std::int64_t>& framework_shape, const Reducer& r, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(finish_framework_scatter(identity, data, framework_shape, out, [&] {
    return out->op + ": data shape " + to_string(data.shape) + " does not match " + ids_name + " shape " +
           to_string(ids.shape) + " (data must be " + shape_str(framework_shape) + ")";
  }));
  out->reduction = r.reduction;
  out->include_input = r.include_input;
  out->mean_by_count = r.mean;
  out->sqrt_count = r.sqrt_n;
  out->notes.push_back("every element of the output starts as the reduction's identity (one element, broadcast); "
                       "the updates of each segment combine in row-major order of data, so float results are "
                       "reproducible at every thread count");
  return Status::Ok();
}

/// The block scatter of `data` (I.shape ++ F after broadcasting, F = `trailing`) into the
/// identity view I.shape[:axis] ++ [S] ++ F along segment_ids I (its first `axis` dimensions are
/// batch dimensions: data's leading ones).
Status lower_segments(const TensorView& data, const TensorView& ids, std::int64_t num_segments,
                      const std::vector<std::int64_t>& trailing, const Reducer& r, Lowering* out,
                      int axis = 0, const std::optional<Scalar>& initial = std::nullopt,
                      const char* ids_name = "segment_ids") {
  MULTIGATHER_RETURN_IF_ERROR(check_reducer(data, r, out));
  std::vector<std::int64_t> identity_shape;
  for (int d = 0; d < axis; ++d) identity_shape.push_back(ids.shape[d]);
  identity_shape.push_back(num_segments);
  identity_shape.insert(identity_shape.end(), trailing.begin(), trailing.end());
  TensorView identity;
  MULTIGATHER_RETURN_IF_ERROR(identity_view(data, identity_shape, r, initial, out, &identity));
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, identity, ids, axis, axis, out));
  std::vector<std::int64_t> framework_shape = dims_vec(ids.shape);
  framework_shape.insert(framework_shape.end(), trailing.begin(), trailing.end());
  return finish_segments(identity, data, ids, ids_name, framework_shape, r, out);
}

/// The first segment id, in C order, for which `bad(v)` holds: true and its position / value.
template <class Bad>
bool find_id(const TensorView& ids, Bad&& bad, std::string* position, __int128* value) {
  if (ids.data == nullptr) return false;
  std::int64_t pos[kMaxRank] = {};
  std::int64_t offset = 0;
  const std::int64_t n = ids.numel();
  const auto es = static_cast<std::int64_t>(element_size(ids.dtype));
  for (std::int64_t i = 0; i < n; ++i) {
    const __int128 v = read_index_value(static_cast<const std::byte*>(ids.data) + offset * es, ids.dtype);
    if (bad(v, i)) {
      position->clear();
      for (int d = 0; d < ids.rank(); ++d) *position += (d ? "," : "") + str(pos[d]);
      *value = v;
      return true;
    }
    next_position(pos, ids.shape, ids.strides, &offset);
  }
  return false;
}

/// The output size `largest id + 1`, or InvalidArgument when it does not fit in int64 (a uint64
/// id of 2**63 or more, int64's maximum).
Status rows_after(const std::string& op, __int128 largest, std::int64_t* rows) {
  if (largest >= std::numeric_limits<std::int64_t>::max()) {
    return InvalidArgument(op + ": segment id " + index_text(largest) + " + 1 rows do not fit in int64");
  }
  *rows = static_cast<std::int64_t>(largest + 1);
  return Status::Ok();
}

/// The largest of `floor` and the ids' values (read from host memory).
__int128 largest_id(const TensorView& ids, __int128 floor) {
  std::string where;
  __int128 v = 0;
  find_id(ids, [&](__int128 x, std::int64_t) { floor = x > floor ? x : floor; return false; }, &where, &v);
  return floor;
}

std::vector<std::int64_t> dims_from(const TensorView& v, int from) {
  std::vector<std::int64_t> out;
  for (int d = from; d < v.rank(); ++d) out.push_back(v.shape[d]);
  return out;
}

// ---- jax.ops.segment_* -----------------------------------------------------------------------

template <Reduction R>
Status jax_segment(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out) {
  const char* op = R == Reduction::kAdd   ? "jax.ops.segment_sum"
                   : R == Reduction::kMul ? "jax.ops.segment_prod"
                   : R == Reduction::kMax ? "jax.ops.segment_max"
                                          : "jax.ops.segment_min";
  MULTIGATHER_RETURN_IF_ERROR(begin_segment(op, data, ids, out));
  MULTIGATHER_RETURN_IF_ERROR(check_integer(out->op, "segment_ids", ids.dtype));
  if (data.rank() == 0) return InvalidArgument(out->op + ": data must have at least one dimension (got a scalar)");
  std::optional<std::int64_t> num_segments = a.get_optional_int("num_segments");
  if (!num_segments) {
    // jax: num_segments = np.max(segment_ids) + 1, read from the (concrete) ids.
    if (ids.data == nullptr) {
      return NeedsIndexValues(out->op + ": num_segments = None is max(segment_ids) + 1: " + std::string(kNeedsIndexValues) +
                             "segment_ids (give num_segments for shapes alone)");
    }
    if (ids.numel() == 0) return InvalidArgument(out->op + ": num_segments = None needs a non-empty segment_ids");
    MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, "for num_segments = None, the values of segment_ids (their max + 1)",
                                                 "give num_segments"));
    std::int64_t rows = 0;
    MULTIGATHER_RETURN_IF_ERROR(rows_after(out->op, largest_id(ids, std::numeric_limits<std::int64_t>::min()), &rows));
    num_segments = rows;
    out->reads_index_values = true;
  }
  if (*num_segments < 0) return InvalidArgument(out->op + ": num_segments must be non-negative.");
  Reducer r;
  r.reduction = R;
  r.identity = R == Reduction::kAdd   ? Identity::kZero
               : R == Reduction::kMul ? Identity::kOne
               : R == Reduction::kMax ? Identity::kNegInf
                                      : Identity::kPosInf;
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, *num_segments, dims_from(data, 1), r, out));
  const std::string& mode = a.get_enum("mode");
  if (mode == "clip") {
    set_policy(out, IndexMode::kClamp, false);
    out->notes.push_back("mode='clip': a segment id clamps to [0, num_segments-1] (-1 -> 0)");
  } else {
    set_policy(out, IndexMode::kDrop, false);
    out->notes.push_back("mode='" + mode + "': an update whose segment id is outside [0, num_segments) (negatives "
                         "included) is dropped");
  }
  set_error_context(out, ids, "segment_ids", -1, {"num_segments"}, {*num_segments}, false, "");
  return Status::Ok();
}

// ---- tf.math.unsorted_segment_* and tf.math.segment_* ----------------------------------------

enum class TfReduce : std::uint8_t { kSum, kProd, kMax, kMin, kMean, kSqrtN };

const char* tf_suffix(TfReduce k) {
  switch (k) {
    case TfReduce::kSum: return "sum";
    case TfReduce::kProd: return "prod";
    case TfReduce::kMax: return "max";
    case TfReduce::kMin: return "min";
    case TfReduce::kMean: return "mean";
    case TfReduce::kSqrtN: return "sqrt_n";
  }
  return "sum";
}

/// TF's reducer. Unsorted: the output starts as the identity and every update combines into it
/// (max: numeric_limits::lowest() for an empty segment). Sorted: each segment reduces its own
/// run; an empty segment is 0 (1 for prod).
Reducer tf_reducer(TfReduce k, bool sorted) {
  Reducer r;
  switch (k) {
    case TfReduce::kSum: break;
    case TfReduce::kProd: r.reduction = Reduction::kMul; r.identity = Identity::kOne; break;
    case TfReduce::kMax:
      r.reduction = Reduction::kMax;
      r.identity = sorted ? Identity::kZero : Identity::kLowest;
      r.include_input = !sorted;
      break;
    case TfReduce::kMin:
      r.reduction = Reduction::kMin;
      r.identity = sorted ? Identity::kZero : Identity::kHighest;
      r.include_input = !sorted;
      break;
    // The sum starts from 0, as TensorFlow's; the identity is not counted (execute.cpp).
    case TfReduce::kMean: r.mean = true; break;
    case TfReduce::kSqrtN: r.mean = r.sqrt_n = true; break;
  }
  return r;
}

/// TensorFlow's segment_ids dtypes (its kernels' Tindices): int32 and int64, and int16 for the
/// unsorted ops; TensorFlow's words for any other.
Status tf_ids_dtype(const std::string& op, DType dtype, bool unsorted) {
  if (dtype == DType::kInt32 || dtype == DType::kInt64 || (unsorted && dtype == DType::kInt16)) return Status::Ok();
  const std::string name(dtype_name(dtype));
  return TypeError(op + ": segment_ids dtype " + name + " is not supported (Value for attr 'Tindices' of " + name +
                   " is not in the list of allowed values: " + (unsorted ? "int16, " : "") + "int32, int64)");
}

template <TfReduce K>
Status tf_unsorted(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out) {
  static const std::string name = std::string("tf.math.unsorted_segment_") + tf_suffix(K);
  MULTIGATHER_RETURN_IF_ERROR(begin_segment(name.c_str(), data, ids, out));
  MULTIGATHER_RETURN_IF_ERROR(tf_ids_dtype(out->op, ids.dtype, true));
  const std::optional<std::int64_t> given = a.get_optional_int("num_segments");
  if (!given) return InvalidArgument(out->op + ": num_segments is required");
  const std::int64_t num_segments = *given;
  if (num_segments < 0) {
    return InvalidArgument(out->op + ": Input num_segments == " + str(num_segments) +
                           " must not be negative. (num_segments sizes the output's first dimension)");
  }
  const int p = ids.rank();
  bool prefix = p <= data.rank();
  for (int d = 0; prefix && d < p; ++d) prefix = ids.shape[d] == data.shape[d];
  if (!prefix) {
    return InvalidArgument(out->op + ": data.shape = " + to_string(data.shape) + " does not start with segment_ids.shape = " +
                           to_string(ids.shape));
  }
  // TF on CPU: an id >= num_segments is an error, a negative one is dropped. TF on a GPU does not
  // check (its rule: safe, unspecified behavior): there, as here on CUDA operands, both drop.
  const bool cuda = out->device == Device::kCUDA;
  std::string where;
  __int128 v = 0;
  out->reads_index_values = !cuda;
  if (!cuda && find_id(ids, [&](__int128 x, std::int64_t) { return x >= num_segments; }, &where, &v)) {
    return OutOfRange(out->op + ": segment_ids[" + where + "] = " + index_text(v) + " is out of range [0, " +
                      str(num_segments) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, num_segments, dims_from(data, p), tf_reducer(K, false), out));
  set_policy(out, IndexMode::kDrop, false);
  set_error_context(out, ids, "segment_ids", -1, {"num_segments"}, {num_segments}, false, "");
  out->notes.push_back(cuda ? "a segment id outside [0, num_segments) drops its update (TensorFlow's rule on a GPU, "
                              "which does not check the ids)"
                            : "a negative segment id drops its update (TensorFlow's rule); one >= num_segments is an error");
  return Status::Ok();
}

template <TfReduce K>
Status tf_sorted(const TensorView& data, const TensorView& ids, const AttributeValues&, Lowering* out) {
  static const std::string name = std::string("tf.math.segment_") + tf_suffix(K);
  MULTIGATHER_RETURN_IF_ERROR(begin_segment(name.c_str(), data, ids, out));
  MULTIGATHER_RETURN_IF_ERROR(tf_ids_dtype(out->op, ids.dtype, false));
  // TensorFlow's checks and words, in its kernel's order (SegmentReductionDoValidation, then
  // SegmentReductionOp::Compute); each message adds the argument and value.
  if (ids.rank() != 1) {
    return InvalidArgument(out->op + ": segment_ids should be a vector. (segment_ids.shape = " + to_string(ids.shape) + ")");
  }
  if (data.rank() == 0) return InvalidArgument(out->op + ": input must be at least rank 1 (data is a scalar)");
  if (data.shape[0] != ids.shape[0]) {
    return InvalidArgument(out->op + ": segment_ids should be the same size as dimension 0 of input. (segment_ids.shape = " +
                           to_string(ids.shape) + ", data.shape = " + to_string(data.shape) + ")");
  }
  // The output has segment_ids[-1] + 1 rows: the ids are read (TensorFlow reads them too).
  MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, "the values of segment_ids (the output has segment_ids[-1] + 1 rows)",
                                               "copy them to the host, or use tf.math.unsorted_segment_* with num_segments"));
  if (ids.data == nullptr) {
    return NeedsIndexValues(out->op + ": the output has segment_ids[-1] + 1 rows: " + std::string(kNeedsIndexValues) +
                           "segment_ids");
  }
  out->reads_index_values = true;
  const std::int64_t n = ids.numel();
  const auto es = static_cast<std::int64_t>(element_size(ids.dtype));
  const auto id_at = [&](std::int64_t i) {
    return read_index_value(static_cast<const std::byte*>(ids.data) + i * ids.strides[0] * es, ids.dtype);
  };
  std::int64_t num_segments = 0;
  if (n > 0) {
    const __int128 last = id_at(n - 1);
    if (last < 0) {
      return OutOfRange(out->op + ": segment ids must be >= 0 (segment_ids[" + str(n - 1) + "] = " + index_text(last) +
                        " is the last id, and the output has segment_ids[-1] + 1 rows)");
    }
    MULTIGATHER_RETURN_IF_ERROR(rows_after(out->op, last, &num_segments));
    // TensorFlow walks the runs of equal ids: each next run must have a larger id, and each
    // run's id must be a row of the output, [0, segment_ids[-1] + 1).
    std::int64_t start = 0;
    __int128 id = id_at(0);
    for (std::int64_t end = 1; end <= n; ++end) {
      if (end < n) {
        const __int128 next = id_at(end);
        if (next == id) continue;
        if (next < id) {
          return InvalidArgument(out->op + ": segment ids are not increasing (segment_ids[" + str(end) + "] = " +
                                 index_text(next) + " follows " + index_text(id) + ")");
        }
      }
      if (id < 0 || id >= num_segments) {
        return OutOfRange(out->op + ": Segment id " + index_text(id) + " out of range [0, " + str(num_segments) +
                          "), possibly because 'segment_ids' input is not sorted. (segment_ids[" + str(start) + "] = " +
                          index_text(id) + "; the output has segment_ids[-1] + 1 = " + str(num_segments) + " rows)");
      }
      if (end < n) id = id_at(end);
      start = end;
    }
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, num_segments, dims_from(data, 1), tf_reducer(K, true), out));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, ids, "segment_ids", -1, {"the segments"}, {num_segments}, false, "");
  return Status::Ok();
}

// ---- torch.segment_reduce and torch_scatter ---------------------------------------------------

/// The values of an integer view in C order (any strides).
std::vector<__int128> values_of(const TensorView& v) {
  std::vector<__int128> out;
  out.reserve(static_cast<std::size_t>(v.numel()));
  std::string where;
  __int128 unused = 0;
  find_id(v, [&](__int128 x, std::int64_t) { out.push_back(x); return false; }, &where, &unused);
  return out;
}

std::string position_text(const std::vector<std::int64_t>& at) {
  std::string s;
  for (std::size_t d = 0; d < at.size(); ++d) s += (d ? "," : "") + str(at[d]);
  return s;
}

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
  if (bounds.data == nullptr) {  // shapes alone (explain, shape inference): ids of the right shape
    *ids = TensorView(nullptr, DType::kInt64, Dims(std::span<const std::int64_t>(ids_shape)));
    return Status::Ok();
  }
  const std::vector<__int128> v = values_of(bounds);
  std::int64_t rows = 1;
  for (std::int64_t s : batch) rows *= s;
  out->owned_indices = std::make_shared<Tensor>(DType::kInt64, Dims(std::span<const std::int64_t>(ids_shape)));
  auto* id = static_cast<std::int64_t*>(out->owned_indices->data());
  std::vector<std::int64_t> at(batch.size(), 0);
  for (std::int64_t row = 0; row < rows; ++row, id += n) {
    std::int64_t bound_row = 0;  // the row of bounds this data row reads
    for (int d = 0; d < b_rank; ++d) bound_row = bound_row * bounds.shape[d] + (bounds.shape[d] == 1 ? 0 : at[static_cast<std::size_t>(d)]);
    const __int128* b = v.data() + bound_row * k;
    const auto where = [&](std::int64_t j) {
      std::vector<std::int64_t> p;
      for (int d = 0; d < b_rank; ++d) p.push_back(bounds.shape[d] == 1 ? 0 : at[static_cast<std::size_t>(d)]);
      p.push_back(j);
      return std::string(name) + "[" + position_text(p) + "] = " + index_text(b[j]);
    };
    std::fill(id, id + n, segments);
    if (offsets) {
      for (std::int64_t s = 0; s < segments + 1; ++s) {
        if (b[s] < 0 || b[s] > n) {
          return OutOfRange(out->op + ": " + where(s) + " is out of range [0, " + str(n) + "] (the data's rows along the axis)");
        }
        if (s > 0 && b[s] < b[s - 1]) {
          return InvalidArgument(out->op + ": " + name + " must not decrease (" + where(s) + " follows " + index_text(b[s - 1]) + ")");
        }
        if (s > 0) std::fill(id + static_cast<std::int64_t>(b[s - 1]), id + static_cast<std::int64_t>(b[s]), s - 1);
      }
    } else {
      __int128 start = 0;
      for (std::int64_t s = 0; s < segments; ++s) {
        if (b[s] < 0) return InvalidArgument(out->op + ": " + where(s) + " is negative (lengths must be >= 0)");
        const __int128 end = start + b[s];
        if (start < n) std::fill(id + static_cast<std::int64_t>(start), id + static_cast<std::int64_t>(end < n ? end : n), s);
        start = end;
      }
      if (check_sum && start != n) {
        std::vector<std::int64_t> p(at.begin(), at.end());
        return InvalidArgument(out->op + ": " + name + "[" + position_text(p) + (p.empty() ? "" : ",") + ":] sums to " +
                               index_text(start) + ", but the data has " + str(n) +
                               " rows along the axis (they must be equal; unsafe=True skips this check and drops rows "
                               "past the last segment)");
      }
    }
    for (int d = b_rank - 1; d >= 0; --d) {  // the next batch position
      if (++at[static_cast<std::size_t>(d)] < batch[static_cast<std::size_t>(d)]) break;
      at[static_cast<std::size_t>(d)] = 0;
    }
  }
  *ids = out->owned_indices->view();
  return Status::Ok();
}

/// The segments of data along `axis` from `bounds` (ids_from_boundaries), then the block scatter
/// (lower_segments) with index mode drop for the rows in no segment.
Status lower_bounded_segments(const TensorView& data, const TensorView& bounds, const char* name, bool offsets,
                              int axis, bool check_sum, bool broadcast, const Reducer& r,
                              const std::optional<Scalar>& initial, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, std::string("the values of ") + name + " (one segment id per row)",
                                               "copy them to the host"));
  const std::vector<std::int64_t> shape = dims_from(data, 0);
  TensorView ids;
  std::int64_t segments = 0;
  MULTIGATHER_RETURN_IF_ERROR(ids_from_boundaries(bounds, name, offsets,
                                                  std::vector<std::int64_t>(shape.begin(), shape.begin() + axis),
                                                  data.shape[axis], check_sum, broadcast, out, &ids, &segments));
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, segments, dims_from(data, axis + 1), r, out, axis, initial, name));
  set_policy(out, IndexMode::kDrop, false);
  set_error_context(out, ids, "segment ids", -1, {"the segments"}, {segments}, false, "");
  out->notes.push_back(std::string(name) + " was read into one segment id per row (a row in no segment is dropped)" +
                       (initial ? "; every segment starts from initial" : ""));
  return Status::Ok();
}

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

Status torch_embedding_bag(const TensorView& weight, const TensorView& input, const AttributeValues& a, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_segment("torch.nn.functional.embedding_bag", weight, input, out));
  MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, "the values of input and offsets (the fused gather and "
                                               "reduction runs on the CPU engine only)", "copy them to the host"));
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
  const bool have_values = known(&input) && known(offsets);
  if (have_values) {
    MULTIGATHER_RETURN_IF_ERROR(bag_starts_of(*out, input, offsets, include_last_offset, &g->bag_starts));
    bags = static_cast<std::int64_t>(g->bag_starts.size()) - 1;
    std::int64_t bad = -1;
    table_rows(input, v_size, g.get(), &bad);
    if (bad >= 0) {
      const std::int64_t at = input.rank() == 2 ? bad / input.shape[1] : bad;
      const std::string where = input.rank() == 2 ? str(at) + "," + str(bad % input.shape[1]) : str(at);
      const std::int64_t stride_at = input.rank() == 2 ? at * input.strides[0] + (bad % input.shape[1]) * input.strides[1]
                                                       : at * input.strides[0];
      const auto* p = static_cast<const std::byte*>(input.data) +
                      stride_at * static_cast<std::int64_t>(element_size(input.dtype));
      return OutOfRange(out->op + ": input[" + where + "] = " + index_text(read_index_value(p, input.dtype)) +
                        " is out of range [0, " + str(v_size) + ") (index out of range in self: the rows of weight)");
    }
    // The core indices (each row's bag) stay shapes only: the fused kernel reads bag_starts.
  } else if (input.rank() == 2) {
    bags = input.shape[0];
  } else {
    bags = include_last_offset ? offsets->shape[0] - 1 : offsets->shape[0];
    if (bags < 0) return InvalidArgument(out->op + ": include_last_offset: number of offsets should be at least 1");
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

}  // namespace

void append_segment_ops(std::vector<OpSpec>* ops) {
  const std::string jax_docs = "https://docs.jax.dev/en/latest/_autosummary/jax.ops.";
  const std::string tf_docs = "https://www.tensorflow.org/api_docs/python/tf/math/";
  struct Jax {
    const char* name;
    const char* formula;
    LowerFn fn;
  };
  for (const Jax& j : {Jax{"segment_sum", "out[s, f..] = sum of data[i, f..] over i with segment_ids[i] == s (0 when none)",
                           jax_segment<Reduction::kAdd>},
                       Jax{"segment_prod", "out[s, f..] = product of data[i, f..] over i with segment_ids[i] == s (1 when none)",
                           jax_segment<Reduction::kMul>},
                       Jax{"segment_max", "out[s, f..] = max of data[i, f..] over i with segment_ids[i] == s (-inf / int min when none)",
                           jax_segment<Reduction::kMax>},
                       Jax{"segment_min", "out[s, f..] = min of data[i, f..] over i with segment_ids[i] == s (+inf / int max when none)",
                           jax_segment<Reduction::kMin>}}) {
    OpSpec op{std::string("jax.ops.") + j.name, "jax", "segment",
              std::string("jax.ops.") + j.name +
                  "(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None, out_sharding=None)",
              j.formula, jax_docs + j.name + ".html", "data", "segment_ids",
              {{"num_segments", AttrType::kOptionalInt, "none", {}, "output rows (none: max(segment_ids) + 1, read from the ids)"},
               {"indices_are_sorted", AttrType::kBool, "false", {}, "a hint (sorted ids take the sorted path whether or not it is given)"},
               {"unique_indices", AttrType::kBool, "false", {}, "a hint (results do not depend on it)"},
               {"mode", AttrType::kEnum, "fill", {"fill", "drop", "clip", "promise_in_bounds"},
                "out-of-range ids: fill / drop / promise_in_bounds drop the update, clip clamps"}},
              j.fn};
    op.kind = OpKind::kSegment;
    op.index_rule = {IndexMode::kDrop, false, "mode"};
    op.rules =
        "data: any shape with at least one dimension, broadcast to segment_ids.shape ++ data.shape[1:] (jax's "
        "x.at[segment_ids] rule; usually 1-D segment_ids of length data.shape[0]); output (num_segments,) ++ "
        "data.shape[1:] of data's dtype. An empty segment holds the reduction's identity (sum 0, prod 1, max -inf / "
        "the integer minimum / False, min +inf / the integer maximum / True). Ids are not wrapped: mode None / fill / "
        "drop / promise_in_bounds drop an update whose id is outside [0, num_segments), clip clamps it. The updates "
        "of a segment combine in row-major order (JAX: in an unspecified order), so float results are reproducible. "
        "The Python wrappers (multigather.jax.segment_*) take JAX's whole signature: bucket_size (sum / prod: "
        "a reduction per bucket of rows, then over the buckets, as JAX's; max / min: ignored, the result is the "
        "same), out_sharding (None only), bool data refused for sum / prod as lax.add / lax.mul do";
    ops->push_back(std::move(op));
  }
  struct Tf {
    const char* suffix;
    const char* formula;
    LowerFn unsorted, sorted;  // sorted: null where TF has no sorted op
  };
  for (const Tf& t : {Tf{"sum", "sum of data[i.., f..] over i.. with segment_ids[i..] == s (0 when none)",
                         tf_unsorted<TfReduce::kSum>, tf_sorted<TfReduce::kSum>},
                      Tf{"prod", "product of data[i.., f..] over i.. with segment_ids[i..] == s (1 when none)",
                         tf_unsorted<TfReduce::kProd>, tf_sorted<TfReduce::kProd>},
                      Tf{"max", "max of data[i.., f..] over i.. with segment_ids[i..] == s",
                         tf_unsorted<TfReduce::kMax>, tf_sorted<TfReduce::kMax>},
                      Tf{"min", "min of data[i.., f..] over i.. with segment_ids[i..] == s",
                         tf_unsorted<TfReduce::kMin>, tf_sorted<TfReduce::kMin>},
                      Tf{"mean", "sum of data[i.., f..] over i.. with segment_ids[i..] == s, / their count (0 when none)",
                         tf_unsorted<TfReduce::kMean>, tf_sorted<TfReduce::kMean>},
                      Tf{"sqrt_n", "sum of data[i.., f..] over i.. with segment_ids[i..] == s, / sqrt(their count) (0 when none)",
                         tf_unsorted<TfReduce::kSqrtN>, nullptr}}) {
    OpSpec u{std::string("tf.math.unsorted_segment_") + t.suffix, "tf", "segment",
             std::string("tf.math.unsorted_segment_") + t.suffix + "(data, segment_ids, num_segments)",
             std::string("out[s, f..] = ") + t.formula, tf_docs + "unsorted_segment_" + t.suffix, "data", "segment_ids",
             {{"num_segments", AttrType::kOptionalInt, "none", {}, "output rows (required)"}}, t.unsorted};
    u.kind = OpKind::kSegment;
    u.index_rule = {IndexMode::kDrop, false, "",
                    "a negative id drops its update; an id >= num_segments is an error (IndexError in Python)"};
    u.rules =
        "segment_ids (int16, int32 or int64): a prefix of data.shape; output [num_segments] ++ data.shape[segment_ids.rank:] "
        "of data's dtype. TensorFlow on CPU: a negative id drops its update, an id >= num_segments is an error "
        "(IndexError). An empty segment holds 0 (sum, mean, sqrt_n), 1 (prod), the dtype's lowest value (max) or "
        "highest (min), which also take part in the reduction as TensorFlow's do. mean and sqrt_n: floating or "
        "complex data (multigather.tf.unsorted_segment_mean takes integer data as TensorFlow does: the sum in data's "
        "dtype over max(count, 1), a float32 result for 8- and 16-bit data, float64 otherwise)";
    ops->push_back(std::move(u));
    if (t.sorted == nullptr) continue;
    OpSpec s{std::string("tf.math.segment_") + t.suffix, "tf", "segment",
             std::string("tf.math.segment_") + t.suffix + "(data, segment_ids)",
             std::string("out[s, f..] = ") + t.formula, tf_docs + "segment_" + t.suffix, "data", "segment_ids", {},
             t.sorted};
    s.kind = OpKind::kSegment;
    s.index_rule = {IndexMode::kError, false, ""};
    s.rules =
        "segment_ids (int32 or int64): a sorted vector of non-negative ids, one per row of data (an unsorted or "
        "negative id is an error, as TensorFlow's on CPU); output [segment_ids[-1] + 1] ++ data.shape[1:] of data's "
        "dtype (the ids are read to size it). An empty segment holds 0 (1 for prod); a non-empty one reduces its own "
        "rows only. mean: floating or complex data (multigather.tf.segment_mean takes integer data as TensorFlow does: "
        "the sum in data's dtype divided by the count, truncated toward zero)";
    ops->push_back(std::move(s));
  }
  const std::string torch_docs = "https://docs.pytorch.org/docs/stable/generated/torch.segment_reduce.html";
  OpSpec sr{"torch.segment_reduce", "torch", "segment",
            "torch.segment_reduce(data, reduce, lengths, *, axis=0, unsafe=False, initial=None, lengths_are_offsets=False)",
            "out[b.., s, f..] = reduce of data[b.., n, f..] over the rows n of segment s (given by lengths or offsets "
            "along axis), starting from initial",
            torch_docs, "data", "lengths",
            {{"reduce", AttrType::kEnum, "sum", {"sum", "mean", "max", "min", "prod", "amax", "amin"},
              "the reduction (amax / amin: max / min, PyTorch's names)"},
             {"axis", AttrType::kInt, "0", {}, "the dimension of data the segments cut (lengths.dim() - 1)"},
             {"unsafe", AttrType::kBool, "false", {}, "skip the check that the lengths sum to data.shape[axis]"},
             {"initial", AttrType::kOptionalScalar, "none", {}, "every segment starts from it (an empty one holds it)"},
             {"lengths_are_offsets", AttrType::kBool, "false", {},
              "the lengths operand holds offsets (torch's offsets=: S + 1 boundaries per row) instead of lengths"}},
            torch_segment_reduce};
  sr.kind = OpKind::kSegment;
  sr.index_rule = {IndexMode::kDrop, false, "", "segments from lengths or offsets: no index is out of range"};
  sr.rules =
      "data: float16, bfloat16, float32 or float64 of rank >= 1; lengths (or offsets) int32 / int64 of shape "
      "data.shape[:axis] ++ [S] (offsets: [S + 1]); output data.shape[:axis] ++ [S] ++ data.shape[axis+1:]. Lengths "
      "must be non-negative and sum to data.shape[axis] (unless unsafe: then rows past the last segment are dropped); "
      "offsets must not decrease and lie in [0, data.shape[axis]] (rows outside [offsets[0], offsets[-1]) are "
      "dropped). An empty segment holds initial, else 0 (sum), 1 (prod), -inf (max, amax), +inf (min, amin), NaN (mean); a mean "
      "divides by the count of rows (initial not counted)";
  ops->push_back(std::move(sr));
  const std::string ts_docs = "https://pytorch-scatter.readthedocs.io/en/latest/functions/";
  const AttrSpec reduce{"reduce", AttrType::kEnum, "sum", {"sum", "add", "mul", "mean", "min", "max"},
                        "the reduction (add = sum)"};
  const AttrSpec dim_size{"dim_size", AttrType::kOptionalInt, "none", {},
                          "output size along the reduced dimension (none: index.max() + 1, read from the index)"};
  const char* empty_rule = " An output element no value reaches is 0 (1 for mul), a mean divides by the count "
                           "(floating and complex src; multigather.torch_scatter computes torch_scatter's integer means over the "
                           "row's sum); the values of an element combine in row-major order, so float "
                           "results are reproducible. Gradient: max / min give it to the first value equal to the "
                           "result (the arg output's), torch_scatter's rule";
  OpSpec sc{"torch_scatter.scatter", "torch_scatter", "segment",
            "torch_scatter.scatter(src, index, dim=-1, dim_size=None, reduce='sum')",
            "out[.., index[i], ..] (dim) = reduce of src[.., i, ..] over i, index broadcast to src", ts_docs + "scatter.html",
            "src", "index",
            {{"dim", AttrType::kInt, "-1", {}, "the dimension of src along which index scatters"}, dim_size, reduce},
            ts_scatter};
  sc.rules = std::string("index (int64): 1-D along dim, or aligned with src's leading dimensions, then broadcast to "
                         "src.shape (size 1 repeats); output src.shape with dim_size at dim. index must lie in "
                         "[0, dim_size) (an IndexError otherwise).") + empty_rule;
  OpSpec coo{"torch_scatter.segment_coo", "torch_scatter", "segment",
             "torch_scatter.segment_coo(src, index, dim_size=None, reduce='sum')",
             "out[b.., index[b.., i], f..] = reduce of src[b.., i, f..] over i (dim = index.dim() - 1)",
             ts_docs + "segment_coo.html", "src", "index", {dim_size, reduce}, ts_segment_coo};
  coo.rules = std::string("index (int64, sorted along its last dimension in torch_scatter; any order gives the same "
                          "result here) of src's leading shape (size 1 broadcasts); output src.shape with dim_size at "
                          "dim = index.dim() - 1.") + empty_rule;
  OpSpec csr{"torch_scatter.segment_csr", "torch_scatter", "segment", "torch_scatter.segment_csr(src, indptr, reduce='sum')",
             "out[b.., s, f..] = reduce of src[b.., i, f..] over i in [indptr[b.., s], indptr[b.., s+1])",
             ts_docs + "segment_csr.html", "src", "indptr", {reduce}, ts_segment_csr};
  csr.rules = std::string("indptr (int64) of shape src.shape[:dim] ++ [S + 1] (size 1 broadcasts), dim = "
                          "indptr.dim() - 1, non-decreasing within [0, src.shape[dim]]; output src.shape with S at dim; "
                          "rows outside [indptr[0], indptr[-1]) are dropped.") + empty_rule;
  sc.index_rule = coo.index_rule = {IndexMode::kError, false, ""};
  csr.index_rule = {IndexMode::kDrop, false, "", "segments from indptr: no index is out of range"};
  for (OpSpec* op : {&sc, &coo, &csr}) {
    op->kind = OpKind::kSegment;
    ops->push_back(std::move(*op));
  }
  OpSpec eb{"torch.nn.functional.embedding_bag", "torch", "segment",
            "torch.nn.functional.embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, "
            "scale_grad_by_freq=False, mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False, "
            "padding_idx=None)",
            "out[b, f] = reduce (sum / mean / max) of per_sample_weights[n] * weight[input[n], f] over the rows n of bag b "
            "(bag b: input[offsets[b] : offsets[b+1]], or row b of a 2-D input)",
            "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.embedding_bag.html", "weight", "input",
            {{"offsets", AttrType::kTensor, "none", {}, "int32 / int64 [B] (or [B + 1] with include_last_offset): where "
                                                       "each bag starts in a 1-D input"},
             {"mode", AttrType::kEnum, "mean", {"sum", "mean", "max"}, "the reduction of each bag"},
             {"per_sample_weights", AttrType::kTensor, "none", {}, "input's shape, weight's dtype: each row's weight "
                                                                  "(mode='sum' only)"},
             {"include_last_offset", AttrType::kBool, "false", {},
              "offsets has B + 1 entries, the last one the end (ignored for a 2-D input)"},
             {"padding_idx", AttrType::kOptionalInt, "none", {}, "rows of this index take no part (negative: from the end)"}},
            torch_embedding_bag};
  eb.kind = OpKind::kSegment;
  eb.index_rule = {IndexMode::kDrop, false, "",
                   "input must lie in [0, num_embeddings) (an IndexError otherwise); rows at padding_idx take no part"};
  eb.rules =
      "weight [V, D] float16 / bfloat16 / float32 / float64; input int32 / int64 (int16, int8, uint8 too, as PyTorch 2.15), 1-D with offsets or 2-D [B, L] (fixed "
      "bags, offsets None); output [B, D] of weight's dtype. offsets[0] must be 0, offsets must not decrease and not "
      "exceed input's length; with include_last_offset the last offset must equal input's length (PyTorch's documented "
      "rule; it does not check it, and its modes then disagree about the rows after it). "
      "An empty bag is 0 in every mode; rows equal to padding_idx take no part (nor count in a mean). max: a later row "
      "replaces the running max only when greater (PyTorch's rule). Sums accumulate in row order (16-bit floats in "
      "float32), so results are reproducible at every thread count. max_norm, scale_grad_by_freq and sparse are not "
      "supported (multigather.torch.embedding_bag raises for them)";
  ops->push_back(std::move(eb));
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
