// The segment family: jax.ops.segment_*, tf.math.(unsorted_)segment_*, torch.segment_reduce,
// torch_scatter.* and torch.nn.functional.embedding_bag, each one scatter of the data into the
// reduction's identity (docs/spec.md section 6). A segment op takes (data, segment_ids) as a
// gather does and lowers onto scatter_multiaxis:
//
//     output = scatter_multiaxis(identity[S, F..], ids', data', axes=[0], reduction)
//
// where F = data.shape[ids.rank:] (jax: data.shape[1:]), the core input is ONE element of the
// reduction's identity broadcast to [S] ++ F (strides 0: static storage, never copied), ids'
// and data' are the block scatter's views of segment_ids and data (lower_block), and the core
// output is the framework output. Mean and sqrt_n divide by the count of each segment after the
// sum (Lowering::mean_by_count, sqrt_count), as torch.scatter_reduce(mean) does.
//
// This file holds what the segment ops share (segment.hpp: the identity input, the reducer, the
// block scatter into the identity, the id scans) and the family's rows (append_segment_ops). The
// lowerings: segment_jax_tf.cpp (jax.ops.segment_*, tf.math.*segment_*) and segment_torch.cpp
// (torch.segment_reduce, torch_scatter.*, embedding_bag).
#include <array>
#include <limits>

#include "core/index_value.hpp"
#include "frontends/segment.hpp"

namespace multigather::frontends {

using detail::index_text;

namespace {

using detail::visit_index_type;

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

bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64 ||
         t == DType::kComplex64 || t == DType::kComplex128;
}

bool is_complex(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }

}  // namespace

Status begin_segment(const char* op, const TensorView& data, const TensorView& ids, Lowering* out) {
  return begin_scatter(op, data, ids, data, out);
}

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

Status lower_segments(const TensorView& data, const TensorView& ids, std::int64_t num_segments,
                      const std::vector<std::int64_t>& trailing, const Reducer& r, Lowering* out,
                      int axis, const std::optional<Scalar>& initial, const char* ids_name) {
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

Status rows_after(const std::string& op, __int128 largest, std::int64_t* rows) {
  if (largest >= std::numeric_limits<std::int64_t>::max()) {
    return InvalidArgument(op + ": segment id " + index_text(largest) + " + 1 rows do not fit in int64");
  }
  *rows = static_cast<std::int64_t>(largest + 1);
  return Status::Ok();
}

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
             std::string("out[s, f..] = ") + t.formula, tf_docs + "segment_" + t.suffix, "data", "segment_ids",
             {{"num_segments", AttrType::kOptionalInt, "none", {},
               "output rows, segment_ids[-1] + 1: read from the ids when none; ids in CUDA memory need it, read "
               "back by the caller as TensorFlow's GPU kernel copies the last id to the host (host ids: it must "
               "equal segment_ids[-1] + 1)"}},
             t.sorted};
    s.kind = OpKind::kSegment;
    s.index_rule = {IndexMode::kError, false, ""};
    s.rules =
        "segment_ids (int32 or int64): a sorted vector of non-negative ids, one per row of data (an unsorted or "
        "negative id is an error, as TensorFlow's on CPU); output [segment_ids[-1] + 1] ++ data.shape[1:] of data's "
        "dtype (the ids are read to size it). On a CUDA device (num_segments given), as TensorFlow's GPU kernel: "
        "nothing is checked, an id outside [0, num_segments) drops its row and unsorted ids combine into their "
        "segments (TensorFlow: safe, unspecified). An empty segment holds 0 (1 for prod); a non-empty one reduces its own "
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
  sr.torch_op = true;
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
    op->torch_op = true;
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
