// Test support for the frontends: typed tensors from literal values, running ops, comparing.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "multigather/ops.hpp"

namespace multigather::testing {

/// A tensor of `dtype` holding `values` (converted exactly; float16 through float_to_half).
inline Tensor make_tensor(DType dtype, Dims shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  auto* p = static_cast<unsigned char*>(t.data());
  const std::size_t es = element_size(dtype);
  for (std::size_t i = 0; i < values.size() && i < static_cast<std::size_t>(t.numel()); ++i) {
    const double v = values[i];
    unsigned char* dst = p + i * es;
    switch (dtype) {
      case DType::kFloat32: { float x = static_cast<float>(v); std::memcpy(dst, &x, 4); break; }
      case DType::kFloat64: { std::memcpy(dst, &v, 8); break; }
      case DType::kFloat16: { std::uint16_t x = float_to_half(static_cast<float>(v)); std::memcpy(dst, &x, 2); break; }
      case DType::kInt8: { std::int8_t x = static_cast<std::int8_t>(v); std::memcpy(dst, &x, 1); break; }
      case DType::kUInt8: case DType::kBool: { std::uint8_t x = static_cast<std::uint8_t>(v); std::memcpy(dst, &x, 1); break; }
      case DType::kInt16: { std::int16_t x = static_cast<std::int16_t>(v); std::memcpy(dst, &x, 2); break; }
      case DType::kUInt16: { std::uint16_t x = static_cast<std::uint16_t>(v); std::memcpy(dst, &x, 2); break; }
      case DType::kInt32: { std::int32_t x = static_cast<std::int32_t>(v); std::memcpy(dst, &x, 4); break; }
      case DType::kUInt32: { std::uint32_t x = static_cast<std::uint32_t>(v); std::memcpy(dst, &x, 4); break; }
      case DType::kInt64: { std::int64_t x = static_cast<std::int64_t>(v); std::memcpy(dst, &x, 8); break; }
      case DType::kUInt64: { std::uint64_t x = static_cast<std::uint64_t>(v); std::memcpy(dst, &x, 8); break; }
      default: ADD_FAILURE() << "make_tensor: unsupported dtype " << dtype_name(dtype);
    }
  }
  return t;
}

inline Tensor f32(Dims shape, const std::vector<double>& v) { return make_tensor(DType::kFloat32, shape, v); }
inline Tensor i64(Dims shape, const std::vector<double>& v) { return make_tensor(DType::kInt64, shape, v); }
inline Tensor i32(Dims shape, const std::vector<double>& v) { return make_tensor(DType::kInt32, shape, v); }

/// 0, 1, 2, ... (n values).
inline std::vector<double> iota(int n, double start = 0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + i;
  return v;
}

/// Values of a float32 tensor.
inline std::vector<float> values_f32(const Tensor& t) {
  std::vector<float> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<float>()[i]);
  return v;
}

/// `values` rounded to float32 (what a float32 tensor of them holds).
inline std::vector<float> as_f32(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

/// Runs `op` (exception-free API); expects success, the output shape and float32 values.
inline void expect_op(const std::string& op, const Tensor& input, const Tensor& indices,
                      const Attributes& attrs, Dims shape, const std::vector<double>& values) {
  Tensor out;
  const Status s = run_op(op, input.view(), indices.view(), attrs, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  EXPECT_EQ(to_string(out.shape()), to_string(shape)) << op;
  EXPECT_EQ(values_f32(out), as_f32(values)) << op;
}

/// Runs `op`; expects the status code and the exact message.
inline void expect_error(const std::string& op, const Tensor& input, const Tensor& indices,
                         const Attributes& attrs, StatusCode code, const std::string& message) {
  Tensor out;
  const Status s = run_op(op, input.view(), indices.view(), attrs, &out);
  EXPECT_EQ(s.code(), code) << op << ": " << s.message();
  EXPECT_EQ(s.message(), message);
}

/// Lowers `op` on shapes alone and returns the lowering (expects success).
inline Lowering lower_shapes(const std::string& op, Dims input_shape, Dims indices_shape,
                             const Attributes& attrs, DType indices_dtype = DType::kInt64) {
  Lowering l;
  const Status s = lower_op(op, TensorView(nullptr, DType::kFloat32, input_shape),
                            TensorView(nullptr, indices_dtype, indices_shape), attrs, &l);
  EXPECT_TRUE(s.ok()) << op << ": " << s.message();
  return l;
}

}  // namespace multigather::testing
