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

/// A complex64 tensor from its parts (re, im, re, im, ...; float32 values, NaN included).
inline Tensor c64(Dims shape, const std::vector<float>& parts) {
  Tensor t(DType::kComplex64, shape);
  EXPECT_EQ(static_cast<std::int64_t>(parts.size()), 2 * t.numel()) << "c64: two parts per element";
  if (!parts.empty()) std::memcpy(t.data(), parts.data(), parts.size() * sizeof(float));
  return t;
}

/// Runs scatter op `op` on complex64 operands; expects success and exactly `parts`' bytes.
inline void expect_scatter_c64(const std::string& op, const Tensor& x, const Tensor& i, const Tensor& u,
                               const Attributes& a, const std::vector<float>& parts) {
  Tensor out;
  const Status s = run_op(op, x.view(), i.view(), u.view(), a, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  ASSERT_EQ(static_cast<std::int64_t>(parts.size()), 2 * out.numel()) << op;
  std::vector<float> got(parts.size());
  std::memcpy(got.data(), out.data(), got.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(got.data(), parts.data(), got.size() * sizeof(float)), 0) << op << ": got " << [&] {
    std::string g;
    for (float v : got) g += std::to_string(v) + " ";
    return g;
  }();
}

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

/// Runs scatter op `op`; expects success, the input's shape and float32 values.
inline void expect_scatter(const std::string& op, const Tensor& x, const Tensor& i, const Tensor& u,
                           const Attributes& a, const std::vector<double>& want) {
  Tensor out;
  const Status s = run_op(op, x.view(), i.view(), u.view(), a, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  EXPECT_EQ(to_string(out.shape()), to_string(x.shape())) << op;
  EXPECT_EQ(values_f32(out), as_f32(want)) << op;
}

/// Runs scatter op `op`; expects the status code and the exact message.
inline void expect_scatter_error(const std::string& op, const Tensor& x, const Tensor& i, const Tensor& u,
                                 const Attributes& a, StatusCode code, const std::string& message) {
  Tensor out;
  const Status s = run_op(op, x.view(), i.view(), u.view(), a, &out);
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

/// One valid call of every registry op (shapes and attributes; int64 indices), for the tests
/// that walk the whole registry (explain through the API and through the CLI).
/// One explain case per scatter op of the registry (with the updates' shape).
struct ScatterExplainCase {
  const char* op;
  Dims x, i, u;
  Attributes a;
};
inline const std::vector<ScatterExplainCase>& scatter_explain_cases() {
  static const std::vector<ScatterExplainCase> cases = {
      {"scatter_multiaxis", {4, 3}, {2, 1}, {2, 3}, {{"axes", "0"}, {"reduction", "add"}}},
      {"onnx.ScatterElements", {4, 3}, {2, 3}, {2, 3}, {{"reduction", "add"}}},
      {"onnx.ScatterND", {4, 3}, {2, 1}, {2, 3}, {{"reduction", "max"}}},
      {"torch.scatter", {4, 3}, {2, 3}, {3, 3}, {{"dim", "0"}}},
      {"torch.scatter_add", {4, 3}, {4, 2}, {4, 2}, {{"dim", "1"}}},
      {"torch.scatter_reduce", {4, 3}, {2, 3}, {2, 3}, {{"reduce", "amax"}, {"include_self", "false"}}},
      {"torch.index_add", {4, 3}, {2}, {2, 3}, {{"alpha", "2"}}},
      {"numpy.put_along_axis", {4, 3}, {4, 1}, {1}, {{"axis", "1"}}},
      {"numpy.add_at", {4, 3}, {5}, {3}, {}},
      {"webnn.scatterElements", {4, 3}, {4, 2}, {4, 2}, {{"axis", "1"}}},
      {"webnn.scatterND", {4, 3}, {2, 1}, {2, 3}, {}},
      {"tf.tensor_scatter_nd_update", {4, 3}, {2, 1}, {2, 3}, {}},
      {"tf.tensor_scatter_nd_add", {4, 3}, {2, 2}, {2}, {}},
      {"tf.tensor_scatter_nd_sub", {4, 3}, {2, 1}, {2, 3}, {}},
      {"tf.tensor_scatter_nd_min", {4, 3}, {2, 1}, {2, 3}, {}},
      {"tf.tensor_scatter_nd_max", {4, 3}, {2, 1}, {2, 3}, {{"index_mode", "drop"}}},
      {"tf.scatter_nd", {4, 3}, {2, 1}, {2, 3}, {}},
      {"coreml.scatter", {4, 3}, {2}, {4, 2}, {{"axis", "1"}, {"mode", "sub"}}},
      {"coreml.scatter_along_axis", {4, 3}, {4, 2}, {4, 2}, {{"axis", "1"}}},
      {"coreml.scatter_nd", {4, 3}, {2, 1}, {2, 3}, {{"mode", "update"}}},
      {"tosa.scatter", {2, 4, 3}, {2, 2}, {2, 2, 3}, {}},
      {"dml.ScatterElements", {4, 3}, {4, 2}, {4, 2}, {{"axis", "1"}}},
      {"dml.ScatterND", {1, 4, 3}, {1, 2, 1}, {1, 2, 3}, {{"input_dimension_count", "2"}, {"indices_dimension_count", "2"}}},
      {"tensor.scatter", {4, 3}, {2, 1}, {2, 1, 3}, {{"scatter_dims", "0"}}},
      {"numpy.multiply_at", {4, 3}, {5}, {3}, {}},
      {"numpy.minimum_at", {4, 3}, {5}, {5, 3}, {}},
      {"numpy.maximum_at", {4, 3}, {2, 2}, {1}, {}},
      {"torch.index_copy", {4, 3}, {2}, {4, 2}, {{"dim", "1"}}},
      {"torch.index_fill", {4, 3}, {2}, {}, {}},
      {"torch.put", {4, 3}, {2, 2}, {4}, {{"accumulate", "true"}}},
      {"torch.index_put", {4, 3, 2}, {5, 2}, {5, 3}, {{"index_dims", "0,2"}, {"accumulate", "true"}}},
      {"numpy.put", {4, 3}, {5}, {5}, {{"mode", "wrap"}}},
      {"jax.at.set", {4, 3}, {2, 1}, {1}, {}},
      {"jax.at.add", {4, 3, 2}, {5, 2}, {5, 3}, {{"index_dims", "0,2"}}},
      {"jax.at.subtract", {4, 3}, {2, 2}, {2}, {{"index_dims", "0,1"}, {"mode", "clip"}}},
      {"jax.at.multiply", {4, 3}, {2, 1}, {4, 2}, {{"index_dims", "1"}}},
      {"jax.at.min", {4, 3}, {2, 1}, {2, 3}, {{"wrap_negative_indices", "false"}}},
      {"jax.at.max", {4, 3}, {2, 1}, {2, 3}, {{"mode", "promise_in_bounds"}}},
      {"stablehlo.scatter", {4, 3}, {2, 1}, {2, 2}, {{"update_window_dims", "1"}, {"inserted_window_dims", "0"},
                                                     {"scatter_dims_to_operand_dims", "0"}, {"index_vector_dim", "1"},
                                                     {"update_computation", "add"}}},
  };
  return cases;
}

struct ExplainCase {
  const char* op;
  Dims x, i;
  Attributes a;
};
inline const std::vector<ExplainCase>& explain_cases() {
  static const std::vector<ExplainCase> cases = {
      {"gather_multiaxis", {4, 2, 1, 2}, {1, 3, 2, 2}, {{"axes", "1"}}},
      {"onnx.Gather", {4, 3}, {2, 2}, {{"axis", "1"}}},
      {"onnx.GatherElements", {4, 3}, {2, 3}, {}},
      {"onnx.GatherND", {2, 2, 2}, {2, 1}, {{"batch_dims", "1"}}},
      {"torch.gather", {3, 4}, {1, 2}, {{"dim", "1"}}},
      {"torch.take", {3, 4}, {5}, {}},
      {"torch.take_along_dim", {3, 4}, {1, 2}, {{"dim", "1"}}},
      {"torch.index_select", {3, 4}, {2}, {{"dim", "1"}}},
      {"numpy.take", {3, 4}, {2}, {{"axis", "1"}, {"mode", "clip"}}},
      {"numpy.take_along_axis", {3, 4}, {3, 1}, {}},
      {"numpy.advanced_index", {3, 4, 5}, {2, 2}, {{"index_dims", "0,2"}}},
      {"tf.gather", {3, 5}, {3, 2}, {{"axis", "1"}, {"batch_dims", "1"}}},
      {"tf.gather_nd", {2, 2, 2}, {2, 1}, {{"batch_dims", "1"}}},
      {"jax.numpy.take", {3, 4}, {2}, {{"axis", "0"}}},
      {"jax.numpy.take_along_axis", {3, 4}, {3, 2}, {}},
      {"coreml.gather", {3, 4}, {3, 2}, {{"axis", "1"}, {"batch_dims", "1"}}},
      {"coreml.gather_along_axis", {3, 4}, {3, 2}, {{"axis", "1"}}},
      {"coreml.gather_nd", {3, 4}, {2, 2}, {}},
      {"tosa.gather", {2, 3, 4}, {2, 5}, {}},
      {"tensor.gather", {4, 5, 6}, {1, 2, 3, 2}, {{"gather_dims", "1,2"}}},
      {"tcp.gather", {3, 4}, {2, 2}, {{"dim", "1"}}},
      {"tcp.gather_nd", {3, 4}, {2, 1}, {}},
      {"stablehlo.gather", {3, 4, 2}, {2, 3, 2},
       {{"offset_dims", "2,3"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "1,0"},
        {"index_vector_dim", "2"}, {"slice_sizes", "1,2,2"}}},
      {"webnn.gather", {3, 4}, {2}, {{"axis", "1"}}},
      {"webnn.gatherElements", {3, 4}, {3, 2}, {{"axis", "1"}}},
      {"webnn.gatherND", {3, 4}, {2, 2}, {}},
      {"dml.Gather", {1, 4, 3}, {1, 1, 2}, {{"axis", "1"}}},
      {"dml.GatherElements", {1, 4, 3}, {1, 2, 3}, {{"axis", "1"}}},
      {"dml.GatherND", {1, 4, 3}, {1, 2, 1}, {{"input_dimension_count", "2"}, {"indices_dimension_count", "2"}}},
    };
  return cases;
}

/// One explain case per segment op (called as a gather: data, segment_ids; lowered onto a
/// scatter).
inline const std::vector<ExplainCase>& segment_explain_cases() {
  static const std::vector<ExplainCase> cases = {
      {"jax.ops.segment_sum", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"jax.ops.segment_prod", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"jax.ops.segment_max", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"jax.ops.segment_min", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_sum", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_prod", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_max", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_min", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_mean", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.unsorted_segment_sqrt_n", {5, 2}, {5}, {{"num_segments", "3"}}},
      {"tf.math.segment_sum", {5, 2}, {5}, {}},
      {"tf.math.segment_prod", {5, 2}, {5}, {}},
      {"tf.math.segment_max", {5, 2}, {5}, {}},
      {"tf.math.segment_min", {5, 2}, {5}, {}},
      {"tf.math.segment_mean", {5, 2}, {5}, {}},
      {"torch.segment_reduce", {5, 2}, {3}, {{"reduce", "max"}, {"unsafe", "true"}}},
      {"torch_scatter.scatter", {5, 2}, {5}, {{"dim", "0"}, {"dim_size", "3"}, {"reduce", "mean"}}},
      {"torch_scatter.segment_coo", {5, 2}, {5}, {{"dim_size", "3"}, {"reduce", "min"}}},
      {"torch_scatter.segment_csr", {5, 2}, {4}, {{"reduce", "sum"}}},
      {"torch.nn.functional.embedding_bag", {6, 2}, {3, 2}, {{"mode", "sum"}}},
  };
  return cases;
}

}  // namespace multigather::testing
