// multigather/execute.hpp: step 2 of the one pipeline, execute(Lowering, output, context).
//
// The C++ API, the CLI, Python and the C API all run every op through these functions. The
// engine is chosen here, from the context or from where the operands live: the CPU engine
// (threads from the context) or, in a CUDA build, the CUDA engine (on the context's stream).
#pragma once

#include <string_view>

#include "multigather/lowering.hpp"
#include "multigather/task_pool.hpp"

namespace multigather {

/// How and where a lowered call runs.
struct ExecutionContext {
  /// kAuto: CUDA when the input is CUDA device or managed memory (CUDA builds only), else CPU.
  Device device = Device::kAuto;
  /// CUDA: the stream (a cudaStream_t; nullptr = the legacy default stream). Error mode
  /// synchronizes it once to read the error flag; other modes return once enqueued.
  void* stream = nullptr;
  /// CPU threads: -1 = the lowering's options.num_threads; 0 = automatic; n = at most n.
  int num_threads = -1;
  /// One-shot calls (execute_alloc, run_op): allocates the output (null: the library's Tensor
  /// storage, CPU only). Called once, on the calling thread, after validation.
  OutputAllocator allocate = nullptr;
  void* allocator_context = nullptr;
  /// CUDA scatters: true = bit-identical to the CPU engine (sort by target, one owner per
  /// target); false = atomics (faster; float sums may differ in the last bits from run to run,
  /// and which duplicate wins under reduction none is unspecified). CPU scatters are always
  /// deterministic.
  bool deterministic = true;
  /// How messages name the output argument ("output"; Python: "out").
  const char* output_name = "output";
  /// True when execute's output was just allocated for this call and nobody else reads it (a
  /// one-shot result): an index error may then leave partial data in it, which saves the pass
  /// over the indices that keeps a caller's output unchanged (see execute). execute_alloc
  /// sets it itself.
  bool output_is_new = false;
  /// CPU: run the engine's parallel loops on this pool instead of OpenMP (null: OpenMP). The
  /// pool must outlive the call; with context.num_threads 0 (automatic) it bounds the threads.
  const TaskPool* task_pool = nullptr;
};

/// Runs a lowered call into `output`, a view of lowering.output_shape whose dtype has the
/// input's element size. A scatter op's output may be its input itself (in place: the
/// framework's input viewed with the same data and strides); else the overlap rules are those
/// of scatter_multiaxis_into; on CUDA operands they run on the CUDA engine
/// (scatter_multiaxis_cuda_into, context.deterministic); reduce = 'mean' then counts the updates
/// and divides on the device too (the CPU engine's rules). For a gather:
/// input's element size (any strides: when the framework's reshape of the core output cannot be
/// expressed by `output`'s strides, the result goes through a staging buffer). Validation not
/// done by lower_op is done here, before any byte is written: data pointers, view extents, the
/// fill value, the output's shape and dtype, and that the output neither overlaps the input or
/// the indices nor itself (stride 0, interleaved strides). Errors: those of
/// gather_multiaxis_into; OutOfRange names the FRAMEWORK's indices position and rule
/// ("torch.gather: index[0,1] = -1 is out of range for dim 1 of size 4 (valid range [0, 4));
/// torch.gather rejects negative indices"); InvalidArgument for operands on a device this build
/// cannot run ("... this build has no CUDA engine").
/// On error the output is unchanged, on the CPU engine: every check, the index values included,
/// is made before the first write (a gather in index_mode error, and a scatter, read the index
/// values once in a pass of their own first, unless context.output_is_new).
/// On the CUDA engine an index error may leave partial data in the output.
Status execute(const Lowering& lowering, const MutableTensorView& output,
               const ExecutionContext& context = {}) noexcept;

/// The one-shot form: allocates the output through context.allocate (or, when null, a Tensor
/// owned by *owned, CPU only) and runs into it. *output receives the allocated view.
Status execute_alloc(const Lowering& lowering, const ExecutionContext& context,
                     MutableTensorView* output, Tensor* owned) noexcept;

/// Throwing one-shot (multigather::Error subclasses): a new C-contiguous CPU tensor.
Tensor execute(const Lowering& lowering, const ExecutionContext& context = {});

/// lower_op + execute_alloc, exception-free; *output receives a new tensor.
Status run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs, Tensor* output, const ExecutionContext& context = {}) noexcept;
/// Throwing convenience.
Tensor run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const Attributes& attrs = {}, const ExecutionContext& context = {});

/// The scatter ops' forms (lower_op with updates + execute_alloc): a new tensor of the
/// framework's output shape (its input's shape).
Status run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const TensorView& updates, const Attributes& attrs, Tensor* output,
              const ExecutionContext& context = {}) noexcept;
Tensor run_op(std::string_view name, const TensorView& input, const TensorView& indices,
              const TensorView& updates, const Attributes& attrs = {},
              const ExecutionContext& context = {});

/// Backward-compatible name of execute(lowering, output) on the CPU with default context.
Status execute_lowering(const Lowering& lowering, const MutableTensorView& output) noexcept;

}  // namespace multigather
