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
#include <array>
#include <cmath>
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
enum class Identity : std::uint8_t { kZero, kOne, kLowest, kHighest, kNegInf, kPosInf, kCount };

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

/// begin_scatter for a segment op, which runs on the CPU engine only (its lowering may read the
/// ids, and its identity element is host memory).
Status begin_segment(const char* op, const TensorView& data, const TensorView& ids, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter(op, data, ids, data, out));
  if (out->device == Device::kCUDA) {
    return InvalidArgument(out->op + ": segment reductions run on the CPU engine only in this version (the operands "
                           "are on a CUDA device; copy them to the host)");
  }
  return Status::Ok();
}

/// The block scatter of `data` (I.shape ++ F after broadcasting, F = `trailing`) into the
/// identity view [S] ++ F along segment_ids I.
Status lower_segments(const TensorView& data, const TensorView& ids, std::int64_t num_segments,
                      const std::vector<std::int64_t>& trailing, const Reducer& r, Lowering* out) {
  if (is_complex(data.dtype) && (r.reduction == Reduction::kMax || r.reduction == Reduction::kMin)) {
    return TypeError(out->op + ": data dtype " + std::string(dtype_name(data.dtype)) +
                     " has no order (complex max and min are not segment reductions)");
  }
  if (r.mean && !is_floating(data.dtype)) {
    return TypeError(out->op + ": data dtype " + std::string(dtype_name(data.dtype)) +
                     " must be a floating or complex type (the mean divides)");
  }
  std::vector<std::int64_t> identity_shape{num_segments};
  identity_shape.insert(identity_shape.end(), trailing.begin(), trailing.end());
  std::int64_t numel = 0;
  if (!element_count(Dims(std::span<const std::int64_t>(identity_shape)), &numel)) {
    return InvalidArgument(out->op + ": the output shape " + shape_str(identity_shape) +
                           " has an element count that overflows 64 bits (num_segments = " + str(num_segments) + ")");
  }
  ViewBuilder x{identity_element(data.dtype, r.identity), data.dtype, {}, {}};
  for (std::int64_t s : identity_shape) x.add(s, 0);
  TensorView identity;
  MULTIGATHER_RETURN_IF_ERROR(to_view(out->op, x, "output", &identity));
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, identity, ids, 0, 0, out));
  out->input_is_constant = true;
  std::vector<std::int64_t> framework_shape = dims_vec(ids.shape);
  framework_shape.insert(framework_shape.end(), trailing.begin(), trailing.end());
  Status s = finish_framework_scatter(identity, data, framework_shape, out);
  if (!s.ok() && s.code() == StatusCode::kInvalidArgument && s.message().find("does not broadcast") != std::string::npos) {
    return InvalidArgument(out->op + ": data shape " + to_string(data.shape) + " does not match segment_ids shape " +
                           to_string(ids.shape) + " (data must be segment_ids.shape ++ " + shape_str(trailing) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(s);
  out->reduction = r.reduction;
  out->include_input = r.include_input;
  out->mean_by_count = r.mean;
  out->sqrt_count = r.sqrt_n;
  out->notes.push_back("every element of the output starts as the reduction's identity (one element, broadcast); "
                       "the updates of each segment combine in row-major order of data, so float results are "
                       "reproducible at every thread count");
  return Status::Ok();
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
      return InvalidArgument(out->op + ": num_segments = None is max(segment_ids) + 1: " + std::string(kNeedsIndexValues) +
                             "segment_ids (give num_segments for shapes alone)");
    }
    if (ids.numel() == 0) return InvalidArgument(out->op + ": num_segments = None needs a non-empty segment_ids");
    __int128 largest = std::numeric_limits<std::int64_t>::min();
    std::string where;
    __int128 v = 0;
    find_id(ids, [&](__int128 x, std::int64_t) { largest = x > largest ? x : largest; return false; }, &where, &v);
    std::int64_t rows = 0;
    MULTIGATHER_RETURN_IF_ERROR(rows_after(out->op, largest, &rows));
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

template <TfReduce K>
Status tf_unsorted(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out) {
  static const std::string name = std::string("tf.math.unsorted_segment_") + tf_suffix(K);
  MULTIGATHER_RETURN_IF_ERROR(begin_segment(name.c_str(), data, ids, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "segment_ids", ids.dtype, {DType::kInt32, DType::kInt64}));
  const std::optional<std::int64_t> given = a.get_optional_int("num_segments");
  if (!given) return InvalidArgument(out->op + ": num_segments is required");
  const std::int64_t num_segments = *given;
  if (num_segments < 0) {
    return InvalidArgument(out->op + ": num_segments = " + str(num_segments) + " must be non-negative");
  }
  const int p = ids.rank();
  bool prefix = p <= data.rank();
  for (int d = 0; prefix && d < p; ++d) prefix = ids.shape[d] == data.shape[d];
  if (!prefix) {
    return InvalidArgument(out->op + ": data.shape = " + to_string(data.shape) + " does not start with segment_ids.shape = " +
                           to_string(ids.shape));
  }
  // TF on CPU: an id >= num_segments is an error, a negative one is dropped.
  std::string where;
  __int128 v = 0;
  out->reads_index_values = true;
  if (find_id(ids, [&](__int128 x, std::int64_t) { return x >= num_segments; }, &where, &v)) {
    return OutOfRange(out->op + ": segment_ids[" + where + "] = " + index_text(v) + " is out of range [0, " +
                      str(num_segments) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, num_segments, dims_from(data, p), tf_reducer(K, false), out));
  set_policy(out, IndexMode::kDrop, false);
  set_error_context(out, ids, "segment_ids", -1, {"num_segments"}, {num_segments}, false, "");
  out->notes.push_back("a negative segment id drops its update (TensorFlow's rule); one >= num_segments is an error");
  return Status::Ok();
}

template <TfReduce K>
Status tf_sorted(const TensorView& data, const TensorView& ids, const AttributeValues&, Lowering* out) {
  static const std::string name = std::string("tf.math.segment_") + tf_suffix(K);
  MULTIGATHER_RETURN_IF_ERROR(begin_segment(name.c_str(), data, ids, out));
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(out->op, "segment_ids", ids.dtype, {DType::kInt32, DType::kInt64}));
  if (ids.rank() != 1) return InvalidArgument(out->op + ": segment_ids should be a vector (got shape " + to_string(ids.shape) + ")");
  if (data.rank() == 0 || data.shape[0] != ids.shape[0]) {
    return InvalidArgument(out->op + ": segment_ids should be the same size as dimension 0 of data (segment_ids.shape = " +
                           to_string(ids.shape) + ", data.shape = " + to_string(data.shape) + ")");
  }
  // The output has segment_ids[-1] + 1 rows: the ids are read (TensorFlow reads them too).
  if (ids.data == nullptr) {
    return InvalidArgument(out->op + ": the output has segment_ids[-1] + 1 rows: " + std::string(kNeedsIndexValues) +
                           "segment_ids");
  }
  std::string where;
  __int128 v = 0, previous = 0;
  out->reads_index_values = true;
  if (find_id(ids, [&](__int128 x, std::int64_t i) {
        if (x < 0 || (i > 0 && x < previous)) return true;
        previous = x;
        return false;
      }, &where, &v)) {
    return v < 0 ? OutOfRange(out->op + ": segment_ids[" + where + "] = " + index_text(v) + " must be >= 0")
                 : InvalidArgument(out->op + ": segment ids are not increasing (segment_ids[" + where + "] = " +
                                   index_text(v) + " follows " + index_text(previous) + ")");
  }
  std::int64_t num_segments = 0;
  if (ids.numel() > 0) MULTIGATHER_RETURN_IF_ERROR(rows_after(out->op, previous, &num_segments));
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, num_segments, dims_from(data, 1), tf_reducer(K, true), out));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, ids, "segment_ids", -1, {"the segments"}, {num_segments}, false, "");
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
                  "(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, mode=None)",
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
        "bucket_size is not supported (it changes the summation order)";
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
        "segment_ids (int32 or int64): a prefix of data.shape; output [num_segments] ++ data.shape[segment_ids.rank:] "
        "of data's dtype. TensorFlow on CPU: a negative id drops its update, an id >= num_segments is an error "
        "(IndexError). An empty segment holds 0 (sum, mean, sqrt_n), 1 (prod), the dtype's lowest value (max) or "
        "highest (min), which also take part in the reduction as TensorFlow's do. mean and sqrt_n: floating or "
        "complex data";
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
        "rows only";
    ops->push_back(std::move(s));
  }
}

}  // namespace multigather::frontends
