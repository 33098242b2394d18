// Helpers for the core tests: typed tensors from initializer lists, and the gather call under
// test (the public API) next to the reference kernel.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "multigather/multigather.hpp"

namespace mg_test {

template <class T> constexpr multigather::DType dtype_of() {
  using multigather::DType;
  if constexpr (std::is_same_v<T, std::int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else return DType::kFloat64;
}

/// A typed host tensor: values in C order plus a shape.
template <class T> struct Host {
  multigather::Dims shape;
  std::vector<T> values;
  multigather::TensorView view() const { return {values.data(), dtype_of<T>(), shape}; }
};

/// Runs gather_multiaxis (the engine) and gather_multiaxis_reference (the oracle) and checks
/// that they agree before returning the engine's result as typed values.
template <class T, class I>
std::vector<T> gather_values(const Host<T>& input, const Host<I>& indices,
                             std::vector<std::int64_t> axes,
                             const multigather::GatherOptions& options = {},
                             multigather::Dims* shape_out = nullptr) {
  multigather::Tensor out = multigather::gather_multiaxis(input.view(), indices.view(), axes, options);
  multigather::Tensor ref(out.dtype(), out.shape());
  EXPECT_TRUE(multigather::gather_multiaxis_reference(input.view(), indices.view(), axes,
                                                      ref.mutable_view(), options).ok());
  EXPECT_EQ(0, std::memcmp(out.data(), ref.data(), out.nbytes())) << "engine differs from reference";
  if (shape_out) *shape_out = out.shape();
  return std::vector<T>(out.data_as<T>(), out.data_as<T>() + out.numel());
}

/// The message of the Status the core returns for this call.
template <class T, class I>
multigather::Status gather_status(const Host<T>& input, const Host<I>& indices,
                                  std::vector<std::int64_t> axes,
                                  const multigather::GatherOptions& options = {}) {
  multigather::GatherShape shape;
  multigather::Status s = multigather::infer_shape(input.shape, indices.shape, axes, &shape);
  if (!s.ok()) return s;
  multigather::Tensor out(input.view().dtype, shape.output_shape);
  return multigather::gather_multiaxis_into(input.view(), indices.view(), axes, out.mutable_view(), options);
}

}  // namespace mg_test
