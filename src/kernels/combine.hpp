// Internal: the combine step of scatter_multiaxis (docs/spec.md section 4), written once for the
// reference kernel, the CPU engine and the CUDA scatter (host and device code), so that all three
// agree by construction on the per-element arithmetic (the tests check them against numpy and
// against each other, byte for byte):
//   - integers wrap (computed unsigned); min / max compare in the element's own type;
//   - float min / max propagate NaN (the first NaN met, output side first, is kept);
//   - float16 / bfloat16: each step computed in float32 and rounded back to the dtype
//     (core/float16_bits.hpp; float32 holds 2p+2 bits of both, so the rounding is the dtype's own);
//   - bool: add = max = or, mul = min = and;
//   - complex: add, and mul by the textbook formula (ar*br - ai*bi, ar*bi + ai*br), every product
//     and sum rounded on its own (no fused multiply-add on the device; the CPU build does not
//     contract either);
//   - complex min / max: StableHLO's lexicographic order of the (real, imaginary) pairs, in the
//     form XLA runs it (jax's lowering of lax.max / lax.min on complex, and the StableHLO
//     interpreter, whose spec says nothing of NaN here): max keeps the output side a when
//     a.re == b.re ? a.im > b.im : a.re > b.re (min: < for >), else the update b wins. So a tie
//     (equal pairs, +0 == -0 included) and every comparison with a NaN pick the update: NaN does
//     not propagate as it does for floats (an output element with a NaN real part is replaced
//     by the next update; an update with one replaces the element). A NaN imaginary part
//     matters only when the real parts are equal;
//   - none: the update replaces the element (the last one in row-major order wins).
// Element ops (visit_element_op) have `T`, `apply(a, b)` (a = the output side), `atomic(p, v)`:
// one atomic read-modify-write on the device (a native atomic where one exists, else a
// compare-and-swap loop on the aligned word holding the element), a plain one on the host, and
// `identity()` (host only): the e with apply(e, x) == x, which the CUDA scatter's atomic mode
// starts a target from when include_input is false.
// The CPU's byte-run form (visit_combine): Op::apply(dst, src, n) combines n consecutive elements
// of src into dst (unaligned memory is fine).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/float16_bits.hpp"
#include "core/host_device.hpp"
#include "multigather/dtype.hpp"
#include "multigather/scatter.hpp"

namespace multigather::detail::combine {

template <class R>
struct alignas(sizeof(R)) Complex {
  R re, im;
};

template <class T>
MULTIGATHER_HOST_DEVICE inline T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b); else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class T>
MULTIGATHER_HOST_DEVICE inline T add_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fadd_rn(a, b); else return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// The element's bits as the unsigned word a compare-and-swap needs.
template <class T>
using Word = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;

/// Compare-and-swap loop applying F to the element at p (1, 2, 4 or 8 bytes, aligned to its
/// size). Elements under 4 bytes are swapped inside their aligned 32-bit word.
template <class T, class F>
MULTIGATHER_HOST_DEVICE inline void cas_apply(T* p, T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) >= 4) {
    auto* word = reinterpret_cast<Word<T>*>(p);
    Word<T> old = *word, assumed;
    do {
      assumed = old;
      T a;
      memcpy(&a, &assumed, sizeof(T));
      const T r = F::apply(a, v);
      Word<T> next;
      memcpy(&next, &r, sizeof(T));
      old = atomicCAS(word, assumed, next);
    } while (old != assumed);
  } else {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    auto* word = reinterpret_cast<unsigned int*>(address & ~std::uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(address & 3u) * 8u;
    const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      T a;
      const unsigned bits = (assumed & mask) >> shift;
      memcpy(&a, &bits, sizeof(T));
      const T r = F::apply(a, v);
      unsigned rb = 0;
      memcpy(&rb, &r, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (rb << shift));
    } while (old != assumed);
  }
#else
  *p = F::apply(*p, v);
#endif
}

template <class Self, class T_>
struct CasOp {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) { cas_apply<T, Self>(p, v); }
};

template <class T_>
struct Assign {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T, T b) { return b; }
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) { *p = v; }  // some update wins
  static T identity() { return T{}; }  // unused: none has no identity pass
};

template <class T>
using WideOf = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T_>
struct IntAdd : CasOp<IntAdd<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) {
    return static_cast<T>(static_cast<WideOf<T>>(a) + static_cast<WideOf<T>>(b));
  }
  static T identity() { return T{0}; }
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) >= 4) {
      atomicAdd(reinterpret_cast<Word<T>*>(p), static_cast<Word<T>>(static_cast<WideOf<T>>(v)));
      return;
    }
#endif
    cas_apply<T, IntAdd>(p, v);
  }
};
template <class T_>
struct IntMul : CasOp<IntMul<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) {
    return static_cast<T>(static_cast<WideOf<T>>(a) * static_cast<WideOf<T>>(b));
  }
  static T identity() { return T{1}; }
};
template <class T_>
struct OrdMin : CasOp<OrdMin<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return b < a ? b : a; }
  static T identity() { return std::numeric_limits<T>::max(); }
};
template <class T_>
struct OrdMax : CasOp<OrdMax<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return a < b ? b : a; }
  static T identity() { return std::numeric_limits<T>::lowest(); }
};

template <class T_>
struct FloatAdd : CasOp<FloatAdd<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return add_rn(a, b); }
  static T identity() { return T(-0.0); }  // -0 + x == x, also for x = -0
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) {
#if defined(__CUDA_ARCH__)
    atomicAdd(p, v);
#else
    *p = apply(*p, v);
#endif
  }
};
template <class T_>
struct FloatMul : CasOp<FloatMul<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return mul_rn(a, b); }
  static T identity() { return T{1}; }
};
template <class T_>
struct FloatMin : CasOp<FloatMin<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
  static T identity() { return std::numeric_limits<T>::infinity(); }
};
template <class T_>
struct FloatMax : CasOp<FloatMax<T_>, T_> {
  using T = T_;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return a != a ? a : (b != b ? b : (a < b ? b : a)); }
  static T identity() { return -std::numeric_limits<T>::infinity(); }
};

struct BoolOr : CasOp<BoolOr, std::uint8_t> {
  MULTIGATHER_HOST_DEVICE static std::uint8_t apply(std::uint8_t a, std::uint8_t b) { return (a | b) != 0; }
  static std::uint8_t identity() { return 0; }
};
struct BoolAnd : CasOp<BoolAnd, std::uint8_t> {
  MULTIGATHER_HOST_DEVICE static std::uint8_t apply(std::uint8_t a, std::uint8_t b) { return a != 0 && b != 0; }
  static std::uint8_t identity() { return 1; }
};

/// float16 (Brain = false) or bfloat16 (Brain = true) through float32 with F.
template <template <class> class F, bool Brain>
struct Half : CasOp<Half<F, Brain>, std::uint16_t> {
  MULTIGATHER_HOST_DEVICE static float to_float(std::uint16_t v) {
    return Brain ? bfloat16_bits_to_float(v) : half_bits_to_float(v);
  }
  MULTIGATHER_HOST_DEVICE static std::uint16_t apply(std::uint16_t a, std::uint16_t b) {
    const float r = F<float>::apply(to_float(a), to_float(b));
    return Brain ? float_to_bfloat16_bits(r) : float_to_half_bits(r);
  }
  static std::uint16_t identity() {
    const float r = F<float>::identity();
    return Brain ? float_to_bfloat16_bits(r) : float_to_half_bits(r);
  }
};

template <class R>
struct ComplexAdd {
  using T = Complex<R>;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) { return {add_rn(a.re, b.re), add_rn(a.im, b.im)}; }
  static T identity() { return {R(-0.0), R(-0.0)}; }
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) {  // two independent atomic adds
    FloatAdd<R>::atomic(&p->re, v.re);
    FloatAdd<R>::atomic(&p->im, v.im);
  }
};
/// Complex min / max's atomic form: a compare-and-swap on complex64's 8-byte word; complex128
/// has no 16-byte compare-and-swap, so it runs deterministically (has_atomic_form).
template <class Self, class R>
MULTIGATHER_HOST_DEVICE inline void complex_order_atomic(Complex<R>* p, Complex<R> v) {
  if constexpr (sizeof(Complex<R>) == 8) {
    cas_apply<Complex<R>, Self>(p, v);
  } else {
    *p = Self::apply(*p, v);  // never launched: has_atomic_form
  }
}
template <class R>
struct ComplexMin {
  using T = Complex<R>;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) {
    return (a.re == b.re ? a.im < b.im : a.re < b.re) ? a : b;
  }
  static T identity() { return {std::numeric_limits<R>::infinity(), std::numeric_limits<R>::infinity()}; }
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) { complex_order_atomic<ComplexMin, R>(p, v); }
};
template <class R>
struct ComplexMax {
  using T = Complex<R>;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) {
    return (a.re == b.re ? a.im > b.im : a.re > b.re) ? a : b;
  }
  static T identity() { return {-std::numeric_limits<R>::infinity(), -std::numeric_limits<R>::infinity()}; }
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) { complex_order_atomic<ComplexMax, R>(p, v); }
};
template <class R>
struct ComplexMul {
  using T = Complex<R>;
  MULTIGATHER_HOST_DEVICE static T apply(T a, T b) {
    return {add_rn(mul_rn(a.re, b.re), -mul_rn(a.im, b.im)), add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re))};
  }
  static T identity() { return {R(1), R(0)}; }  // not exact (has_atomic_form): never used
  MULTIGATHER_HOST_DEVICE static void atomic(T* p, T v) { *p = apply(*p, v); }  // never launched: has_atomic_form
};

/// Whether the atomic (non-deterministic) mode can run (dtype, reduction): everything but
/// complex mul (complex128 has no 16-byte compare-and-swap, and (1, 0) is not an exact identity
/// of the textbook product: (1, 0) * (x, -0) = (x, +0)) and complex128 min / max (no 16-byte
/// compare-and-swap); they run deterministically instead. complex64 min / max swap the 8-byte
/// pair from (+inf, +inf) / (-inf, -inf), exact identities: apply(e, x) picks x for every x.
/// In any order their result is the lexicographic min / max of the updates, but with a NaN or a
/// tie of +0 and -0 which update wins depends on the order, as it does for reduction none.
inline bool has_atomic_form(DType dtype, Reduction reduction) noexcept {
  switch (reduction) {
    case Reduction::kMul: return dtype != DType::kComplex64 && dtype != DType::kComplex128;
    case Reduction::kMin: case Reduction::kMax: return dtype != DType::kComplex128;
    default: return true;
  }
}

/// Whether every order of combining the updates of one target gives the same bytes, so that the
/// deterministic mode may skip the sort and combine atomically (issue 55): integer add and mul
/// (wrapping arithmetic modulo 2^bits is associative and commutative) and integer min / max (a
/// total order, no ties that differ in bytes). Not bool (the first update reaching an element
/// without include_input is kept as it is, a non-canonical true included, where the atomic form
/// starts from the identity and writes 0 or 1), not floats (rounding, NaN payloads, signed
/// zeros), not complex, not reduction none (the last update wins).
inline bool order_free(DType dtype, Reduction reduction) noexcept {
  if (reduction == Reduction::kNone) return false;
  switch (dtype) {
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
    case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

/// Whether a CUDA scatter of (dtype, reduction) combines with atomics: asked for (`deterministic`
/// false) where an atomic form exists, or deterministic where the order cannot change the bytes.
inline bool combines_atomically(DType dtype, Reduction reduction, bool deterministic) noexcept {
  return has_atomic_form(dtype, reduction) && (!deterministic || order_free(dtype, reduction));
}

/// Calls visit.template operator()<Op>() with the element Op of (dtype, reduction); false for a
/// pair validation rejects (float8 arithmetic).
template <class Visit>
bool visit_element_op(DType dtype, Reduction reduction, Visit&& visit) {
  if (reduction == Reduction::kNone) {
    switch (element_size(dtype)) {
      case 1: visit.template operator()<Assign<std::uint8_t>>(); return true;
      case 2: visit.template operator()<Assign<std::uint16_t>>(); return true;
      case 4: visit.template operator()<Assign<std::uint32_t>>(); return true;
      case 8: visit.template operator()<Assign<std::uint64_t>>(); return true;
      case 16: visit.template operator()<Assign<Complex<double>>>(); return true;
      default: return false;
    }
  }
  auto integer = [&]<class T>() {
    using U = std::make_unsigned_t<T>;  // wrapping add and mul do not depend on the sign
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<IntAdd<U>>(); return true;
      case Reduction::kMul: visit.template operator()<IntMul<U>>(); return true;
      case Reduction::kMin: visit.template operator()<OrdMin<T>>(); return true;
      case Reduction::kMax: visit.template operator()<OrdMax<T>>(); return true;
      default: return false;
    }
  };
  auto floating = [&]<class T>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<FloatAdd<T>>(); return true;
      case Reduction::kMul: visit.template operator()<FloatMul<T>>(); return true;
      case Reduction::kMin: visit.template operator()<FloatMin<T>>(); return true;
      case Reduction::kMax: visit.template operator()<FloatMax<T>>(); return true;
      default: return false;
    }
  };
  auto half = [&]<bool Brain>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<Half<FloatAdd, Brain>>(); return true;
      case Reduction::kMul: visit.template operator()<Half<FloatMul, Brain>>(); return true;
      case Reduction::kMin: visit.template operator()<Half<FloatMin, Brain>>(); return true;
      case Reduction::kMax: visit.template operator()<Half<FloatMax, Brain>>(); return true;
      default: return false;
    }
  };
  auto complex = [&]<class R>() {
    switch (reduction) {
      case Reduction::kAdd: visit.template operator()<ComplexAdd<R>>(); return true;
      case Reduction::kMul: visit.template operator()<ComplexMul<R>>(); return true;
      case Reduction::kMin: visit.template operator()<ComplexMin<R>>(); return true;
      case Reduction::kMax: visit.template operator()<ComplexMax<R>>(); return true;
      default: return false;
    }
  };
  switch (dtype) {
    case DType::kBool:
      switch (reduction) {
        case Reduction::kAdd: case Reduction::kMax: visit.template operator()<BoolOr>(); return true;
        case Reduction::kMul: case Reduction::kMin: visit.template operator()<BoolAnd>(); return true;
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
    case DType::kFloat16: return half.template operator()<false>();
    case DType::kBFloat16: return half.template operator()<true>();
    case DType::kComplex64: return complex.template operator()<float>();
    case DType::kComplex128: return complex.template operator()<double>();
    default: return false;
  }
}

/// The identity element of (dtype, reduction) (Op::identity(): add -0.0 / 0 / false, mul 1,
/// min +inf / (+inf, +inf) / the largest value / true, max -inf / (-inf, -inf) / the lowest
/// value / false) in out's first
/// element_size bytes; false for a pair validation rejects. Exact for every pair
/// has_atomic_form admits.
inline bool identity_bytes(DType dtype, Reduction reduction, unsigned char out[16]) {
  std::memset(out, 0, 16);
  return visit_element_op(dtype, reduction, [&]<class Op>() {
    const typename Op::T e = Op::identity();
    std::memcpy(out, &e, sizeof e);
  });
}

// ---- The CPU's byte-run form ---------------------------------------------------------------------

/// n consecutive elements combined with the element op E, through memcpy (unaligned memory).
template <class E>
struct Elementwise {
  using T = typename E::T;
  static constexpr std::size_t kSize = sizeof(T);
  static void apply(std::byte* dst, const std::byte* src, std::int64_t n) noexcept {
    for (std::int64_t e = 0; e < n; ++e) {
      T a, b;
      std::memcpy(&a, dst + e * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      std::memcpy(&b, src + e * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      a = E::apply(a, b);
      std::memcpy(dst + e * static_cast<std::int64_t>(sizeof(T)), &a, sizeof(T));
    }
  }
};

/// reduction none: the run is copied.
template <std::size_t W>
struct AssignRun {
  static constexpr std::size_t kSize = W;
  static void apply(std::byte* dst, const std::byte* src, std::int64_t n) noexcept {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * W);
  }
};

template <class E> struct IsAssign : std::false_type {};
template <class T> struct IsAssign<Assign<T>> : std::true_type {};

/// Calls visit.template operator()<Op>() with the byte-run Op of (dtype, reduction), or returns
/// false for a pair that validation rejects (float8 arithmetic).
template <class Visit>
bool visit_combine(DType dtype, Reduction reduction, Visit&& visit) {
  return visit_element_op(dtype, reduction, [&]<class E>() {
    if constexpr (IsAssign<E>::value) {
      visit.template operator()<AssignRun<sizeof(typename E::T)>>();
    } else {
      visit.template operator()<Elementwise<E>>();
    }
  });
}

}  // namespace multigather::detail::combine
