// Internal (not installed): the one interface to the two engines. execute (execute.cpp) and the
// VJPs (vjp.cpp) run every device step through an Engine: CpuEngine (engine_cpu.cpp) on host
// memory, CudaEngine (engine_cuda.cpp) on device memory, where each step is enqueued on the
// context's stream (the CUDA runtime reached only through kernels/cuda/cuda_hooks.hpp; in a
// build without the CUDA engine every one of its steps refuses by name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cpu/gathered_segments.hpp"
#include "kernels/prod_gradient.hpp"  // ProdGradientParams
#include "kernels/segment_ids.hpp"   // SegmentIdsParams
#include "kernels/updates_step.hpp"  // UpdatesStepParams
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "plan/plan.hpp"          // ValidatedCall
#include "plan/scatter_plan.hpp"  // ValidatedScatter
#include "plan/shard_plan.hpp"    // ShardFill, localize

#include "kernels/cuda/cuda_hooks.hpp"  // CudaStreamMemory

namespace multigather::detail {

class Temporary;
struct ShardedPiece;

/// The steps execute and the VJPs take on one device. Each runs on the engine's memory only: a
/// pointer of the other side is refused by name (the CUDA engine's checks), never dereferenced.
class Engine {
 public:
  /// Whether a scatter's result depends on the order in which it combines its updates.
  enum class Order { kMatters, kFree };

  virtual ~Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const ExecutionContext& context() const noexcept { return context_; }
  virtual bool cuda() const noexcept = 0;

  /// A C-contiguous temporary of `shape` on this engine's side (the device that owns `near`),
  /// into *t; nothing for an empty shape.
  virtual Status allocate(DType dtype, const Dims& shape, const void* near, const char* near_name, Temporary* t) const = 0;
  /// `bytes` bytes at `data` set to `value` (memset's byte).
  virtual Status memset(void* data, int value, std::size_t bytes, const char* name) const = 0;
  /// `bytes` bytes from `from` to `to`.
  virtual Status copy(void* to, const char* to_name, const void* from, const char* from_name, std::size_t bytes) const = 0;
  /// `to` = `from` (same shape, any strides).
  virtual Status copy_view(const TensorView& from, const MutableTensorView& to) const = 0;

  /// The core operators, validated: gather_multiaxis_into / its CUDA form.
  virtual Status gather(const TensorView& input, const TensorView& indices, std::span<const std::int64_t> axes,
                        const MutableTensorView& output, const GatherOptions& options) const = 0;
  /// A scatter; on the CUDA engine in context.deterministic's mode, or atomic where the result
  /// is the same in any order (Order::kFree: zeros assigned, integer max).
  virtual Status scatter(const TensorView& input, const TensorView& indices, const TensorView& updates,
                         std::span<const std::int64_t> axes, const MutableTensorView& output,
                         const ScatterOptions& options, Order order = Order::kMatters) const = 0;
  /// The core scatter of an execute whose operands and output are validated (`call`): the
  /// copy of input (or `base` into `base_output`, a partial write), then the combine; the CPU
  /// engine checks index values before its first write when keep_output.
  virtual Status scatter_validated(const TensorView& input, const TensorView& indices, const MutableTensorView& output,
                                   const ValidatedScatter& call, const ScatterOptions& options, const TensorView* base,
                                   const MutableTensorView* base_output, bool keep_output) const = 0;
  /// The gathered rows of segment op `l` (Lowering::gathered: embedding_bag) reduced into `bags`
  /// ([B, D] of the table's dtype, checked by the caller): the CPU engine's fused kernels
  /// (kernels/cpu/gathered_segments.cpp), or the CUDA engine's passes of kernels/gathered_bags.hpp
  /// (bag starts and ids checked on the device first: a failure is GatheredRows::check_values'
  /// message from host copies of ids and offsets, returned before anything is written).
  virtual Status gathered(const Lowering& l, const MutableTensorView& bags, int num_threads) const = 0;
  /// The table's gradient of `l` (its VJP) into `grad_table` ([V, D], C-contiguous) at
  /// `grad_output` ([B, D], C-contiguous); `table` holds the weight's values (read by max). The
  /// CPU engine's fused kernels (run_gathered_segments_vjp), or the passes V1 to V4 of
  /// kernels/gathered_bags.hpp (the CUDA engine's, or the CPU engine's loops for a lowering
  /// described for the device): the same bytes, and a bad id or offset worded as `gathered`
  /// words it, before anything is written.
  virtual Status gathered_vjp(const Lowering& l, const TensorView& table, const TensorView& grad_output,
                              const MutableTensorView& grad_table, int num_threads) const = 0;
  /// An out-of-range status of this engine's core call of `l`, named in the framework's terms
  /// (describe_out_of_range; the CUDA engine reads the indices it names back to the host).
  virtual Status describe_out_of_range(const Lowering& l, const Status& core) const = 0;

  /// How many updates of scatter `l` reach each element of its core output: *count views
  /// `storage` (count_shape's layout, count_view) on the device of `near`; a null view for an
  /// empty core output. The engine counts through count_updates.
  Status update_count(const Lowering& l, const ScatterOptions& options, const void* near, Temporary* storage,
                      TensorView* count) const;
  /// counts (int64, C-contiguous) = how many updates reach each element: zeros, then a
  /// scatter-add of broadcast ones through `indices` / `axes` with options' index policy.
  virtual Status count_updates(const MutableTensorView& counts, const TensorView& indices,
                               std::span<const std::int64_t> axes, const ScatterOptions& options) const = 0;
  /// `output` divided by `count` (+1 with include_input), or its root (scatter_mean.cpp's
  /// rules); *divided false for a dtype without a division (nothing written).
  virtual Status divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input,
                                 bool sqrt_count, bool* divided) const = 0;
  /// Lowering::updates_step `step` from `from` into `to` (same shape; kernels/updates_step.hpp):
  /// TypeError for a dtype without the step, else run_updates_step.
  Status updates_step(const UpdatesStep& step, const TensorView& from, const MutableTensorView& to) const;
  /// The step's body (negate, else scale) over p's elements of `dtype` (one it has).
  virtual Status run_updates_step(const UpdatesStepParams& p, DType dtype, bool negate) const = 0;

  /// `l` with its core indices computed (Lowering::segment_ids: ids from lengths, offsets or
  /// indptr) into `storage` on this engine's side: *ready is a copy of l whose indices (and
  /// index-error indices) view them, with no step left. A bad boundary is the CPU lowering's
  /// error (segment_ids_error), returned before anything is written; the CUDA engine reads one
  /// code word back for it (a stream synchronization per call).
  Status segment_ids(const Lowering& l, Temporary* storage, Lowering* ready) const;
  /// Both passes of kernels/segment_ids.hpp over p (p.first_error is set by the engine; p.ids and
  /// p.starts are its memory); *first_error: pass 1's code, on the host.
  virtual Status run_segment_ids(SegmentIdsParams p, std::uint64_t* first_error) const = 0;
  /// One device's piece of a split call (execute_shard): `local` (lowered on this device's
  /// operands) as the piece `shards` of the whole call, into *out (its piece reads indices
  /// resolved against the whole axes, shifted into the piece). The CPU engine runs
  /// plan/sharding.cpp's localize; the CUDA engine kernels/shard_piece.hpp's step 1 into its
  /// temporaries (one word read back), an index error worded by localize on host copies of the
  /// indices. Error mode fails here, before anything is written, with the unsplit call's message.
  virtual Status localize(const Lowering& local, std::span<const AxisShard> shards, ShardedPiece* out) const = 0;
  /// The first piece's fill (a gather in mode fill): the fill value at every core output element
  /// of `output` (the framework output of `local`) whose index `piece` found out of range of the
  /// whole axes (plan/sharding.cpp's write_fill, or kernels/shard_piece.hpp's step 2).
  virtual Status write_shard_fill(const Lowering& local, const ShardedPiece& piece,
                                  const MutableTensorView& output) const = 0;

  // Elementwise steps of the VJPs, over C-contiguous arrays of `count` elements.
  /// positions[p] = p.
  virtual Status positions(std::int64_t* positions, std::int64_t count) const = 0;
  /// data[p] = value.
  virtual Status fill(std::int64_t* data, std::int64_t count, std::int64_t value, const char* name) const = 0;
  /// tie[p] = data[p] == picked[p] ? 1 : 0 (floating `dtype`: a NaN ties nothing).
  virtual Status ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count) const = 0;
  /// out[p] = flag[p] != 0 ? p : none.
  virtual Status positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out,
                                 std::int64_t count) const = 0;
  /// flag[p] = at[p] == p ? 1 : 0.
  virtual Status at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count) const = 0;
  /// A segment product's gradient step (kernels/prod_gradient.hpp: the zeros step, else the
  /// derivative step) over p's elements of floating `dtype` (one visit_floating has).
  virtual Status prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step) const = 0;
  /// Element p of `grad` zeroed unless won[p] == p.
  virtual Status keep_winners(void* grad, DType dtype, const std::int64_t* won, std::int64_t count) const = 0;

 protected:
  explicit Engine(const ExecutionContext& context) : context_(context) {}
  const ExecutionContext& context_;
};

/// Room for one engine object (an Engine holds its context's address): EngineOf builds the
/// chosen one in it, so a call allocates nothing to pick its engine.
struct EngineStorage {
  alignas(16) unsigned char bytes[32];
};

/// The CPU engine (engine_cpu.cpp) and the CUDA engine (engine_cuda.cpp: every step enqueued on
/// context.stream, temporaries stream-ordered; in a build without it each step refuses,
/// kernels/cuda_absent.cpp), built in `storage` for `context` (destroyed with ~Engine).
const Engine& cpu_engine(EngineStorage* storage, const ExecutionContext& context);
const Engine& cuda_engine(EngineStorage* storage, const ExecutionContext& context);

/// The engine of `device` (kCUDA: the CUDA engine, else the CPU engine) for `context`.
class EngineOf {
 public:
  EngineOf(Device device, const ExecutionContext& context)
      : engine_(device == Device::kCUDA ? &cuda_engine(&storage_, context) : &cpu_engine(&storage_, context)) {}
  ~EngineOf() { engine_->~Engine(); }
  EngineOf(const EngineOf&) = delete;
  EngineOf& operator=(const EngineOf&) = delete;
  const Engine& get() const noexcept { return *engine_; }

 private:
  EngineStorage storage_;
  const Engine* engine_;
};

/// A C-contiguous temporary on an engine's side: a host Tensor, or stream-ordered device memory
/// freed on the stream after the steps enqueued before its end of scope (Engine::allocate).
class Temporary {
 public:
  Status allocate(const Engine& engine, DType dtype, const Dims& shape, const void* near, const char* near_name) {
    return engine.allocate(dtype, shape, near, near_name, this);
  }
  const MutableTensorView& view() const { return view_; }
  void* data() const { return view_.data; }

  // For the engines' allocate: either side's storage, and the view of it.
  Tensor& host_storage() { return host_; }
  CudaStreamMemory& device_storage() { return device_; }
  void set_view(const MutableTensorView& view) { view_ = view; }

 private:
  Tensor host_;
  CudaStreamMemory device_;
  MutableTensorView view_;
};

/// What Engine::localize makes of one device's piece: the piece's lowering and what it reads
/// (the CPU engine: localize's own indices and marks; the CUDA engine: its temporaries).
struct ShardedPiece {
  Lowering piece;
  ShardFill fill;             // the CPU engine's marks of fill positions
  Temporary resolved, marks;  // the CUDA engine's resolved indices and marks (null: none)
};

/// Ok when this build and machine can run `l` on the CUDA engine, else InvalidArgument naming
/// the op and why: no CUDA engine in the build ("... this build has no CUDA engine (build with
/// MULTIGATHER_CUDA=ON)"), or no usable device.
Status cuda_engine_available(const Lowering& l);

/// The shape of update_count's storage: the core output's, 1 along the dimensions where the
/// count does not change (it is kept once per position of the dimensions that are axes or along
/// which the indices vary, and broadcast along the others, where every update covers the
/// dimension whole: a segment's features); count_view(l, data) views it with the core output's
/// shape, stride 0 there. The division of a mean (execute.cpp) and the gradient of a segment
/// mean (vjp.cpp) read it (Engine::update_count).
Dims count_shape(const Lowering& l);
TensorView count_view(const Lowering& l, const void* data);

/// A floating element (float32, float64, float16, bfloat16) at `p` as a double; false for
/// another dtype (the segment gradients compare and multiply host data with it).
bool floating_value(const std::byte* p, DType t, double* v);

/// The core updates `updates` (shape G, stride 0 where they broadcast) after l.updates_step, in
/// a temporary of `engine` of one element per distinct update (on the device of `near`):
/// *stepped views it with updates' shape and stride 0 where they broadcast. Nothing when l has
/// no step (*stepped = updates).
Status stepped_updates(const Lowering& l, const TensorView& updates, const Engine& engine, const void* near,
                       Temporary* storage, TensorView* stepped);

/// The fused kernel's call for a lowering with gathered rows (l.gathered: embedding_bag).
GatheredSegmentsCall gathered_call(const Lowering& l);

}  // namespace multigather::detail
