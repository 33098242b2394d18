// Batching (jax.vmap) and vector-Jacobian products (jax.grad) on the one pipeline
// (multigather/transforms.hpp): a lowering lifted by the batch dimensions, run per example; the
// VJP of one lowered call is api/vjp.cpp's. Also the call-site cache and one device's piece of a
// split call (multigather/sharding.hpp).
#include "multigather/transforms.hpp"
#include "multigather/lowering_cache.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "api/guarded.hpp"
#include "api/engine.hpp"
#include "api/vjp.hpp"
#include "core/odometer.hpp"
#include "core/task_pool.hpp"
#include "core/text.hpp"
#include "multigather/sharding.hpp"
#include "plan/shard_plan.hpp"

namespace multigather {
namespace {

using detail::is_segment;

using detail::str;

/// An operand split into its `n` leading batch dimensions and one example (the example view
/// starts at batch element 0).
struct Split {
  TensorView example;
  Dims lead_sizes, lead_strides;
};

Status split(const TensorView& view, int n, const char* name, const Dims& batch_shape, Split* out) {
  if (view.rank() < n) {
    return InvalidArgument(std::string(name) + " has rank " + str(view.rank()) + ", fewer than the " +
                           str(n) + " batch dimensions");
  }
  Dims shape, strides;
  for (int d = 0; d < view.rank(); ++d) {
    if (d < n) {
      if (view.shape[d] != 1 && view.shape[d] != batch_shape[d]) {
        return InvalidArgument(std::string(name) + ".shape[" + str(d) + "] = " + str(view.shape[d]) +
                               " must be the batch size " + str(batch_shape[d]) + " or 1 (not batched)");
      }
      out->lead_sizes.push_back(view.shape[d]);
      out->lead_strides.push_back(view.shape[d] == 1 ? 0 : view.strides[d]);
    } else {
      shape.push_back(view.shape[d]);
      strides.push_back(view.strides[d]);
    }
  }
  out->example = TensorView(view.data, view.dtype, shape, strides);
  return Status::Ok();
}

Dims concat(const Dims& a, const Dims& b) {
  Dims out = a;
  for (std::int64_t v : b) out.push_back(v);
  return out;
}

TensorView prepend(const TensorView& v, const Dims& sizes, const Dims& strides) {
  return TensorView(v.data, v.dtype, concat(sizes, v.shape), concat(strides, v.strides));
}

/// A lead that covers the whole batch: size-1 (unbatched) leading dimensions read the same
/// example for every batch element (stride 0).
void broadcast_lead(const Dims& batch_shape, Split* s) {
  for (int j = 0; j < batch_shape.size(); ++j) {
    if (s->lead_sizes[j] != batch_shape[j]) {
      s->lead_sizes[j] = batch_shape[j];
      s->lead_strides[j] = 0;
    }
  }
}


/// Whether the lowering holds what it made of the operands' values (copies, or gathered rows:
/// embedding_bag's bags and row ids), which a lift by batch dimensions cannot extend.
bool made_copies(const Lowering& l) {
  return l.owned_input != nullptr || l.owned_indices != nullptr || l.owned_updates != nullptr || l.gathered != nullptr ||
         l.segment_ids != nullptr;
}

/// The example lowering `l` (made on the example views of `input` / `indices` / `updates`)
/// lifted by the batch dimensions: they become leading non-axis dimensions of the core call.
Status lift(Lowering* l, const Dims& batch_shape, Split input, const Split& indices,
            const Split* updates) {
  const int n = batch_shape.size();
  const int r = l->input.rank();
  const bool scatter = l->kind == OpKind::kScatter;
  // A segment op's framework input is the core's updates; its core input, the reduction's
  // identity, is one element broadcast (stride 0 along the batch too).
  const bool segment = is_segment(*l);
  const Split* core_updates = segment ? &input : updates;
  // So is any constant input (tf.scatter_nd's zeros).
  Split identity;
  if (segment || l->input_is_constant) {
    identity.lead_sizes = batch_shape;
    identity.lead_strides = Dims::filled(n, 0);
  }
  Split& core_input = segment || l->input_is_constant ? identity : input;
  // A scatter's output starts as its input: the input covers the whole batch.
  if (scatter) broadcast_lead(batch_shape, &core_input);
  std::vector<std::int64_t> axes;
  for (std::int64_t a : l->axes) axes.push_back((a < 0 ? a + r : a) + n);
  l->input = prepend(l->input, core_input.lead_sizes, core_input.lead_strides);
  l->indices = prepend(l->indices, indices.lead_sizes, indices.lead_strides);
  GatherShape shape;
  if (scatter) {
    const Split& u = *core_updates;
    l->updates = prepend(l->updates, u.lead_sizes, u.lead_strides);
    MULTIGATHER_RETURN_IF_ERROR(infer_scatter_shape(l->input.shape, l->indices.shape, l->updates.shape, axes, &shape));
    if (l->has_scatter_base) l->scatter_base = prepend(l->scatter_base, input.lead_sizes, input.lead_strides);
  } else {
    MULTIGATHER_RETURN_IF_ERROR(infer_shape(l->input.shape, l->indices.shape, axes, &shape));
  }
  for (int j = 0; j < n; ++j) {
    if (shape.output_shape[j] != batch_shape[j]) {
      return InvalidArgument(l->op + ": batch dimension " + str(j) + " has size " + str(batch_shape[j]) +
                             " in the output but " + str(shape.output_shape[j]) + " in the operands");
    }
  }
  // The output: batch_shape ++ the example's output, C-contiguous.
  std::int64_t step = 1;
  for (std::int64_t s : l->output_shape) step *= s;
  Dims lead_strides = Dims::filled(n, 0);
  for (int j = n - 1; j >= 0; --j) {
    lead_strides[j] = step;
    step *= batch_shape[j];
  }
  // A scatter's core output has its core input's shape, a gather's is G.
  l->core_output_shape = scatter ? l->input.shape : shape.output_shape;
  l->core_output_strides = concat(lead_strides, l->core_output_strides);
  l->output_shape = concat(batch_shape, l->output_shape);
  l->axes = axes;
  l->shape = shape;
  l->logical_indices_shape = shape.logical_indices_shape;
  // Messages name positions in the batched indices, the batch coordinates first.
  IndexErrorContext& e = l->index_errors;
  e.indices = prepend(e.indices, indices.lead_sizes, indices.lead_strides);
  if (e.coordinate_dim >= 0) e.coordinate_dim += n;
  return Status::Ok();
}

Device lowering_device(const ExecutionContext& context) {
  return context.device == Device::kCUDA ? Device::kCUDA : Device::kCPU;
}

Status lower(std::string_view name, const TensorView& input, const TensorView& indices,
             const TensorView* updates, const Attributes& attrs, const ExecutionContext& context,
             Lowering* l) {
  return updates != nullptr ? lower_op(name, input, indices, *updates, attrs, l, lowering_device(context))
                            : lower_op(name, input, indices, attrs, l, lowering_device(context));
}

/// Runs `body(b, offsets...)` for every batch element b (C order) with each operand's element
/// offset of that example; an error is prefixed with the batch element.
template <class Body>
Status for_each_example(const Dims& batch_shape, const std::vector<const Split*>& operands, const Body& body) {
  const int n = batch_shape.size();
  std::int64_t count = 1;
  for (std::int64_t s : batch_shape) count *= s;
  std::vector<std::int64_t> pos(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> offsets(operands.size(), 0);
  for (std::int64_t b = 0; b < count; ++b) {
    for (std::size_t k = 0; k < operands.size(); ++k) {
      offsets[k] = 0;
      if (operands[k] == nullptr) continue;
      for (int j = 0; j < n; ++j) offsets[k] += pos[static_cast<std::size_t>(j)] * operands[k]->lead_strides[j];
    }
    Status s = body(b, offsets);
    if (!s.ok()) {
      return Status(s.code(), "batch element [" + detail::position_text(pos) + "]: " + s.message(), s.reason());
    }
    detail::next_position(pos, batch_shape);
  }
  return Status::Ok();
}

TensorView at(const TensorView& v, std::int64_t offset) {
  return TensorView(static_cast<const std::byte*>(v.data) + offset * static_cast<std::int64_t>(element_size(v.dtype)),
                    v.dtype, v.shape, v.strides);
}

MutableTensorView at(const MutableTensorView& v, std::int64_t offset) {
  return MutableTensorView(static_cast<std::byte*>(v.data) + offset * static_cast<std::int64_t>(element_size(v.dtype)),
                           v.dtype, v.shape, v.strides);
}

Dims batch_of(const Dims& shape, int n) {
  Dims out;
  for (int j = 0; j < n && j < shape.size(); ++j) out.push_back(shape[j]);
  return out;
}

Status check_batch_rank(int n, const Dims& output_shape, const char* output_name) {
  if (n < 0 || n > output_shape.size()) {
    return InvalidArgument(std::string("batch_rank ") + str(n) + " must be in [0, " + output_name +
                           " rank " + str(output_shape.size()) + "]");
  }
  return Status::Ok();
}

Status require_contiguous(const TensorView& v, const char* name) {
  // PyTorch's rule (detail::is_dense): a [1, 2] gradient with strides [4, 1] is laid out as
  // [2, 1]'s.
  if (!detail::is_dense(v)) {
    return InvalidArgument(std::string(name) + " must be C-contiguous (strides " + to_string(v.strides) +
                           " for shape " + to_string(v.shape) + ")");
  }
  return Status::Ok();
}

using detail::guarded;
using detail::vjp_one;

}  // namespace

// ---- CallSiteCache ------------------------------------------------------------------------------

struct CallSiteCache::Entry {
  LoweringCache cache{1};
  LoweringKey key;  // the call's key, made anew by each call under the lock (its capacity stays)
};

CallSiteCache::CallSiteCache() : entry_(std::make_unique<Entry>()) {}
CallSiteCache::~CallSiteCache() = default;

/// One call's use of a CallSiteCache: holds its lock for the call when it is free (a call that
/// finds it taken runs uncached), finds the kept lowering, keeps a new one, counts lowerings.
/// The key: the op, the device, the batch rank and the operands' layouts (one call site has
/// one set of attributes).
struct CallSiteLease {
  CallSiteCache* cache = nullptr;  // the call's cache (null: none)
  bool locked = false;
  LoweringCache::Lease lease;  // destroyed before the lock is released

  explicit CallSiteLease(CallSiteCache* c) : cache(c), locked(c != nullptr && c->mutex_.try_lock()) {}
  ~CallSiteLease() {
    lease = LoweringCache::Lease();
    if (locked) cache->mutex_.unlock();
  }
  CallSiteLease(const CallSiteLease&) = delete;
  CallSiteLease& operator=(const CallSiteLease&) = delete;

  /// The cache's key, made for these operands (only while the lock is held).
  const LoweringKey& make_key(std::string_view op, Device device, int batch_rank, const TensorView& input,
                              const TensorView& indices, const TensorView* updates) {
    LoweringKey& key = cache->entry_->key;
    key.clear();
    key.add_text(op);
    key.add(device);
    key.add(batch_rank);
    key.add_view(input);
    key.add_view(indices);
    if (updates != nullptr) key.add_view(*updates);
    return key;
  }

  /// The kept lowering moved to these operands, or null when there is none for them.
  Lowering* find(std::string_view op, Device device, int batch_rank, const TensorView& input,
                 const TensorView& indices, const TensorView* updates) {
    if (!locked) return nullptr;
    cache->entry_->cache.find(make_key(op, device, batch_rank, input, indices, updates), input.data, indices.data,
                              updates != nullptr ? updates->data : nullptr, &lease);
    return lease.get();
  }

  /// Counts one lower_op run for the cache's test hook.
  void lowered() {
    if (cache != nullptr) cache->lowerings_.fetch_add(1, std::memory_order_relaxed);
  }

  /// Keeps `l` (made for these operands) when it is a function of their layouts alone.
  void keep(std::string_view op, Device device, int batch_rank, const TensorView& input, const TensorView& indices,
            const TensorView* updates, Lowering&& l) {
    if (!locked) return;
    lease = cache->entry_->cache.keep(make_key(op, device, batch_rank, input, indices, updates), std::move(l), input,
                                      indices, updates);
  }
};

bool input_gradient_is_identity(const Lowering& l) noexcept {
  return l.kind == OpKind::kScatter && l.reduction == Reduction::kAdd && l.include_input && !l.owned_input &&
         !l.input_is_constant && !l.mean_by_count && !is_segment(l);
}

Status execute_batched(std::string_view name, const TensorView& input, const TensorView& indices,
                       const TensorView* updates, const Attributes& attrs, int batch_rank,
                       const MutableTensorView& output, const ExecutionContext& context,
                       CallSiteCache* cache) noexcept {
  return guarded(name, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    MULTIGATHER_RETURN_IF_ERROR(check_batch_rank(batch_rank, output.shape, "output"));
    if (batch_rank > 0) MULTIGATHER_RETURN_IF_ERROR(require_contiguous(output, "output"));
    CallSiteLease lease(cache);
    const Device device = lowering_device(context);
    const Lowering* kept = lease.find(name, device, batch_rank, input, indices, updates);
    // A lifted call names an out-of-range position in its own terms: then the examples run one
    // by one below, so that the message is the framework's, prefixed with the batch element.
    if (kept != nullptr) {
      const Status s = execute(*kept, output, context);
      if (batch_rank == 0 || s.code() != StatusCode::kOutOfRange) return s;
    } else if (batch_rank == 0) {
      Lowering l;
      lease.lowered();
      MULTIGATHER_RETURN_IF_ERROR(lower(name, input, indices, updates, attrs, context, &l));
      const Status s = execute(l, output, context);
      if (s.ok()) lease.keep(name, device, batch_rank, input, indices, updates, std::move(l));
      return s;
    }
    const Dims batch_shape = batch_of(output.shape, batch_rank);
    Split in, idx, upd;
    MULTIGATHER_RETURN_IF_ERROR(split(input, batch_rank, "input", batch_shape, &in));
    MULTIGATHER_RETURN_IF_ERROR(split(indices, batch_rank, "indices", batch_shape, &idx));
    if (updates != nullptr) MULTIGATHER_RETURN_IF_ERROR(split(*updates, batch_rank, "updates", batch_shape, &upd));
    if (kept == nullptr) {
      Lowering l;
      lease.lowered();
      MULTIGATHER_RETURN_IF_ERROR(lower(name, in.example, idx.example, updates != nullptr ? &upd.example : nullptr,
                                        attrs, context, &l));
      if (!made_copies(l)) {
        MULTIGATHER_RETURN_IF_ERROR(lift(&l, batch_shape, in, idx, updates != nullptr ? &upd : nullptr));
        const Status s = execute(l, output, context);
        if (s.ok()) lease.keep(name, device, batch_rank, input, indices, updates, std::move(l));
        if (s.code() != StatusCode::kOutOfRange) return s;
      }
    }
    // The lowering copied an operand of example 0 (or an index is out of range): lower and run
    // each example, into the output's trailing dimensions (each execute checks them against its
    // example's output shape).
    Dims example_output;
    for (int d = batch_rank; d < output.rank(); ++d) example_output.push_back(output.shape[d]);
    std::int64_t out_numel = 1;
    for (std::int64_t s : example_output) out_numel *= s;
    const MutableTensorView out_example(output.data, output.dtype, example_output);
    return for_each_example(batch_shape, {&in, &idx, updates != nullptr ? &upd : nullptr},
                            [&](std::int64_t b, const std::vector<std::int64_t>& off) {
      Lowering e;
      const TensorView u = updates != nullptr ? at(upd.example, off[2]) : TensorView();
      lease.lowered();
      MULTIGATHER_RETURN_IF_ERROR(lower(name, at(in.example, off[0]), at(idx.example, off[1]),
                                        updates != nullptr ? &u : nullptr, attrs, context, &e));
      return execute(e, at(out_example, b * out_numel), context);
    });
  });
}

Status execute_vjp(std::string_view name, const TensorView& input, const TensorView& indices,
                   const TensorView* updates, const Attributes& attrs, int batch_rank,
                   const TensorView& grad_output, const MutableTensorView& grad_input,
                   const MutableTensorView* grad_updates, const ExecutionContext& context,
                   CallSiteCache* cache) noexcept {
  return guarded(name, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    MULTIGATHER_RETURN_IF_ERROR(check_batch_rank(batch_rank, grad_output.shape, "grad_output"));
    // Unbatched, grad_output may have any layout (vjp_one copies it); the examples of a batch
    // are read at their C-contiguous offsets.
    if (batch_rank > 0) MULTIGATHER_RETURN_IF_ERROR(require_contiguous(grad_output, "grad_output"));
    MULTIGATHER_RETURN_IF_ERROR(require_contiguous(grad_input, "grad_input"));
    if (grad_updates != nullptr) MULTIGATHER_RETURN_IF_ERROR(require_contiguous(*grad_updates, "grad_updates"));
    if (grad_input.dtype != input.dtype || !(batch_of(grad_input.shape, batch_rank) == batch_of(grad_output.shape, batch_rank))) {
      return InvalidArgument(std::string(name) + ": grad_input must have input's dtype and the batch shape " +
                             to_string(batch_of(grad_output.shape, batch_rank)));
    }
    const Dims batch_shape = batch_of(grad_output.shape, batch_rank);
    // The lowering is made on the GRADIENTS' buffers (same example shapes and dtypes as input
    // and updates; lowerings read only index values), so its views point where the gradients go.
    // A gradient not asked for comes with null data (grad_input: vjp_one writes nothing there;
    // updates without grad_updates): its lowering operand is a stand-in base instead, never read
    // or written, so that the lowering is kept like any other (lowering_anchors keeps none with
    // a null operand; a torch scatter whose input gradient is passed on lowered on every call).
    alignas(std::max_align_t) static const std::byte stand_in[sizeof(std::max_align_t)] = {};
    const auto based = [](const TensorView& v) {
      return v.data != nullptr ? v : TensorView(stand_in, v.dtype, v.shape, v.strides);
    };
    const TensorView lowered_input = based(grad_input);
    const TensorView updates_base = updates != nullptr ? based(*updates) : TensorView();
    Split gin, idx, gupd, upd, gout;
    MULTIGATHER_RETURN_IF_ERROR(split(lowered_input, batch_rank, "grad_input", batch_shape, &gin));
    MULTIGATHER_RETURN_IF_ERROR(split(indices, batch_rank, "indices", batch_shape, &idx));
    MULTIGATHER_RETURN_IF_ERROR(split(grad_output, batch_rank, "grad_output", batch_shape, &gout));
    if (updates != nullptr) {
      MULTIGATHER_RETURN_IF_ERROR(split(updates_base, batch_rank, "updates", batch_shape, &upd));
      if (grad_updates != nullptr) {
        MULTIGATHER_RETURN_IF_ERROR(split(*grad_updates, batch_rank, "grad_updates", batch_shape, &gupd));
        if (!(gupd.example.shape == upd.example.shape) || gupd.example.dtype != upd.example.dtype) {
          return InvalidArgument(std::string(name) + ": grad_updates must have updates' example shape " +
                                 to_string(upd.example.shape) + " and dtype");
        }
      } else {
        gupd = upd;
      }
    }
    Split in;
    MULTIGATHER_RETURN_IF_ERROR(split(input, batch_rank, "input", batch_shape, &in));
    if (!(gin.example.shape == in.example.shape)) {
      return InvalidArgument(std::string(name) + ": grad_input's example shape " + to_string(gin.example.shape) +
                             " must be input's " + to_string(in.example.shape));
    }
    // The lowering's operands (and the cache's key): grad_input, indices and the buffer the
    // updates' views point into (grad_updates, or updates when no gradient is asked of them).
    const TensorView lowered_updates = grad_updates != nullptr ? TensorView(*grad_updates) : updates_base;
    const TensorView* key_updates = updates != nullptr ? &lowered_updates : nullptr;
    CallSiteLease lease(cache);
    const Device device = lowering_device(context);
    if (const Lowering* kept = lease.find(name, device, batch_rank, lowered_input, indices, key_updates)) {
      return vjp_one(*kept, &input, batch_rank, grad_output, grad_input, grad_updates, context);
    }
    const TensorView* example_updates = updates != nullptr ? &gupd.example : nullptr;
    Lowering l;
    lease.lowered();
    MULTIGATHER_RETURN_IF_ERROR(lower(name, gin.example, idx.example, example_updates, attrs, context, &l));
    if (batch_rank == 0 || !made_copies(l)) {
      if (batch_rank > 0) MULTIGATHER_RETURN_IF_ERROR(lift(&l, batch_shape, gin, idx, updates != nullptr ? &gupd : nullptr));
      const Status s = vjp_one(l, &input, batch_rank, grad_output, grad_input, grad_updates, context);
      if (s.ok()) lease.keep(name, device, batch_rank, lowered_input, indices, key_updates, std::move(l));
      return s;
    }
    std::int64_t out_numel = 1, in_numel = gin.example.numel(), upd_numel = gupd.example.numel();
    for (std::int64_t s : l.output_shape) out_numel *= s;
    return for_each_example(batch_shape, {&idx, &in}, [&](std::int64_t b, const std::vector<std::int64_t>& off) {
      Lowering e;
      lease.lowered();
      const TensorView gi = at(gin.example, b * in_numel);
      const TensorView gu = updates != nullptr ? at(gupd.example, b * upd_numel) : TensorView();
      MULTIGATHER_RETURN_IF_ERROR(lower(name, gi, at(idx.example, off[0]), updates != nullptr ? &gu : nullptr,
                                        attrs, context, &e));
      const MutableTensorView gi_out(grad_input.data != nullptr ? const_cast<void*>(gi.data) : nullptr, gi.dtype, gi.shape);
      const MutableTensorView gu_out(const_cast<void*>(gu.data), gu.dtype, gu.shape);
      const TensorView go(at(gout.example, b * out_numel));
      // The example's input (read by a segment max / min / prod: C-contiguous when its batch
      // dimensions are, as the call requires there).
      const TensorView xi = at(in.example, off[1]);
      return vjp_one(e, &xi, 0, go, gi_out, grad_updates != nullptr ? &gu_out : nullptr, context);
    });
  });
}


// ---- One device's piece of a split call (multigather/sharding.hpp) ------------------------------

namespace {

/// lower() of a call whose operands carry `batch_rank` leading batch dimensions (batch_shape),
/// lifted as execute_batched lifts it; a lowering that copied an operand cannot be lifted.
Status lower_lifted(std::string_view name, const TensorView& input, const TensorView& indices,
                    const TensorView* updates, const Attributes& attrs, const Dims& batch_shape,
                    const ExecutionContext& context, Lowering* l) {
  const int n = batch_shape.size();
  if (n == 0) return lower(name, input, indices, updates, attrs, context, l);
  Split in, idx, upd;
  MULTIGATHER_RETURN_IF_ERROR(split(input, n, "input", batch_shape, &in));
  MULTIGATHER_RETURN_IF_ERROR(split(indices, n, "indices", batch_shape, &idx));
  if (updates != nullptr) MULTIGATHER_RETURN_IF_ERROR(split(*updates, n, "updates", batch_shape, &upd));
  MULTIGATHER_RETURN_IF_ERROR(lower(name, in.example, idx.example, updates != nullptr ? &upd.example : nullptr, attrs,
                                    context, l));
  if (made_copies(*l)) {
    return InvalidArgument(std::string(name) + ": a split call with batch dimensions cannot copy an operand (its "
                           "lowering does): run it whole");
  }
  return lift(l, batch_shape, in, idx, updates != nullptr ? &upd : nullptr);
}

}  // namespace

Status execute_shard(std::string_view name, const TensorView& input, const TensorView& indices,
                     const TensorView* updates, const Attributes& attrs, int batch_rank,
                     std::span<const AxisShard> shards, const MutableTensorView& output,
                     const ExecutionContext& context) noexcept {
  return guarded(name, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    MULTIGATHER_RETURN_IF_ERROR(check_batch_rank(batch_rank, output.shape, "output"));
    if (batch_rank > 0) MULTIGATHER_RETURN_IF_ERROR(require_contiguous(output, "output"));
    Lowering local;
    MULTIGATHER_RETURN_IF_ERROR(lower_lifted(name, input, indices, updates, attrs, batch_of(output.shape, batch_rank),
                                             context, &local));
    const detail::EngineOf engine(lowering_device(context), context);
    detail::ShardedPiece piece;
    MULTIGATHER_RETURN_IF_ERROR(engine.get().localize(local, shards, &piece));
    MULTIGATHER_RETURN_IF_ERROR(execute(piece.piece, output, context));
    if (!detail::first_piece(shards)) return Status::Ok();
    return engine.get().write_shard_fill(local, piece, output);
  });
}

Status execute_vjp_shard(std::string_view name, const TensorView& input, const TensorView& indices,
                         const TensorView* updates, const Attributes& attrs, int batch_rank,
                         std::span<const AxisShard> shards, const TensorView& grad_output,
                         const MutableTensorView& grad_input, const MutableTensorView* grad_updates,
                         const ExecutionContext& context) noexcept {
  return guarded(name, [&]() -> Status {
    const detail::TaskPoolScope pool(context.task_pool);
    MULTIGATHER_RETURN_IF_ERROR(check_batch_rank(batch_rank, grad_output.shape, "grad_output"));
    MULTIGATHER_RETURN_IF_ERROR(require_contiguous(grad_output, "grad_output"));
    MULTIGATHER_RETURN_IF_ERROR(require_contiguous(grad_input, "grad_input"));
    if (grad_updates != nullptr) MULTIGATHER_RETURN_IF_ERROR(require_contiguous(*grad_updates, "grad_updates"));
    // The gradients: the batch shape of grad_output, the operands' example shapes and dtypes.
    const Dims batch_shape = batch_of(grad_output.shape, batch_rank);
    auto example = [&](const Dims& shape) {
      Dims out;
      for (int d = batch_rank; d < shape.size(); ++d) out.push_back(shape[d]);
      return out;
    };
    const auto like = [&](const MutableTensorView& g, const TensorView& operand) {
      return g.dtype == operand.dtype && g.rank() >= batch_rank && operand.rank() >= batch_rank &&
             batch_of(g.shape, batch_rank) == batch_shape && example(g.shape) == example(operand.shape);
    };
    if (!like(grad_input, input)) {
      return InvalidArgument(std::string(name) + ": grad_input must have input's dtype and example shape " +
                             to_string(example(input.shape)) + " after the batch shape " + to_string(batch_shape));
    }
    if (grad_updates != nullptr && (updates == nullptr || !like(*grad_updates, *updates))) {
      return InvalidArgument(std::string(name) + ": grad_updates must have updates' dtype and example shape after "
                             "the batch shape " + to_string(batch_shape));
    }
    // As execute_vjp: lowered on the gradients' buffers, so that its views point where they go.
    const TensorView lowered_updates =
        grad_updates != nullptr ? TensorView(*grad_updates) : updates != nullptr ? *updates : TensorView();
    Lowering local;
    MULTIGATHER_RETURN_IF_ERROR(lower_lifted(name, grad_input, indices, updates != nullptr ? &lowered_updates : nullptr,
                                             attrs, batch_shape, context, &local));
    const detail::EngineOf engine(lowering_device(context), context);
    detail::ShardedPiece piece;
    MULTIGATHER_RETURN_IF_ERROR(engine.get().localize(local, shards, &piece));
    return vjp_one(piece.piece, &input, batch_rank, grad_output, grad_input, grad_updates, context);
  });
}

}  // namespace multigather
