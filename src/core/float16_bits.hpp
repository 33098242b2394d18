// Internal: float16 / bfloat16 <-> float32 on bit patterns (round to nearest even), written once
// for host and device. The public conversions (multigather/dtype.hpp) call these, and so does
// the CUDA scatter's combine (kernels/combine.hpp), so a float16 sum rounds the
// same way on the CPU and on the GPU.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.hpp"

namespace multigather::detail {

MULTIGATHER_HOST_DEVICE inline std::uint32_t float_bits(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  std::uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  return x;
#endif
}

MULTIGATHER_HOST_DEVICE inline float float_from_bits(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(x);
#else
  float value;
  std::memcpy(&value, &x, sizeof x);
  return value;
#endif
}

MULTIGATHER_HOST_DEVICE inline std::uint16_t float_to_half_bits(float value) {
  const std::uint32_t x = float_bits(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xffu) {  // inf or nan (keep nan quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                                     // subnormal or zero
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into inf: correct
  return static_cast<std::uint16_t>(sign | half);
}

MULTIGATHER_HOST_DEVICE inline float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  std::uint32_t mant = bits & 0x3ffu;
  std::uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  return float_from_bits(out);
}

MULTIGATHER_HOST_DEVICE inline std::uint16_t float_to_bfloat16_bits(float value) {
  std::uint32_t x = float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

MULTIGATHER_HOST_DEVICE inline float bfloat16_bits_to_float(std::uint16_t bits) {
  return float_from_bits(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace multigather::detail
