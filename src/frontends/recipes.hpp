// Internal: the building blocks every frontend shares (not installed).
//
// A frontend validates by its framework's rules, then builds the core's views dimension by
// dimension with ViewBuilder (unit dimensions inserted, dimensions sliced; never a copy), folds
// the coordinate dimension of the indices into their last dimension (fold_coordinates: a view,
// or a contiguous copy when the two dimensions cannot be merged), and calls finish() with the
// framework's output shape. The three recipes of the seed (element, block, nd) are shared here.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"
#include "multigather/ops.hpp"

namespace multigather::frontends {

using detail::position_text;  // core/text.hpp
using detail::str;
std::string shape_str(const std::vector<std::int64_t>& v);
std::vector<std::int64_t> dims_vec(const Dims& d);

/// A view under construction: dimensions appended one by one.
struct ViewBuilder {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;

  static ViewBuilder of(const TensorView& v) { return {v.data, v.dtype, {}, {}}; }
  void add(std::int64_t size, std::int64_t stride) { shape.push_back(size); strides.push_back(stride); }
  void add_unit(int n = 1) { for (int i = 0; i < n; ++i) add(1, 0); }
  /// Appends dims [from, to) of `v` (sizes and strides).
  void add_dims(const TensorView& v, int from, int to);
};

/// Starts a lowering: names the op and checks that both views hold at most kMaxRank dims and
/// strides for every dim (so no frontend reads past a Dims).
Status begin_op(const char* op, const TensorView& input, const TensorView& indices, Lowering* out);

/// begin_op for a scatter: also checks the updates view (rank, strides).
Status begin_scatter(const char* op, const TensorView& input, const TensorView& indices,
                     const TensorView& updates, Lowering* out);

/// Scatter-by-element ops (onnx.ScatterElements, torch.scatter*, numpy.put_along_axis with
/// equal shapes): for d != axis the index size must not exceed `xname`'s (`>`: the framework's
/// error, worded by the caller's `too_big` rule); a SMALLER index dimension (the framework writes
/// the leading part only) is refused as not supported: the one core call writes into the whole
/// input, and a partial window would need the output beyond it copied separately.
Status check_scatter_element_sizes(const std::string& op, const TensorView& x, const TensorView& indices,
                                   std::int64_t axis, const std::string& xname, const std::string& iname,
                                   const std::string& too_big);

/// Converts a built view, failing when its rank exceeds kMaxRank.
Status to_view(const std::string& op, const ViewBuilder& b, const char* what, TensorView* out);

/// TypeError unless `dtype` is in `allowed`: "onnx.GatherND: indices dtype int32 is not
/// supported (onnx.GatherND accepts int64)".
Status check_dtype(const std::string& op, const std::string& name, DType dtype,
                   std::initializer_list<DType> allowed);
/// TypeError unless `dtype` is an integer type.
Status check_integer(const std::string& op, const std::string& name, DType dtype);

/// axis in [-rank, rank) (or [0, rank) when !allow_negative), normalized.
Status normalize_axis(const std::string& op, const std::string& name, std::int64_t value,
                      int rank, bool allow_negative, std::int64_t* out);

/// Sets out->indices from a logical view (rank N) whose coordinates (k of them) lie along a
/// separate dimension of stride `coord_stride`: the coordinate dimension is merged into the
/// last logical dimension (a view when the strides allow it, else a contiguous copy, noted).
/// k == 0: the logical view itself (values are never read).
Status fold_coordinates(const std::string& op, const ViewBuilder& logical, int k,
                        std::int64_t coord_stride, Lowering* out);

/// A contiguous view of `v` (v itself, or a copy owned by `owner`, noted in out->notes).
Status contiguous(const TensorView& v, const std::string& what, Lowering* out,
                  std::shared_ptr<Tensor>* owner, TensorView* result);

/// NumPy's `axis=None` convention: flattens `a` (a view when contiguous, else a noted copy) with
/// *axis_out = 0, or normalizes `axis` against a's rank. *x is the array to gather from.
Status flatten_or_axis(const std::string& op, const std::string& name, const TensorView& a,
                       std::optional<std::int64_t> axis, Lowering* out, TensorView* x,
                       std::int64_t* axis_out);

/// Error context of an ND gather: coordinate j of the last indices dim indexes x dim b + j.
void set_nd_error_context(Lowering* out, const TensorView& indices, const TensorView& x,
                          std::int64_t batch_dims, const std::string& xname, bool negatives_wrap,
                          std::string rule);

/// Completes a lowering: infers the core shape (the one infer_shape of the call, kept in
/// out->shape), checks it has as many elements as the
/// framework's `output_shape`, and (unless already set) sets core_output_strides to the
/// row-major strides of the core shape (a pure reshape of the framework output).
Status finish(const std::vector<std::int64_t>& output_shape, Lowering* out);
/// finish() for a framework whose output shape is the core output shape (no reshape).
Status finish_core_shaped(Lowering* out);
/// For a finished lowering: the framework's output shape becomes `output_shape`, a reshape of
/// the core output already inferred (checked to have as many elements; nothing inferred again).
Status reshape_output(const std::vector<std::int64_t>& output_shape, Lowering* out);

/// Completes a scatter's lowering (out->input, indices, updates, axes set): infers G (kept in
/// out->shape) and checks the updates broadcast to it; the core output is the core input's
/// shape, and the framework's output shape is `output_shape` (a reshape of it; the form without
/// it: the core input's shape).
Status finish_scatter(Lowering* out);
Status finish_scatter(const std::vector<std::int64_t>& output_shape, Lowering* out);

/// Completes a FRAMEWORK scatter lowered through the matching gather's recipe (lower_elements,
/// lower_block, lower_nd already ran on (data, indices): out->input/indices/axes are the core's,
/// out->shape.output_shape is G and out->output_shape the gather's framework output shape).
/// `updates`, whose shape the caller has checked to broadcast (numpy-style: right-aligned, size 1
/// or missing dimensions repeat) to `framework_shape` (that gather output shape), becomes the core
/// updates view of shape G: a view (unit dimensions dropped or inserted, broadcast dimensions
/// with stride 0), or a contiguous copy (noted) when the strides cannot be regrouped. The
/// framework output is data's shape, a reshape of the core input.
/// `broadcast_message`, when given, words the InvalidArgument of updates that do not broadcast
/// to framework_shape in the framework's own terms (else "OP: updates shape [..] does not
/// broadcast to [..]").
Status finish_framework_scatter(const TensorView& data, const TensorView& updates,
                                const std::vector<std::int64_t>& framework_shape, Lowering* out,
                                const std::function<std::string()>& broadcast_message = {});

/// TypeError unless updates.dtype == data.dtype: "OP: UNAME dtype float64 must equal DNAME
/// dtype float32" + `rule`.
Status check_updates_dtype(const std::string& op, const TensorView& data, const TensorView& updates,
                           const std::string& dname, const std::string& uname, const std::string& rule);

/// TypeError for a complex min / max in a framework that has none, or another rule: the core's
/// complex min / max are StableHLO's lexicographic order (docs/spec.md section 4), which only
/// the StableHLO, JAX and multiaxis rows take. "torch.scatter_reduce: self dtype complex64 is
/// not supported with reduce = 'amax' (" + rule + ")". Ok for any other dtype or reduction.
Status check_complex_order(const std::string& op, const std::string& name, DType dtype, Reduction reduction,
                           const std::string& what, const std::string& rule);

/// -updates as the engines' step on the updates (out->updates_step kNegate, noted; nothing is
/// read or copied here): floats (float16, bfloat16, float32, float64, complex) flip the sign
/// bit, which is exact, so f(x, -u) with add is x - u bit for bit; integers negate in two's
/// complement (x + (-u) wraps exactly as x - u). bool and float8 are a TypeError worded with
/// `why` ("tf.tensor_scatter_nd_sub: ...").
Status negate_step(DType dtype, const std::string& why, Lowering* out);

/// Zeros of `shape` and `dtype` as out->input (noted): one constant zero element broadcast
/// (Lowering::input_is_constant), which the engines fill the output from; nothing is allocated.
Status zeros_input(const Dims& shape, DType dtype, const std::string& why, Lowering* out);

/// The words of a segment lowering that sizes its output from the ids' values and was given
/// shapes alone ("...: it needs the values of segment_ids").
inline constexpr std::string_view kNeedsIndexValues = "it needs the values of ";
/// That refusal: InvalidArgument with StatusReason::kNeedsIndexValues, on which explain_op
/// retries the call with every id 0.
inline Status NeedsIndexValues(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), StatusReason::kNeedsIndexValues);
}
/// Index policy + the framework's wording for out-of-range errors.
void set_policy(Lowering* out, IndexMode mode, bool negative_indices);
void set_error_context(Lowering* out, const TensorView& indices, const std::string& indices_name,
                       int coordinate_dim, std::vector<std::string> labels,
                       std::vector<std::int64_t> sizes, bool negatives_wrap, std::string rule);

// ---- The seed's recipes ----------------------------------------------------------------------

/// Block gather with batch dims (onnx.Gather, numpy.take, tf.gather, coreml.gather, webnn.gather):
///   input' = X[:a+1] ++ [1]*(q-b) ++ X[a+1:];  indices' = I[:b] ++ [1]*(a-b+1) ++ I[b:] ++ [1]*(r-a-1)
///   axes = [a];  output = X[:a] ++ I[b:] ++ X[a+1:].
/// The caller has checked 0 <= b <= a < r, b <= q and X[:b] == I[:b].
Status lower_block(const std::string& op, const TensorView& x, const TensorView& indices,
                   std::int64_t axis, std::int64_t batch_dims, Lowering* out);

enum class ElementRule { kEqual, kAtMost, kBroadcast };
/// Element gather (one axis, same rank): out[.., j, ..] = X[.., I[.., j, ..], ..].
///   kEqual: I[d] == X[d] for d != axis; kAtMost: I[d] <= X[d] and the input view is SLICED to
///   I[d] (a size-1 index dim reads row 0, it never broadcasts); kBroadcast: bidirectional.
/// Messages name the operands `xname` / `iname`.
Status lower_elements(const std::string& op, const TensorView& x, const TensorView& indices,
                      std::int64_t axis, ElementRule rule, const std::string& xname,
                      const std::string& iname, Lowering* out);

/// ND gather (onnx.GatherND, tf.gather_nd, coreml.gather_nd, webnn.gatherND, tcp.gather_nd):
///   X = B ++ Xk ++ T, I = B ++ J ++ [k], n = max(b+k, q-1) (the seed's gatherNdBlocks):
///   input' = B ++ Xk ++ [1]*(n-b-k) ++ T,  indices' = B ++ J ++ [1]*(n-q+1+len(T)) (coordinates
///   folded last), axes = [b, .., b+k-1] (the output takes J's sizes there), output = B ++ J ++ T. The caller has checked ranks, batch equality and 0 <= k <= r - b.
Status lower_nd(const std::string& op, const TensorView& x, const TensorView& indices,
                std::int64_t batch_dims, Lowering* out);

/// NumPy advanced integer indexing a[.., idx_0, .., idx_{k-1}, ..] (numpy.advanced_index, the
/// jax .at family; numpy.hpp states the encoding): integer `indices` B ++ [k] (uint64 read as
/// intp), strictly increasing `index_dims`; adjacent index dims keep B in their place, separated
/// ones put it first. Builds the core views, index_mode error with negative wrap and the error
/// context ("axis d"), and finishes the gather; *result_shape is a[idx..].shape.
Status lower_advanced(const TensorView& a, const TensorView& indices,
                      const std::vector<std::int64_t>& index_dims, Lowering* out,
                      std::vector<std::int64_t>* result_shape);

/// Checks X[:b] == I[:b] with the framework's message.
Status check_batch_equal(const std::string& op, const TensorView& x, const TensorView& indices,
                         std::int64_t batch_dims, const std::string& xname,
                         const std::string& iname);

/// For frameworks that check every index even when the output is empty (the core then reads
/// none): detail::framework_out_of_range (core/index_messages.hpp) on the framework's indices now. Does nothing for shapes alone
/// (explain) or on a CUDA device (values are never read on the host). Callers use it only when
/// an input dimension is 0, so a lowering reads index data only for empty inputs.
Status check_indices_now(const Lowering& l);

/// The facts of a row besides its signature and lowering (registry.hpp): the index rule its
/// lowering sets and the framework's shape / dtype rules.
struct RowFacts {
  std::string_view op;
  IndexRule index_rule;
  std::string_view rules;
};
/// Sets each RowFacts on the row of `ops` it names (std::logic_error for a name that is no row:
/// a registration bug).
void state_facts(std::vector<OpSpec>* ops, std::initializer_list<RowFacts> facts);

/// Registration of each family's ops (one function per frontend file).
void append_core_ops(std::vector<OpSpec>* ops);
void append_onnx_ops(std::vector<OpSpec>* ops);
void append_torch_ops(std::vector<OpSpec>* ops);
void append_numpy_ops(std::vector<OpSpec>* ops);
void append_tf_ops(std::vector<OpSpec>* ops);
void append_jax_ops(std::vector<OpSpec>* ops);
void append_coreml_ops(std::vector<OpSpec>* ops);
void append_tosa_ops(std::vector<OpSpec>* ops);
void append_mlir_ops(std::vector<OpSpec>* ops);
void append_stablehlo_ops(std::vector<OpSpec>* ops);
void append_webnn_ops(std::vector<OpSpec>* ops);
void append_dml_ops(std::vector<OpSpec>* ops);
void append_segment_ops(std::vector<OpSpec>* ops);

}  // namespace multigather::frontends
