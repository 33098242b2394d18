// multigather/cuda.hpp: gather_multiaxis and scatter_multiaxis on NVIDIA GPUs (the CUDA backend).
//
// The same operator, the same validation and the same index policies as the CPU core
// (multigather/gather.hpp; docs/spec.md section 1):
//
//     output[o] = input[i]   with i[axes[j]] = resolve(indices[..., q_{r-1} * c + j], n_j)
//
// but `input`, `indices` and `output` hold DEVICE pointers (cudaMalloc, cudaMallocAsync,
// managed memory, or a framework's CUDA tensor), all on one device. Views keep their meaning:
// shapes and strides in elements, stride 0 = broadcast, any strides.
//
// Available when the library is built with MULTIGATHER_CUDA=ON (the macro
// MULTIGATHER_HAVE_CUDA is then defined for every target that links multigather). A build
// without it links the same functions: each returns InvalidArgument "this build has no CUDA
// engine (build with MULTIGATHER_CUDA=ON)", and cuda_device_available() is false. This header
// does not include cuda_runtime.h: a stream is passed as `void*` (a cudaStream_t or CUstream;
// nullptr = the legacy default stream).
#pragma once

#include <cstdint>
#include <span>

#include "multigather/gather.hpp"
#include "multigather/scatter.hpp"

namespace multigather {

/// True when the CUDA runtime finds at least one usable device (driver present, device count
/// > 0). Never throws; cheap after the first call.
bool cuda_device_available() noexcept;

/// gather_multiaxis on the GPU, into a caller-provided device output view.
///
/// Shapes, dtypes, axes and options are validated on the host exactly as by
/// gather_multiaxis_into, with the same messages. Index VALUES are resolved by the kernel itself
/// (error / clamp / wrap / fill, negative indices, unsigned 64-bit values above INT64_MAX), and
/// an out-of-range value never causes an out-of-bounds read.
///
/// Synchronization: the kernel is enqueued on `stream`. In IndexMode::kClamp, kWrap and kFill no
/// index value can fail the call, so the function returns right after enqueueing (the output is
/// ready when `stream` reaches that point, as with any CUDA library call). In IndexMode::kError
/// the kernel raises a flag in pinned host memory on the first bad index; the function
/// synchronizes `stream` and reads it. On a bad index it copies `indices` back to the host and
/// returns the exact message of the CPU core (OutOfRange, e.g. "indices[3,1] = 7 is out of range
/// for axis 2 of size 5 (valid range [-5, 5))"); the output then holds partial data.
/// Use gather_multiaxis_cuda_enqueue to avoid the synchronization in error mode.
///
/// Errors, besides those of gather_multiaxis_into (checked first, same messages): an indices
/// pointer not aligned to its element size (InvalidArgument); no usable CUDA device (Internal,
/// "no CUDA device is available"); a pointer that is host memory, or operands on two devices
/// (InvalidArgument, naming the operand); a CUDA runtime failure (Internal, with the runtime's
/// error name and text). The kernel runs on the device that owns the pointers (the caller's
/// current device is restored); `stream` must belong to that device.
/// Example: embedding rows, table [V, D] float32 and ids [N] int64 on the device (onnx.Gather
/// axis 0, out[n, d] = table[ids[n], d]):
///   const std::int64_t axes[] = {0};
///   Status s = gather_multiaxis_cuda_into(TensorView(table, DType::kFloat32, {V, D}),
///                                         TensorView(ids, DType::kInt64, {N, 1}), axes,
///                                         MutableTensorView(out, DType::kFloat32, {N, D}),
///                                         {}, stream);
Status gather_multiaxis_cuda_into(const TensorView& input, const TensorView& indices,
                                  std::span<const std::int64_t> axes,
                                  const MutableTensorView& output,
                                  const GatherOptions& options = {},
                                  void* stream = nullptr) noexcept;

/// The asynchronous form: validates, then enqueues the kernel on `stream` and returns without
/// any synchronization, in every index mode.
///
/// `error_flag` must be null or point to a std::uint32_t the device can write (device memory,
/// or mapped pinned host memory). In IndexMode::kError, when some index is out of range (or an
/// indexed axis is empty), the kernel stores a nonzero value there; the function never clears
/// it, so the caller zeroes it before the call and reads it after `stream` completes. A nonzero
/// flag means the output must not be used; gather_multiaxis_cuda_into on the same arguments
/// then returns the exact message. With a null `error_flag`, bad indices in error mode are
/// still never dereferenced, but go unreported.
///
/// A call whose failure needs no index value (an empty indexed axis with a non-empty output, in
/// error, clamp or wrap mode) returns its OutOfRange status at once, without enqueueing.
Status gather_multiaxis_cuda_enqueue(const TensorView& input, const TensorView& indices,
                                     std::span<const std::int64_t> axes,
                                     const MutableTensorView& output,
                                     const GatherOptions& options, void* stream,
                                     std::uint32_t* error_flag) noexcept;

/// How the CUDA scatter combines several updates that reach one element.
enum class ScatterDeterminism {
  /// Bit-identical to the CPU engine (scatter_multiaxis_into) on every launch: the rows are
  /// sorted by target (a stable radix sort), and one thread group owns each target and combines
  /// its updates in row-major order (docs/spec.md section 4).
  kDeterministic,
  /// One atomic read-modify-write per update element, in whatever order the GPU runs them:
  /// faster, and free of the sort's scratch memory, but float add / mul rounds in that order
  /// (the result may differ in the last bits from run to run), and under reduction none the
  /// surviving update among duplicates is any of them. Integer, bool, min and max results are
  /// the same as deterministic mode, except complex64 min / max where a NaN or a tie (+0 and -0)
  /// decides a comparison: which update wins then depends on the order, as under none. Complex
  /// mul and complex128 min / max have no atomic form and run deterministically.
  kAtomic,
};

/// scatter_multiaxis on the GPU (docs/spec.md section 4), into a caller-provided device output.
///
///     output = input;  output[target(o)] = combine(output[target(o)], updates[o])  for o in G
///
/// Same operands, options, validation and messages as scatter_multiaxis_into
/// (multigather/scatter.hpp), with every pointer in device memory of one device (output may be
/// input itself: in place). Shapes and strides in elements, any strides, stride 0 = broadcast.
/// One exception: an input of ONE element in host memory broadcast to its shape (every stride 0,
/// as a segment op's identity) is read on the host and the output filled with it on the device.
///
/// Steps, all enqueued on `stream`: (1) a kernel resolves every index (the same rules as the
/// gather kernel; drop = the update is skipped) into the target of each row of G; in
/// IndexMode::kError it raises a flag on a bad index, and the call synchronizes `stream` once
/// to read it, then returns the CPU core's exact OutOfRange message with the output untouched;
/// (2) output = input (skipped in place); (3) the combine (`determinism`). Clamp, wrap and drop
/// return right after enqueueing. Scratch memory (keys, values and the sort's buffers, about
/// 16-32 bytes per row of G) comes from cudaMallocAsync on `stream` and is freed on it.
///
/// Errors, besides those of scatter_multiaxis_into (checked first, same messages): output or
/// updates data not aligned to min(element size, 8) bytes, or indices not aligned to their
/// element size (InvalidArgument); no usable device (Internal, "no CUDA device is available");
/// host memory or operands on two devices (InvalidArgument, naming the operand); more than
/// 2^31 - 1 rows of G (InvalidArgument); a CUDA runtime failure (Internal, with its name).
/// The kernels run on the device that owns the pointers; `stream` must belong to it.
/// Example: torch.index_add_ of rows, out [V, D] float32 += src [N, D] at ids [N] int64:
///   const std::int64_t axes[] = {0};
///   ScatterOptions o; o.reduction = Reduction::kAdd;
///   Status s = scatter_multiaxis_cuda_into(out_view, TensorView(ids, DType::kInt64, {N, 1}),
///                                          src_view, axes, out_mutable_view, o, stream);
Status scatter_multiaxis_cuda_into(const TensorView& input, const TensorView& indices,
                                   const TensorView& updates, std::span<const std::int64_t> axes,
                                   const MutableTensorView& output, const ScatterOptions& options = {},
                                   void* stream = nullptr,
                                   ScatterDeterminism determinism = ScatterDeterminism::kDeterministic) noexcept;

}  // namespace multigather
