// Internal: the two elementwise steps of a segment product's gradient (api/vjp.cpp:
// segment_prod_vjp, TensorFlow's rule _UnsortedSegmentProdGrad), written once for the host and
// the device, as updates_step.hpp is: the CPU engine runs them in loops, the CUDA engine over
// grids (vjp_kernel.cu), and the host tests compare them.
//   zeros:      zeros[i] = data[i] == 0; non_zero[i] = data[i], or 1 where it is 0;
//   derivative: grad[i] *= (zero_count[i] > 1 ? 0 : data[i] == 0 ? others[i] : product[i] / data[i]),
//               computed in double and rounded once to the dtype (16-bit floats through float32).
// Every array is C-contiguous of n elements of the dtype (float32, float64, float16, bfloat16),
// but zeros and zero_count (int64).
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "kernels/floating_element.hpp"  // visit_floating: the dtypes it has

namespace multigather::detail {

struct ProdGradientParams {
  std::int64_t n = 0;
  const void* data = nullptr;  // the data as G
  // zeros
  std::int64_t* zeros = nullptr;
  void* non_zero = nullptr;
  // derivative
  void* grad = nullptr;                       // in: grad_output at each row's segment; out: the gradient
  const void* product = nullptr;              // the row's segment's result
  const void* others = nullptr;               // the product of its segment's non-zero rows
  const std::int64_t* zero_count = nullptr;   // its segment's zeros
};

/// The zeros step over elements thread, thread + threads, ...
template <class E>
MULTIGATHER_HOST_DEVICE inline void prod_zeros_thread(const ProdGradientParams& p, std::int64_t thread,
                                                      std::int64_t threads) {
  using T = typename E::Stored;
  const T* data = static_cast<const T*>(p.data);
  T* non_zero = static_cast<T*>(p.non_zero);
  for (std::int64_t i = thread; i < p.n; i += threads) {
    const bool zero = E::load(data[i]) == 0;
    p.zeros[i] = zero ? 1 : 0;
    non_zero[i] = zero ? E::store(1) : data[i];
  }
}

/// The derivative step over elements thread, thread + threads, ...
template <class E>
MULTIGATHER_HOST_DEVICE inline void prod_derivative_thread(const ProdGradientParams& p, std::int64_t thread,
                                                           std::int64_t threads) {
  using T = typename E::Stored;
  const T* data = static_cast<const T*>(p.data);
  const T* product = static_cast<const T*>(p.product);
  const T* others = static_cast<const T*>(p.others);
  T* grad = static_cast<T*>(p.grad);
  for (std::int64_t i = thread; i < p.n; i += threads) {
    using Acc = typename E::Acc;
    const auto at = [](T v) { return static_cast<double>(E::load(v)); };
    const double x = at(data[i]);
    const double derivative = p.zero_count[i] > 1 ? 0.0 : x == 0 ? at(others[i]) : at(product[i]) / x;
    grad[i] = E::store(static_cast<Acc>(at(grad[i]) * derivative));
  }
}

}  // namespace multigather::detail
