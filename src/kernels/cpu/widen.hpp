// Internal: float16 / bfloat16 views widened to float32 and narrowed back, for the scatters that
// accumulate in float32 (ScatterOptions::wide_accumulator: PyTorch's CPU scatter kernels combine
// reduced-precision floats in float32, at::opmath_type, and round each element once).
#pragma once

#include "multigather/scatter.hpp"
#include "multigather/tensor.hpp"

namespace multigather::detail::cpu {

/// `from` (float16 or bfloat16, any strides, stride 0 included) as a new C-contiguous float32
/// tensor of its shape (exact: every 16-bit float is a float32), on num_threads CPU threads
/// (0: automatic, GatherOptions' rule).
Tensor widened(const TensorView& from, int num_threads = 0);

/// `from` as float32 values in `*storage`, viewed with from's shape: a broadcast dimension
/// (stride 0) stays a broadcast, so the storage holds the stored elements only (an update
/// broadcast over a large scatter is widened once, not once per lookup).
TensorView widened_broadcast(const TensorView& from, Tensor* storage, int num_threads = 0);

/// The C-contiguous float32 values `from` (the shape of `to`) rounded into `to` (float16 or
/// bfloat16, any strides without self-overlap), round to nearest even, on num_threads threads.
void narrow_into(const TensorView& from, const MutableTensorView& to, int num_threads = 0) noexcept;

}  // namespace multigather::detail::cpu
