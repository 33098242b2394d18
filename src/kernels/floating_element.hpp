// Internal: a floating element as the host+device kernel bodies read and write it (the segment
// gradients' steps, embedding_bag's reduction): float32 / float64 as themselves, float16 /
// bfloat16 (their bits) loaded exactly as float32 and stored from float32, rounded once; and the
// dispatch over those four dtypes.
#pragma once

#include <cstdint>

#include "core/float16_bits.hpp"
#include "core/host_device.hpp"
#include "multigather/dtype.hpp"

namespace multigather::detail {

namespace floating {

/// float / double: computed in the type itself.
template <class T>
struct Plain {
  using Stored = T;
  using Acc = T;
  MULTIGATHER_HOST_DEVICE static Acc load(T v) { return v; }
  MULTIGATHER_HOST_DEVICE static T store(Acc v) { return v; }
};

/// float16 (Brain = false) / bfloat16 bits: computed in float32.
template <bool Brain>
struct Bits16 {
  using Stored = std::uint16_t;
  using Acc = float;
  MULTIGATHER_HOST_DEVICE static Acc load(std::uint16_t b) { return Brain ? bfloat16_bits_to_float(b) : half_bits_to_float(b); }
  MULTIGATHER_HOST_DEVICE static std::uint16_t store(Acc v) { return Brain ? float_to_bfloat16_bits(v) : float_to_half_bits(v); }
};

}  // namespace floating

/// fn.template operator()<E>() with E the floating element of `dtype` (float32, float64,
/// float16, bfloat16); false for another dtype.
template <class Fn>
bool visit_floating(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn.template operator()<floating::Plain<float>>(); return true;
    case DType::kFloat64: fn.template operator()<floating::Plain<double>>(); return true;
    case DType::kFloat16: fn.template operator()<floating::Bits16<false>>(); return true;
    case DType::kBFloat16: fn.template operator()<floating::Bits16<true>>(); return true;
    default: return false;
  }
}

}  // namespace multigather::detail
