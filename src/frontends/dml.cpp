// DirectML GATHER / GATHER_ELEMENTS / GATHER_ND1. Rules: docs/semantics.md section 14 and
// https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_gather_operator_desc
// (dml_gather_elements_operator_desc, dml_gather_nd1_operator_desc).
// Every DirectML tensor has the same DimensionCount N; the lowering trims the leading 1s that
// pad the original ranks (views), runs the shared recipe, and right-aligns the output to N.
#include "multigather/frontends/dml.hpp"

#include <algorithm>

#include "frontends/recipes.hpp"

namespace multigather::dml {

using namespace frontends;

namespace {

Status common(const std::string& op, const TensorView& input, const TensorView& indices, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(check_dtype(op, "IndicesTensor", indices.dtype,
                                          {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}));
  if (input.rank() < 1 || indices.rank() != input.rank()) {
    return InvalidArgument(op + ": IndicesTensor.DimensionCount = " + str(indices.rank()) +
                           " must match InputTensor.DimensionCount = " + str(input.rank()) + " (>= 1)");
  }
  set_policy(out, IndexMode::kClamp, true);
  out->notes.push_back("DirectML gives \"incorrect outputs, but no failure\" for invalid indices; "
                       "multigather clamps them to [0, D-1]");
  return Status::Ok();
}

// The last `count` dims of `v` (the original-rank tensor); the leading padding must be 1s.
Status trim(const std::string& op, const char* name, const TensorView& v, std::int64_t count,
            TensorView* result) {
  const int n = v.rank();
  if (count < 0 || count > n) {
    return InvalidArgument(op + ": " + name + " count = " + str(count) + " must be in [0, " + str(n) + "]");
  }
  ViewBuilder b = ViewBuilder::of(v);
  for (int d = 0; d < n; ++d) {
    if (d < n - count) {
      if (v.shape[d] != 1) {
        return InvalidArgument(op + ": " + std::string(name) + ": Sizes[" + str(d) + "] = " + str(v.shape[d]) +
                               " lies in the leading padding (original rank " + str(count) + ") and must be 1");
      }
      continue;
    }
    b.add(v.shape[d], v.strides[d]);
  }
  return to_view(op, b, name, result);
}

// Right-aligns `shape` to `n` dims: prepends 1s, or crops leading entries that must be 1.
Status right_align(const std::string& op, const std::vector<std::int64_t>& shape, int n, Lowering* out) {
  std::vector<std::int64_t> aligned(shape);
  while (static_cast<int>(aligned.size()) > n) {
    if (aligned.front() != 1) {
      return InvalidArgument(op + ": the output sizes " + shape_str(shape) + " do not fit DimensionCount " +
                             str(n) + " (only leading 1s are cropped)");
    }
    aligned.erase(aligned.begin());
  }
  aligned.insert(aligned.begin(), static_cast<std::size_t>(n) - aligned.size(), 1);
  out->output_shape = Dims(std::span<const std::int64_t>(aligned));
  return Status::Ok();
}

}  // namespace

Status Gather(const TensorView& input_tensor, const TensorView& indices_tensor, std::int64_t axis,
              std::int64_t index_dimensions, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("dml.Gather", input_tensor, indices_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, input_tensor, indices_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "Axis", axis, input_tensor.rank(), false, &axis));
  TensorView indices;
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "IndexDimensions", indices_tensor, index_dimensions, &indices));
  MULTIGATHER_RETURN_IF_ERROR(lower_block(out->op, input_tensor, indices, axis, 0, out));
  return right_align(out->op, dims_vec(out->output_shape), input_tensor.rank(), out);
}

Status GatherElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                      std::int64_t axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("dml.GatherElements", input_tensor, indices_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, input_tensor, indices_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "Axis", axis, input_tensor.rank(), false, &axis));
  return lower_elements(out->op, input_tensor, indices_tensor, axis, ElementRule::kEqual, "InputTensor",
                        "IndicesTensor", out);
}

Status GatherND(const TensorView& input_tensor, const TensorView& indices_tensor,
                std::int64_t input_dimension_count, std::int64_t indices_dimension_count,
                std::int64_t batch_dimension_count, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_op("dml.GatherND", input_tensor, indices_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(common(out->op, input_tensor, indices_tensor, out));
  TensorView input, indices;
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "InputDimensionCount", input_tensor, input_dimension_count, &input));
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "IndicesDimensionCount", indices_tensor, indices_dimension_count, &indices));
  const std::int64_t b = batch_dimension_count;
  if (input.rank() < 1 || indices.rank() < 1 || b < 0 || b >= std::min(input.rank(), indices.rank())) {
    return InvalidArgument(out->op + ": BatchDimensionCount = " + str(b) + " must be in [0, min(InputDimensionCount, "
                           "IndicesDimensionCount)) = [0, " + str(std::min(input.rank(), indices.rank())) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(check_batch_equal(out->op, input, indices, b, "InputTensor", "IndicesTensor"));
  const std::int64_t k = indices.shape[indices.rank() - 1];
  if (k > input.rank() - b) {
    return InvalidArgument(out->op + ": the index tuple size " + str(k) + " must be <= InputDimensionCount - "
                           "BatchDimensionCount = " + str(input.rank() - b));
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, input, indices, b, out));
  return right_align(out->op, dims_vec(out->output_shape), input_tensor.rank(), out);
}

// ---- Scatters (DML_SCATTER_ELEMENTS_OPERATOR_DESC, DML_SCATTER_ND_OPERATOR_DESC) -----------------

namespace {

Status scatter_common(const std::string& op, const TensorView& input, const TensorView& indices,
                      const TensorView& updates, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(common(op, input, indices, out));
  if (updates.rank() != input.rank()) {
    return InvalidArgument(op + ": UpdatesTensor.DimensionCount = " + str(updates.rank()) +
                           " must match InputTensor.DimensionCount = " + str(input.rank()));
  }
  MULTIGATHER_RETURN_IF_ERROR(check_updates_dtype(op, input, updates, "InputTensor", "UpdatesTensor",
                                                  "DirectML: UpdatesTensor.DataType must match InputTensor.DataType"));
  out->reduction = Reduction::kNone;
  out->include_input = true;
  out->notes.push_back("duplicate indices: DirectML does not define which update wins; multigather writes the last "
                       "update in row-major order of indices");
  return Status::Ok();
}

}  // namespace

Status ScatterElements(const TensorView& input_tensor, const TensorView& indices_tensor,
                       const TensorView& updates_tensor, std::int64_t axis, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("dml.ScatterElements", input_tensor, indices_tensor, updates_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(out->op, input_tensor, indices_tensor, updates_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(normalize_axis(out->op, "Axis", axis, input_tensor.rank(), false, &axis));
  if (!(updates_tensor.shape == indices_tensor.shape)) {
    return InvalidArgument(out->op + ": UpdatesTensor.Sizes " + to_string(updates_tensor.shape) +
                           " must match IndicesTensor.Sizes " + to_string(indices_tensor.shape));
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_elements(out->op, input_tensor, indices_tensor, axis, ElementRule::kEqual,
                                             "InputTensor", "IndicesTensor", out));
  return finish_framework_scatter(input_tensor, updates_tensor, dims_vec(indices_tensor.shape), out);
}

Status ScatterND(const TensorView& input_tensor, const TensorView& indices_tensor, const TensorView& updates_tensor,
                 std::int64_t input_dimension_count, std::int64_t indices_dimension_count, Lowering* out) {
  MULTIGATHER_RETURN_IF_ERROR(begin_scatter("dml.ScatterND", input_tensor, indices_tensor, updates_tensor, out));
  MULTIGATHER_RETURN_IF_ERROR(scatter_common(out->op, input_tensor, indices_tensor, updates_tensor, out));
  TensorView input, indices, updates;
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "InputDimensionCount", input_tensor, input_dimension_count, &input));
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "IndicesDimensionCount", indices_tensor, indices_dimension_count, &indices));
  if (input.rank() < 1 || indices.rank() < 1) {
    return InvalidArgument(out->op + ": InputDimensionCount and IndicesDimensionCount must be >= 1 (got " +
                           str(input.rank()) + " and " + str(indices.rank()) + ")");
  }
  const std::int64_t k = indices.shape[indices.rank() - 1];
  if (k > input.rank()) {
    return InvalidArgument(out->op + ": the index tuple size " + str(k) + " must be <= InputDimensionCount = " +
                           str(input.rank()));
  }
  std::vector<std::int64_t> want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), input.shape.begin() + k, input.shape.end());
  const std::int64_t u = static_cast<std::int64_t>(want.size());
  if (u > updates_tensor.rank()) {
    return InvalidArgument(out->op + ": the updates (IndicesTensor.Sizes[:-1] ++ InputTensor.Sizes[k:] = " +
                           shape_str(want) + ") do not fit DimensionCount " + str(updates_tensor.rank()));
  }
  MULTIGATHER_RETURN_IF_ERROR(trim(out->op, "UpdatesTensor", updates_tensor, u, &updates));
  if (dims_vec(updates.shape) != want) {
    return InvalidArgument(out->op + ": UpdatesTensor.Sizes " + to_string(updates_tensor.shape) +
                           " must be IndicesTensor.Sizes[:-1] ++ InputTensor.Sizes[k:] = " + shape_str(want) +
                           " (right-aligned to DimensionCount " + str(updates_tensor.rank()) + ", k = " + str(k) + ")");
  }
  MULTIGATHER_RETURN_IF_ERROR(lower_nd(out->op, input, indices, 0, out));
  return finish_framework_scatter(input_tensor, updates, want, out);
}

}  // namespace multigather::dml

namespace multigather::frontends {

void append_dml_ops(std::vector<OpSpec>* ops) {
  const std::string docs = "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_";
  const AttrSpec axis{"axis", AttrType::kInt, "0", {}, "Axis: the InputTensor dimension to gather along"};
  ops->push_back({"dml.Gather", "dml", "block", "DML_GATHER_OPERATOR_DESC{InputTensor, IndicesTensor, Axis, IndexDimensions}",
                  "output[...] = input[..., indices[...], ...]", docs + "gather_operator_desc", "InputTensor",
                  "IndicesTensor",
                  {axis, {"index_dimensions", AttrType::kInt, "1", {}, "IndexDimensions: the real index dims (trailing)"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return dml::Gather(x, i, a.get_int("axis"), a.get_int("index_dimensions"), o);
                  }});
  ops->push_back({"dml.GatherElements", "dml", "element", "DML_GATHER_ELEMENTS_OPERATOR_DESC{InputTensor, IndicesTensor, Axis}",
                  "output[i, j, k, ...] = input[indices[i, j, k, ...], j, k, ...]  (Axis 0)",
                  docs + "gather_elements_operator_desc", "InputTensor", "IndicesTensor", {axis},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    return dml::GatherElements(x, i, a.get_int("axis"), o);
                  }});
  ops->push_back({"dml.GatherND", "dml", "nd",
                  "DML_GATHER_ND1_OPERATOR_DESC{InputTensor, IndicesTensor, InputDimensionCount, IndicesDimensionCount, BatchDimensionCount}",
                  "output[batch, ...] = input[batch, indices[batch, ...], ...]", docs + "gather_nd1_operator_desc",
                  "InputTensor", "IndicesTensor",
                  {{"input_dimension_count", AttrType::kInt, "0", {}, "InputDimensionCount: the original input rank (0: the DimensionCount)"},
                   {"indices_dimension_count", AttrType::kInt, "0", {}, "IndicesDimensionCount: the original indices rank (0: the DimensionCount)"},
                   {"batch_dimension_count", AttrType::kInt, "0", {}, "BatchDimensionCount"}},
                  [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
                    const int n = x.rank();
                    const std::int64_t in = a.get_int("input_dimension_count"), id = a.get_int("indices_dimension_count");
                    return dml::GatherND(x, i, in ? in : n, id ? id : i.rank(), a.get_int("batch_dimension_count"), o);
                  }});
  {
    OpSpec op{"dml.ScatterElements", "dml", "scatter_element",
              "DML_SCATTER_ELEMENTS_OPERATOR_DESC{InputTensor, IndicesTensor, UpdatesTensor, Axis}",
              "output = input; output[indices[i, j, k, ...], j, k, ...] = updates[i, j, k, ...]  (Axis 0)",
              docs + "scatter_elements_operator_desc", "InputTensor", "IndicesTensor", {axis}, nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "UpdatesTensor";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) { return dml::ScatterElements(x, i, u, a.get_int("axis"), o); };
    ops->push_back(std::move(op));
  }
  {
    OpSpec op{"dml.ScatterND", "dml", "scatter_nd",
              "DML_SCATTER_ND_OPERATOR_DESC{InputTensor, IndicesTensor, UpdatesTensor, InputDimensionCount, IndicesDimensionCount}",
              "output = input; output[indices[j.., 0], .., indices[j.., k-1], t..] = updates[j.., t..]",
              docs + "scatter_nd_operator_desc", "InputTensor", "IndicesTensor",
              {{"input_dimension_count", AttrType::kInt, "0", {}, "InputDimensionCount: the original input rank (0: the DimensionCount)"},
               {"indices_dimension_count", AttrType::kInt, "0", {}, "IndicesDimensionCount: the original indices rank (0: the DimensionCount)"}},
              nullptr};
    op.kind = OpKind::kScatter;
    op.updates_name = "UpdatesTensor";
    op.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u, const AttributeValues& a,
                          Lowering* o) {
      const std::int64_t in = a.get_int("input_dimension_count"), id = a.get_int("indices_dimension_count");
      return dml::ScatterND(x, i, u, in ? in : x.rank(), id ? id : i.rank(), o);
    };
    ops->push_back(std::move(op));
  }
  // Index rule: signed index types wrap negatives once (DML_FEATURE_LEVEL_3_0); out-of-range
  // indices "yield incorrect outputs, but no failure will occur" (reads stay inside the input
  // buffer): multigather clamps to [0, D-1].
  const IndexRule wrap_then_clamp{IndexMode::kClamp, true, ""};
  const std::string common =
      "DirectML tensors all share one DimensionCount N: sizes are right-aligned, padded with leading 1s, and the "
      "*DimensionCount fields give the original ranks. Index dtypes int32, int64, uint32, uint64. ";
  const std::string duplicates = "Duplicates: undefined in DirectML; the last update in row-major order of indices "
                                 "wins here";
  state_facts(ops, {
      {"dml.Gather", wrap_then_clamp, common +
       "OutputTensor.Sizes = right-align to N of Input.Sizes[0..Axis] ++ Indices.Sizes[N - IndexDimensions .. N] "
       "++ Input.Sizes[Axis+1 .. N] (the leading entries cropped must be 1; indices sizes before the last "
       "IndexDimensions are 1)"},
      {"dml.GatherElements", wrap_then_clamp, common +
       "indices sizes must match input sizes on every dimension but Axis; output sizes = indices sizes"},
      {"dml.GatherND", wrap_then_clamp, common +
       "on the original-rank tensors (InputDimensionCount / IndicesDimensionCount trailing dims; 0 = the "
       "tensor's rank): output = right-align to N of Indices[orig][:-1] ++ Input[orig][batch + tuple size:]"},
      {"dml.ScatterElements", wrap_then_clamp, common +
       "output: input's shape and dtype. Same DimensionCount for all three; indices sizes match input sizes on "
       "every dimension but Axis; UpdatesTensor sizes == IndicesTensor sizes; updates dtype == input dtype. " +
       duplicates},
      {"dml.ScatterND", wrap_then_clamp, common +
       "output: input's shape and dtype. On the original-rank tensors (the counts; 0 means the DimensionCount; "
       "the leading padding must be 1s), with k the index tuple size <= InputDimensionCount: updates = "
       "right-align to DimensionCount of Indices[orig][:-1] ++ Input[orig][k:]; updates dtype == input dtype. " +
       duplicates},
  });
}

}  // namespace multigather::frontends
