// Element types: widths, names, and the float16/bfloat16 conversions used for fill values.
#include "multigather/dtype.hpp"

#include "core/float16_bits.hpp"

#include <array>
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

// element_size (dtype.hpp) is inline: its table must be this one's.
constexpr bool sizes_agree() {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (element_size(static_cast<DType>(i)) != kInfo[static_cast<std::size_t>(i)].size) return false;
  }
  return true;
}
static_assert(sizes_agree(), "element_size's table (dtype.hpp) differs from kInfo");

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

std::uint16_t float_to_half(float value) noexcept { return detail::float_to_half_bits(value); }

float half_to_float(std::uint16_t bits) noexcept { return detail::half_bits_to_float(bits); }

std::uint16_t float_to_bfloat16(float value) noexcept { return detail::float_to_bfloat16_bits(value); }

float bfloat16_to_float(std::uint16_t bits) noexcept { return detail::bfloat16_bits_to_float(bits); }

}  // namespace multigather
