// torch_dtype.h: PyTorch's scalar types as multigather's dtypes, for the two libraries built
// against torch (torch_fast/torch_fast.cpp, torch_library/multigather_torch.cpp).
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>

#include "multigather/dtype.hpp"

namespace multigather::python {

/// The multigather dtype of a torch scalar type; nullopt for one multigather has no dtype for
/// (quantized, complex32, bits, the float8 variants other than e4m3fn and e5m2, ...).
inline std::optional<DType> dtype_of(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return DType::kBool;
    case c10::ScalarType::Char: return DType::kInt8;
    case c10::ScalarType::Byte: return DType::kUInt8;
    case c10::ScalarType::Short: return DType::kInt16;
    case c10::ScalarType::UInt16: return DType::kUInt16;
    case c10::ScalarType::Int: return DType::kInt32;
    case c10::ScalarType::UInt32: return DType::kUInt32;
    case c10::ScalarType::Long: return DType::kInt64;
    case c10::ScalarType::UInt64: return DType::kUInt64;
    case c10::ScalarType::Half: return DType::kFloat16;
    case c10::ScalarType::BFloat16: return DType::kBFloat16;
    case c10::ScalarType::Float: return DType::kFloat32;
    case c10::ScalarType::Double: return DType::kFloat64;
    case c10::ScalarType::ComplexFloat: return DType::kComplex64;
    case c10::ScalarType::ComplexDouble: return DType::kComplex128;
    case c10::ScalarType::Float8_e4m3fn: return DType::kFloat8E4M3FN;
    case c10::ScalarType::Float8_e5m2: return DType::kFloat8E5M2;
    default: return std::nullopt;
  }
}

}  // namespace multigather::python
