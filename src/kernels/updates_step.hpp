// Internal: the updates' step of a scatter (Lowering::updates_step: torch.index_add's alpha,
// the negation of jax's .at[].subtract, tf's tensor_scatter_nd_sub and Core ML's mode "sub"),
// written once for the host and the device, as divide_rows.hpp is: the CPU engine runs it in a
// loop, the CUDA engine over a grid (updates_step_kernel.cu), and the host tests compare them.
//   scale:  to = from * factor, in the dtype (floating: the factor rounded to the dtype first,
//           float16 / bfloat16 multiplied in float32 and rounded once; complex: the complex
//           product with (factor, 0); integers: the factor truncated toward zero, the product
//           wrapping; PyTorch's index_add rules);
//   negate: to = -from, exactly (floating and complex: each sign bit flipped, NaNs and zeros
//           included; integers: 0 - from, wrapping).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/float16_bits.hpp"
#include "core/host_device.hpp"
#include "core/odometer.hpp"
#include "multigather/dtype.hpp"
#include "multigather/tensor.hpp"  // kMaxRank

namespace multigather::detail {

/// One step over `numel` elements of rank `rank` (C order of `shape`): from -> to, any strides
/// in elements (to's: not overlapping).
struct UpdatesStepParams {
  const void* from = nullptr;
  void* to = nullptr;
  std::int64_t numel = 0;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t from_strides[kMaxRank] = {};
  std::int64_t to_strides[kMaxRank] = {};
  double factor = 1;             // scale, floating dtypes
  std::int64_t integer_factor = 1;  // scale, integer dtypes (already truncated)
};

/// The step's params from `from` into `to` (same shape; to's elements distinct).
inline UpdatesStepParams updates_step_params(const TensorView& from, const MutableTensorView& to, double factor,
                                             std::int64_t integer_factor) {
  UpdatesStepParams p;
  p.from = from.data;
  p.to = to.data;
  p.numel = to.numel();
  p.rank = to.rank();
  for (int d = 0; d < p.rank; ++d) {
    p.shape[d] = to.shape[d];
    p.from_strides[d] = from.strides[d];
    p.to_strides[d] = to.strides[d];
  }
  p.factor = factor;
  p.integer_factor = integer_factor;
  return p;
}

namespace updates_step {

/// v * factor in T (float, double).
template <class T>
struct ScaleFloating {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static T apply(T v, const UpdatesStepParams& p) { return v * static_cast<T>(p.factor); }
};

/// v * factor of float16 (Brain = false) or bfloat16: the factor rounded to the type (through
/// float32), the product computed in float32 and rounded once (c10::Half's operator*).
template <bool Brain>
struct ScaleHalf {
  using Stored = std::uint16_t;
  MULTIGATHER_HOST_DEVICE static float to(std::uint16_t b) { return Brain ? bfloat16_bits_to_float(b) : half_bits_to_float(b); }
  MULTIGATHER_HOST_DEVICE static std::uint16_t from(float f) { return Brain ? float_to_bfloat16_bits(f) : float_to_half_bits(f); }
  MULTIGATHER_HOST_DEVICE static std::uint16_t apply(std::uint16_t v, const UpdatesStepParams& p) {
    return from(to(v) * to(from(static_cast<float>(p.factor))));
  }
};

/// v * factor of complex64 / complex128: the complex product with (factor, 0), as c10::complex
/// multiplies: (re * c - im * 0, re * 0 + im * c).
template <class R>
struct ScaleComplex {
  struct Stored {
    R re, im;
  };
  MULTIGATHER_HOST_DEVICE static Stored apply(Stored v, const UpdatesStepParams& p) {
    const R c = static_cast<R>(p.factor);
    return Stored{v.re * c - v.im * R(0), v.re * R(0) + v.im * c};
  }
};

/// v * factor in T (an integer type), wrapping: the low bits of the 64-bit product.
template <class T>
struct ScaleInteger {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static T apply(T v, const UpdatesStepParams& p) {
    const auto a = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<T>(p.integer_factor)));
    return static_cast<T>(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) * a);
  }
};

/// -v of a floating or complex type stored as Parts words of U: each part's sign bit flipped.
template <class U, int Parts>
struct NegateSign {
  struct Stored {
    U word[Parts];
  };
  MULTIGATHER_HOST_DEVICE static Stored apply(Stored v, const UpdatesStepParams&) {
    for (int k = 0; k < Parts; ++k) v.word[k] ^= static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
    return v;
  }
};

/// 0 - v of an integer type T, wrapping.
template <class T>
struct NegateInteger {
  using Stored = T;
  MULTIGATHER_HOST_DEVICE static T apply(T v, const UpdatesStepParams&) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(v)));
  }
};

}  // namespace updates_step

/// Elements i = thread, thread + threads, ... below p.numel, in C order of p.shape.
template <class Op>
MULTIGATHER_HOST_DEVICE inline void updates_step_thread(const UpdatesStepParams& p, std::int64_t thread,
                                                        std::int64_t threads) {
  using T = typename Op::Stored;
  const T* from = static_cast<const T*>(p.from);
  T* to = static_cast<T*>(p.to);
  for (std::int64_t i = thread; i < p.numel; i += threads) {
    std::int64_t at_from = 0, at_to = 0;
    offsets_at(i, p.rank, p.shape, p.from_strides, p.to_strides, &at_from, &at_to);
    to[at_to] = Op::apply(from[at_from], p);
  }
}

/// fn.template operator()<Op>() for the step on `dtype` (negate, else scale); false where the
/// step has no exact form (scale: floating and complex dtypes, the signed integers and uint8,
/// PyTorch's index_add dtypes; negate: floating, complex and integer dtypes).
template <class Fn>
bool visit_updates_step(DType dtype, bool negate, Fn&& fn) {
  using namespace updates_step;
  if (negate) {
    switch (dtype) {
      case DType::kFloat16: case DType::kBFloat16: fn.template operator()<NegateSign<std::uint16_t, 1>>(); return true;
      case DType::kFloat32: fn.template operator()<NegateSign<std::uint32_t, 1>>(); return true;
      case DType::kFloat64: fn.template operator()<NegateSign<std::uint64_t, 1>>(); return true;
      case DType::kComplex64: fn.template operator()<NegateSign<std::uint32_t, 2>>(); return true;
      case DType::kComplex128: fn.template operator()<NegateSign<std::uint64_t, 2>>(); return true;
      case DType::kInt8: fn.template operator()<NegateInteger<std::int8_t>>(); return true;
      case DType::kUInt8: fn.template operator()<NegateInteger<std::uint8_t>>(); return true;
      case DType::kInt16: fn.template operator()<NegateInteger<std::int16_t>>(); return true;
      case DType::kUInt16: fn.template operator()<NegateInteger<std::uint16_t>>(); return true;
      case DType::kInt32: fn.template operator()<NegateInteger<std::int32_t>>(); return true;
      case DType::kUInt32: fn.template operator()<NegateInteger<std::uint32_t>>(); return true;
      case DType::kInt64: fn.template operator()<NegateInteger<std::int64_t>>(); return true;
      case DType::kUInt64: fn.template operator()<NegateInteger<std::uint64_t>>(); return true;
      default: return false;
    }
  }
  switch (dtype) {
    case DType::kFloat32: fn.template operator()<ScaleFloating<float>>(); return true;
    case DType::kFloat64: fn.template operator()<ScaleFloating<double>>(); return true;
    case DType::kFloat16: fn.template operator()<ScaleHalf<false>>(); return true;
    case DType::kBFloat16: fn.template operator()<ScaleHalf<true>>(); return true;
    case DType::kComplex64: fn.template operator()<ScaleComplex<float>>(); return true;
    case DType::kComplex128: fn.template operator()<ScaleComplex<double>>(); return true;
    case DType::kInt8: fn.template operator()<ScaleInteger<std::int8_t>>(); return true;
    case DType::kUInt8: fn.template operator()<ScaleInteger<std::uint8_t>>(); return true;
    case DType::kInt16: fn.template operator()<ScaleInteger<std::int16_t>>(); return true;
    case DType::kInt32: fn.template operator()<ScaleInteger<std::int32_t>>(); return true;
    case DType::kInt64: fn.template operator()<ScaleInteger<std::int64_t>>(); return true;
    default: return false;
  }
}

}  // namespace multigather::detail
