// Internal: the one view odometer. Steps a position through a shape in C order (the last
// dimension fastest), optionally keeping the element offset of a strided view in step, for the
// code that walks views element by element: copies of views, the reference kernels, the
// out-of-range messages, explain, the batched transforms. (The CPU engine's cursors step whole
// rows: kernels/cpu/cursor.hpp.)
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace multigather::detail {

/// The element offsets in two strided views of one shape (`rank` sizes) of the element at C-order
/// position i: what an element-wise kernel's thread makes of its index (the CUDA engine's
/// division and the updates' step, on the host in their tests).
MULTIGATHER_HOST_DEVICE inline void offsets_at(std::int64_t i, int rank, const std::int64_t* shape,
                                               const std::int64_t* a_strides, const std::int64_t* b_strides,
                                               std::int64_t* a, std::int64_t* b) {
  *a = 0;
  *b = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const std::int64_t coordinate = i % shape[d];
    i /= shape[d];
    *a += coordinate * a_strides[d];
    *b += coordinate * b_strides[d];
  }
}

/// The next position of `shape` after `pos` (its size: the rank); false after the last one
/// (pos is back at all zeros).
template <class Position, class Shape>
inline bool next_position(Position& pos, const Shape& shape) noexcept {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (++pos[d] < shape[d]) return true;
    pos[d] = 0;
  }
  return false;
}

/// next_position that also keeps *offset = sum over d of pos[d] * strides[d] (elements).
template <class Position, class Shape, class Strides>
inline bool next_position(Position& pos, const Shape& shape, const Strides& strides, std::int64_t* offset) noexcept {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    *offset += strides[d];
    if (++pos[d] < shape[d]) return true;
    *offset -= strides[d] * shape[d];
    pos[d] = 0;
  }
  return false;
}

}  // namespace multigather::detail
