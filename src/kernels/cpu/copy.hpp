// Internal: the copy stage of the CPU kernels, templated only on the element width (1, 2, 4, 8
// or 16 bytes) and the offset type. A run of resolved lookups is copied as single elements
// (with software prefetch ahead of the random reads), as small blocks (width-specialized
// loops below 64 bytes) or as large blocks (memcpy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace multigather::detail::cpu {

/// Lookups resolved ahead of the one being copied by the element loop (software prefetch).
inline constexpr int kPrefetchDistance = 32;
/// Blocks of at least this many bytes are copied with memcpy.
inline constexpr std::int64_t kMemcpyBlockBytes = 64;
/// Element gathers whose lookups span less input than this (a GatherElements row, a small
/// table) read from the caches: no software prefetch.
inline constexpr std::int64_t kPrefetchSpanBytes = std::int64_t{256} << 10;

/// Where a run of resolved lookups is copied from and to.
struct CopyRun {
  const std::byte* input = nullptr;  // the run's input base; lookup t reads at offsets[t]
  std::byte* output = nullptr;       // lookup t writes at output + t * output_step
  std::int64_t output_step = 0;      // bytes
  std::int64_t block = 1;            // elements per lookup
  const std::byte* fill = nullptr;   // one element: the fill value (kFill)
};

template <class Offset>
using CopyFn = void (*)(const CopyRun&, const Offset*, const std::uint8_t*, int);

/// One element per lookup. kPrefetch: the lookups spread over more memory than the caches hold.
template <std::size_t W, class Offset, bool kFill, bool kPrefetch = true>
void copy_elements(const CopyRun& r, const Offset* offsets, const std::uint8_t* fill, int m) {
  // Locals, so that the stores through `output` cannot be taken to alias the run's fields.
  const std::byte* const input = r.input;
  std::byte* const output = r.output;
  const std::int64_t step = r.output_step;
  const std::byte* const fill_value = r.fill;
  auto src_of = [&](int t) { return input + static_cast<std::int64_t>(offsets[t]) * std::int64_t{W}; };
  auto one = [&](int t) {
    const std::byte* src = src_of(t);
    if constexpr (kFill) src = fill[t] ? fill_value : src;
    std::memcpy(output + t * step, src, W);
  };
  int t = 0;
  if constexpr (kPrefetch) {
    const int ahead = m < kPrefetchDistance ? m : kPrefetchDistance;
    for (int a = 0; a < ahead; ++a) __builtin_prefetch(src_of(a));
    for (; t + kPrefetchDistance < m; ++t) {
      __builtin_prefetch(src_of(t + kPrefetchDistance));
      one(t);
    }
  }
  for (; t < m; ++t) one(t);
}

/// Blocks below kMemcpyBlockBytes: a loop of W-byte moves.
template <std::size_t W, class Offset, bool kFill>
void copy_small_blocks(const CopyRun& r, const Offset* offsets, const std::uint8_t* fill, int m) {
  const std::byte* const input = r.input;
  std::byte* const output = r.output;
  const std::int64_t step = r.output_step;
  const std::int64_t n = r.block;
  for (int t = 0; t < m; ++t) {
    std::byte* dst = output + t * step;
    if constexpr (kFill) {
      if (fill[t]) {
        for (std::int64_t e = 0; e < n; ++e) std::memcpy(dst + e * std::int64_t{W}, r.fill, W);
        continue;
      }
    }
    const std::byte* src = input + static_cast<std::int64_t>(offsets[t]) * std::int64_t{W};
    for (std::int64_t e = 0; e < n; ++e) {
      std::memcpy(dst + e * std::int64_t{W}, src + e * std::int64_t{W}, W);
    }
  }
}

/// Blocks of kMemcpyBlockBytes up to kChunkedBlockMaxBytes (64 and 128 B rows: GatherND point
/// sampling, fp16 embeddings): a loop of fixed-size kChunkBytes moves, inlined, instead of a
/// call per block.
inline constexpr std::int64_t kChunkBytes = 32;
inline constexpr std::int64_t kChunkedBlockMaxBytes = 256;

/// kBytes > 0: the block size known at compile time (64 and 128 B: fully unrolled moves).
template <std::size_t W, class Offset, bool kFill, std::int64_t kBytes = 0>
void copy_chunked_blocks(const CopyRun& r, const Offset* offsets, const std::uint8_t* fill, int m) {
  const std::byte* const input = r.input;
  std::byte* const output = r.output;
  const std::int64_t step = r.output_step;
  const std::int64_t bytes = kBytes > 0 ? kBytes : r.block * std::int64_t{W};
  const int ahead = m < kPrefetchDistance ? m : kPrefetchDistance;
  auto src_of = [&](int t) { return input + static_cast<std::int64_t>(offsets[t]) * std::int64_t{W}; };
  // Every cache line of a block ahead (a 128-byte row is two lines), and the line of its last
  // byte: a row that does not start on a line boundary reaches one line further (numpy puts
  // large arrays 16 bytes past a page boundary, so a 64-byte row there spans two lines).
  auto prefetch = [&](int t) {
    const std::byte* src = src_of(t);
    __builtin_prefetch(src);
    for (std::int64_t b = 64; b < bytes; b += 64) __builtin_prefetch(src + b);
    __builtin_prefetch(src + bytes - 1);
  };
  for (int t = 0; t < ahead; ++t) prefetch(t);
  for (int t = 0; t < m; ++t) {
    std::byte* dst = output + t * step;
    if (t + kPrefetchDistance < m) prefetch(t + kPrefetchDistance);
    if constexpr (kFill) {
      if (fill[t]) {
        for (std::int64_t e = 0; e < r.block; ++e) std::memcpy(dst + e * std::int64_t{W}, r.fill, W);
        continue;
      }
    }
    const std::byte* src = src_of(t);
    if constexpr (kBytes > 0) {
      std::memcpy(dst, src, kBytes);
    } else {
      // Whole chunks, then one last chunk ending at the block's end (it may overlap the one
      // before: blocks need not be a multiple of kChunkBytes).
      std::int64_t b = 0;
      for (; b + kChunkBytes < bytes; b += kChunkBytes) std::memcpy(dst + b, src + b, kChunkBytes);
      std::memcpy(dst + bytes - kChunkBytes, src + bytes - kChunkBytes, kChunkBytes);
    }
  }
}

/// One large block. On x86-64, `rep movsb` (fast with ERMS/FSRM, measured 1.5x faster than
/// the library memcpy call for 2 KiB rows on this project's Zen 4 machine); memcpy elsewhere.
inline void copy_bytes(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(bytes) : : "memory");
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// The block mover of copy_large_blocks: `rep movsb` (copy_bytes), with the first 512 bytes of
/// the block after next prefetched (the hardware streams the rest).
struct RepMovsb {
  static constexpr std::size_t kPrefetchBytes = 512;
  static void move(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept { copy_bytes(dst, src, bytes); }
};

/// Other blocks of kMemcpyBlockBytes and more: Move::move per block (RepMovsb, or avx512.hpp's
/// mover for blocks up to 2 KiB), with the first Move::kPrefetchBytes of the block after next
/// prefetched.
template <std::size_t W, class Offset, bool kFill, class Move = RepMovsb>
void copy_large_blocks(const CopyRun& r, const Offset* offsets, const std::uint8_t* fill, int m) {
  const std::byte* const input = r.input;
  std::byte* const output = r.output;
  const std::int64_t step = r.output_step;
  const auto bytes = static_cast<std::size_t>(r.block) * W;
  const std::size_t ahead_bytes = bytes < Move::kPrefetchBytes ? bytes : Move::kPrefetchBytes;
  for (int t = 0; t < m; ++t) {
    std::byte* dst = output + t * step;
    if (t + 2 < m) {
      const std::byte* next = input + static_cast<std::int64_t>(offsets[t + 2]) * std::int64_t{W};
      for (std::size_t b = 0; b < ahead_bytes; b += 64) __builtin_prefetch(next + b);
    }
    if constexpr (kFill) {
      if (fill[t]) {
        for (std::int64_t e = 0; e < r.block; ++e) std::memcpy(dst + e * std::int64_t{W}, r.fill, W);
        continue;
      }
    }
    Move::move(dst, input + static_cast<std::int64_t>(offsets[t]) * std::int64_t{W}, bytes);
  }
}

}  // namespace multigather::detail::cpu
