// The public CUDA entry points (multigather/cuda.hpp): validate on the host exactly as the CPU
// core does, check that the pointers are device memory of one device, plan, launch. In error
// mode a flag in pinned host memory tells whether some index was bad; only then are the indices
// copied back and the reference kernel asked for the exact message.
#include <cuda_runtime.h>

#include <atomic>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_hooks.hpp"
#include "kernels/cpu/run_validated.hpp"

#include "kernels/cuda/divide_kernel.hpp"
#include "kernels/cuda/gathered_bags_kernel.hpp"
#include "kernels/cuda/segment_ids_kernel.hpp"
#include "kernels/cuda/shard_piece_kernel.hpp"
#include "kernels/cuda/updates_step_kernel.hpp"
#include "kernels/cuda/gather_kernel.hpp"
#include "kernels/cuda/scatter_kernel.hpp"
#include "kernels/cuda/vjp_kernel.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // visit_floating
#include "kernels/reference/reference.hpp"
#include "multigather/cuda.hpp"
#include "plan/plan.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather {
namespace {

Status cuda_failure(cudaError_t error, const char* what) {
  return Status(StatusCode::kInternal, std::string("CUDA ") + what + " failed: " +
                                           cudaGetErrorName(error) + " (" +
                                           cudaGetErrorString(error) + ")");
}

// The device that owns `data`, or an InvalidArgument naming the operand.
Status owning_device(const void* data, const char* name, int* device) {
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, data);
  if (error != cudaSuccess) {
    cudaGetLastError();  // so that a later cudaGetLastError does not report this one
    return InvalidArgument(std::string(name) + ".data is not a pointer the CUDA runtime knows (" +
                           cudaGetErrorString(error) + ")");
  }
  const bool device_visible =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged ||
      (attributes.type == cudaMemoryTypeHost && attributes.devicePointer == data);
  if (!device_visible) {
    return InvalidArgument(std::string(name) +
                           ".data is host memory; the CUDA backend needs device memory "
                           "(cudaMalloc, managed, or mapped pinned memory)");
  }
  *device = attributes.type == cudaMemoryTypeHost ? -1 : attributes.device;
  return Status::Ok();
}

struct Operand {
  const void* data;
  const char* name;
  bool used;
};

// Finds the one device that owns every used operand.
Status common_device(std::initializer_list<Operand> operands, int* device) {
  *device = -1;
  for (const Operand& operand : operands) {
    if (!operand.used) continue;
    int owner = -1;
    MULTIGATHER_RETURN_IF_ERROR(owning_device(operand.data, operand.name, &owner));
    if (owner < 0) continue;  // mapped host memory: visible from every device
    if (*device >= 0 && owner != *device) {
      return InvalidArgument(std::string(operand.name) + ".data is on CUDA device " +
                             std::to_string(owner) + " but another operand is on device " +
                             std::to_string(*device) + " (all operands must share one device)");
    }
    *device = owner;
  }
  if (*device < 0 && cudaGetDevice(device) != cudaSuccess) {  // only mapped host memory
    return Status(StatusCode::kInternal, "no current CUDA device");
  }
  return Status::Ok();
}

// The multiprocessor count of `device`, asked once per device.
Status multiprocessor_count(int device, int* count) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices] = {};
  if (device >= 0 && device < kCachedDevices) {
    *count = cached[device].load(std::memory_order_relaxed);
    if (*count > 0) return Status::Ok();
  }
  const cudaError_t error = cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, device);
  if (error != cudaSuccess) return cuda_failure(error, "device query");
  if (device >= 0 && device < kCachedDevices) cached[device].store(*count, std::memory_order_relaxed);
  return Status::Ok();
}

// The kernels load whole index values: indices.data must be aligned to its element size.
Status check_indices_aligned(const TensorView& indices) {
  const auto index_bytes = static_cast<std::uintptr_t>(element_size(indices.dtype));
  if (reinterpret_cast<std::uintptr_t>(indices.data) % index_bytes == 0) return Status::Ok();
  return InvalidArgument("indices.data is not aligned to its element size " +
                         std::to_string(index_bytes) + " (the CUDA backend loads whole indices)");
}

// Makes `device` current for the scope, restoring the caller's device afterwards.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      switched_ = cudaSetDevice(device) == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// The message path: copies the bytes `indices` spans back to the host (in stream order) and
// lets the reference kernel find the first bad index in output order.
Status message_from_indices(const TensorView& input, const TensorView& indices,
                            const detail::ValidatedCall& call, const GatherOptions& options,
                            cudaStream_t stream) {
  const auto is = static_cast<std::int64_t>(element_size(indices.dtype));
  std::int64_t low = 0, high = 0;  // element offsets reached, relative to indices.data
  for (int d = 0; d < indices.rank(); ++d) {
    const std::int64_t reach = indices.strides[d] * (indices.shape[d] - 1);
    (reach < 0 ? low : high) += reach;
  }
  const auto bytes = static_cast<std::size_t>((high - low + 1) * is);
  std::unique_ptr<std::byte[]> host(new (std::nothrow) std::byte[bytes]);
  if (!host) return Status(StatusCode::kInternal, "out of memory copying indices for a message");
  const auto* first = static_cast<const std::byte*>(indices.data) + low * is;
  cudaError_t error = cudaMemcpyAsync(host.get(), first, bytes, cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return cuda_failure(error, "copy of indices to the host");
  TensorView host_indices(host.get() - low * is, indices.dtype, indices.shape, indices.strides);
  // With a null output the reference reads only index values, never input.data.
  Status status = detail::reference_gather(input, host_indices, call, options, MutableTensorView{});
  if (status.ok()) {
    return Status(StatusCode::kInternal, "the CUDA kernel reported a bad index that the reference "
                                         "kernel does not find (please report this bug)");
  }
  return status;
}

// A per-thread flag in mapped pinned host memory: the kernel writes it on a bad index, the host
// reads it after the stream synchronization that error mode needs anyway.
class PinnedFlag {
 public:
  ~PinnedFlag() {
    if (flag_ != nullptr) cudaFreeHost(flag_);
  }
  std::uint32_t* get() {
    if (flag_ == nullptr) {
      void* p = nullptr;
      if (cudaHostAlloc(&p, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable) !=
          cudaSuccess) {
        return nullptr;
      }
      flag_ = static_cast<std::uint32_t*>(p);
    }
    return flag_;
  }

 private:
  std::uint32_t* flag_ = nullptr;
};

struct Prepared {
  detail::ValidatedCall call;
  detail::CudaGatherParams params;
  int device = 0;
  int multiprocessors = 0;
  bool empty = false;          // nothing to launch
  bool needs_message = false;  // fails regardless of index values (an empty indexed axis)
};

Status prepare(const TensorView& input, const TensorView& indices,
               std::span<const std::int64_t> axes, const MutableTensorView& output,
               const GatherOptions& options, Prepared* prep) {
  MULTIGATHER_RETURN_IF_ERROR(
      detail::validate_call(input, indices, axes, output, options, &prep->call));
  MULTIGATHER_RETURN_IF_ERROR(detail::check_no_overlap(output, input, indices, "output"));
  if (prep->call.shape.output_numel == 0) {
    prep->empty = true;
    return Status::Ok();
  }
  if (!axes.empty()) MULTIGATHER_RETURN_IF_ERROR(check_indices_aligned(indices));
  if (!cuda_device_available()) {
    return Status(StatusCode::kInternal, "no CUDA device is available");
  }
  detail::GatherPlan plan;
  detail::make_plan(input, indices, output, prep->call, options, &plan);
  MULTIGATHER_RETURN_IF_ERROR(common_device({{output.data, "output", true},
                                             {input.data, "input", input.numel() > 0},
                                             {indices.data, "indices", plan.k > 0}},
                                            &prep->device));
  for (int j = 0; j < plan.k; ++j) {
    if (plan.axis_sizes[static_cast<std::size_t>(j)] == 0 && options.index_mode != IndexMode::kFill) {
      prep->needs_message = true;
    }
  }
  detail::make_cuda_params(plan, &prep->params);
  return multiprocessor_count(prep->device, &prep->multiprocessors);
}

}  // namespace

bool cuda_device_available() noexcept {
  static const bool available = [] {
    int count = 0;
    const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError();  // a missing driver must not leave an error behind
    return ok;
  }();
  return available;
}

namespace {

// Validates, then enqueues the kernel (or, for a call that fails whatever the index values,
// returns its message). `*prep` tells the caller what was launched.
Status enqueue(const TensorView& input, const TensorView& indices,
               std::span<const std::int64_t> axes, const MutableTensorView& output,
               const GatherOptions& options, cudaStream_t stream, std::uint32_t* error_flag,
               Prepared* prep) {
  MULTIGATHER_RETURN_IF_ERROR(prepare(input, indices, axes, output, options, prep));
  if (prep->empty) return Status::Ok();
  DeviceScope scope(prep->device);
  if (prep->needs_message) return message_from_indices(input, indices, prep->call, options, stream);
  prep->params.error_flag = options.index_mode == IndexMode::kError ? error_flag : nullptr;
  const cudaError_t error = detail::launch_gather(prep->params, prep->multiprocessors, stream);
  if (error != cudaSuccess) return cuda_failure(error, "kernel launch");
  return Status::Ok();
}

}  // namespace

Status gather_multiaxis_cuda_enqueue(const TensorView& input, const TensorView& indices,
                                     std::span<const std::int64_t> axes,
                                     const MutableTensorView& output,
                                     const GatherOptions& options, void* stream,
                                     std::uint32_t* error_flag) noexcept {
  try {
    Prepared prep;
    return enqueue(input, indices, axes, output, options, static_cast<cudaStream_t>(stream),
                   error_flag, &prep);
  } catch (...) {  // std::bad_alloc from a message string
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

Status gather_multiaxis_cuda_into(const TensorView& input, const TensorView& indices,
                                  std::span<const std::int64_t> axes,
                                  const MutableTensorView& output, const GatherOptions& options,
                                  void* stream) noexcept {
  try {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    thread_local PinnedFlag pinned;
    std::uint32_t* flag = nullptr;
    if (options.index_mode == IndexMode::kError && cuda_device_available()) {
      flag = pinned.get();
      if (flag == nullptr) {
        return Status(StatusCode::kInternal, "CUDA pinned allocation of the error flag failed");
      }
      *reinterpret_cast<volatile std::uint32_t*>(flag) = 0;
    }
    Prepared prep;
    MULTIGATHER_RETURN_IF_ERROR(
        enqueue(input, indices, axes, output, options, cuda_stream, flag, &prep));
    if (flag == nullptr || prep.empty || prep.params.error_flag == nullptr) return Status::Ok();
    const cudaError_t error = cudaStreamSynchronize(cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "gather kernel");
    if (*reinterpret_cast<volatile std::uint32_t*>(flag) == 0) return Status::Ok();
    DeviceScope scope(prep.device);
    return message_from_indices(input, indices, prep.call, options, cuda_stream);
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

namespace {

// A copy of `from` into `to` (same shape) on the device: one memcpy when both are contiguous,
// else a gather with no axes.
Status copy_on_device(const TensorView& from, const MutableTensorView& to, cudaStream_t stream) {
  if (from.numel() == 0) return Status::Ok();
  if (from.is_contiguous() && TensorView(to).is_contiguous()) {
    const cudaError_t error = cudaMemcpyAsync(to.data, from.data,
                                              static_cast<std::size_t>(from.numel()) * element_size(from.dtype),
                                              cudaMemcpyDeviceToDevice, stream);
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "copy of input to output");
  }
  return gather_multiaxis_cuda_enqueue(from, detail::no_axes_indices(from.rank()), {}, to, GatherOptions{},
                                       stream, nullptr);
}

// Stream-ordered device memory, freed on the stream when it goes out of scope.
class StreamBuffer {
 public:
  explicit StreamBuffer(cudaStream_t stream) : stream_(stream) {}
  ~StreamBuffer() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  cudaError_t allocate(std::size_t bytes) { return cudaMallocAsync(&data_, bytes, stream_); }
  char* get() const { return static_cast<char*>(data_); }

 private:
  cudaStream_t stream_;
  void* data_ = nullptr;
};

}  // namespace

}  // namespace multigather

namespace multigather::detail {

bool cuda_engine_built() noexcept { return true; }

bool is_cuda_pointer(const void* data) noexcept {
  if (data == nullptr || !cuda_device_available()) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

Status copy_view_to_host(const TensorView& view, std::vector<std::byte>* storage,
                         TensorView* host) noexcept {
  try {
    std::uintptr_t first = 0, last = 0;
    *host = view;
    if (!byte_range(view, &first, &last)) return Status::Ok();
    storage->resize(static_cast<std::size_t>(last - first + 1));
    const cudaError_t error = cudaMemcpy(storage->data(), reinterpret_cast<const void*>(first),
                                         storage->size(), cudaMemcpyDeviceToHost);
    if (error != cudaSuccess) return cuda_failure(error, "copy of the indices to the host");
    const auto offset = reinterpret_cast<std::uintptr_t>(view.data) - first;
    host->data = storage->data() + offset;
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while copying the indices to the host");
  }
}

namespace {

/// Whether `v` is ONE element in host memory broadcast to its shape (every stride of a dimension
/// longer than 1 is 0): the device cannot read it, so it is filled in (fill_on_device).
bool host_broadcast_element(const TensorView& v) {
  if (v.numel() == 0 || v.data == nullptr || is_cuda_pointer(v.data)) return false;
  for (int d = 0; d < v.rank(); ++d) {
    if (v.shape[d] > 1 && v.strides[d] != 0) return false;
  }
  return true;
}

/// `to` set to the one host element of `from` (host_broadcast_element): the fill kernel, into
/// `to` when it is contiguous, else into a contiguous scratch copied into it.
Status fill_on_device(const TensorView& from, const MutableTensorView& to, int multiprocessors, cudaStream_t stream) {
  if (to.numel() == 0) return Status::Ok();
  const std::size_t es = element_size(to.dtype);
  const TensorView target(to.data, to.dtype, to.shape, to.strides);
  StreamBuffer scratch(stream);
  void* dense = to.data;
  if (!target.is_contiguous()) {
    const cudaError_t error = scratch.allocate(static_cast<std::size_t>(to.numel()) * es);
    if (error != cudaSuccess) return cuda_failure(error, "allocation of the output's starting values");
    dense = scratch.get();
  }
  const cudaError_t error = launch_fill(dense, to.numel(), es, from.data, multiprocessors, stream);
  if (error != cudaSuccess) return cuda_failure(error, "fill kernel launch");
  if (dense == to.data) return Status::Ok();
  return copy_on_device(TensorView(dense, to.dtype, to.shape), to, stream);
}

}  // namespace

}  // namespace multigather::detail

namespace multigather::detail {

Status run_scatter_validated_cuda(const TensorView& input, const TensorView& indices,
                                  const MutableTensorView& output, const ValidatedScatter& call,
                                  const ScatterOptions& options, void* stream_handle, bool deterministic,
                                  const TensorView* base, const MutableTensorView* base_output) noexcept {
  try {
    const auto stream = static_cast<cudaStream_t>(stream_handle);
    const bool partial = base != nullptr && base_output != nullptr;
    const bool in_place = partial ? scatters_in_place(*base_output, *base) : scatters_in_place(output, input);
    if (!cuda_device_available()) return Status(StatusCode::kInternal, "no CUDA device is available");
    const std::int64_t es = static_cast<std::int64_t>(element_size(input.dtype));
    const bool has_rows = call.gather.shape.output_numel > 0;
    CudaScatterParams params;
    if (has_rows) make_cuda_scatter_params(output, indices, call, options, &params);
    const bool reads_indices = has_rows && params.rows.k > 0;
    // The element loads and (atomic) read-modify-writes need aligned elements.
    const auto aligned = [](const void* p, std::int64_t bytes) {
      return reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(bytes) == 0;
    };
    const std::int64_t element_align = es < 8 ? es : 8;
    if (has_rows) {
      if (!aligned(output.data, element_align) || !aligned(call.updates.data, element_align)) {
        return InvalidArgument(std::string(aligned(output.data, element_align) ? "updates" : "output") +
                               ".data is not aligned to " + std::to_string(element_align) +
                               " bytes (the CUDA scatter combines whole, aligned elements)");
      }
      if (reads_indices) MULTIGATHER_RETURN_IF_ERROR(check_indices_aligned(indices));
    }
    // An input of ONE element in host memory, broadcast to the output (a segment op's identity,
    // torch.segment_reduce's initial): the output starts as that element, filled on the device.
    const bool host_constant = !partial && !in_place && host_broadcast_element(input);
    int device = -1;
    MULTIGATHER_RETURN_IF_ERROR(common_device({{output.data, "output", output.numel() > 0},
                                               {input.data, "input", !in_place && !host_constant && input.numel() > 0},
                                               {indices.data, "indices", reads_indices},
                                               {call.updates.data, "updates", has_rows}},
                                              &device));
    DeviceScope scope(device);
    int multiprocessors = 0;
    MULTIGATHER_RETURN_IF_ERROR(multiprocessor_count(device, &multiprocessors));
    auto copy_input = [&]() -> Status {
      if (in_place) return Status::Ok();
      if (host_constant) return fill_on_device(input, output, multiprocessors, stream);
      return partial ? copy_on_device(*base, *base_output, stream) : copy_on_device(input, output, stream);
    };
    if (!has_rows) return copy_input();

    if (params.rows.rows > INT32_MAX) {  // refused before anything runs (CUB's item count is an int)
      return InvalidArgument("the CUDA scatter handles at most 2^31 - 1 rows of G (got " +
                             std::to_string(params.rows.rows) + ")");
    }

    // 1. Keys and update offsets of every row; in error mode the flag, read before any write.
    const std::size_t offset_bytes = params.rows.offsets32 ? 4 : 8;
    StreamBuffer scratch(stream);
    cudaError_t error = scratch.allocate(2 * static_cast<std::size_t>(params.rows.rows) * offset_bytes);
    if (error != cudaSuccess) return cuda_failure(error, "allocation of the scatter's keys");
    params.keys = scratch.get();
    params.values = scratch.get() + static_cast<std::size_t>(params.rows.rows) * offset_bytes;
    thread_local PinnedFlag pinned;
    std::uint32_t* flag = nullptr;
    if (options.index_mode == IndexMode::kError) {
      flag = pinned.get();
      if (flag == nullptr) return Status(StatusCode::kInternal, "CUDA pinned allocation of the error flag failed");
      *reinterpret_cast<volatile std::uint32_t*>(flag) = 0;
      params.rows.error_flag = flag;
    }
    error = launch_scatter_keys(params, multiprocessors, stream);
    if (error != cudaSuccess) return cuda_failure(error, "scatter key kernel launch");
    if (flag != nullptr) {
      error = cudaStreamSynchronize(stream);
      if (error != cudaSuccess) return cuda_failure(error, "scatter key kernel");
      if (*reinterpret_cast<volatile std::uint32_t*>(flag) != 0) {
        const TensorView targets(output.data, output.dtype, output.shape, output.strides);
        return message_from_indices(targets, indices, call.gather, gather_options_of(options), stream);
      }
    }
    // 2. output = input (a partial write: the whole base). 3. The combine.
    MULTIGATHER_RETURN_IF_ERROR(copy_input());
    error = launch_scatter_combine(params, input.dtype, call.reduction, deterministic, multiprocessors, stream);
    if (error != cudaSuccess) return cuda_failure(error, "scatter kernel launch");
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

}  // namespace multigather::detail

namespace multigather {

Status scatter_multiaxis_cuda_into(const TensorView& input, const TensorView& indices,
                                   const TensorView& updates, std::span<const std::int64_t> axes,
                                   const MutableTensorView& output, const ScatterOptions& options,
                                   void* stream, ScatterDeterminism determinism) noexcept {
  detail::ValidatedScatter call;
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_operands(input, indices, updates, axes, options, &call));
  MULTIGATHER_RETURN_IF_ERROR(detail::validate_scatter_output(output, input, indices, updates, call, "output"));
  return detail::run_scatter_validated_cuda(input, indices, output, call, options, stream,
                                            determinism == ScatterDeterminism::kDeterministic);
}

}  // namespace multigather

// ---- The VJPs' device steps (cuda_hooks.hpp; api/transforms.cpp runs the VJPs) -----------------

namespace multigather::detail {

Status cuda_memset_async(void* data, int value, std::size_t bytes, const char* name, void* stream) noexcept {
  try {
    if (bytes == 0) return Status::Ok();
    int device = -1;
    MULTIGATHER_RETURN_IF_ERROR(common_device({{data, name, true}}, &device));
    DeviceScope scope(device);
    const cudaError_t error = cudaMemsetAsync(data, value, bytes, static_cast<cudaStream_t>(stream));
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "memset of a gradient");
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

Status cuda_copy_async(void* to, const char* to_name, const void* from, const char* from_name, std::size_t bytes,
                       void* stream) noexcept {
  try {
    if (bytes == 0) return Status::Ok();
    int device = -1;
    MULTIGATHER_RETURN_IF_ERROR(common_device({{to, to_name, true}, {from, from_name, true}}, &device));
    DeviceScope scope(device);
    const cudaError_t error =
        cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream));
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "copy of a gradient");
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

CudaStreamMemory::~CudaStreamMemory() {
  if (data_ == nullptr) return;
  DeviceScope scope(device_);
  cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
}

Status CudaStreamMemory::allocate(std::size_t bytes, const void* near, const char* near_name, void* stream) noexcept {
  try {
    if (data_ != nullptr) return Status(StatusCode::kInternal, "CudaStreamMemory allocated twice");
    MULTIGATHER_RETURN_IF_ERROR(common_device({{near, near_name, true}}, &device_));
    DeviceScope scope(device_);
    const cudaError_t error = cudaMallocAsync(&data_, bytes > 0 ? bytes : 16, static_cast<cudaStream_t>(stream));
    if (error != cudaSuccess) {
      data_ = nullptr;
      return cuda_failure(error, "allocation of a gradient's scratch memory");
    }
    stream_ = stream;
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

namespace {

/// A CUDA hook's body: `launch(multiprocessors)` (a cudaError_t, or a Status) on the one device
/// that owns `operands` (common_device), with the hooks' error mapping (`what`: the step a failed
/// CUDA call names).
template <class Launch>
Status on_device_of(std::initializer_list<Operand> operands, const char* what, Launch&& launch) noexcept {
  try {
    int device = -1, multiprocessors = 0;
    MULTIGATHER_RETURN_IF_ERROR(common_device(operands, &device));
    DeviceScope scope(device);
    MULTIGATHER_RETURN_IF_ERROR(multiprocessor_count(device, &multiprocessors));
    const auto result = launch(multiprocessors);
    if constexpr (std::is_same_v<std::decay_t<decltype(result)>, Status>) {
      return result;
    } else {
      return result == cudaSuccess ? Status::Ok() : cuda_failure(result, what);
    }
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory in the CUDA backend");
  }
}

}  // namespace

bool cuda_has_division(DType dtype, bool sqrt_count) noexcept {
  return visit_divide(dtype, sqrt_count, []<class Op>() {});
}

Status cuda_count_updates(const MutableTensorView& counts, const TensorView& indices,
                          std::span<const std::int64_t> axes, const ScatterOptions& options, void* stream) noexcept {
  if (counts.numel() == 0) return Status::Ok();
  return on_device_of({{counts.data, "counts", true}}, "update counts", [&](int multiprocessors) -> Status {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    cudaError_t error = cudaMemsetAsync(counts.data, 0, static_cast<std::size_t>(counts.numel()) * 8, cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "memset of the update counts");
    StreamBuffer one(cuda_stream);  // the int64 1 every update adds, broadcast
    error = one.allocate(8);
    if (error != cudaSuccess) return cuda_failure(error, "allocation of the update counts' one");
    static const std::int64_t kOne = 1;
    error = launch_fill(one.get(), 1, 8, &kOne, multiprocessors, cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "fill kernel launch");
    const int r = counts.rank();
    const TensorView ones(one.get(), DType::kInt64, Dims::filled(r, 1), Dims::filled(r, 0));
    ScatterOptions add = options;
    add.reduction = Reduction::kAdd;
    add.include_input = true;
    return scatter_multiaxis_cuda_into(TensorView(counts), indices, ones, axes, counts, add, stream,
                                       ScatterDeterminism::kAtomic);  // integer sums: any order, same counts
  });
}

Status cuda_divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input,
                            bool sqrt_count, void* stream) noexcept {
  if (!cuda_has_division(output.dtype, sqrt_count)) {
    return InvalidArgument(std::string(sqrt_count ? "sqrt_n" : "a mean") + " needs a dtype with division (got " +
                           std::string(dtype_name(output.dtype)) + ")");
  }
  if (output.numel() == 0) return Status::Ok();
  const std::initializer_list<Operand> operands = {{output.data, "output", true}, {count.data, "count", true}};
  return on_device_of(operands, "mean division kernel launch", [&](int multiprocessors) {
    CudaDivideParams p;
    p.out = output.data;
    p.count = static_cast<const std::int64_t*>(count.data);
    p.numel = output.numel();
    p.rank = output.rank();
    for (int d = 0; d < p.rank; ++d) {
      p.shape[d] = output.shape[d];
      p.out_strides[d] = output.strides[d];
      p.count_strides[d] = count.strides[d];
    }
    p.extra = include_input ? 1 : 0;
    p.sqrt_count = sqrt_count;
    return launch_divide(p, output.dtype, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}


Status cuda_updates_step(const UpdatesStepParams& p, DType dtype, bool negate, void* stream) noexcept {
  if (!visit_updates_step(dtype, negate, []<class Op>() {})) {
    return InvalidArgument(std::string(negate ? "the negation" : "the scale") + " of the updates has no form for dtype " +
                           std::string(dtype_name(dtype)));
  }
  if (p.numel == 0) return Status::Ok();
  const std::initializer_list<Operand> operands = {{p.to, "updates step", true}, {p.from, "updates", true}};
  return on_device_of(operands, "updates step kernel launch", [&](int multiprocessors) {
    return launch_updates_step(p, dtype, negate, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

namespace {

/// embedding_bag's passes 1 and 2 (table rows [N], then bag starts [B + 1], int64) into
/// `scratch`, which holds `extra` bytes more after them (8-aligned) for the caller; the checks'
/// flag read back (one synchronization) into *failed.
Status bag_index_on_device(const GatheredRows& g, StreamBuffer* scratch, std::size_t extra, bool* failed,
                           int multiprocessors, cudaStream_t stream) {
  const std::int64_t n = g.ids.numel();
  const std::size_t index_bytes = static_cast<std::size_t>(n + g.bags + 1) * 8;
  cudaError_t error = scratch->allocate(index_bytes + extra + 8);
  char* flag_at = scratch->get() + index_bytes + extra;
  if (error == cudaSuccess) error = cudaMemsetAsync(flag_at, 0, 4, stream);
  if (error != cudaSuccess) return cuda_failure(error, "allocation of embedding_bag's rows and bag starts");
  auto* rows = reinterpret_cast<std::int64_t*>(scratch->get());
  auto* flag = reinterpret_cast<std::uint32_t*>(flag_at);
  error = launch_bag_index(bag_index_params(g, rows, rows + n, flag), multiprocessors, stream);
  if (error != cudaSuccess) return cuda_failure(error, "embedding_bag check kernel launch");
  std::uint32_t host_flag = 0;
  error = cudaMemcpyAsync(&host_flag, flag, 4, cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return cuda_failure(error, "read of embedding_bag's check flag");
  *failed = host_flag != 0;
  return Status::Ok();
}

Status no_bags_kernel(DType dtype) {
  return InvalidArgument("embedding_bag: weight dtype " + std::string(dtype_name(dtype)) +
                         " has no fused kernel on the device");
}

}  // namespace

Status cuda_gathered_bags(const GatheredRows& g, const MutableTensorView& bags, bool mean, bool max, bool* failed,
                          void* stream) noexcept {
  *failed = false;
  if (!visit_floating(g.table.dtype, []<class E>() {})) return no_bags_kernel(g.table.dtype);
  const std::int64_t n = g.ids.numel();
  const std::initializer_list<Operand> operands = {
      {bags.data, "output", bags.numel() > 0}, {g.table.data, "weight", g.table.numel() > 0},
      {g.ids.data, "input", n > 0}, {g.offsets.data, "offsets", g.offsets.data != nullptr && g.offsets.numel() > 0},
      {g.scale.data, "per_sample_weights", g.scale.data != nullptr && n > 0}};
  return on_device_of(operands, "embedding_bag", [&](int multiprocessors) -> Status {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    StreamBuffer scratch(cuda_stream);
    MULTIGATHER_RETURN_IF_ERROR(bag_index_on_device(g, &scratch, 0, failed, multiprocessors, cuda_stream));
    if (*failed) return Status::Ok();
    const auto* rows = reinterpret_cast<const std::int64_t*>(scratch.get());
    const cudaError_t error = launch_gathered_bags(gathered_bags_params(g, rows, rows + n, bags, mean, max),
                                                   g.table.dtype, multiprocessors, cuda_stream);
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "embedding_bag kernel launch");
  });
}

Status cuda_gathered_bags_vjp(const GatheredRows& g, const TensorView& table, const TensorView& grad_output,
                              const MutableTensorView& grad_table, bool mean, bool max, bool* failed,
                              void* stream) noexcept {
  *failed = false;
  if (!visit_floating(grad_table.dtype, []<class E>() {})) return no_bags_kernel(grad_table.dtype);
  const std::int64_t n = g.ids.numel();
  const std::initializer_list<Operand> operands = {
      {grad_table.data, "grad_weight", grad_table.numel() > 0}, {grad_output.data, "grad_output", grad_output.numel() > 0},
      {table.data, "weight", max && table.numel() > 0}, {g.ids.data, "input", n > 0},
      {g.offsets.data, "offsets", g.offsets.data != nullptr && g.offsets.numel() > 0},
      {g.scale.data, "per_sample_weights", g.scale.data != nullptr && n > 0}};
  return on_device_of(operands, "embedding_bag gradient", [&](int multiprocessors) -> Status {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    // after rows and bag starts: bag_of [N] and counts [B] (sum / mean), keys and values [K]
    const std::int64_t k = max ? grad_output.shape[0] * grad_output.shape[1] : n;
    const std::int64_t per_bag = max ? 0 : n + grad_output.shape[0];
    StreamBuffer scratch(cuda_stream);
    MULTIGATHER_RETURN_IF_ERROR(bag_index_on_device(g, &scratch, static_cast<std::size_t>(per_bag + 2 * k) * 8, failed,
                                                    multiprocessors, cuda_stream));
    if (*failed) return Status::Ok();
    auto* rows = reinterpret_cast<std::int64_t*>(scratch.get());
    GatheredBagsVjpParams p =
        gathered_bags_vjp_params(g, table, grad_output, grad_table, rows, rows + n, mean, max);
    std::int64_t* after = rows + n + g.bags + 1;
    if (!max) {
      p.bag_of = after;
      p.counts = after + n;
    }
    p.keys = reinterpret_cast<std::uint64_t*>(after + per_bag);
    p.values = after + per_bag + k;
    const cudaError_t error = launch_gathered_bags_vjp(p, grad_table.dtype, multiprocessors, cuda_stream);
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "embedding_bag gradient kernel launch");
  });
}

Status cuda_prod_gradient(const ProdGradientParams& p, DType dtype, bool zeros_step, void* stream) noexcept {
  if (!visit_floating(dtype, []<class E>() {})) {
    return InvalidArgument("a segment product's gradient: dtype " + std::string(dtype_name(dtype)) +
                           " is not a floating type");
  }
  if (p.n <= 0) return Status::Ok();
  const std::initializer_list<Operand> operands = {{p.data, "data", true},
                                                   {zeros_step ? p.non_zero : p.grad, "gradient", true}};
  return on_device_of(operands, "segment product gradient kernel launch", [&](int multiprocessors) {
    return launch_prod_gradient(p, dtype, zeros_step, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_segment_ids(SegmentIdsParams p, std::uint64_t* first_error, void* stream) noexcept {
  *first_error = kNoSegmentIdsError;
  if (p.bound_rows == 0 && p.rows * p.n == 0) return Status::Ok();
  const std::initializer_list<Operand> operands = {
      {p.bounds, "segment boundaries", p.bound_rows > 0 && p.k > 0}, {p.ids, "segment ids", p.rows * p.n > 0},
      {p.starts, "segment starts", p.starts != nullptr}};
  return on_device_of(operands, "segment ids", [&](int multiprocessors) -> Status {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    StreamBuffer word(cuda_stream);  // pass 1's smallest failure code
    cudaError_t error = word.allocate(sizeof(std::uint64_t));
    if (error == cudaSuccess) error = cudaMemsetAsync(word.get(), 0xFF, sizeof(std::uint64_t), cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "allocation of the segment ids' check word");
    p.first_error = reinterpret_cast<std::uint64_t*>(word.get());
    error = launch_segment_ids_check(p, multiprocessors, cuda_stream);
    if (error == cudaSuccess) error = launch_segment_ids(p, multiprocessors, cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "segment ids kernel launch");
    error = cudaMemcpyAsync(first_error, word.get(), sizeof(std::uint64_t), cudaMemcpyDeviceToHost, cuda_stream);
    if (error == cudaSuccess) error = cudaStreamSynchronize(cuda_stream);
    return error == cudaSuccess ? Status::Ok() : cuda_failure(error, "read of the segment ids' check word");
  });
}

Status cuda_shard_piece(ShardPieceParams p, std::int64_t* first_error, void* stream) noexcept {
  *first_error = p.n;
  if (p.n <= 0) return Status::Ok();
  const std::initializer_list<Operand> operands = {
      {p.indices, "indices", true}, {p.resolved, "the piece's indices", true},
      {p.out_of_range, "the piece's fill marks", p.gather_fill}};
  return on_device_of(operands, "split call's piece", [&](int multiprocessors) -> Status {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    StreamBuffer word(cuda_stream);  // the smallest failing element
    const auto none = static_cast<unsigned long long>(p.n);
    cudaError_t error = word.allocate(sizeof(none));
    if (error == cudaSuccess) error = cudaMemcpyAsync(word.get(), &none, sizeof(none), cudaMemcpyHostToDevice, cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "allocation of the piece's check word");
    p.first_error = reinterpret_cast<unsigned long long*>(word.get());
    error = launch_shard_piece(p, multiprocessors, cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "split call's piece kernel launch");
    unsigned long long first = none;
    error = cudaMemcpyAsync(&first, word.get(), sizeof(first), cudaMemcpyDeviceToHost, cuda_stream);
    if (error == cudaSuccess) error = cudaStreamSynchronize(cuda_stream);
    if (error != cudaSuccess) return cuda_failure(error, "read of the piece's check word");
    *first_error = static_cast<std::int64_t>(first);
    return Status::Ok();
  });
}

Status cuda_shard_fill(const ShardFillParams& p, void* stream) noexcept {
  if (p.n <= 0) return Status::Ok();
  return on_device_of({{p.output, "output", true}, {p.out_of_range, "the piece's fill marks", true}},
                      "split call's fill kernel launch", [&](int multiprocessors) {
    return launch_shard_fill(p, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_fill(void* data, std::int64_t count, std::size_t element_bytes, const void* element, const char* name,
                 void* stream) noexcept {
  if (count <= 0) return Status::Ok();
  return on_device_of({{data, name, true}}, "fill kernel launch", [&](int multiprocessors) {
    return launch_fill(data, count, element_bytes, element, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_ties(const void* data, const void* picked, DType dtype, std::int64_t* tie, std::int64_t count,
                 void* stream) noexcept {
  if (!visit_floating(dtype, []<class E>() {})) {
    return InvalidArgument("ties: dtype " + std::string(dtype_name(dtype)) + " is not a floating type");
  }
  if (count <= 0) return Status::Ok();
  return on_device_of({{tie, "ties", true}}, "ties kernel launch", [&](int multiprocessors) {
    return launch_ties(data, picked, dtype, tie, count, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_positions_where(const std::int64_t* flag, std::int64_t none, std::int64_t* out, std::int64_t count,
                            void* stream) noexcept {
  if (count <= 0) return Status::Ok();
  return on_device_of({{out, "positions", true}}, "positions kernel launch", [&](int multiprocessors) {
    return launch_positions_where(flag, none, out, count, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_at_itself(const std::int64_t* at, std::int64_t* flag, std::int64_t count, void* stream) noexcept {
  if (count <= 0) return Status::Ok();
  return on_device_of({{flag, "ties", true}}, "first-tie kernel launch", [&](int multiprocessors) {
    return launch_at_itself(at, flag, count, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_positions(std::int64_t* positions, std::int64_t count, void* stream) noexcept {
  if (count <= 0) return Status::Ok();
  return on_device_of({{positions, "positions", true}}, "positions kernel launch", [&](int multiprocessors) {
    return launch_positions(positions, count, multiprocessors, static_cast<cudaStream_t>(stream));
  });
}

Status cuda_keep_winners(void* grad, DType dtype, const std::int64_t* won, std::int64_t count,
                         void* stream) noexcept {
  if (count <= 0) return Status::Ok();
  return on_device_of({{grad, "grad_updates", true}, {won, "won", true}}, "winner mask kernel launch",
                      [&](int multiprocessors) {
                        return launch_keep_winners(grad, static_cast<int>(element_size(dtype)), won, count,
                                                   multiprocessors, static_cast<cudaStream_t>(stream));
                      });
}

}  // namespace multigather::detail
