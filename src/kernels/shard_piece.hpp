// Internal: one device's piece of a call split along its gathered axes (execute_shard,
// multigather/sharding.hpp) on the engine that owns its operands, written once for the host and
// the device, as the CUDA engine runs it over grids (kernels/cuda/shard_piece_kernel.cu) and the
// host tests compare it with plan/sharding.cpp's localize / write_fill (the CPU's steps, whose
// results it repeats):
//   1. shard_piece_thread: each index element (C order over the lowering's indices) resolved by
//      the call's rule against the WHOLE axis, shifted into the piece, past it when it lies
//      outside the piece (the piece runs in mode fill / drop); an out-of-range index in error
//      mode (or of an empty axis in clamp / wrap) lowers *first_error to its position (the host
//      words it from a copy of the indices: the same first failure); a gather in mode fill marks
//      the logical position of an index out of range of the whole axis;
//   2. shard_fill_thread: the first piece writes the fill value at every core output element
//      whose logical index position was marked.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.hpp"
#include "core/index_resolve.hpp"
#include "multigather/dtype.hpp"
#include "multigather/options.hpp"
#include "multigather/tensor.hpp"  // kMaxRank

namespace multigather::detail {

/// Step 1: the lowering's indices (rank, shape and element strides: any layout) into `resolved`
/// (C-contiguous int64 of their shape).
struct ShardPieceParams {
  const void* indices = nullptr;
  DType dtype = DType::kInt64;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {}, strides[kMaxRank] = {};
  std::int64_t n = 0;  // elements
  int c = 1;           // coordinates per lookup (the last dimension holds them)
  int k = 0;           // axes
  std::int64_t whole[kMaxRank] = {}, offset[kMaxRank] = {}, piece[kMaxRank] = {};  // per axis
  IndexMode mode = IndexMode::kError;
  bool negative = true;
  bool gather_fill = false;                  // a gather in mode fill: mark out_of_range
  std::int64_t* resolved = nullptr;          // [n]
  std::uint8_t* out_of_range = nullptr;      // [n / c], zeroed by the caller (gather_fill)
  unsigned long long* first_error = nullptr;  // the smallest failing element (set to n before)
};

/// Step 2: the core output (shape and element strides from the framework output's data) and its
/// logical indices shape L (size 1 broadcasts).
struct ShardFillParams {
  void* output = nullptr;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {}, strides[kMaxRank] = {}, logical[kMaxRank] = {};
  std::int64_t n = 0;  // core output elements
  const std::uint8_t* out_of_range = nullptr;
  unsigned char value[16] = {};  // the fill value's bytes
  int element_bytes = 0;
};

namespace shard_piece {

template <class Index>
MULTIGATHER_HOST_DEVICE inline IndexResolution resolve_at(const void* base, std::int64_t at, const ShardPieceParams& p,
                                                          std::int64_t whole, std::int64_t* v) {
  return resolve_index(static_cast<const Index*>(base)[at], whole, p.mode, p.negative, v);
}

MULTIGATHER_HOST_DEVICE inline void lower_first_error(unsigned long long* first, unsigned long long e) {
#if defined(__CUDA_ARCH__)
  atomicMin(first, e);
#else
  if (e < *first) *first = e;
#endif
}

}  // namespace shard_piece

/// Step 1 over e = thread, thread + threads, ... < n.
MULTIGATHER_HOST_DEVICE inline void shard_piece_thread(const ShardPieceParams& p, std::int64_t thread,
                                                       std::int64_t threads) {
  for (std::int64_t e = thread; e < p.n; e += threads) {
    std::int64_t rest = e, at = 0, last = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const std::int64_t i = rest % p.shape[d];
      rest /= p.shape[d];
      at += i * p.strides[d];
      if (d == p.rank - 1) last = i;
    }
    const int j = p.rank == 0 ? 0 : static_cast<int>(last % p.c);
    if (j >= p.k) {
      p.resolved[e] = 0;
      continue;
    }
    const std::int64_t whole = p.whole[j], size = p.piece[j];
    std::int64_t v = 0;
    IndexResolution r = IndexResolution::kOutOfRange;
    switch (p.dtype) {
      case DType::kInt8: r = shard_piece::resolve_at<std::int8_t>(p.indices, at, p, whole, &v); break;
      case DType::kInt16: r = shard_piece::resolve_at<std::int16_t>(p.indices, at, p, whole, &v); break;
      case DType::kInt32: r = shard_piece::resolve_at<std::int32_t>(p.indices, at, p, whole, &v); break;
      case DType::kInt64: r = shard_piece::resolve_at<std::int64_t>(p.indices, at, p, whole, &v); break;
      case DType::kUInt8: case DType::kBool: r = shard_piece::resolve_at<std::uint8_t>(p.indices, at, p, whole, &v); break;
      case DType::kUInt16: r = shard_piece::resolve_at<std::uint16_t>(p.indices, at, p, whole, &v); break;
      case DType::kUInt32: r = shard_piece::resolve_at<std::uint32_t>(p.indices, at, p, whole, &v); break;
      case DType::kUInt64: r = shard_piece::resolve_at<std::uint64_t>(p.indices, at, p, whole, &v); break;
      default: break;  // not an index dtype: the lowering refused it
    }
    if (r == IndexResolution::kOutOfRange) {
      if (p.mode == IndexMode::kError || (whole == 0 && p.mode != IndexMode::kFill && p.mode != IndexMode::kDrop)) {
        shard_piece::lower_first_error(p.first_error, static_cast<unsigned long long>(e));
      } else if (p.gather_fill) {
        p.out_of_range[e / p.c] = 1;
      }
      v = size;  // past the piece: filled with 0 / dropped
    } else {
      v -= p.offset[j];
      if (v < 0 || v >= size) v = size;
    }
    p.resolved[e] = v;
  }
}

/// Step 2 over e = thread, thread + threads, ... < n (core output elements, C order).
MULTIGATHER_HOST_DEVICE inline void shard_fill_thread(const ShardFillParams& p, std::int64_t thread,
                                                      std::int64_t threads) {
  for (std::int64_t e = thread; e < p.n; e += threads) {
    std::int64_t rest = e, at = 0, q = 0, scale = 1;
    for (int d = p.rank - 1; d >= 0; --d) {
      const std::int64_t i = rest % p.shape[d];
      rest /= p.shape[d];
      at += i * p.strides[d];
      q += (p.logical[d] == 1 ? 0 : i) * scale;  // the logical position, C order over L
      scale *= p.logical[d];
    }
    if (p.out_of_range[q] == 0) continue;
    unsigned char* dst = static_cast<unsigned char*>(p.output) + at * p.element_bytes;
    for (int b = 0; b < p.element_bytes; ++b) dst[b] = p.value[b];
  }
}

}  // namespace multigather::detail
