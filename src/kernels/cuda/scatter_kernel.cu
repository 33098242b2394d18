// The CUDA scatter kernels (scatter_rows.hpp has their bodies, run by the host tests too) and
// the deterministic sort between them, stable, so the rows of one target keep their row-major
// order: up to kSmallSortRows rows, one thread block's cub::BlockRadixSort, in place (one launch,
// no scratch memory); beyond, cub::DeviceRadixSort::SortPairs (onesweep: a histogram, a scan and
// a pass per 8 key bits, with their memsets and a stream-ordered scratch allocation).
#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/scatter_kernel.hpp"
#include "kernels/cuda/scatter_rows.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks

namespace multigather::detail {
namespace {

template <class Index, class Off>
__global__ void __launch_bounds__(kThreadsPerBlock)
scatter_keys_kernel(const __grid_constant__ CudaScatterParams s) {
  scatter_keys<Index, Off>(s, static_cast<Off>(blockIdx.x) * kThreadsPerBlock + static_cast<Off>(threadIdx.x),
                           static_cast<Off>(gridDim.x) * kThreadsPerBlock);
}

template <class Op, class Off, bool Atomic>
__global__ void __launch_bounds__(kThreadsPerBlock)
scatter_items_kernel(const __grid_constant__ CudaScatterParams s) {
  scatter_thread<Off>(s, static_cast<Off>(blockIdx.x) * kThreadsPerBlock + static_cast<Off>(threadIdx.x),
                      static_cast<Off>(gridDim.x) * kThreadsPerBlock,
                      [&](Off item, Off lane) { scatter_item<Op, Off, Atomic>(s, item, lane); });
}

template <int ElementBytes, class Off>
__global__ void __launch_bounds__(kThreadsPerBlock)
scatter_identity_kernel(const __grid_constant__ CudaScatterParams s) {
  scatter_thread<Off>(s, static_cast<Off>(blockIdx.x) * kThreadsPerBlock + static_cast<Off>(threadIdx.x),
                      static_cast<Off>(gridDim.x) * kThreadsPerBlock,
                      [&](Off item, Off lane) { scatter_identity_item<ElementBytes, Off>(s, item, lane); });
}

template <int UnitBytes>
__global__ void __launch_bounds__(kThreadsPerBlock) fill_kernel(const __grid_constant__ CudaFillParams f) {
  fill_thread<UnitBytes>(f, static_cast<std::int64_t>(blockIdx.x) * kThreadsPerBlock + threadIdx.x,
                         static_cast<std::int64_t>(gridDim.x) * kThreadsPerBlock);
}

cudaError_t launch(const void* kernel, std::int64_t blocks, const CudaScatterParams& s, cudaStream_t stream) {
  void* args[] = {const_cast<CudaScatterParams*>(&s)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock), args, 0, stream);
}

struct PickKeys {
  const void* kernel = nullptr;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    kernel = reinterpret_cast<const void*>(scatter_keys_kernel<Index, Off>);
  }
};

template <class Off>
cudaError_t combine(const CudaScatterParams& s, DType dtype, Reduction reduction, bool atomic,
                    std::int64_t blocks, cudaStream_t stream) {
  cudaError_t error = cudaSuccess;
  if (atomic && !s.include_input && reduction != Reduction::kNone) {
    const void* identity = nullptr;
    switch (element_size(dtype)) {
      case 1: identity = reinterpret_cast<const void*>(scatter_identity_kernel<1, Off>); break;
      case 2: identity = reinterpret_cast<const void*>(scatter_identity_kernel<2, Off>); break;
      case 4: identity = reinterpret_cast<const void*>(scatter_identity_kernel<4, Off>); break;
      case 8: identity = reinterpret_cast<const void*>(scatter_identity_kernel<8, Off>); break;
      case 16: identity = reinterpret_cast<const void*>(scatter_identity_kernel<16, Off>); break;
      default: return cudaErrorInvalidValue;
    }
    error = launch(identity, blocks, s, stream);
    if (error != cudaSuccess) return error;
  }
  const void* kernel = nullptr;
  const bool found = combine::visit_element_op(dtype, reduction, [&]<class Op>() {
    kernel = atomic ? reinterpret_cast<const void*>(scatter_items_kernel<Op, Off, true>)
                    : reinterpret_cast<const void*>(scatter_items_kernel<Op, Off, false>);
  });
  if (!found) return cudaErrorInvalidValue;
  return launch(kernel, blocks, s, stream);
}

// The one-block sort: kSmallSortThreads threads of kSmallSortItems<Off> rows each, in a blocked
// arrangement (thread t holds rows t * items ...), which BlockRadixSort's ranking keeps in order
// among equal keys (stable). Rows past n are padded with kDropped, which sorts after every key
// (launch_params: key_bits leaves kDropped's low bits above every key), and not written back.
constexpr int kSmallSortThreads = 512;
template <class Off>
constexpr int kSmallSortItems = sizeof(Off) == 4 ? 16 : 8;  // 32 or 64 KiB of keys and values

template <class Off>
__global__ void __launch_bounds__(kSmallSortThreads)
small_sort_kernel(std::make_unsigned_t<Off>* keys, Off* values, int n, int key_bits) {
  using Key = std::make_unsigned_t<Off>;
  constexpr int kItems = kSmallSortItems<Off>;
  using Sort = cub::BlockRadixSort<Key, kSmallSortThreads, kItems, Off>;
  __shared__ typename Sort::TempStorage temp;
  Key k[kItems];
  Off v[kItems];
  const int first = static_cast<int>(threadIdx.x) * kItems;
  MULTIGATHER_UNROLL
  for (int i = 0; i < kItems; ++i) {
    k[i] = first + i < n ? keys[first + i] : kDropped<Key>;
    v[i] = first + i < n ? values[first + i] : Off{0};
  }
  Sort(temp).Sort(k, v, 0, key_bits);  // reads every row before any is written back
  MULTIGATHER_UNROLL
  for (int i = 0; i < kItems; ++i) {
    if (first + i < n) {
      keys[first + i] = k[i];
      values[first + i] = v[i];
    }
  }
}

// Sorts (keys, values) of n rows by key, stably. The sorted arrays may land in a second buffer:
// *keys / *values then point at them, and *memory (stream-ordered) must be freed after their use.
template <class Off>
cudaError_t sort_pairs(std::make_unsigned_t<Off>** keys, Off** values, int n, int key_bits, void** memory,
                       cudaStream_t stream) {
  using Key = std::make_unsigned_t<Off>;
  if (n <= kSmallSortThreads * kSmallSortItems<Off>) {
    void* args[] = {keys, values, &n, &key_bits};
    return cudaLaunchKernel(reinterpret_cast<const void*>(small_sort_kernel<Off>), dim3(1), dim3(kSmallSortThreads),
                            args, 0, stream);
  }
  const auto bytes = static_cast<std::size_t>(n) * sizeof(Off);
  std::size_t scratch = 0;
  cub::DoubleBuffer<Key> sorted_keys(*keys, nullptr);
  cub::DoubleBuffer<Off> sorted_values(*values, nullptr);
  cudaError_t error = cub::DeviceRadixSort::SortPairs(nullptr, scratch, sorted_keys, sorted_values, n, 0, key_bits, stream);
  if (error != cudaSuccess) return error;
  // The second buffers, then CUB's scratch, in one stream-ordered allocation.
  error = cudaMallocAsync(memory, 2 * bytes + scratch, stream);
  if (error != cudaSuccess) return error;
  char* base = static_cast<char*>(*memory);
  sorted_keys.d_buffers[1] = reinterpret_cast<Key*>(base);
  sorted_values.d_buffers[1] = reinterpret_cast<Off*>(base + bytes);
  error = cub::DeviceRadixSort::SortPairs(base + 2 * bytes, scratch, sorted_keys, sorted_values, n, 0, key_bits, stream);
  *keys = sorted_keys.Current();
  *values = sorted_values.Current();
  return error;
}

// A scatter's rows sorted by target (sort_pairs on s's keys and values; *s then points at the
// sorted arrays).
template <class Off>
cudaError_t sort_rows(CudaScatterParams* s, void** memory, cudaStream_t stream) {
  auto* keys = static_cast<std::make_unsigned_t<Off>*>(s->keys);
  auto* values = static_cast<Off*>(s->values);
  const cudaError_t error = sort_pairs<Off>(&keys, &values, static_cast<int>(s->rows.rows), s->key_bits, memory, stream);
  s->keys = keys;
  s->values = values;
  return error;
}

template <class Off>
cudaError_t sort_and_combine(CudaScatterParams s, DType dtype, Reduction reduction, bool atomic,
                             std::int64_t blocks, cudaStream_t stream) {
  if (atomic) return combine<Off>(s, dtype, reduction, true, blocks, stream);
  void* memory = nullptr;
  cudaError_t error = sort_rows<Off>(&s, &memory, stream);
  if (error == cudaSuccess) error = combine<Off>(s, dtype, reduction, false, blocks, stream);
  if (memory != nullptr) {
    const cudaError_t freed = cudaFreeAsync(memory, stream);
    if (error == cudaSuccess) error = freed;
  }
  return error;
}

}  // namespace

cudaError_t launch_scatter_keys(const CudaScatterParams& s, int multiprocessors, cudaStream_t stream) noexcept {
  PickKeys pick;
  if (!visit_kernel_variant(s.rows, pick)) return cudaErrorInvalidValue;
  return launch(pick.kernel, scatter_key_blocks(s, multiprocessors), s, stream);
}

cudaError_t launch_fill(void* data, std::int64_t count, std::size_t element_bytes, const void* element,
                        int multiprocessors, cudaStream_t stream) noexcept {
  CudaFillParams f;
  make_cuda_fill_params(data, count, element_bytes, element, &f);
  if (f.units <= 0) return cudaSuccess;
  const void* kernel = nullptr;
  switch (f.unit_bytes) {
    case 1: kernel = reinterpret_cast<const void*>(fill_kernel<1>); break;
    case 2: kernel = reinterpret_cast<const void*>(fill_kernel<2>); break;
    case 4: kernel = reinterpret_cast<const void*>(fill_kernel<4>); break;
    case 8: kernel = reinterpret_cast<const void*>(fill_kernel<8>); break;
    case 16: kernel = reinterpret_cast<const void*>(fill_kernel<16>); break;
    default: return cudaErrorInvalidValue;
  }
  void* args[] = {const_cast<CudaFillParams*>(&f)};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(elementwise_blocks(f.units, multiprocessors))),
                          dim3(kThreadsPerBlock), args, 0, stream);
}

cudaError_t launch_stable_sort_pairs(std::uint64_t** keys, std::int64_t** values, std::int64_t n, int key_bits,
                                     void** memory, cudaStream_t stream) noexcept {
  *memory = nullptr;
  if (n > INT32_MAX) return cudaErrorInvalidValue;  // CUB's item count is an int
  if (n <= 1) return cudaSuccess;
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long));
  return sort_pairs<std::int64_t>(reinterpret_cast<std::make_unsigned_t<std::int64_t>**>(keys), values,
                                  static_cast<int>(n), key_bits, memory, stream);
}

cudaError_t launch_scatter_combine(const CudaScatterParams& s, DType dtype, Reduction reduction,
                                   bool deterministic, int multiprocessors, cudaStream_t stream) noexcept {
  if (s.rows.rows > INT32_MAX) return cudaErrorInvalidValue;  // CUB's item count is an int
  const bool atomic = combine::combines_atomically(dtype, reduction, deterministic);
  const std::int64_t blocks = launch_blocks(s.rows, multiprocessors);
  return s.rows.offsets32 ? sort_and_combine<std::int32_t>(s, dtype, reduction, atomic, blocks, stream)
                          : sort_and_combine<std::int64_t>(s, dtype, reduction, atomic, blocks, stream);
}

}  // namespace multigather::detail
