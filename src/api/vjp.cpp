// The vector-Jacobian products of one lowered call (api/vjp.hpp), run by the core operators
// through the lowering's own views, on the CPU engine or the CUDA engine.
#include "api/vjp.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "api/engine.hpp"
#include "core/text.hpp"
#include "kernels/cpu/run_validated.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "kernels/cuda/cuda_hooks.hpp"

namespace multigather::detail {
namespace {

// ---- VJPs of one (possibly lifted) lowering ---------------------------------------------------

GatherOptions gather_options(const Lowering& l, const ExecutionContext& context) {
  GatherOptions o = l.options;
  if (o.index_mode == IndexMode::kDrop) {
    o.index_mode = IndexMode::kFill;  // a scatter's dropped update reads nothing: 0
    o.fill_value = Scalar::from_int(0);
  }
  if (context.num_threads >= 0) o.num_threads = context.num_threads;
  return o;
}

ScatterOptions scatter_options(const Lowering& l, Reduction reduction, const ExecutionContext& context) {
  ScatterOptions o;
  o.reduction = reduction;
  o.index_mode = l.options.index_mode == IndexMode::kFill ? IndexMode::kDrop : l.options.index_mode;
  o.negative_indices = l.options.negative_indices;
  o.num_threads = context.num_threads >= 0 ? context.num_threads : l.options.num_threads;
  o.wide_accumulator = l.wide_accumulator;
  return o;
}

/// `view` with each broadcast dimension (stride 0, size > 1) folded to size 1: the target of a
/// scatter-add that sums what the broadcast repeated.
MutableTensorView fold_broadcast(const TensorView& view, std::array<bool, kMaxRank>* folded) {
  MutableTensorView out(const_cast<void*>(view.data), view.dtype, view.shape, view.strides);
  for (int d = 0; d < view.rank(); ++d) {
    (*folded)[static_cast<std::size_t>(d)] = view.strides[d] == 0 && view.shape[d] > 1;
    if ((*folded)[static_cast<std::size_t>(d)]) out.shape[d] = 1;
  }
  return out;
}

Status no_self_overlap(const Lowering& l, const MutableTensorView& v, const char* what) {
  if (v.numel() > 1 && has_self_overlap(v.shape, v.strides)) {
    return InvalidArgument(l.op + ": no gradient: the lowering reads " + what + " elements through "
                           "overlapping views (strides " + to_string(v.strides) + "), which a scatter "
                           "cannot write back");
  }
  return Status::Ok();
}

/// grad_input (the lowering's input views point into it) = the
/// scatter-add of grad_output through the lowered input view, from zero. On the CPU engine, when
/// the view covers the whole buffer, the scatter starts from a broadcast zero and writes every
/// element itself (the engine's threads first-touch the pages: no separate single-threaded zero
/// pass over a fresh gradient); else (and always on the CUDA engine: a cudaMemsetAsync) the
/// buffer is zeroed first and the scatter adds in place. The sums are the same bytes either way
/// (the CUDA engine's deterministic scatter: one owner per element, updates in row-major order).
Status gather_vjp(const Lowering& l, const TensorView& grad_output, const MutableTensorView& grad_input,
                  const Engine& engine) {
  if (l.owned_input) {
    return InvalidArgument(l.op + ": no gradient: the lowering copies the input (" +
                           (l.notes.empty() ? std::string("see explain") : l.notes.front()) + ")");
  }
  std::array<bool, kMaxRank> folded{};
  const MutableTensorView target = fold_broadcast(l.input, &folded);
  MULTIGATHER_RETURN_IF_ERROR(no_self_overlap(l, target, "input"));
  // An input dimension the lowering broadcast by a stride 0 sums over the output's extent of
  // it; where the indices do not span it either, broadcast them explicitly so that G keeps it.
  TensorView indices = l.indices;
  const int r = target.rank();
  for (int d = 0; d < r; ++d) {
    if (!folded[static_cast<std::size_t>(d)] || l.shape.logical_indices_shape[d] != 1) continue;
    if (d == r - 1 && l.shape.coordinate_size > 1) {
      return InvalidArgument(l.op + ": no gradient: the lowering broadcasts the input along its last "
                             "dimension while the indices hold coordinate tuples there");
    }
    indices.shape[d] = l.input.shape[d];
    indices.strides[d] = 0;
  }
  const TensorView updates(grad_output.data, grad_output.dtype, l.core_output_shape, l.core_output_strides);
  const ScatterOptions add = scatter_options(l, Reduction::kAdd, engine.context());
  const std::size_t bytes = nbytes(grad_input);
  if (!engine.cuda() && static_cast<std::size_t>(target.numel()) * element_size(target.dtype) == bytes) {
    static const std::byte zeros[16] = {};
    const TensorView zero(zeros, target.dtype, target.shape, Dims::filled(target.rank(), 0));
    return engine.scatter(zero, indices, updates, l.axes, target, add);
  }
  MULTIGATHER_RETURN_IF_ERROR(engine.memset(grad_input.data, 0, bytes, "grad_input"));
  return engine.scatter(target, indices, updates, l.axes, target, add);
}

/// The core updates' cotangent of a scatter into grad_updates (non-null), through the lowered
/// updates view (scatter_vjp_updates applies the lowering's step after it).
Status core_updates_vjp(const Lowering& l, const TensorView& grad_output, const MutableTensorView* grad_updates,
                        const ScatterOptions& assign, const Engine& engine) {
  const DType dtype = grad_output.dtype;
  if (l.owned_updates || l.updates_computed) {
    std::string why = "see explain";
    for (const std::string& note : l.notes) {
      if (note.find("updates") != std::string::npos || note.find("cop") != std::string::npos) why = note;
    }
    return InvalidArgument(l.op + ": no gradient for the updates: the lowering computes them from the "
                           "operands or attributes (" + why + ")");
  }
  // Each update's cotangent: grad_output at its target (0 when dropped). When the lowered
  // updates view broadcasts nothing and is C-contiguous in grad_updates (the usual case), the
  // gather writes there directly; else into a buffer that is then summed through the view.
  const Dims& g_shape = l.shape.output_shape;
  const TensorView read(grad_output.data, dtype, l.core_output_shape, l.core_output_strides);
  std::array<bool, kMaxRank> folded{};
  const MutableTensorView target = fold_broadcast(l.updates, &folded);
  MULTIGATHER_RETURN_IF_ERROR(no_self_overlap(l, target, "updates"));
  bool direct = target.shape == g_shape && TensorView(target).is_contiguous() &&
                static_cast<std::size_t>(target.numel()) * element_size(dtype) == nbytes(*grad_updates);
  for (int d = 0; d < target.rank(); ++d) direct = direct && !folded[static_cast<std::size_t>(d)];
  Temporary buffer;  // on the CUDA engine: device memory, freed on the stream at the end of scope
  if (!direct) MULTIGATHER_RETURN_IF_ERROR(buffer.allocate(engine, dtype, g_shape, grad_updates->data, "grad_updates"));
  const MutableTensorView gathered = direct ? target : buffer.view();
  MULTIGATHER_RETURN_IF_ERROR(engine.gather(read, l.indices, l.axes, gathered, gather_options(l, engine.context())));
  if (l.reduction == Reduction::kNone && !(l.spec != nullptr && l.spec->gradient_to_every_duplicate) &&
      gathered.numel() > 0) {
    // Only the winner of each target (the last in row-major order) gets it: scatter each
    // update's position with reduction max onto -1 (memset's 0xff bytes; the last position
    // is the largest, so any combine order gives it: atomic on the CUDA engine), read back which
    // position won (-1 for a dropped update), zero the others.
    Temporary positions, winner, won;
    MULTIGATHER_RETURN_IF_ERROR(positions.allocate(engine, DType::kInt64, g_shape, grad_updates->data, "grad_updates"));
    MULTIGATHER_RETURN_IF_ERROR(winner.allocate(engine, DType::kInt64, l.core_output_shape, grad_updates->data,
                                                "grad_updates"));
    MULTIGATHER_RETURN_IF_ERROR(won.allocate(engine, DType::kInt64, g_shape, grad_updates->data, "grad_updates"));
    const std::int64_t count = gathered.numel();
    MULTIGATHER_RETURN_IF_ERROR(engine.positions(static_cast<std::int64_t*>(positions.data()), count));
    MULTIGATHER_RETURN_IF_ERROR(engine.memset(winner.data(), 0xff, nbytes(winner.view()), "winner"));
    ScatterOptions last = assign;
    last.reduction = Reduction::kMax;
    MULTIGATHER_RETURN_IF_ERROR(engine.scatter(winner.view(), l.indices, positions.view(), l.axes, winner.view(),
                                               last, Engine::Order::kFree));
    GatherOptions o = gather_options(l, engine.context());
    o.fill_value = Scalar::from_int(-1);
    MULTIGATHER_RETURN_IF_ERROR(engine.gather(winner.view(), l.indices, l.axes, won.view(), o));
    // gathered is C-contiguous either way.
    MULTIGATHER_RETURN_IF_ERROR(engine.keep_winners(gathered.data, dtype, static_cast<const std::int64_t*>(won.data()),
                                                    count));
  }
  if (direct) return Status::Ok();
  // Summed into the updates through the lowered updates view (its broadcast dimensions sum):
  // a scatter-add with no axes, whose targets are the broadcast positions (no index is read:
  // the host zero below is never dereferenced on the CUDA engine).
  MULTIGATHER_RETURN_IF_ERROR(engine.memset(grad_updates->data, 0, nbytes(*grad_updates), "grad_updates"));
  static const std::int64_t zero_index = 0;
  const TensorView everywhere(&zero_index, DType::kInt64, g_shape, Dims::filled(g_shape.size(), 0));
  ScatterOptions add;
  add.reduction = Reduction::kAdd;
  add.num_threads = assign.num_threads;
  return engine.scatter(target, everywhere, buffer.view(), {}, target, add);
}

/// The updates' cotangent of a scatter (nothing when grad_updates is null): the core updates',
/// then the lowering's step (Lowering::updates_step), its own transpose: alpha times it, or
/// its negation.
Status scatter_vjp_updates(const Lowering& l, const TensorView& grad_output, const MutableTensorView* grad_updates,
                           const ScatterOptions& assign, const Engine& engine) {
  if (grad_updates == nullptr) return Status::Ok();
  MULTIGATHER_RETURN_IF_ERROR(core_updates_vjp(l, grad_output, grad_updates, assign, engine));
  if (l.updates_step.kind == UpdatesStep::Kind::kNone) return Status::Ok();
  return engine.updates_step(l.updates_step, TensorView(*grad_updates), *grad_updates);
}

Status scatter_vjp(const Lowering& l, const TensorView& grad_output, const MutableTensorView& grad_input,
                   const MutableTensorView* grad_updates, const Engine& engine) {
  if ((l.reduction != Reduction::kNone && l.reduction != Reduction::kAdd) || l.mean_by_count) {
    return Status(StatusCode::kInvalidArgument,
                  l.op + ": the gradient of a scatter with reduction " +
                      std::string(l.mean_by_count ? "mean" : reduction_name(l.reduction)) +
                      " is not implemented (only none and add are differentiable)",
                  StatusReason::kNotImplemented);
  }
  const DType dtype = grad_input.dtype;
  if (nbytes(grad_input) != static_cast<std::size_t>(grad_output.numel()) * element_size(grad_output.dtype)) {
    return InvalidArgument(l.op + ": grad_output shape " + to_string(grad_output.shape) +
                           " must be the output shape " + to_string(grad_input.shape));
  }
  const ScatterOptions assign = scatter_options(l, Reduction::kNone, engine.context());
  // The updates first: grad_input may be grad_output's own buffer (XLA aliases them), and its
  // masking below overwrites what the updates read (on the CUDA engine: later on the stream).
  MULTIGATHER_RETURN_IF_ERROR(scatter_vjp_updates(l, grad_output, grad_updates, assign, engine));
  if (grad_input.data == nullptr) return Status::Ok();  // the caller passes grad_output on
  // grad_input = grad_output, zeroed where an update overwrote the element; all zeros when the
  // output does not start from the input (tf.scatter_nd: the lowering's own zeros).
  const MutableTensorView targets(grad_input.data, dtype, l.core_output_shape, l.core_output_strides);
  const bool own_start = l.owned_input || l.input_is_constant;  // the lowering's start, not the framework's input
  if (own_start) {
    MULTIGATHER_RETURN_IF_ERROR(engine.memset(grad_input.data, 0, nbytes(grad_input), "grad_input"));
  } else if (grad_input.data != grad_output.data) {  // XLA may alias them
    MULTIGATHER_RETURN_IF_ERROR(
        engine.copy(grad_input.data, "grad_input", grad_output.data, "grad_output", nbytes(grad_input)));
  }
  if (!own_start && (l.reduction == Reduction::kNone || !l.include_input)) {
    // A broadcast zero element (on the CUDA engine a zeroed device temporary): assigned in any
    // order, the same bytes.
    static const std::byte zeros[16] = {};
    Temporary element;
    const void* zero_data = zeros;
    if (engine.cuda()) {
      MULTIGATHER_RETURN_IF_ERROR(element.allocate(engine, dtype, {1}, grad_input.data, "grad_input"));
      MULTIGATHER_RETURN_IF_ERROR(engine.memset(element.data(), 0, element_size(dtype), "zero"));
      zero_data = element.data();
    }
    const TensorView zero(zero_data, dtype, Dims::filled(targets.rank(), 1), Dims::filled(targets.rank(), 0));
    MULTIGATHER_RETURN_IF_ERROR(engine.scatter(targets, l.indices, zero, l.axes, targets, assign, Engine::Order::kFree));
  }
  return Status::Ok();
}

/// Whether floating_value reads dtype t.
bool floating_value_type(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}

/// The refusal of a segment gradient for data of a dtype that has none.
Status no_gradient_for(const Lowering& l, DType dtype) {
  return TypeError(l.op + ": no gradient for data dtype " + std::string(dtype_name(dtype)) +
                   " (floating types are differentiable)");
}

/// The gradient of a segment product (TensorFlow's rule, _UnsortedSegmentProdGrad): a row's
/// derivative is the product of the others in its segment, which is result / x where x != 0;
/// where x == 0 it is the product of the segment's non-zero rows (with the identity), and 0
/// for every row of a segment with more than one zero. `data_g`: the data as G (plain). Every
/// step on the engine (the elementwise ones: kernels/prod_gradient.hpp).
Status segment_prod_vjp(const Lowering& l, const std::byte* data_g, const TensorView& grad_output,
                        const MutableTensorView& grad_data, const Engine& engine) {
  const DType dtype = grad_output.dtype;
  if (!visit_floating(dtype, []<class E>() {})) return no_gradient_for(l, dtype);
  const Dims& g_shape = l.shape.output_shape;
  const void* near = grad_data.data;
  ProdGradientParams p;
  p.n = l.shape.output_numel;
  p.data = data_g;
  // zeros[o]: whether row element o is 0; non_zero: the data with its zeros made 1.
  Temporary zeros, non_zero;
  MULTIGATHER_RETURN_IF_ERROR(zeros.allocate(engine, DType::kInt64, g_shape, near, "grad_input"));
  MULTIGATHER_RETURN_IF_ERROR(non_zero.allocate(engine, dtype, g_shape, near, "grad_input"));
  p.zeros = static_cast<std::int64_t*>(zeros.data());
  p.non_zero = non_zero.data();
  MULTIGATHER_RETURN_IF_ERROR(engine.prod_gradient(p, dtype, /*zeros_step=*/true));
  // Per segment element: the result, the product of its non-zero rows, its count of zeros.
  Temporary result, non_zero_product, zero_count;
  MULTIGATHER_RETURN_IF_ERROR(result.allocate(engine, dtype, l.output_shape, near, "grad_input"));
  MULTIGATHER_RETURN_IF_ERROR(non_zero_product.allocate(engine, dtype, l.output_shape, near, "grad_input"));
  MULTIGATHER_RETURN_IF_ERROR(zero_count.allocate(engine, DType::kInt64, l.core_output_shape, near, "grad_input"));
  Lowering forward = l;
  forward.updates = TensorView(data_g, dtype, l.updates.shape, l.updates.strides);
  MULTIGATHER_RETURN_IF_ERROR(execute(forward, result.view(), engine.context()));
  forward.updates = TensorView(non_zero.data(), dtype, l.updates.shape, l.updates.strides);
  MULTIGATHER_RETURN_IF_ERROR(execute(forward, non_zero_product.view(), engine.context()));
  MULTIGATHER_RETURN_IF_ERROR(engine.memset(zero_count.data(), 0, nbytes(zero_count.view()), "grad_input"));
  const ScatterOptions add = scatter_options(l, Reduction::kAdd, engine.context());
  MULTIGATHER_RETURN_IF_ERROR(engine.scatter(zero_count.view(), l.indices, zeros.view(), l.axes, zero_count.view(), add,
                                             Engine::Order::kFree));
  // Each read at every row's segment (a dropped row reads 0 and gets 0).
  const GatherOptions o = gather_options(l, engine.context());
  Temporary picked_result, picked_non_zero, picked_zeros;
  MULTIGATHER_RETURN_IF_ERROR(picked_result.allocate(engine, dtype, g_shape, near, "grad_input"));
  MULTIGATHER_RETURN_IF_ERROR(picked_non_zero.allocate(engine, dtype, g_shape, near, "grad_input"));
  MULTIGATHER_RETURN_IF_ERROR(picked_zeros.allocate(engine, DType::kInt64, g_shape, near, "grad_input"));
  const auto core = [&](const Temporary& t) {
    return TensorView(t.data(), t.view().dtype, l.core_output_shape, l.core_output_strides);
  };
  MULTIGATHER_RETURN_IF_ERROR(engine.gather(core(result), l.indices, l.axes, picked_result.view(), o));
  MULTIGATHER_RETURN_IF_ERROR(engine.gather(core(non_zero_product), l.indices, l.axes, picked_non_zero.view(), o));
  MULTIGATHER_RETURN_IF_ERROR(engine.gather(zero_count.view(), l.indices, l.axes, picked_zeros.view(), o));
  const ScatterOptions assign = scatter_options(l, Reduction::kNone, engine.context());
  MULTIGATHER_RETURN_IF_ERROR(scatter_vjp_updates(l, grad_output, &grad_data, assign, engine));
  p.grad = grad_data.data;
  p.product = picked_result.data();
  p.others = picked_non_zero.data();
  p.zero_count = static_cast<const std::int64_t*>(picked_zeros.data());
  return engine.prod_gradient(p, dtype, /*zeros_step=*/false);
}

/// The VJP of a segment op (OpSpec::kSegment: the framework's data is the core's updates, `l`
/// made on grad_data's buffer; `data` the framework's data, read only by max, min and prod):
///  - sum: grad_data = grad_output at each update's segment (0 for a dropped id);
///  - mean / sqrt_n: the same, of grad_output divided by each segment's count (or its sqrt);
///  - max / min: grad_output of a segment shared equally among the data elements equal to the
///    segment's result, 0 for the others (TensorFlow's and JAX's rule);
///  - prod: TensorFlow's rule (segment_prod_vjp).
/// Every step runs on the engine (CPU, or CUDA on its stream).
Status segment_vjp(const Lowering& l, const TensorView* data, int batch_rank, const TensorView& grad_output,
                   const MutableTensorView& grad_data, const Engine& engine) {
  if (nbytes(grad_data) == 0) return Status::Ok();  // no data: nothing to read or write
  const ScatterOptions assign = scatter_options(l, Reduction::kNone, engine.context());
  if (l.reduction == Reduction::kAdd && !l.mean_by_count) {
    return scatter_vjp_updates(l, grad_output, &grad_data, assign, engine);
  }
  const bool extremal = l.reduction == Reduction::kMax || l.reduction == Reduction::kMin;
  const bool reads_data = extremal || l.reduction == Reduction::kMul;
  const DType dtype = grad_output.dtype;
  const Dims& g_shape = l.shape.output_shape;
  const std::int64_t g_numel = l.shape.output_numel;
  const std::size_t es = element_size(dtype);
  // max / min: the data and grad_data views through the lowering must be G itself (nothing
  // broadcast), so that element o of G is element o of both.
  const bool plain = l.updates.shape == g_shape && l.updates.is_contiguous() &&
                     static_cast<std::size_t>(g_numel) * es == nbytes(grad_data);
  if (reads_data && !plain) {
    return InvalidArgument(l.op + ": no gradient for a max / min / prod segment reduction whose data broadcasts (shape " +
                           to_string(l.updates.shape) + " read as " + to_string(g_shape) + ")");
  }
  // The data as G, C-contiguous: read through the lowering's view of grad_data moved to the
  // data, whose leading batch dimensions may be 1 (a vmapped call with unbatched data: stride
  // 0 there), and copied.
  Temporary data_copy;
  const std::byte* data_g = nullptr;  // data element o of G at data_g + o * es
  if (reads_data) {
    bool fits = data != nullptr && data->data != nullptr && data->is_contiguous() && data->rank() == grad_data.rank() &&
                batch_rank <= data->rank() && batch_rank <= l.updates.rank();
    for (int d = 0; fits && d < data->rank(); ++d) {
      fits = data->shape[d] == grad_data.shape[d] || (d < batch_rank && data->shape[d] == 1);
    }
    if (!fits) {
      return InvalidArgument(l.op + ": the gradient of a max / min / prod segment reduction reads the data: pass it "
                             "C-contiguous, of grad_input's shape (size 1 along unbatched batch dimensions)");
    }
    Dims strides = l.updates.strides;
    const Dims data_strides = contiguous_strides(data->shape);
    for (int d = 0; d < batch_rank; ++d) strides[d] = data->shape[d] == 1 ? 0 : data_strides[d];
    const std::byte* base = static_cast<const std::byte*>(data->data) +
                            (static_cast<const std::byte*>(l.updates.data) - static_cast<const std::byte*>(grad_data.data));
    const TensorView through(base, dtype, l.updates.shape, strides);
    if (through.is_contiguous()) {
      data_g = base;  // the data is G already (plain: nothing broadcast, no batch dimension of 1)
    } else {
      MULTIGATHER_RETURN_IF_ERROR(data_copy.allocate(engine, dtype, g_shape, grad_data.data, "grad_input"));
      MULTIGATHER_RETURN_IF_ERROR(engine.copy_view(through, data_copy.view()));
      data_g = static_cast<const std::byte*>(data_copy.data());
    }
  }
  if (l.reduction == Reduction::kMul) return segment_prod_vjp(l, data_g, grad_output, grad_data, engine);
  // count[t]: how many updates reach segment element t (mean), or how many of them equal its
  // result (max / min); ties[o] (max / min): whether update o is one of those (1) or not (0).
  // Every step on the engine (CPU, or the CUDA engine on its stream).
  const ScatterOptions add = scatter_options(l, Reduction::kAdd, engine.context());
  if (extremal && !floating_value_type(dtype)) return no_gradient_for(l, dtype);
  Temporary count_storage, ties;
  TensorView count;
  if (extremal) {
    Temporary result, picked;
    MULTIGATHER_RETURN_IF_ERROR(result.allocate(engine, dtype, l.output_shape, grad_data.data, "grad_input"));
    MULTIGATHER_RETURN_IF_ERROR(picked.allocate(engine, dtype, g_shape, grad_data.data, "grad_input"));
    MULTIGATHER_RETURN_IF_ERROR(ties.allocate(engine, DType::kInt64, g_shape, grad_data.data, "grad_input"));
    MULTIGATHER_RETURN_IF_ERROR(
        count_storage.allocate(engine, DType::kInt64, l.core_output_shape, grad_data.data, "grad_input"));
    Lowering forward = l;
    forward.updates = TensorView(data_g, dtype, l.updates.shape, l.updates.strides);
    MULTIGATHER_RETURN_IF_ERROR(execute(forward, result.view(), engine.context()));
    GatherOptions o = gather_options(l, engine.context());
    o.fill_value = Scalar::from_float(std::numeric_limits<double>::quiet_NaN());  // a dropped update ties nothing
    const TensorView core_result(result.data(), dtype, l.core_output_shape, l.core_output_strides);
    MULTIGATHER_RETURN_IF_ERROR(engine.gather(core_result, l.indices, l.axes, picked.view(), o));
    auto* tie = static_cast<std::int64_t*>(ties.data());
    MULTIGATHER_RETURN_IF_ERROR(engine.ties(data_g, picked.data(), dtype, tie, g_numel));
    auto* counted = static_cast<std::int64_t*>(count_storage.data());
    const std::int64_t segment_elements = MutableTensorView(nullptr, DType::kInt64, l.core_output_shape).numel();
    const auto count_ties = [&]() -> Status {
      MULTIGATHER_RETURN_IF_ERROR(engine.memset(counted, 0, static_cast<std::size_t>(segment_elements) * 8, "count"));
      return engine.scatter(count_storage.view(), l.indices, ties.view(), l.axes, count_storage.view(), add,
                            Engine::Order::kFree);
    };
    MULTIGATHER_RETURN_IF_ERROR(count_ties());
    // Only the first tie (row-major in G) of each segment element keeps it: the smallest tie
    // position per element (a scatter min), read back at every update. On the CPU engine only
    // where some element has two ties (rare for floating data); the CUDA engine does not read
    // the counts back and always takes this path (the same result).
    if (l.gradient_to_first_tie &&
        (engine.cuda() || std::any_of(counted, counted + segment_elements, [](std::int64_t c) { return c > 1; }))) {
      constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
      Temporary first, first_at;
      MULTIGATHER_RETURN_IF_ERROR(first.allocate(engine, DType::kInt64, l.core_output_shape, grad_data.data, "grad_input"));
      MULTIGATHER_RETURN_IF_ERROR(first_at.allocate(engine, DType::kInt64, g_shape, grad_data.data, "grad_input"));
      auto* position = static_cast<std::int64_t*>(first_at.data());  // the ties' positions, then each one's first
      MULTIGATHER_RETURN_IF_ERROR(engine.positions_where(tie, kNone, position, g_numel));
      MULTIGATHER_RETURN_IF_ERROR(engine.fill(static_cast<std::int64_t*>(first.data()), segment_elements, kNone, "first"));
      const ScatterOptions min = scatter_options(l, Reduction::kMin, engine.context());
      MULTIGATHER_RETURN_IF_ERROR(
          engine.scatter(first.view(), l.indices, first_at.view(), l.axes, first.view(), min, Engine::Order::kFree));
      GatherOptions first_of = gather_options(l, engine.context());
      first_of.fill_value = Scalar::from_int(-1);  // a dropped update is no tie
      MULTIGATHER_RETURN_IF_ERROR(engine.gather(first.view(), l.indices, l.axes, first_at.view(), first_of));
      MULTIGATHER_RETURN_IF_ERROR(engine.at_itself(position, tie, g_numel));
      MULTIGATHER_RETURN_IF_ERROR(count_ties());
    }
    count = count_storage.view();
  } else {
    MULTIGATHER_RETURN_IF_ERROR(engine.update_count(l, add, grad_data.data, &count_storage, &count));
  }
  // grad_output / count (or sqrt(count)) per segment element, then read at each update's segment.
  Temporary scaled;
  MULTIGATHER_RETURN_IF_ERROR(scaled.allocate(engine, dtype, l.output_shape, grad_data.data, "grad_input"));
  const std::size_t scaled_bytes = static_cast<std::size_t>(MutableTensorView(nullptr, dtype, l.output_shape).numel()) * es;
  MULTIGATHER_RETURN_IF_ERROR(engine.copy(scaled.data(), "scaled", grad_output.data, "grad_output", scaled_bytes));
  const MutableTensorView core_scaled(scaled.data(), dtype, l.core_output_shape, l.core_output_strides);
  bool divided = false;
  MULTIGATHER_RETURN_IF_ERROR(engine.divide_by_count(core_scaled, count, false, l.sqrt_count, &divided));
  if (!divided) return no_gradient_for(l, dtype);
  MULTIGATHER_RETURN_IF_ERROR(scatter_vjp_updates(l, scaled.view(), &grad_data, assign, engine));
  if (!extremal) return Status::Ok();
  // Only the ties keep their gradient: the others are zeroed (the winner mask of each tie itself).
  Temporary won;
  MULTIGATHER_RETURN_IF_ERROR(won.allocate(engine, DType::kInt64, g_shape, grad_data.data, "grad_input"));
  auto* winners = static_cast<std::int64_t*>(won.data());
  MULTIGATHER_RETURN_IF_ERROR(engine.positions_where(static_cast<const std::int64_t*>(ties.data()), -1, winners, g_numel));
  return engine.keep_winners(grad_data.data, dtype, winners, g_numel);
}

/// The VJP of a segment op whose updates are gathered rows (Lowering::gathered: embedding_bag)
/// for the table (the framework's input): grad_input[rows[n], f] += coefficient * grad_output[b, f]
/// for each row n of bag b (sum: per_sample_weights[n] or 1; mean: 1 / the bag's count; max: 1 for
/// the first row of the bag holding the max of column f, 0 for the others), fused in one pass.
Status gathered_vjp(const Lowering& l, const TensorView* input, int batch_rank, const TensorView& grad_output,
                    const MutableTensorView& grad_input, const Engine& engine) {
  if (batch_rank != 0) {
    return InvalidArgument(l.op + ": its gradient runs unbatched only in this version");
  }
  if (!visit_floating(grad_input.dtype, []<class E>() {})) return no_gradient_for(l, grad_output.dtype);
  const bool max = l.reduction == Reduction::kMax;
  if (max && (input == nullptr || input->data == nullptr)) {
    return InvalidArgument(l.op + ": the gradient of mode='max' reads weight: pass it");
  }
  // l was made on grad_input's buffer: max reads the values from weight
  return engine.gathered_vjp(l, max ? *input : TensorView(), grad_output, grad_input, engine.context().num_threads);
}

}  // namespace

/// The VJP of one (possibly lifted) lowering on the context's engine; a CUDA VJP is refused
/// here, with execute's message, where this build or machine has no CUDA engine. `input`: the
/// framework's input (its values are read by a segment max / min / prod only).
Status vjp_one(const Lowering& l, const TensorView* input, int batch_rank, const TensorView& grad_output,
               const MutableTensorView& grad_input, const MutableTensorView* grad_updates,
               const ExecutionContext& context) {
  // The gradient of the output has the output's shape: every VJP below reads grad_output at
  // each output position (a smaller one would be read out of bounds).
  if (!(grad_output.shape == l.output_shape)) {
    return InvalidArgument(l.op + ": grad_output shape " + to_string(grad_output.shape) +
                           " must be the output shape " + to_string(l.output_shape));
  }
  const EngineOf engine_of(context.device, context);
  const Engine& engine = engine_of.get();
  if (engine.cuda()) MULTIGATHER_RETURN_IF_ERROR(detail::cuda_engine_available(l));
  if (!is_dense(grad_output)) {
    // Another layout (a sum's expanded scalar, a transposed or sliced gradient) is copied
    // C-contiguous on this engine first: every VJP below reads grad_output through the
    // lowering's strides, and the scatters' row walks read contiguous rows fastest (a
    // stride-0 row is read element by element: 2.4x the time of copy + contiguous rows for
    // embedding's [64, 16, 64] gradient).
    Temporary copy;
    MULTIGATHER_RETURN_IF_ERROR(copy.allocate(engine, grad_output.dtype, grad_output.shape, grad_output.data, "grad_output"));
    MULTIGATHER_RETURN_IF_ERROR(engine.copy_view(grad_output, copy.view()));
    return vjp_one(l, input, batch_rank, copy.view(), grad_input, grad_updates, context);
  }
  if (l.segment_ids != nullptr) {  // the segment ids first, on this engine (Engine::segment_ids)
    Temporary ids;
    Lowering ready;
    MULTIGATHER_RETURN_IF_ERROR(engine.segment_ids(l, &ids, &ready));
    return vjp_one(ready, input, batch_rank, grad_output, grad_input, grad_updates, context);
  }
  if (l.gathered != nullptr) return gathered_vjp(l, input, batch_rank, grad_output, grad_input, engine);
  if (is_segment(l)) return segment_vjp(l, input, batch_rank, grad_output, grad_input, engine);
  if (l.kind == OpKind::kScatter) return scatter_vjp(l, grad_output, grad_input, grad_updates, engine);
  return gather_vjp(l, grad_output, grad_input, engine);
}

}  // namespace multigather::detail
