// The CUDA gather kernel family: one template over (unit width, index type, offset width) runs
// every normalized plan as rows of units (see launch_params.hpp). Index values are resolved
// here, under every index mode, and a bad value is never dereferenced.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/gather_kernel.hpp"

namespace multigather::detail {
namespace {

template <int UnitBytes> struct UnitOf;
template <> struct UnitOf<1> { using type = std::uint8_t; };
template <> struct UnitOf<2> { using type = std::uint16_t; };
template <> struct UnitOf<4> { using type = std::uint32_t; };
template <> struct UnitOf<8> { using type = uint2; };
template <> struct UnitOf<16> { using type = uint4; };

enum class Lookup { kOk, kFill, kBad };

// SPEC section 1 resolve(v, n), the same rules as the reference kernel (reference.cpp).
template <class Index>
__device__ __forceinline__ Lookup resolve(Index raw, std::int64_t size, IndexMode mode,
                                          bool negative, std::int64_t* out) {
  std::int64_t v;
  bool in_range;
  if constexpr (std::is_same_v<Index, std::uint64_t>) {
    in_range = raw < static_cast<std::uint64_t>(size);  // values above INT64_MAX stay huge
    v = in_range ? static_cast<std::int64_t>(raw) : 0;
  } else {
    v = static_cast<std::int64_t>(raw);
    if (negative && v < 0) v += size;
    in_range = v >= 0 && v < size;
  }
  if (in_range) {
    *out = v;
    return Lookup::kOk;
  }
  if (mode == IndexMode::kFill) return Lookup::kFill;
  if (size <= 0 || mode == IndexMode::kError) return Lookup::kBad;
  if (mode == IndexMode::kClamp) {
    *out = (std::is_signed_v<Index> && v < 0) ? 0 : size - 1;
  } else if constexpr (std::is_signed_v<Index>) {  // kWrap: floor modulo of the raw value
    std::int64_t w = static_cast<std::int64_t>(raw) % size;
    *out = w < 0 ? w + size : w;
  } else {
    *out = static_cast<std::int64_t>(static_cast<std::uint64_t>(raw) %
                                     static_cast<std::uint64_t>(size));
  }
  return Lookup::kOk;
}

// Quotient of a row/item number by a dimension size: multiply-high in 32-bit mode.
template <class Off>
__device__ __forceinline__ Off divide(Off n, std::int64_t divisor, const FastDivide& fast) {
  if constexpr (sizeof(Off) == 4) {
    return static_cast<Off>(fast.divide(static_cast<std::uint32_t>(n)));
  } else {
    return n / divisor;
  }
}

template <int UnitBytes, class Index, class Off>
__global__ void __launch_bounds__(kThreadsPerBlock)
gather_rows(const __grid_constant__ CudaGatherParams p) {
  using Unit = typename UnitOf<UnitBytes>::type;
  const auto* __restrict__ input = static_cast<const Unit*>(p.input);
  const auto* __restrict__ indices = static_cast<const Index*>(p.indices);
  auto* __restrict__ output = static_cast<Unit*>(p.output);
  const Off group = Off{1} << p.group_shift;
  const Off lane = static_cast<Off>(threadIdx.x) & (group - 1);
  const Off items = static_cast<Off>(p.items);
  const Off step = (static_cast<Off>(gridDim.x) * kThreadsPerBlock) >> p.group_shift;

  for (Off item = (static_cast<Off>(blockIdx.x) * kThreadsPerBlock + threadIdx.x) >> p.group_shift;
       item < items; item += step) {
    Off row = item, chunk = 0;
    if (p.chunks_per_row > 1) {
      row = divide(item, p.chunks_per_row, p.chunks_divide);
      chunk = item - row * static_cast<Off>(p.chunks_per_row);
    }
    // Row number -> outer coordinates -> offsets; the outermost coordinate needs no division.
    Off in_off = 0, ix_off = 0, out_off = 0, rest = row;
    for (int d = p.rank - 1; d >= 0; --d) {
      Off coord = rest;
      if (d > 0) {
        const Off q = divide(rest, p.shape[d], p.shape_divide[d]);
        coord = rest - q * static_cast<Off>(p.shape[d]);
        rest = q;
      }
      in_off += coord * static_cast<Off>(p.input_strides[d]);
      ix_off += coord * static_cast<Off>(p.indices_strides[d]);
      out_off += coord * static_cast<Off>(p.output_strides[d]);
    }
    Lookup row_lookup = Lookup::kOk;
    for (int j = 0; j < p.k; ++j) {
      const Index raw = __ldg(indices + ix_off + static_cast<Off>(j) * static_cast<Off>(p.coord_stride));
      std::int64_t v = 0;
      const Lookup l = resolve(raw, p.axis_sizes[j], p.index_mode, p.negative_indices, &v);
      if (l != Lookup::kOk) {
        if (l == Lookup::kBad || row_lookup == Lookup::kOk) row_lookup = l;
        continue;
      }
      in_off += static_cast<Off>(v) * static_cast<Off>(p.axis_strides[j]);
    }
    if (row_lookup == Lookup::kBad) {
      if (p.error_flag != nullptr) *p.error_flag = 1u;
      continue;  // nothing read from an invalid place, nothing written
    }
    const Off begin = chunk * static_cast<Off>(p.chunk_units);
    const Off row_units = static_cast<Off>(p.row_units);
    const Off end = begin + static_cast<Off>(p.chunk_units) < row_units
                        ? begin + static_cast<Off>(p.chunk_units) : row_units;
    Unit* dst = output + out_off;
    if (row_lookup == Lookup::kFill) {
      const auto* pattern = reinterpret_cast<const Unit*>(p.fill_pattern);
      for (Off u = begin + lane; u < end; u += group) dst[u] = pattern[u & (16 / UnitBytes - 1)];
      continue;
    }
    const Unit* src = input + in_off;
    Off u = begin + lane;
    if (u + (kUnitsPerThread - 1) * group < end) {  // a full item: all loads before the stores
      Unit v[kUnitsPerThread];
#pragma unroll
      for (int t = 0; t < kUnitsPerThread; ++t) v[t] = __ldg(src + u + t * group);
#pragma unroll
      for (int t = 0; t < kUnitsPerThread; ++t) dst[u + t * group] = v[t];
      continue;
    }
    for (; u < end; u += group) dst[u] = __ldg(src + u);
  }
}

using KernelFunction = void (*)(CudaGatherParams);

template <int UnitBytes, class Off>
KernelFunction pick_index(DType index_dtype) {
  switch (index_dtype) {
    case DType::kInt8: return gather_rows<UnitBytes, std::int8_t, Off>;
    case DType::kUInt8: return gather_rows<UnitBytes, std::uint8_t, Off>;
    case DType::kInt16: return gather_rows<UnitBytes, std::int16_t, Off>;
    case DType::kUInt16: return gather_rows<UnitBytes, std::uint16_t, Off>;
    case DType::kInt32: return gather_rows<UnitBytes, std::int32_t, Off>;
    case DType::kUInt32: return gather_rows<UnitBytes, std::uint32_t, Off>;
    case DType::kInt64: return gather_rows<UnitBytes, std::int64_t, Off>;
    case DType::kUInt64: return gather_rows<UnitBytes, std::uint64_t, Off>;
    default: return nullptr;
  }
}

template <class Off>
KernelFunction pick_unit(int unit_bytes, DType index_dtype) {
  switch (unit_bytes) {
    case 1: return pick_index<1, Off>(index_dtype);
    case 2: return pick_index<2, Off>(index_dtype);
    case 4: return pick_index<4, Off>(index_dtype);
    case 8: return pick_index<8, Off>(index_dtype);
    case 16: return pick_index<16, Off>(index_dtype);
    default: return nullptr;
  }
}

}  // namespace

cudaError_t launch_gather(const CudaGatherParams& params, int multiprocessors,
                          cudaStream_t stream) noexcept {
  const KernelFunction kernel = params.offsets32
                                    ? pick_unit<std::int32_t>(params.unit_bytes, params.index_dtype)
                                    : pick_unit<std::int64_t>(params.unit_bytes, params.index_dtype);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  // One item per thread group when that fits in a few waves; otherwise a grid-stride loop over
  // a grid that fills every multiprocessor several times.
  const std::int64_t threads = params.items << params.group_shift;
  std::int64_t blocks = (threads + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t max_blocks =
      static_cast<std::int64_t>(multiprocessors > 0 ? multiprocessors : 1) * 64;
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  void* args[] = {const_cast<CudaGatherParams*>(&params)};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
                          dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock), args, 0,
                          stream);
}

}  // namespace multigather::detail
