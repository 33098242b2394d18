// The segment family's JAX and TensorFlow lowerings: jax.ops.segment_{sum,prod,max,min},
// tf.math.unsorted_segment_* and tf.math.segment_*, each the block scatter of the data into the
// reduction's identity (segment.hpp: lower_segments). Their rows: segment.cpp (append_segment_ops).
//
// Sources: https://docs.jax.dev/en/latest/_autosummary/jax.ops.segment_sum.html (jax/_src/ops/
// scatter.py: _segment_update, _get_identity), https://www.tensorflow.org/api_docs/python/tf/math/
// segment_sum and unsorted_segment_sum (tensorflow/core/kernels/segment_reduction_ops_impl.h).
#include <limits>

#include "frontends/segment.hpp"

namespace multigather::frontends {

using detail::index_text;
using detail::read_index_value;

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

namespace {

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

}  // namespace

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
Status tf_sorted(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out) {
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
  const std::int64_t n = ids.numel();
  const std::optional<std::int64_t> given = a.get_optional_int("num_segments");
  if (given && *given < 0) {
    return InvalidArgument(out->op + ": num_segments = " + str(*given) + " must not be negative (segment_ids[-1] + 1)");
  }
  // The output has segment_ids[-1] + 1 rows: the ids are read (TensorFlow reads them too). On a
  // CUDA device the caller reads the last id back (as TensorFlow's GPU kernel copies it to the
  // host) and gives num_segments; nothing else is checked there (TensorFlow's GPU kernel checks
  // only that the last id is >= 0): an id outside [0, num_segments) drops its row.
  if (out->device == Device::kCUDA && given) {
    if (n > 0 && *given == 0) {
      return InvalidArgument(out->op + ": segment ids must be >= 0 (num_segments = 0: segment_ids[-1] < 0)");
    }
    MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, *given, dims_from(data, 1), tf_reducer(K, true), out));
    set_policy(out, IndexMode::kDrop, false);
    out->notes.push_back("on a GPU: an id outside [0, num_segments) drops its row and unsorted ids combine into their "
                         "segments; nothing is checked (TensorFlow's GPU kernel: safe, unspecified)");
    return Status::Ok();
  }
  MULTIGATHER_RETURN_IF_ERROR(host_values_only(*out, "the values of segment_ids (the output has segment_ids[-1] + 1 rows)",
                                               "give num_segments = segment_ids[-1] + 1, read back from the device as "
                                               "TensorFlow's GPU kernel reads it; or copy them to the host"));
  if (ids.data == nullptr) {
    return NeedsIndexValues(out->op + ": the output has segment_ids[-1] + 1 rows: " + std::string(kNeedsIndexValues) +
                           "segment_ids");
  }
  out->reads_index_values = true;
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
  if (given && *given != num_segments) {
    return InvalidArgument(out->op + ": num_segments = " + str(*given) + " must be segment_ids[-1] + 1 = " +
                           str(num_segments));
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_segments(data, ids, num_segments, dims_from(data, 1), tf_reducer(K, true), out));
  set_policy(out, IndexMode::kError, false);
  set_error_context(out, ids, "segment_ids", -1, {"the segments"}, {num_segments}, false, "");
  return Status::Ok();
}

// The lowerings the rows of append_segment_ops (segment.cpp) name.
template Status jax_segment<Reduction::kAdd>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status jax_segment<Reduction::kMul>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status jax_segment<Reduction::kMax>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status jax_segment<Reduction::kMin>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kSum>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kProd>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kMax>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kMin>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kMean>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_unsorted<TfReduce::kSqrtN>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_sorted<TfReduce::kSum>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_sorted<TfReduce::kProd>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_sorted<TfReduce::kMax>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_sorted<TfReduce::kMin>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);
template Status tf_sorted<TfReduce::kMean>(const TensorView&, const TensorView&, const AttributeValues&, Lowering*);

}  // namespace multigather::frontends
