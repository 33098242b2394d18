// Internal: the elements a broadcast view stores, each once, and how a dense copy of them reads
// as the view (the float32 copy of 16-bit updates, the negated / scaled copy of updates).
#pragma once

#include "multigather/tensor.hpp"

namespace multigather::detail {

/// `v`'s shape with each broadcast dimension (stride 0) folded to size 1: the elements it stores,
/// each once. An empty view stays empty: its size-0 dimensions are not folded (folded to 1, a
/// copy would read elements that are not there, through null data: a fuzzer finding).
inline Dims stored_shape(const TensorView& v) noexcept {
  Dims stored = v.shape;
  for (int d = 0; d < stored.size() && d < kMaxRank && d < v.strides.size(); ++d) {
    if (v.strides[d] == 0 && v.shape[d] != 0) stored[d] = 1;
  }
  return stored;
}

/// The strides that read a C-contiguous copy of `stored` (stored_shape(v)) with v's shape, as v
/// reads its data: the copy's row-major strides, 0 along v's broadcast dimensions.
inline Dims rebroadcast_strides(const TensorView& v, const Dims& stored) noexcept {
  Dims strides = contiguous_strides(stored);
  for (int d = 0; d < strides.size() && d < kMaxRank && d < v.strides.size(); ++d) {
    if (v.strides[d] == 0) strides[d] = 0;
  }
  return strides;
}

}  // namespace multigather::detail
