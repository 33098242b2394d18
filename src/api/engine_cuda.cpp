// The CUDA engine behind the Engine interface (api/engine.hpp): every step enqueued on the
// context's stream through kernels/cuda/cuda_hooks.hpp (cudaMemsetAsync / cudaMemcpyAsync,
// temporaries from cudaMallocAsync freed on the stream, the gather and scatter kernels, the
// elementwise kernels); the host never reads or writes device memory here. Compiled in every
// build: without the CUDA engine each hook refuses by name (kernels/cuda_absent.cpp).
#include <new>
#include <string>
#include <vector>

#include "api/engine.hpp"
#include "kernels/cpu/run_validated.hpp"  // no_axes_indices
#include "plan/index_errors.hpp"

namespace multigather::detail {

namespace {

/// embedding_bag (Lowering::gathered) runs on the device only from a lowering of the device's
/// operands (GatheredRows::check_values: nothing read on the host).
Status described_for_the_device(const Lowering& l) {
  if (l.gathered->check_values) return Status::Ok();
  return InvalidArgument(l.op + ": the lowering read its ids on the host; on a CUDA device lower the call "
                         "with the device's operands");
}

/// The words of a bad id or offset that the device's checks found: the lowering's checks on
/// host copies of ids and offsets.
Status bag_failure(const Lowering& l) {
  const GatheredRows& g = *l.gathered;
  std::vector<std::byte> ids_bytes, offsets_bytes;
  TensorView ids, offsets;
  MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(g.ids, &ids_bytes, &ids));
  const bool has_offsets = g.offsets.data != nullptr;
  if (has_offsets) MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(g.offsets, &offsets_bytes, &offsets));
  const Status s = g.check_values(ids, has_offsets ? &offsets : nullptr);
  if (!s.ok()) return s;
  return Status(StatusCode::kInternal, l.op + ": the device found a bad id or offset that the host's check does not "
                                       "(please report this bug)");
}

/// The words of an index out of range that the device's piece found: localize on host copies of
/// the indices (the same first failure in C order, the same message).
Status index_error_on_host(const Lowering& local, std::span<const AxisShard> shards) {
  std::vector<std::byte> indices_bytes, errors_bytes;
  Lowering on_host = local;
  MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(local.indices, &indices_bytes, &on_host.indices));
  if (local.index_errors.indices.data != nullptr) {
    MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(local.index_errors.indices, &errors_bytes, &on_host.index_errors.indices));
  }
  Lowering unused;
  ShardFill unused_fill;
  const Status s = localize(on_host, shards, &unused, &unused_fill);
  if (!s.ok()) return s;
  return Status(StatusCode::kInternal, local.op + ": the device found an index out of range that the host's check "
                                       "does not (please report this bug)");
}

class CudaEngine final : public Engine {
 public:
  explicit CudaEngine(const ExecutionContext& context) : Engine(context) {}
  bool cuda() const noexcept override { return true; }

  Status allocate(DType dtype, const Dims& shape, const void* near, const char* near_name,
                  Temporary* t) const override {
    std::int64_t numel = 1;
    for (std::int64_t s : shape) numel *= s;
    void* data = nullptr;
    if (numel > 0) {
      MULTIGATHER_RETURN_IF_ERROR(t->device_storage().allocate(static_cast<std::size_t>(numel) * element_size(dtype),
                                                               near, near_name, context_.stream));
      data = t->device_storage().data();
    }
    t->set_view(MutableTensorView(data, dtype, shape));
    return Status::Ok();
  }

  Status memset(void* data, int value, std::size_t bytes, const char* name) const override {
    return cuda_memset_async(data, value, bytes, name, context_.stream);
  }

  Status copy(void* to, const char* to_name, const void* from, const char* from_name,
              std::size_t bytes) const override {
    return cuda_copy_async(to, to_name, from, from_name, bytes, context_.stream);
  }

  Status copy_view(const TensorView& from, const MutableTensorView& to) const override {
    return gather_multiaxis_cuda_into(from, no_axes_indices(from.rank()), {}, to, GatherOptions{}, context_.stream);
  }

  Status gather(const TensorView& input, const TensorView& indices, std::span<const std::int64_t> axes,
                const MutableTensorView& output, const GatherOptions& options) const override {
    return gather_multiaxis_cuda_into(input, indices, axes, output, options, context_.stream);
  }

  Status scatter(const TensorView& input, const TensorView& indices, const TensorView& updates,
                 std::span<const std::int64_t> axes, const MutableTensorView& output, const ScatterOptions& options,
                 Order order) const override {
    const bool deterministic = order == Order::kMatters && context_.deterministic;
    return scatter_multiaxis_cuda_into(
        input, indices, updates, axes, output, options, context_.stream,
        deterministic ? ScatterDeterminism::kDeterministic : ScatterDeterminism::kAtomic);
  }

  Status scatter_validated(const TensorView& input, const TensorView& indices, const MutableTensorView& output,
                           const ValidatedScatter& call, const ScatterOptions& options, const TensorView* base,
                           const MutableTensorView* base_output, bool) const override {
    return run_scatter_validated_cuda(input, indices, output, call, options, context_.stream, context_.deterministic,
                                      base, base_output);
  }

  Status describe_out_of_range(const Lowering& l, const Status& core) const override {
    // The framework's indices live on the device: the bytes the message reads come back first.
    std::vector<std::byte> storage;
    TensorView host;
    MULTIGATHER_RETURN_IF_ERROR(copy_view_to_host(l.index_errors.indices, &storage, &host));
    return detail::describe_out_of_range(l, host, core);
  }

  Status count_updates(const MutableTensorView& counts, const TensorView& indices, std::span<const std::int64_t> axes,
                       const ScatterOptions& options) const override {
    return cuda_count_updates(counts, indices, axes, options, context_.stream);
  }

  Status divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input, bool sqrt_count,
                         bool* divided) const override {
    *divided = cuda_has_division(output.dtype, sqrt_count);
    if (!*divided) return Status::Ok();
    return cuda_divide_by_count(output, count, include_input, sqrt_count, context_.stream);
  }

  Status run_updates_step(const UpdatesStepParams& p, DType dtype, bool negate) const override {
    return cuda_updates_step(p, dtype, negate, context_.stream);
  }

  Status gathered(const Lowering& l, const MutableTensorView& bags, int) const override {
    MULTIGATHER_RETURN_IF_ERROR(described_for_the_device(l));
    bool failed = false;
    MULTIGATHER_RETURN_IF_ERROR(cuda_gathered_bags(*l.gathered, bags, l.mean_by_count, l.reduction == Reduction::kMax,
                                                   &failed, context_.stream));
    return failed ? bag_failure(l) : Status::Ok();
  }

  Status gathered_vjp(const Lowering& l, const TensorView& table, const TensorView& grad_output,
                      const MutableTensorView& grad_table, int) const override {
    MULTIGATHER_RETURN_IF_ERROR(described_for_the_device(l));
    bool failed = false;
    MULTIGATHER_RETURN_IF_ERROR(cuda_gathered_bags_vjp(*l.gathered, table, grad_output, grad_table, l.mean_by_count,
                                                       l.reduction == Reduction::kMax, &failed, context_.stream));
    return failed ? bag_failure(l) : Status::Ok();
  }

  Status prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step) const override {
    return cuda_prod_gradient(p, dtype, zeros_step, context_.stream);
  }

  Status run_segment_ids(SegmentIdsParams p, std::uint64_t* first_error) const override {
    return cuda_segment_ids(p, first_error, context_.stream);
  }

  Status localize(const Lowering& local, std::span<const AxisShard> shards, ShardedPiece* out) const override {
    ShardPieceParams p;
    MULTIGATHER_RETURN_IF_ERROR(shard_piece_params(local, shards, &p));
    const TensorView& ix = local.indices;
    MULTIGATHER_RETURN_IF_ERROR(out->resolved.allocate(*this, DType::kInt64, ix.shape, ix.data, "indices"));
    p.resolved = static_cast<std::int64_t*>(out->resolved.data());
    if (p.gather_fill && p.n > 0) {
      MULTIGATHER_RETURN_IF_ERROR(out->marks.allocate(*this, DType::kUInt8, Dims{p.n / p.c}, ix.data, "indices"));
      MULTIGATHER_RETURN_IF_ERROR(memset(out->marks.data(), 0, static_cast<std::size_t>(p.n / p.c), "fill marks"));
      p.out_of_range = static_cast<std::uint8_t*>(out->marks.data());
    }
    std::int64_t first_error = p.n;
    MULTIGATHER_RETURN_IF_ERROR(cuda_shard_piece(p, &first_error, context_.stream));
    if (first_error < p.n) return index_error_on_host(local, shards);
    as_piece(local, TensorView(out->resolved.data(), DType::kInt64, ix.shape), &out->piece);
    return Status::Ok();
  }

  Status write_shard_fill(const Lowering& local, const ShardedPiece& piece,
                          const MutableTensorView& output) const override {
    if (piece.marks.data() == nullptr) return Status::Ok();
    ShardFillParams f;
    MULTIGATHER_RETURN_IF_ERROR(shard_fill_params(local, output, static_cast<const std::uint8_t*>(piece.marks.data()), &f));
    return cuda_shard_fill(f, context_.stream);
  }

  Status positions(std::int64_t* positions, std::int64_t count) const override {
    return cuda_positions(positions, count, context_.stream);
  }

  Status fill(std::int64_t* data, std::int64_t count, std::int64_t value, const char* name) const override {
    return cuda_fill(data, count, 8, &value, name, context_.stream);
  }

  Status ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count) const override {
    return cuda_ties(data, picked, dtype, tie, count, context_.stream);
  }

  Status positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out,
                         std::int64_t count) const override {
    return cuda_positions_where(flag, none, out, count, context_.stream);
  }

  Status at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count) const override {
    return cuda_at_itself(at, flag, count, context_.stream);
  }

  Status keep_winners(void* grad, DType dtype, const std::int64_t* won, std::int64_t count) const override {
    return cuda_keep_winners(grad, dtype, won, count, context_.stream);
  }
};

}  // namespace

const Engine& cuda_engine(EngineStorage* storage, const ExecutionContext& context) {
  static_assert(sizeof(CudaEngine) <= sizeof(EngineStorage) && alignof(CudaEngine) <= alignof(EngineStorage));
  return *new (storage->bytes) CudaEngine(context);
}

}  // namespace multigather::detail
