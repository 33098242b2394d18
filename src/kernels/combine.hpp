// Internal: the combine step of scatter_multiaxis (docs/spec.md section 4), one struct per
// (dtype, reduction):
//   - integers wrap (two's complement: the arithmetic is done unsigned);
//   - float16 / bfloat16 combine in their own precision (each step computed in float32 and
//     rounded to the dtype: float32 holds 2p+2 bits of both, so the rounding is the dtype's own);
//   - float min / max propagate NaN (the first NaN met, output side first, is kept);
//   - bool: add = or, mul = and, max = or, min = and;
//   - complex: add, and mul by the textbook formula (ar*br - ai*bi, ar*bi + ai*br);
//   - none: the update replaces the element (the last one in row-major order wins).
// Op::apply(dst, src, n) combines n consecutive elements of src into dst (unaligned memory is
// fine). visit_combine picks the Op of a validated (dtype, reduction) pair; the reference kernel
// and the CPU engine share these ops, so they agree by construction on the per-element
// arithmetic; the tests check both against numpy.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "multigather/dtype.hpp"
#include "multigather/scatter.hpp"

namespace multigather::detail::combine {

template <class T, class F>
struct Elementwise {
  static constexpr std::size_t kSize = sizeof(T);
  static void apply(std::byte* dst, const std::byte* src, std::int64_t n) noexcept {
    for (std::int64_t e = 0; e < n; ++e) {
      T a, b;
      std::memcpy(&a, dst + e * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      std::memcpy(&b, src + e * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      a = F::op(a, b);
      std::memcpy(dst + e * static_cast<std::int64_t>(sizeof(T)), &a, sizeof(T));
    }
  }
};

template <std::size_t W>
struct Assign {
  static constexpr std::size_t kSize = W;
  static void apply(std::byte* dst, const std::byte* src, std::int64_t n) noexcept {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * W);
  }
};

// Wrapping integer arithmetic: unsigned, at least as wide as unsigned int (no promotion to a
// signed int whose overflow would be undefined).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct IntAdd { template <class T> static T op(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)); } };
struct IntMul { template <class T> static T op(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)); } };
struct OrdMin { template <class T> static T op(T a, T b) { return b < a ? b : a; } };
struct OrdMax { template <class T> static T op(T a, T b) { return a < b ? b : a; } };

struct FloatAdd { template <class T> static T op(T a, T b) { return a + b; } };
struct FloatMul { template <class T> static T op(T a, T b) { return a * b; } };
struct FloatMin {
  template <class T> static T op(T a, T b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
};
struct FloatMax {
  template <class T> static T op(T a, T b) { return a != a ? a : (b != b ? b : (a < b ? b : a)); }
};

struct BoolOr { static std::uint8_t op(std::uint8_t a, std::uint8_t b) { return (a | b) != 0; } };
struct BoolAnd { static std::uint8_t op(std::uint8_t a, std::uint8_t b) { return a != 0 && b != 0; } };

// 16-bit floats: computed in float32, rounded back.
template <class F, float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float)>
struct Half {
  static std::uint16_t op(std::uint16_t a, std::uint16_t b) {
    return kFromFloat(F::template op<float>(kToFloat(a), kToFloat(b)));
  }
};

template <class R>
struct Complex {
  R re, im;
};
struct ComplexAdd {
  template <class C> static C op(C a, C b) { return {a.re + b.re, a.im + b.im}; }
};
struct ComplexMul {
  template <class C> static C op(C a, C b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
};

template <class F>
struct Typed {  // adapts F (with a template op) for one T
  template <class T>
  struct For {
    static T op(T a, T b) { return F::template op<T>(a, b); }
  };
};

template <class T, class F>
using Ew = Elementwise<T, typename Typed<F>::template For<T>>;

/// Calls visit.template operator()<Op>() with the Op of (dtype, reduction), or returns false
/// for a pair that validation rejects (complex min / max, float8 arithmetic).
template <class Visit>
bool visit_combine(DType dtype, Reduction reduction, Visit&& visit) {
  if (reduction == Reduction::kNone) {
    switch (element_size(dtype)) {
      case 1: visit.template operator()<Assign<1>>(); return true;
      case 2: visit.template operator()<Assign<2>>(); return true;
      case 4: visit.template operator()<Assign<4>>(); return true;
      case 8: visit.template operator()<Assign<8>>(); return true;
      case 16: visit.template operator()<Assign<16>>(); return true;
      default: return false;
    }
  }
  auto integer = [&]<class T>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<Ew<T, IntAdd>>(); return true;
      case Reduction::kMul: visit.template operator()<Ew<T, IntMul>>(); return true;
      case Reduction::kMin: visit.template operator()<Ew<T, OrdMin>>(); return true;
      case Reduction::kMax: visit.template operator()<Ew<T, OrdMax>>(); return true;
      default: return false;
    }
  };
  auto floating = [&]<class T>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<Ew<T, FloatAdd>>(); return true;
      case Reduction::kMul: visit.template operator()<Ew<T, FloatMul>>(); return true;
      case Reduction::kMin: visit.template operator()<Ew<T, FloatMin>>(); return true;
      case Reduction::kMax: visit.template operator()<Ew<T, FloatMax>>(); return true;
      default: return false;
    }
  };
  auto half = [&]<float (*kTo)(std::uint16_t), std::uint16_t (*kFrom)(float)>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<Elementwise<std::uint16_t, Half<FloatAdd, kTo, kFrom>>>(); return true;
      case Reduction::kMul: visit.template operator()<Elementwise<std::uint16_t, Half<FloatMul, kTo, kFrom>>>(); return true;
      case Reduction::kMin: visit.template operator()<Elementwise<std::uint16_t, Half<FloatMin, kTo, kFrom>>>(); return true;
      case Reduction::kMax: visit.template operator()<Elementwise<std::uint16_t, Half<FloatMax, kTo, kFrom>>>(); return true;
      default: return false;
    }
  };
  auto complex = [&]<class R>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<Ew<Complex<R>, ComplexAdd>>(); return true;
      case Reduction::kMul: visit.template operator()<Ew<Complex<R>, ComplexMul>>(); return true;
      default: return false;
    }
  };
  switch (dtype) {
    case DType::kBool:
      switch (reduction) {
        case Reduction::kAdd: case Reduction::kMax:
          visit.template operator()<Elementwise<std::uint8_t, BoolOr>>(); return true;
        case Reduction::kMul: case Reduction::kMin:
          visit.template operator()<Elementwise<std::uint8_t, BoolAnd>>(); return true;
        default: return false;
      }
    case DType::kInt8: return integer.template operator()<std::int8_t>();
    case DType::kUInt8: return integer.template operator()<std::uint8_t>();
    case DType::kInt16: return integer.template operator()<std::int16_t>();
    case DType::kUInt16: return integer.template operator()<std::uint16_t>();
    case DType::kInt32: return integer.template operator()<std::int32_t>();
    case DType::kUInt32: return integer.template operator()<std::uint32_t>();
    case DType::kInt64: return integer.template operator()<std::int64_t>();
    case DType::kUInt64: return integer.template operator()<std::uint64_t>();
    case DType::kFloat32: return floating.template operator()<float>();
    case DType::kFloat64: return floating.template operator()<double>();
    case DType::kFloat16: return half.template operator()<&half_to_float, &float_to_half>();
    case DType::kBFloat16: return half.template operator()<&bfloat16_to_float, &float_to_bfloat16>();
    case DType::kComplex64: return complex.template operator()<float>();
    case DType::kComplex128: return complex.template operator()<double>();
    default: return false;
  }
}

}  // namespace multigather::detail::combine
