// Internal: the division step of a mean scatter on the CUDA engine (torch.scatter_reduce
// reduce = "mean", tf.math.unsorted_segment_mean / _sqrt_n, torch_scatter's mean, and the
// gradients of the segment means), written once for host and device like gather_rows.hpp, so
// that the host tests run it over the launched grid against the CPU engine's
// (kernels/cpu/scatter_mean.cpp, whose rules it keeps): each element that received n updates
// is divided by c = n + extra (extra = 1 when the input takes part), or by sqrt(c) (sqrt_n);
// an element with n = 0 or c = 1 is left as it is. Floating outputs divide in their own type
// (float16 / bfloat16 through float32, rounded once; the count and its root rounded to the type
// first), complex ones multiply by 1 / c as PyTorch's c10::complex division by c + 0i does,
// integer ones divide by the count cast to the type (it may wrap, as PyTorch scatters it),
// rounding toward negative infinity (a zero divisor leaves the element).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/float16_bits.hpp"
#include "core/host_device.hpp"
#include "core/odometer.hpp"
#include "multigather/dtype.hpp"
#include "multigather/tensor.hpp"  // kMaxRank

namespace multigather::detail {

/// One division launch: `out` (numel elements of rank `rank`, any strides in elements) and its
/// int64 `count` view (the same shape; stride 0 where the count does not change).
struct CudaDivideParams {
  void* out = nullptr;
  const std::int64_t* count = nullptr;
  std::int64_t numel = 0;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t out_strides[kMaxRank] = {};
  std::int64_t count_strides[kMaxRank] = {};
  std::int64_t extra = 0;
  bool sqrt_count = false;
};

namespace division {

MULTIGATHER_HOST_DEVICE inline float root(float x) { return sqrtf(x); }
MULTIGATHER_HOST_DEVICE inline double root(double x) { return sqrt(x); }

/// v / c (or sqrt(c)) in T: float, double.
template <class T>
struct Floating {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static T apply(T v, std::int64_t c, bool sqrt_count) {
    const T d = static_cast<T>(c);
    return v / (sqrt_count ? root(d) : d);
  }
};

/// float16 (Brain = false) or bfloat16 through float32: the count (and its root) rounded to the
/// type, the quotient computed in float32 and rounded once.
template <bool Brain>
struct Half {
  using Stored = std::uint16_t;
  MULTIGATHER_HOST_DEVICE static float to(std::uint16_t b) {
    return Brain ? bfloat16_bits_to_float(b) : half_bits_to_float(b);
  }
  MULTIGATHER_HOST_DEVICE static std::uint16_t from(float f) {
    return Brain ? float_to_bfloat16_bits(f) : float_to_half_bits(f);
  }
  MULTIGATHER_HOST_DEVICE static std::uint16_t apply(std::uint16_t v, std::int64_t c, bool sqrt_count) {
    const float d = to(from(static_cast<float>(c)));
    return from(to(v) / (sqrt_count ? to(from(root(d))) : d));
  }
};

/// complex64 / complex128: (re + im * 0) * (1 / d), (im - re * 0) * (1 / d).
template <class R>
struct Complex {
  struct Stored {
    R re, im;
  };
  MULTIGATHER_HOST_DEVICE static Stored apply(Stored v, std::int64_t c, bool sqrt_count) {
    const R d = static_cast<R>(c);
    const R scale = R(1) / (sqrt_count ? root(d) : d);
    return Stored{(v.re + v.im * R(0)) * scale, (v.im - v.re * R(0)) * scale};
  }
};

/// Integers: the count cast to T, floor division (a zero divisor leaves v).
template <class T>
struct Integer {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static T apply(T v, std::int64_t c, bool) {
    const T d = static_cast<T>(c);
    if (d == 0) return v;
    if constexpr (std::is_signed_v<T>) {
      const T q = static_cast<T>(v / d);
      return (v % d != 0 && ((v < 0) != (d < 0))) ? static_cast<T>(q - 1) : q;
    } else {
      return static_cast<T>(v / d);
    }
  }
};

}  // namespace division

/// Elements i = thread, thread + threads, ... below p.numel of the division, in C order of
/// p.shape (each one's offsets decomposed from i).
template <class Op>
MULTIGATHER_HOST_DEVICE inline void divide_thread(const CudaDivideParams& p, std::int64_t thread, std::int64_t threads) {
  using T = typename Op::Stored;
  T* out = static_cast<T*>(p.out);
  for (std::int64_t i = thread; i < p.numel; i += threads) {
    std::int64_t at = 0, at_count = 0;
    offsets_at(i, p.rank, p.shape, p.out_strides, p.count_strides, &at, &at_count);
    const std::int64_t n = p.count[at_count];
    const std::int64_t c = n + p.extra;
    if (n == 0 || c == 1) continue;  // no update reached it, or only the input did
    out[at] = Op::apply(out[at], c, p.sqrt_count);
  }
}

/// fn.template operator()<Op>() for `dtype`'s division (false: a dtype without one, bool, or
/// an integer dtype with sqrt_count; the CPU engine refuses the same).
template <class Fn>
bool visit_divide(DType dtype, bool sqrt_count, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn.template operator()<division::Floating<float>>(); return true;
    case DType::kFloat64: fn.template operator()<division::Floating<double>>(); return true;
    case DType::kFloat16: fn.template operator()<division::Half<false>>(); return true;
    case DType::kBFloat16: fn.template operator()<division::Half<true>>(); return true;
    case DType::kComplex64: fn.template operator()<division::Complex<float>>(); return true;
    case DType::kComplex128: fn.template operator()<division::Complex<double>>(); return true;
    default: break;
  }
  if (sqrt_count) return false;
  switch (dtype) {
    case DType::kInt8: fn.template operator()<division::Integer<std::int8_t>>(); return true;
    case DType::kUInt8: fn.template operator()<division::Integer<std::uint8_t>>(); return true;
    case DType::kInt16: fn.template operator()<division::Integer<std::int16_t>>(); return true;
    case DType::kUInt16: fn.template operator()<division::Integer<std::uint16_t>>(); return true;
    case DType::kInt32: fn.template operator()<division::Integer<std::int32_t>>(); return true;
    case DType::kUInt32: fn.template operator()<division::Integer<std::uint32_t>>(); return true;
    case DType::kInt64: fn.template operator()<division::Integer<std::int64_t>>(); return true;
    case DType::kUInt64: fn.template operator()<division::Integer<std::uint64_t>>(); return true;
    default: return false;
  }
}

}  // namespace multigather::detail
