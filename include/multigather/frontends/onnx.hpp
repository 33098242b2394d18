// multigather/frontends/onnx.hpp: ONNX Gather, GatherElements, GatherND (opset 13) lowered onto
// gather_multiaxis. Each function validates by ONNX's rules, fills `out` (views, axes, options,
// output shape; no data is copied) and returns InvalidArgument / TypeError with ONNX's reason.
// Run the result with multigather::execute(out) or execute_lowering(out, view).
// Index rule (all three): negative indices wrap once ([-s, s-1]); out of range is an error
// (ONNX Runtime CPU's behaviour; the spec says "it is an error").
// Index types (the opset-13 schemas; ONNX Runtime refuses others when it loads a model): Gather
// and GatherElements int32/int64, GatherND int64; any other type is a TypeError, checked
// before the ranks (ONNX Runtime checks types before shape inference).
#pragma once

#include "multigather/ops.hpp"

namespace multigather::onnx {

/// onnx.Gather(data, indices, axis=0), https://onnx.ai/onnx/operators/onnx__Gather.html
///   output[i_0..i_{a-1}, j_0..j_{q-1}, i_{a+1}..] = data[i_0..i_{a-1}, indices[j_0..j_{q-1}], i_{a+1}..]
/// data rank r >= 1, any dtype; indices int32/int64, rank q >= 0 (0-D drops the axis);
/// axis in [-r, r-1]. Output shape data.shape[:a] ++ indices.shape ++ data.shape[a+1:].
/// Every index is checked, also when the output is empty because another data dimension is 0
/// (as ONNX Runtime does; on host memory: not for Device::kCUDA operands).
Status Gather(const TensorView& data, const TensorView& indices, std::int64_t axis, Lowering* out);

/// onnx.GatherElements(data, indices, axis=0),
/// https://onnx.ai/onnx/operators/onnx__GatherElements.html
///   output[i][j][k] = data[indices[i][j][k]][j][k]   (axis = 0; likewise for other axes)
/// Same rank r >= 1; indices.shape[d] <= data.shape[d] for d != axis (ONNX Runtime's reading:
/// the leading part of data is read, a size-1 index dimension never broadcasts). Output shape =
/// indices shape. indices int32/int64.
Status GatherElements(const TensorView& data, const TensorView& indices, std::int64_t axis,
                      Lowering* out);

/// onnx.GatherND(data, indices, batch_dims=0), https://onnx.ai/onnx/operators/onnx__GatherND.html
///   output[b.., j..] = data[b.., indices[b.., j.., 0], ..., indices[b.., j.., k-1], t..]
/// r >= 1, q >= 1, 0 <= b < min(q, r), data.shape[:b] == indices.shape[:b] (exactly),
/// 1 <= k = indices.shape[-1] <= r - b; indices int64 only. (ONNX Runtime 1.31 also runs k = 0,
/// unequal batch dimensions and b >= r, which the spec rules out; those are errors here.) An
/// empty output checks no index (ONNX Runtime neither).
/// Output shape indices.shape[:-1] ++ data.shape[b+k:] (rank q + r - k - 1 - b).
Status GatherND(const TensorView& data, const TensorView& indices, std::int64_t batch_dims,
                Lowering* out);

/// onnx.ScatterElements(data, indices, updates, axis=0, reduction="none") (opset 18),
/// https://onnx.ai/onnx/operators/onnx__ScatterElements.html
///   output = data; output[.., indices[p], ..] = f(output[..], updates[p])  (axis position)
/// Same rank r >= 1 for data and indices; updates shape == indices shape; indices int32/int64;
/// updates dtype == data dtype. indices.shape[d] > data.shape[d] (d != axis) is an error; a
/// smaller size (ONNX Runtime writes a leading window) is refused as not supported yet.
/// reduction none/add/mul/max/min; with none, duplicates are undefined in ONNX and the last
/// update in row-major order wins here. Negative indices wrap once; out of range is an error.
Status ScatterElements(const TensorView& data, const TensorView& indices, const TensorView& updates,
                       std::int64_t axis, std::string_view reduction, Lowering* out);

/// onnx.ScatterND(data, indices, updates, reduction="none") (opset 18),
/// https://onnx.ai/onnx/operators/onnx__ScatterND.html
///   output = data; output[indices[j.., :], t..] = f(output[..], updates[j.., t..])
/// indices int64, rank q >= 1, 1 <= k = indices.shape[-1] <= r; updates shape ==
/// indices.shape[:-1] ++ data.shape[k:]. The lowering is onnx.GatherND's (batch_dims 0) with the
/// updates viewed in its core shape. Duplicates and index rule as ScatterElements.
Status ScatterND(const TensorView& data, const TensorView& indices, const TensorView& updates,
                 std::string_view reduction, Lowering* out);

}  // namespace multigather::onnx
