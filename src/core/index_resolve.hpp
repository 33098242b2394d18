// Internal: docs/spec.md section 1's resolve(v, n), written once for every backend and message:
// the CPU engine (kernels/cpu/resolve.hpp, its policy fixed at compile time), the CUDA kernels
// (kernels/cuda/gather_rows.hpp, on the device), the reference kernels, explain's traces and
// the pictures. Host and device alike (MULTIGATHER_HOST_DEVICE).
//
//   resolve(v, n): if negative_indices and v < 0 (signed index types, not in wrap mode): v += n;
//   then v in [0, n): v; else by index_mode: clamp -> [0, n-1], wrap -> the RAW value floor
//   modulo n, error / fill / drop -> out of range (the caller fails, fills or skips).
// An empty axis (n = 0) resolves nothing: every value is out of range, in every mode.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/host_device.hpp"
#include "multigather/options.hpp"

namespace multigather::detail {

/// How one coordinate resolved: explain's Resolution (multigather/lowering.hpp), value for value,
/// up to kWrapped; kOutOfRange is its kFilled or kDropped, or an error, by the caller's mode.
enum class IndexResolution : std::uint8_t {
  kInRange = 0,     // v in [0, n), taken as is
  kNegative = 1,    // v < 0 became v + n (the negative rule), then in range
  kClamped = 2,     // index_mode clamp moved it into [0, n-1]
  kWrapped = 3,     // index_mode wrap: the raw value floor modulo n
  kOutOfRange = 4,  // error, fill, drop: *position is 0 (an address that is always in bounds)
};

/// resolve(raw, size) with the policy fixed at compile time (kMode: kError, kClamp or kWrap;
/// kFill and kDrop resolve as kError: out of range is the caller's). kNegative applies the
/// negative rule (signed Index only, never in wrap mode). uint64 values above INT64_MAX stay
/// out of range (never wrapped into negative int64s).
template <IndexMode kMode, bool kNegative, class Index>
MULTIGATHER_HOST_DEVICE inline IndexResolution resolve_index(Index raw, std::int64_t size,
                                                             std::int64_t* position) noexcept {
  std::int64_t v = static_cast<std::int64_t>(raw);
  bool in_range;
  bool negative = false;
  if constexpr (std::is_same_v<Index, std::uint64_t>) {
    in_range = raw < static_cast<std::uint64_t>(size);
  } else {
    if constexpr (kNegative && kMode != IndexMode::kWrap && std::is_signed_v<Index>) {
      negative = v < 0;
      v += negative ? size : 0;
    }
    in_range = static_cast<std::uint64_t>(v) < static_cast<std::uint64_t>(size);
  }
  if (in_range) {
    *position = v;
    return negative ? IndexResolution::kNegative : IndexResolution::kInRange;
  }
  if constexpr (kMode == IndexMode::kClamp) {
    if (size > 0) {
      *position = (std::is_signed_v<Index> && v < 0) ? 0 : size - 1;
      return IndexResolution::kClamped;
    }
  } else if constexpr (kMode == IndexMode::kWrap) {
    if (size > 0) {
      if constexpr (std::is_signed_v<Index>) {
        const std::int64_t w = static_cast<std::int64_t>(raw) % size;
        *position = w < 0 ? w + size : w;
      } else {
        *position = static_cast<std::int64_t>(static_cast<std::uint64_t>(raw) % static_cast<std::uint64_t>(size));
      }
      return IndexResolution::kWrapped;
    }
  }
  *position = 0;
  return IndexResolution::kOutOfRange;
}

/// resolve_index with the policy known at run time (the CUDA kernels, the reference, explain).
template <class Index>
MULTIGATHER_HOST_DEVICE inline IndexResolution resolve_index(Index raw, std::int64_t size, IndexMode mode,
                                                             bool negative_indices,
                                                             std::int64_t* position) noexcept {
  switch (mode) {
    case IndexMode::kClamp:
      return negative_indices ? resolve_index<IndexMode::kClamp, true>(raw, size, position)
                              : resolve_index<IndexMode::kClamp, false>(raw, size, position);
    case IndexMode::kWrap: return resolve_index<IndexMode::kWrap, false>(raw, size, position);
    default:  // error, fill, drop
      return negative_indices ? resolve_index<IndexMode::kError, true>(raw, size, position)
                              : resolve_index<IndexMode::kError, false>(raw, size, position);
  }
}

/// resolve_index of a value read at run time (core/index_value.hpp's read_index_value: any
/// integer dtype; only uint64 values exceed INT64_MAX).
inline IndexResolution resolve_index_value(__int128 raw, std::int64_t size, IndexMode mode, bool negative_indices,
                                           std::int64_t* position) noexcept {
  if (raw > INT64_MAX) return resolve_index(static_cast<std::uint64_t>(raw), size, mode, negative_indices, position);
  return resolve_index(static_cast<std::int64_t>(raw), size, mode, negative_indices, position);
}

}  // namespace multigather::detail
