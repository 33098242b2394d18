// The engines' shared helpers (api/engine.hpp): whether the CUDA engine can run a call, the
// update counts' layout, the updates' step into a temporary, the fused kernel's call.
#include <cstring>
#include <string>
#include <vector>

#include "api/engine.hpp"
#include "core/broadcast_fold.hpp"
#include "core/float16_bits.hpp"

namespace multigather::detail {

Status cuda_engine_available(const Lowering& l) {
  if (!cuda_engine_built()) {
    return InvalidArgument(l.op + ": the operands are on a CUDA device, but this build has no "
                           "CUDA engine (build with MULTIGATHER_CUDA=ON)");
  }
  if (cuda_device_available()) return Status::Ok();
  return InvalidArgument(l.op + ": the CUDA engine was asked for, but no CUDA device is "
                         "available (no driver or no GPU)");
}

bool floating_value(const std::byte* p, DType t, double* v) {
  switch (t) {
    case DType::kFloat32: { float f; std::memcpy(&f, p, 4); *v = f; return true; }
    case DType::kFloat64: std::memcpy(v, p, 8); return true;
    case DType::kFloat16: { std::uint16_t b; std::memcpy(&b, p, 2); *v = half_to_float(b); return true; }
    case DType::kBFloat16: { std::uint16_t b; std::memcpy(&b, p, 2); *v = bfloat16_to_float(b); return true; }
    default: return false;
  }
}

Dims count_shape(const Lowering& l) {
  const Dims& shape = l.core_output_shape;
  Dims kept = shape;
  for (int d = 0; d < shape.size(); ++d) {
    bool axis = false;
    for (std::int64_t a : l.axes) axis = axis || a == d;
    if (!axis && l.shape.logical_indices_shape[d] == 1) kept[d] = 1;
  }
  return kept;
}

TensorView count_view(const Lowering& l, const void* data) {
  const Dims& shape = l.core_output_shape;
  const Dims kept = count_shape(l);
  Dims strides = contiguous_strides(kept);
  for (int d = 0; d < shape.size(); ++d) {
    if (kept[d] == 1) strides[d] = 0;
  }
  return TensorView(data, DType::kInt64, shape, strides);
}

Status Engine::update_count(const Lowering& l, const ScatterOptions& options, const void* near, Temporary* storage,
                            TensorView* count) const {
  const Dims& shape = l.core_output_shape;
  std::int64_t elements = 0;
  if (element_count(shape, &elements) && elements == 0) {
    // Nothing to divide (and the kept shape could be a huge [S, 1, ..] beside an empty dimension).
    *count = TensorView(nullptr, DType::kInt64, shape, Dims::filled(shape.size(), 0));
    return Status::Ok();
  }
  const Dims kept = count_shape(l);
  std::int64_t counts = 0;
  if (!element_count(kept, &counts)) return InvalidArgument(l.op + ": the update counts overflow 64 bits");
  MULTIGATHER_RETURN_IF_ERROR(storage->allocate(*this, DType::kInt64, kept, near, "count"));
  MULTIGATHER_RETURN_IF_ERROR(count_updates(storage->view(), l.indices, l.axes, options));
  *count = count_view(l, storage->data());
  return Status::Ok();
}

Status Engine::updates_step(const UpdatesStep& step, const TensorView& from, const MutableTensorView& to) const {
  const bool negate = step.kind == UpdatesStep::Kind::kNegate;
  if (!visit_updates_step(from.dtype, negate, []<class Op>() {})) {
    return TypeError(std::string(negate ? "the negation" : "the scale") +
                     " of the updates has no exact form for dtype " + std::string(dtype_name(from.dtype)));
  }
  // The factor as the kernels take it: floating, and for integer dtypes truncated toward zero.
  const Scalar& a = step.factor;
  const double factor = a.kind == Scalar::Kind::kFloat ? a.f
                        : a.kind == Scalar::Kind::kInt ? static_cast<double>(a.i) : static_cast<double>(a.u);
  const std::int64_t integer_factor = a.kind == Scalar::Kind::kFloat ? static_cast<std::int64_t>(a.f)
                                      : a.kind == Scalar::Kind::kInt ? a.i : static_cast<std::int64_t>(a.u);
  return run_updates_step(updates_step_params(from, to, factor, integer_factor), from.dtype, negate);
}

Status stepped_updates(const Lowering& l, const TensorView& updates, const Engine& engine, const void* near,
                       Temporary* storage, TensorView* stepped) {
  *stepped = updates;
  if (l.updates_step.kind == UpdatesStep::Kind::kNone) return Status::Ok();
  // One element per distinct update.
  const Dims distinct = stored_shape(updates);
  std::int64_t n = 0;
  if (!element_count(distinct, &n)) return InvalidArgument(l.op + ": the updates overflow 64 bits");
  MULTIGATHER_RETURN_IF_ERROR(storage->allocate(engine, updates.dtype, distinct, near, "output"));
  const TensorView from(updates.data, updates.dtype, distinct, updates.strides);
  MULTIGATHER_RETURN_IF_ERROR(engine.updates_step(l.updates_step, from, storage->view()));
  *stepped = TensorView(storage->data(), updates.dtype, updates.shape, rebroadcast_strides(updates, distinct));
  return Status::Ok();
}

Status Engine::segment_ids(const Lowering& l, Temporary* storage, Lowering* ready) const {
  const SegmentBoundaries& b = *l.segment_ids;
  if (l.indices.data != nullptr || l.indices.dtype != DType::kInt64) {
    return Status(StatusCode::kInternal, l.op + ": a lowering with computed segment ids has an indices view with data");
  }
  Dims ids_shape = b.batch;
  ids_shape.push_back(b.n);
  MULTIGATHER_RETURN_IF_ERROR(storage->allocate(*this, DType::kInt64, ids_shape, b.bounds.data, b.name.c_str()));
  Temporary starts;
  const std::int64_t starts_count = segment_starts_count(b);
  if (starts_count > 0) {
    MULTIGATHER_RETURN_IF_ERROR(starts.allocate(*this, DType::kInt64, Dims{starts_count}, b.bounds.data, b.name.c_str()));
  }
  std::uint64_t first_error = kNoSegmentIdsError;
  MULTIGATHER_RETURN_IF_ERROR(run_segment_ids(
      segment_ids_params(b, static_cast<std::int64_t*>(storage->data()), static_cast<std::int64_t*>(starts.data()), nullptr),
      &first_error));
  if (first_error != kNoSegmentIdsError) {
    if (!cuda()) return segment_ids_error(l.op, b, b.bounds, first_error);
    std::vector<std::byte> bytes;  // the boundaries come back to the host for the message
    TensorView host;
    MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(b.bounds, &bytes, &host));
    return segment_ids_error(l.op, b, host, first_error);
  }
  *ready = l;
  ready->segment_ids = nullptr;
  ready->indices.data = storage->data();
  if (ready->index_errors.indices.data == nullptr && ready->index_errors.indices.dtype == DType::kInt64) {
    ready->index_errors.indices.data = storage->data();
  }
  return Status::Ok();
}

GatheredSegmentsCall gathered_call(const Lowering& l) {
  const GatheredRows& g = *l.gathered;
  GatheredSegmentsCall call;
  call.table = g.table;
  call.rows = g.rows;
  call.bag_starts = g.bag_starts.data();
  call.scale = g.scale;
  call.skip_row = g.skip_row;
  call.mean = l.mean_by_count;
  call.max = l.reduction == Reduction::kMax;
  return call;
}

}  // namespace multigather::detail
