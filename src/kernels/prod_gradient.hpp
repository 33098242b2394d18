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

#include "core/float16_bits.hpp"
#include "core/host_device.hpp"
#include "multigather/dtype.hpp"

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

namespace prod_gradient {

/// float / double: loaded and stored through double.
template <class T>
struct Plain {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static double load(T v) { return static_cast<double>(v); }
  MULTIGATHER_HOST_DEVICE static T store(double v) { return static_cast<T>(v); }
};

/// float16 (Brain = false) / bfloat16 bits: loaded exactly, stored through float32.
template <bool Brain>
struct Bits16 {
  using Stored = std::uint16_t;
  MULTIGATHER_HOST_DEVICE static double load(std::uint16_t b) {
    return static_cast<double>(Brain ? bfloat16_bits_to_float(b) : half_bits_to_float(b));
  }
  MULTIGATHER_HOST_DEVICE static std::uint16_t store(double v) {
    const float f = static_cast<float>(v);
    return Brain ? float_to_bfloat16_bits(f) : float_to_half_bits(f);
  }
};

}  // namespace prod_gradient

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
    non_zero[i] = zero ? E::store(1.0) : data[i];
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
    const double x = E::load(data[i]);
    const double derivative = p.zero_count[i] > 1 ? 0.0 : x == 0 ? E::load(others[i]) : E::load(product[i]) / x;
    grad[i] = E::store(E::load(grad[i]) * derivative);
  }
}

/// fn.template operator()<E>() for `dtype`; false for a dtype without a gradient.
template <class Fn>
bool visit_prod_gradient(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn.template operator()<prod_gradient::Plain<float>>(); return true;
    case DType::kFloat64: fn.template operator()<prod_gradient::Plain<double>>(); return true;
    case DType::kFloat16: fn.template operator()<prod_gradient::Bits16<false>>(); return true;
    case DType::kBFloat16: fn.template operator()<prod_gradient::Bits16<true>>(); return true;
    default: return false;
  }
}

}  // namespace multigather::detail
