// Internal (not installed): what src/api (execute.cpp, transforms.cpp, c_api.cpp) asks of the
// CUDA engine. Declared in every build: a CUDA build defines it in cuda_api.cpp, a build without
// the engine in kernels/cuda_absent.cpp (every call refuses: "this build has no CUDA engine").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/device_memory.hpp"  // is_cuda_pointer
#include "kernels/prod_gradient.hpp"  // ProdGradientParams
#include "multigather/lowering.hpp"  // GatheredRows
#include "kernels/segment_ids.hpp"   // SegmentIdsParams
#include "kernels/shard_piece.hpp"   // ShardPieceParams, ShardFillParams
#include "kernels/updates_step.hpp"  // UpdatesStepParams
#include "multigather/cuda.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather::detail {

/// Whether this build has the CUDA engine (MULTIGATHER_CUDA=ON).
bool cuda_engine_built() noexcept;

/// Copies the bytes that `view` (device memory) reaches into `storage`; *host is the same view
/// over the host copy. For out-of-range messages, which read the framework's indices.
Status copy_view_to_host(const TensorView& view, std::vector<std::byte>* storage,
                         TensorView* host) noexcept;

/// The CUDA form of run_scatter_validated (plan/scatter_plan.hpp), same contract: operands and
/// output already validated; then the index values (error mode: checked before any write), the
/// copy of input (or `base`) into the output, the combine. Runs on `stream`.
Status run_scatter_validated_cuda(const TensorView& input, const TensorView& indices,
                                  const MutableTensorView& output, const ValidatedScatter& call,
                                  const ScatterOptions& options, void* stream, bool deterministic,
                                  const TensorView* base = nullptr,
                                  const MutableTensorView* base_output = nullptr) noexcept;

// ---- The VJPs on the CUDA engine (api/transforms.cpp) ------------------------------------------
// Stream-ordered steps on `stream`, on the device that owns the memory they write (mapped pinned
// memory: the current device); none synchronizes. Nothing here reads device memory on the host.
// Errors: InvalidArgument naming `name` for memory the CUDA runtime does not know or host memory;
// Internal with the runtime's error name for a failed CUDA call.

/// cudaMemsetAsync of `bytes` bytes at `data` to `value` (nothing for 0 bytes).
Status cuda_memset_async(void* data, int value, std::size_t bytes, const char* name, void* stream) noexcept;

/// cudaMemcpyAsync of `bytes` bytes, device to device (nothing for 0 bytes); both on one device.
Status cuda_copy_async(void* to, const char* to_name, const void* from, const char* from_name, std::size_t bytes,
                       void* stream) noexcept;

/// Stream-ordered device memory (cudaMallocAsync on `stream`, on the device that owns `near`),
/// freed on the same stream when it goes out of scope: the steps enqueued before that have run
/// by the time the memory is reused.
class CudaStreamMemory {
 public:
  CudaStreamMemory() = default;
  ~CudaStreamMemory();
  CudaStreamMemory(const CudaStreamMemory&) = delete;
  CudaStreamMemory& operator=(const CudaStreamMemory&) = delete;
  /// At least `bytes` bytes (16 for 0), aligned as cudaMallocAsync aligns (256 bytes).
  Status allocate(std::size_t bytes, const void* near, const char* near_name, void* stream) noexcept;
  void* data() const noexcept { return data_; }

 private:
  void* data_ = nullptr;
  void* stream_ = nullptr;
  int device_ = -1;
};

// ---- A mean's division (api/execute.cpp, and the segment means' VJP in api/transforms.cpp) ------

/// Whether the CUDA engine divides `dtype` by a count (or its root: sqrt_count): floating and
/// complex dtypes, integers without sqrt_count (divide_rows.hpp).
bool cuda_has_division(DType dtype, bool sqrt_count) noexcept;

/// counts (int64, C-contiguous device memory) = how many updates reach each element: zeros, then a
/// scatter-add of broadcast ones through `indices` / `axes` with options' index policy
/// (execute.cpp's update_count on the device).
Status cuda_count_updates(const MutableTensorView& counts, const TensorView& indices,
                          std::span<const std::int64_t> axes, const ScatterOptions& options, void* stream) noexcept;

/// Each element of `output` (device memory, any strides) divided by count + (include_input ? 1 :
/// 0), or its root (kernels/cpu/scatter_mean.cpp's rules: divide_rows.hpp). `count`: int64
/// device memory of output's shape (stride 0 where it does not change). InvalidArgument for a
/// dtype without a division (cuda_has_division).
Status cuda_divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input,
                            bool sqrt_count, void* stream) noexcept;

/// The updates' step (kernels/updates_step.hpp: Lowering::updates_step) over p's elements of
/// `dtype` (device memory, any strides; p.to not overlapping p.from); InvalidArgument for a
/// dtype without the step (visit_updates_step).
Status cuda_updates_step(const UpdatesStepParams& p, DType dtype, bool negate, void* stream) noexcept;

/// Both passes of kernels/segment_ids.hpp over p (device memory: bounds, p.ids, p.starts) on
/// `stream`: pass 1 into a device code word, pass 2, then the word copied back to *first_error
/// (a synchronization of `stream`: the caller's check needs it before any write).
Status cuda_segment_ids(SegmentIdsParams p, std::uint64_t* first_error, void* stream) noexcept;

/// `count` elements of `element_bytes` (1, 2, 4, 8 or 16) at `data` set to the host `element`.
Status cuda_fill(void* data, std::int64_t count, std::size_t element_bytes, const void* element, const char* name,
                 void* stream) noexcept;

/// A segment max's / min's gradient (vjp_rows.hpp), over C-contiguous arrays of `count`:
/// tie[p] = data[p] == picked[p] ? 1 : 0 (floating `dtype`; InvalidArgument for another);
Status cuda_ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count,
                 void* stream) noexcept;
/// out[p] = flag[p] != 0 ? p : none;
Status cuda_positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out, std::int64_t count,
                            void* stream) noexcept;
/// flag[p] = at[p] == p ? 1 : 0.
Status cuda_at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count, void* stream) noexcept;

/// embedding_bag on the device (kernels/gathered_bags.hpp): g's ids and offsets (device memory)
/// into bag starts and table rows, checked; then, unless *failed (a check failed: nothing
/// written), g's table rows reduced into `bags` ([B, D], device memory). Synchronizes `stream`
/// once, to read the checks' flag.
Status cuda_gathered_bags(const GatheredRows& g, const MutableTensorView& bags, bool mean, bool max, bool* failed,
                          void* stream) noexcept;

/// embedding_bag's table gradient on the device (kernels/gathered_bags.hpp, passes V1 to V4):
/// g's ids and offsets checked as cuda_gathered_bags checks them; then, unless *failed,
/// `grad_table` ([V, D], device memory) is the gradient at `grad_output` ([B, D]), the CPU
/// engine's bytes; `table` (the weight's values) is read by max only. Synchronizes `stream` once.
Status cuda_gathered_bags_vjp(const GatheredRows& g, const TensorView& table, const TensorView& grad_output,
                              const MutableTensorView& grad_table, bool mean, bool max, bool* failed,
                              void* stream) noexcept;

/// A split call's piece on the device (kernels/shard_piece.hpp, step 1; p's indices and output
/// arrays are device memory): *first_error is the smallest failing index element, or p.n (read
/// back: one synchronization). Step 2: the fill of the marked core output elements.
Status cuda_shard_piece(ShardPieceParams p, std::int64_t* first_error, void* stream) noexcept;
Status cuda_shard_fill(const ShardFillParams& p, void* stream) noexcept;

/// A segment product's gradient step (kernels/prod_gradient.hpp: the zeros step, else the
/// derivative step) over p's elements of `dtype` (device memory); InvalidArgument for a dtype
/// without one.
Status cuda_prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step, void* stream) noexcept;

/// positions[p] = p for p < count (vjp_rows.hpp).
Status cuda_positions(std::int64_t* positions, std::int64_t count, void* stream) noexcept;

/// Zeroes element p of the C-contiguous `grad` (of `dtype`) unless won[p] == p, for p < count
/// (vjp_rows.hpp): the winner rule of a scatter with reduction none.
Status cuda_keep_winners(void* grad, DType dtype, const std::int64_t* won, std::int64_t count,
                         void* stream) noexcept;

}  // namespace multigather::detail
