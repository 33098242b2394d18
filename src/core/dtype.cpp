// Element types: widths, names, and the float16/bfloat16 conversions used for fill values.
#include "multigather/dtype.hpp"

#include <array>
#include <bit>
#include <cstring>

namespace multigather {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::size_t size;
  bool index;
  bool is_unsigned;
};

constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
    {"bool", 1, false, false},
    {"int8", 1, true, false},
    {"uint8", 1, true, true},
    {"int16", 2, true, false},
    {"uint16", 2, true, true},
    {"int32", 4, true, false},
    {"uint32", 4, true, true},
    {"int64", 8, true, false},
    {"uint64", 8, true, true},
    {"float16", 2, false, false},
    {"bfloat16", 2, false, false},
    {"float32", 4, false, false},
    {"float64", 8, false, false},
    {"complex64", 8, false, false},
    {"complex128", 16, false, false},
    {"float8_e4m3fn", 1, false, false},
    {"float8_e5m2", 1, false, false},
}};

}  // namespace

std::size_t element_size(DType dtype) noexcept {
  return is_valid(dtype) ? kInfo[static_cast<std::size_t>(dtype)].size : 0;
}

std::string_view dtype_name(DType dtype) noexcept {
  return is_valid(dtype) ? kInfo[static_cast<std::size_t>(dtype)].name : "unsupported";
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (kInfo[static_cast<std::size_t>(i)].name == name) return static_cast<DType>(i);
  }
  if (name == "float" || name == "single") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  return std::nullopt;
}

bool is_index_type(DType dtype) noexcept {
  return is_valid(dtype) && kInfo[static_cast<std::size_t>(dtype)].index;
}

bool is_unsigned_integer(DType dtype) noexcept {
  return is_valid(dtype) && kInfo[static_cast<std::size_t>(dtype)].is_unsigned;
}

std::uint16_t float_to_half(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
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

float half_to_float(std::uint16_t bits) noexcept {
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
  return std::bit_cast<float>(out);
}

std::uint16_t float_to_bfloat16(float value) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bfloat16_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace multigather
