// multigather/dtype.hpp: element types of tensors.
//
// gather_multiaxis moves bytes and never looks at values (SPEC section 1), so a dtype matters to
// the operator only through its element width (1, 2, 4, 8 or 16 bytes) and, for indices, through
// being an integer type. Names follow numpy's spelling ("float32", "bfloat16", "complex64").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace multigather {

/// Every element type of SPEC section 1 (ONNX's list minus strings), plus the 1-byte float8
/// types of ml_dtypes. Values are stable: the C API's mg_dtype (multigather.h) uses the same
/// numbers.
enum class DType : std::uint8_t {
  kBool = 0,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,   // IEEE binary16, 2 bytes
  kBFloat16,  // bfloat16, 2 bytes
  kFloat32,
  kFloat64,
  kComplex64,   // two float32, 8 bytes
  kComplex128,  // two float64, 16 bytes
  kFloat8E4M3FN,
  kFloat8E5M2,
};

/// Number of DType values; a DType outside [0, kDTypeCount) is "unsupported".
inline constexpr int kDTypeCount = 17;

/// True when `dtype` is one of the enumerators above.
constexpr bool is_valid(DType dtype) noexcept {
  return static_cast<int>(dtype) < kDTypeCount;
}

/// Element width in bytes (1, 2, 4, 8 or 16); 0 for an invalid dtype. (Inline: every call's
/// validation and planning asks it several times.)
constexpr std::size_t element_size(DType dtype) noexcept {
  // In the enumerators' order (src/core/dtype.cpp's table checks this one).
  constexpr std::uint8_t kSizes[kDTypeCount] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 8, 16, 1, 1};
  return is_valid(dtype) ? kSizes[static_cast<std::size_t>(dtype)] : 0;
}

/// numpy-style name ("float32", "uint8", "bfloat16", ...); "invalid(N)" style is not returned:
/// an invalid dtype gives "unsupported".
std::string_view dtype_name(DType dtype) noexcept;

/// Parses a name produced by dtype_name (also accepts "float" / "double" / "half" aliases,
/// "float8_e4m3fn" / "float8_e5m2"). Returns nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// True for int8/16/32/64 and uint8/16/32/64: the dtypes `indices` may have.
bool is_index_type(DType dtype) noexcept;

/// True for uint8/16/32/64 (unsigned indices never take the negative-index rule).
bool is_unsigned_integer(DType dtype) noexcept;

/// float16 <-> float32 and bfloat16 <-> float32 (round to nearest even), used for fill values
/// and for printing. No value semantics are needed by the operator itself.
std::uint16_t float_to_half(float value) noexcept;
float half_to_float(std::uint16_t bits) noexcept;
std::uint16_t float_to_bfloat16(float value) noexcept;
float bfloat16_to_float(std::uint16_t bits) noexcept;

}  // namespace multigather
