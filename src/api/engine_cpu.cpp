// The CPU engine behind the Engine interface (api/engine.hpp): the core operators on host
// memory, their validated forms (kernels/cpu, plan), and the VJPs' elementwise steps as loops.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "api/engine.hpp"
#include "kernels/cpu/run_validated.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "kernels/gathered_bags.hpp"
#include "kernels/updates_step.hpp"
#include "plan/index_errors.hpp"

namespace multigather::detail {

namespace {

/// embedding_bag's passes 1 and 2 (kernels/gathered_bags.hpp) in loops, for a lowering described
/// for the device: a failed check is GatheredRows::check_values' message.
struct BagIndex {
  std::vector<std::int64_t> rows, starts;

  Status run(const Lowering& l) {
    const GatheredRows& g = *l.gathered;
    rows.resize(static_cast<std::size_t>(g.ids.numel()));
    starts.resize(static_cast<std::size_t>(g.bags) + 1);
    std::uint32_t failed = 0;
    const BagIndexParams p = bag_index_params(g, rows.data(), starts.data(), &failed);
    bag_starts_thread(p, 0, 1);
    bag_rows_thread(p, 0, 1);
    if (failed == 0) return Status::Ok();
    const Status s = g.check_values(g.ids, g.offsets.data != nullptr ? &g.offsets : nullptr);
    return s.ok() ? Status(StatusCode::kInternal, l.op + ": a failed check that the lowering's does not find") : s;
  }
};

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const ExecutionContext& context) : Engine(context) {}
  bool cuda() const noexcept override { return false; }

  Status allocate(DType dtype, const Dims& shape, const void*, const char*, Temporary* t) const override {
    t->host_storage() = Tensor(dtype, shape);
    t->set_view(MutableTensorView(t->host_storage().data(), dtype, shape));
    return Status::Ok();
  }

  Status memset(void* data, int value, std::size_t bytes, const char*) const override {
    if (bytes > 0) std::memset(data, value, bytes);
    return Status::Ok();
  }

  Status copy(void* to, const char*, const void* from, const char*, std::size_t bytes) const override {
    if (bytes > 0) std::memcpy(to, from, bytes);
    return Status::Ok();
  }

  Status copy_view(const TensorView& from, const MutableTensorView& to) const override {
    // No lowering's options here: the context's -1 ("the lowering's") is automatic.
    return detail::copy_view(from, to, std::max(context_.num_threads, 0));
  }

  Status gather(const TensorView& input, const TensorView& indices, std::span<const std::int64_t> axes,
                const MutableTensorView& output, const GatherOptions& options) const override {
    return gather_multiaxis_into(input, indices, axes, output, options);
  }

  Status scatter(const TensorView& input, const TensorView& indices, const TensorView& updates,
                 std::span<const std::int64_t> axes, const MutableTensorView& output, const ScatterOptions& options,
                 Order) const override {
    return scatter_multiaxis_into(input, indices, updates, axes, output, options);
  }

  Status scatter_validated(const TensorView& input, const TensorView& indices, const MutableTensorView& output,
                           const ValidatedScatter& call, const ScatterOptions& options, const TensorView* base,
                           const MutableTensorView* base_output, bool keep_output) const override {
    return run_scatter_validated(input, indices, output, call, options, base, base_output, keep_output);
  }

  Status describe_out_of_range(const Lowering& l, const Status& core) const override {
    return detail::describe_out_of_range(l, l.index_errors.indices, core);
  }

  Status count_updates(const MutableTensorView& counts, const TensorView& indices, std::span<const std::int64_t> axes,
                       const ScatterOptions& options) const override {
    // A scatter-add of broadcast ones through the same indices and policy.
    const int r = counts.rank();
    if (counts.numel() > 0) std::memset(counts.data, 0, static_cast<std::size_t>(counts.numel()) * 8);
    static const std::int64_t one = 1;
    const TensorView ones(&one, DType::kInt64, Dims::filled(r, 1), Dims::filled(r, 0));
    ScatterOptions add = options;
    add.reduction = Reduction::kAdd;
    add.include_input = true;
    return scatter_multiaxis_into(TensorView(counts), indices, ones, axes, counts, add);
  }

  Status divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input, bool sqrt_count,
                         bool* divided) const override {
    *divided = detail::divide_by_count(output, count, include_input, sqrt_count);
    return Status::Ok();
  }

  Status run_updates_step(const UpdatesStepParams& p, DType dtype, bool negate) const override {
    visit_updates_step(dtype, negate, [&]<class Op>() { updates_step_thread<Op>(p, 0, 1); });
    return Status::Ok();
  }

  Status gathered(const Lowering& l, const MutableTensorView& bags, int num_threads) const override {
    const GatheredRows& g = *l.gathered;
    if (g.check_values) {  // described for the device: its passes, here in loops
      BagIndex index;
      MULTIGATHER_RETURN_IF_ERROR(index.run(l));
      const GatheredBagsParams q = gathered_bags_params(g, index.rows.data(), index.starts.data(), bags,
                                                        l.mean_by_count, l.reduction == Reduction::kMax);
      if (visit_floating(g.table.dtype, [&]<class E>() { gathered_bags_thread<E>(q, 0, 1); })) return Status::Ok();
    } else if (run_gathered_segments(gathered_call(l), bags, num_threads)) {
      return Status::Ok();
    }
    return Status(StatusCode::kInternal, l.op + ": no fused kernel for " + std::string(dtype_name(bags.dtype)) +
                                             " (or out of memory for its accumulators)");
  }

  Status gathered_vjp(const Lowering& l, const TensorView& table, const TensorView& grad_output,
                      const MutableTensorView& grad_table, int num_threads) const override {
    const GatheredRows& g = *l.gathered;
    const bool max = l.reduction == Reduction::kMax;
    if (g.check_values) {  // described for the device: its passes, here in loops
      BagIndex index;
      MULTIGATHER_RETURN_IF_ERROR(index.run(l));
      const GatheredBagsVjpParams p = gathered_bags_vjp_params(g, table, grad_output, grad_table, index.rows.data(),
                                                               index.starts.data(), l.mean_by_count, max);
      if (gathered_bags_vjp_on_host(p, grad_table.dtype)) return Status::Ok();
    } else {
      GatheredSegmentsCall call = gathered_call(l);
      if (max) call.table = table;
      if (run_gathered_segments_vjp(call, grad_output, grad_table, num_threads)) return Status::Ok();
    }
    return Status(StatusCode::kInternal, l.op + ": no gradient kernel for " + std::string(dtype_name(grad_table.dtype)) +
                                             " (or out of memory for its bookkeeping)");
  }

  Status prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step) const override {
    visit_floating(dtype, [&]<class E>() {
      if (zeros_step) {
        prod_zeros_thread<E>(p, 0, 1);
      } else {
        prod_derivative_thread<E>(p, 0, 1);
      }
    });
    return Status::Ok();
  }

  Status run_segment_ids(SegmentIdsParams p, std::uint64_t* first_error) const override {
    p.first_error = first_error;
    segment_ids_on_host(p);
    return Status::Ok();
  }

  Status localize(const Lowering& local, std::span<const AxisShard> shards, ShardedPiece* out) const override {
    return detail::localize(local, shards, &out->piece, &out->fill);
  }

  Status write_shard_fill(const Lowering& local, const ShardedPiece& piece,
                          const MutableTensorView& output) const override {
    return write_fill(local, piece.fill, output);
  }

  Status positions(std::int64_t* positions, std::int64_t count) const override {
    for (std::int64_t p = 0; p < count; ++p) positions[p] = p;
    return Status::Ok();
  }

  Status fill(std::int64_t* data, std::int64_t count, std::int64_t value, const char*) const override {
    std::fill_n(data, count, value);
    return Status::Ok();
  }

  Status ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count) const override {
    if (dtype == DType::kFloat32) {  // the common case, without a per-element conversion
      const auto* x = static_cast<const float*>(data);
      const auto* y = static_cast<const float*>(picked);
      for (std::int64_t i = 0; i < count; ++i) tie[i] = x[i] == y[i] ? 1 : 0;
      return Status::Ok();
    }
    const std::size_t es = element_size(dtype);
    const auto* a = static_cast<const std::byte*>(data);
    const auto* b = static_cast<const std::byte*>(picked);
    for (std::int64_t i = 0; i < count; ++i) {
      double u = 0, v = 0;
      if (!floating_value(a + i * static_cast<std::int64_t>(es), dtype, &u) ||
          !floating_value(b + i * static_cast<std::int64_t>(es), dtype, &v)) {
        return InvalidArgument("ties: dtype " + std::string(dtype_name(dtype)) + " is not a floating type");
      }
      tie[i] = u == v ? 1 : 0;
    }
    return Status::Ok();
  }

  Status positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out,
                         std::int64_t count) const override {
    for (std::int64_t p = 0; p < count; ++p) out[p] = flag[p] != 0 ? p : none;
    return Status::Ok();
  }

  Status at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count) const override {
    for (std::int64_t p = 0; p < count; ++p) flag[p] = at[p] == p ? 1 : 0;
    return Status::Ok();
  }

  Status keep_winners(void* grad, DType dtype, const std::int64_t* won, std::int64_t count) const override {
    const std::size_t es = element_size(dtype);
    auto* bytes = static_cast<std::byte*>(grad);
    for (std::int64_t p = 0; p < count; ++p) {
      if (won[p] != p) std::memset(bytes + p * static_cast<std::int64_t>(es), 0, es);
    }
    return Status::Ok();
  }
};

}  // namespace

const Engine& cpu_engine(EngineStorage* storage, const ExecutionContext& context) {
  static_assert(sizeof(CpuEngine) <= sizeof(EngineStorage) && alignof(CpuEngine) <= alignof(EngineStorage));
  return *new (storage->bytes) CpuEngine(context);
}

}  // namespace multigather::detail
