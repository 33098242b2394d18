// torch.nn.functional.embedding_bag (src/frontends/segment.cpp; the fused kernel
// kernels/cpu/gathered_segments.cpp): random cases against the scatter reference kernel run on
// the rows gathered into a tensor (sum: bytes) and against a plain loop (mean, max: PyTorch's
// "greater replaces" rule), at 1, 2, 3 and 8 threads byte for byte, with the AVX-512 bag sum
// and without; the weight VJP against the
// loop of its definition; tensor attributes through the C API; errors. The CLI (.npy offsets):
// cli_embedding_bag_test.cpp (built with the CLI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>

#include "kernels/cpu/avx512.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/multigather.h"
#include "multigather/scatter.hpp"
#include "multigather/transforms.hpp"

namespace multigather {
namespace {

constexpr const char* kOp = "torch.nn.functional.embedding_bag";

struct Bags {
  Tensor weight, input, offsets, weights;
  std::int64_t padding = -1;
  std::string mode = "sum";
  bool per_sample = false;
  // How the ids are passed: 0 input itself (C-ordered int64: read in place), 1 an int32 copy,
  // 2 an int64 view with stride 2 (both copied by the lowering).
  int layout = 0;
  Tensor stored;

  TensorView ids() const {
    if (layout == 1) return stored.view();
    if (layout == 2) return TensorView(stored.data(), DType::kInt64, Dims{input.numel()}, Dims{2});
    return input.view();
  }

  Attributes attributes() const {
    Attributes a;
    a.set_tensor("offsets", offsets.view()).set_string("mode", mode);
    if (per_sample) a.set_tensor("per_sample_weights", weights.view());
    if (padding >= 0) a.set_int("padding_idx", padding);
    return a;
  }
};

template <class T>
Bags random_bags(std::mt19937& rng, DType dtype, const std::string& mode) {
  std::uniform_int_distribution<std::int64_t> v_dist(1, 40), d_dist(1, 150), n_dist(0, 300), b_dist(1, 30);
  const std::int64_t v = v_dist(rng), d = d_dist(rng), n = n_dist(rng), b = b_dist(rng);
  Bags c;
  c.mode = mode;
  c.weight = Tensor(dtype, {v, d});
  std::normal_distribution<double> normal;
  for (std::int64_t k = 0; k < v * d; ++k) {
    const double x = normal(rng);
    static_cast<T*>(c.weight.data())[k] = static_cast<T>(x > 1.0 ? 1.0 : x);  // ties for max
  }
  c.input = Tensor(DType::kInt64, {n});
  for (std::int64_t k = 0; k < n; ++k) c.input.data_as<std::int64_t>()[k] = std::uniform_int_distribution<std::int64_t>(0, v - 1)(rng);
  std::vector<std::int64_t> cuts(static_cast<std::size_t>(b));
  for (auto& x : cuts) x = std::uniform_int_distribution<std::int64_t>(0, n)(rng);
  std::sort(cuts.begin(), cuts.end());
  cuts[0] = 0;
  c.offsets = Tensor(DType::kInt64, {b});
  std::copy(cuts.begin(), cuts.end(), c.offsets.data_as<std::int64_t>());
  c.weights = Tensor(dtype, {n});
  for (std::int64_t k = 0; k < n; ++k) static_cast<T*>(c.weights.data())[k] = static_cast<T>(normal(rng));
  c.per_sample = mode == "sum" && rng() % 2 == 0;
  c.padding = rng() % 3 == 0 ? static_cast<std::int64_t>(rng() % static_cast<unsigned>(v)) : -1;
  c.layout = static_cast<int>(rng() % 3);
  const auto* ids = c.input.data_as<std::int64_t>();
  if (c.layout == 1) {
    c.stored = Tensor(DType::kInt32, {n});
    for (std::int64_t k = 0; k < n; ++k) c.stored.data_as<std::int32_t>()[k] = static_cast<std::int32_t>(ids[k]);
  } else if (c.layout == 2) {
    c.stored = Tensor(DType::kInt64, {2 * n});
    for (std::int64_t k = 0; k < n; ++k) {
      c.stored.data_as<std::int64_t>()[2 * k] = ids[k];
      c.stored.data_as<std::int64_t>()[2 * k + 1] = -1;  // between the ids: never read
    }
  }
  return c;
}

/// The output by a loop over PyTorch's definition (T's arithmetic, rows in order).
template <class T>
std::vector<T> loop_bags(const Bags& c) {
  const std::int64_t d = c.weight.shape()[1], n = c.input.numel(), b = c.offsets.numel();
  const T* w = static_cast<const T*>(c.weight.data());
  const T* s = static_cast<const T*>(c.weights.data());
  const auto* ids = c.input.data_as<std::int64_t>();
  const auto* off = c.offsets.data_as<std::int64_t>();
  std::vector<T> out(static_cast<std::size_t>(b * d), T(0));
  for (std::int64_t bag = 0; bag < b; ++bag) {
    const std::int64_t end = bag + 1 < b ? off[bag + 1] : n;
    for (std::int64_t f = 0; f < d; ++f) {
      T acc = 0;
      std::int64_t count = 0;
      for (std::int64_t r = off[bag]; r < end; ++r) {
        if (ids[r] == c.padding) continue;
        const T x = w[ids[r] * d + f];
        if (c.mode == "max") {
          if (count == 0 || x > acc) acc = x;
        } else {
          acc += c.per_sample ? s[r] * x : x;
        }
        ++count;
      }
      out[static_cast<std::size_t>(bag * d + f)] = count == 0 ? T(0) : c.mode == "mean" ? acc / static_cast<T>(count) : acc;
    }
  }
  return out;
}

template <class T>
void check_random_cases(DType dtype) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    for (const char* mode : {"sum", "mean", "max"}) {
      const Bags c = random_bags<T>(rng, dtype, mode);
      SCOPED_TRACE(std::string(mode) + " trial " + std::to_string(trial));
      const std::vector<T> want = loop_bags<T>(c);
      Lowering l;
      ASSERT_TRUE(lower_op(kOp, c.weight.view(), c.ids(), c.attributes(), &l).ok());
      ASSERT_NE(l.gathered, nullptr);
      const std::int64_t n = c.input.numel();
      // C-ordered int64 ids are read in place; others through the lowering's int64 copy.
      if (n > 0) {
        ASSERT_EQ(l.gathered->rows, c.layout == 0 ? c.input.data_as<std::int64_t>() : l.gathered->owned_rows.data());
      }
      // The scatter reference on the gathered rows, written out, into each row's bag (the core
      // indices, which the lowering leaves as shapes: bag_of_rows): the same bytes for a sum.
      if (std::string(mode) == "sum") {
        const std::int64_t d = c.weight.shape()[1];
        ASSERT_EQ(l.indices.data, nullptr);
        const std::vector<std::int64_t> bag = bag_of_rows(*l.gathered);
        ASSERT_EQ(static_cast<std::int64_t>(bag.size()), n);
        TensorView bag_ids = l.indices;
        bag_ids.data = bag.data();
        Tensor rows(dtype, l.updates.shape);
        for (std::int64_t r = 0; r < n; ++r) {
          for (std::int64_t f = 0; f < d; ++f) {
            const T x = static_cast<const T*>(c.weight.data())[l.gathered->rows[r] * d + f];
            static_cast<T*>(rows.data())[static_cast<std::int64_t>(r) * d + f] =
                c.per_sample ? static_cast<const T*>(c.weights.data())[r] * x : x;
          }
        }
        Tensor reference(dtype, l.output_shape);
        const MutableTensorView core(reference.data(), dtype, l.core_output_shape, l.core_output_strides);
        ASSERT_TRUE(scatter_multiaxis_reference(l.input, bag_ids, rows.view(), l.axes, core, l.scatter_options()).ok());
        ASSERT_EQ(std::memcmp(reference.data(), want.data(), want.size() * sizeof(T)), 0);
      }
      for (int threads : {1, 2, 3, 8}) {
        ExecutionContext context;
        context.num_threads = threads;
        Tensor out(dtype, l.output_shape);
        ASSERT_TRUE(execute(l, out.mutable_view(), context).ok());
        ASSERT_EQ(std::memcmp(out.data(), want.data(), want.size() * sizeof(T)), 0) << threads << " threads";
      }
    }
  }
}

TEST(EmbeddingBag, RandomCasesEqualTheReferenceAndTheLoopAtEveryThreadCount) {
  for (bool simd : {true, false}) {  // the AVX-512 bag sum where the CPU has it, and the baseline
    SCOPED_TRACE(simd ? "AVX-512 where available" : "baseline");
    const bool before = detail::cpu::set_simd_enabled(simd);
    check_random_cases<float>(DType::kFloat32);
    check_random_cases<double>(DType::kFloat64);
    detail::cpu::set_simd_enabled(before);
  }
}

TEST(EmbeddingBag, WeightVjpIsTheSumOfEachRowsBagGradient) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    for (const char* mode : {"sum", "mean", "max"}) {
      const Bags c = random_bags<double>(rng, DType::kFloat64, mode);
      const std::int64_t v = c.weight.shape()[0], d = c.weight.shape()[1], n = c.input.numel(), b = c.offsets.numel();
      Tensor grad_out(DType::kFloat64, {b, d});
      for (std::int64_t k = 0; k < b * d; ++k) grad_out.data_as<double>()[k] = std::normal_distribution<double>()(rng);
      // The definition: each kept row gets its bag's gradient (times its weight; / the count;
      // max: only the first row holding the max of the column).
      std::vector<double> want(static_cast<std::size_t>(v * d), 0.0);
      const auto* ids = c.input.data_as<std::int64_t>();
      const auto* off = c.offsets.data_as<std::int64_t>();
      const auto* w = c.weight.data_as<double>();
      for (std::int64_t bag = 0; bag < b; ++bag) {
        const std::int64_t end = bag + 1 < b ? off[bag + 1] : n;
        std::int64_t count = 0;
        for (std::int64_t r = off[bag]; r < end; ++r) count += ids[r] != c.padding;
        for (std::int64_t f = 0; f < d; ++f) {
          const double g = grad_out.data_as<double>()[bag * d + f];
          std::int64_t arg = -1;
          for (std::int64_t r = off[bag]; r < end; ++r) {
            if (ids[r] == c.padding) continue;
            if (std::string(mode) == "max") {
              if (arg < 0 || w[ids[r] * d + f] > w[ids[arg] * d + f]) arg = r;
            } else {
              const double term = std::string(mode) == "mean" ? g / static_cast<double>(count)
                                  : c.per_sample              ? g * c.weights.data_as<double>()[r]
                                                              : g;
              want[static_cast<std::size_t>(ids[r] * d + f)] += term;
            }
          }
          if (arg >= 0) want[static_cast<std::size_t>(ids[arg] * d + f)] += g;
        }
      }
      for (int threads : {1, 2, 3, 8}) {
        ExecutionContext context;
        context.num_threads = threads;
        Tensor grad_weight(DType::kFloat64, {v, d});
        const Status s = execute_vjp(kOp, c.weight.view(), c.input.view(), nullptr, c.attributes(), 0,
                                     grad_out.view(), grad_weight.mutable_view(), nullptr, context);
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_EQ(std::memcmp(grad_weight.data(), want.data(), want.size() * sizeof(double)), 0)
            << mode << " trial " << trial << ", " << threads << " threads";
      }
    }
  }
}

TEST(EmbeddingBag, ErrorsNameTheArgumentAndTheRule) {
  Tensor weight(DType::kFloat32, {5, 2}), input(DType::kInt64, {4}), offsets(DType::kInt64, {2});
  std::fill_n(weight.data_as<float>(), 10, 1.0f);
  const std::int64_t ids[] = {0, 1, 7, 2}, offs[] = {0, 2};
  std::copy(ids, ids + 4, input.data_as<std::int64_t>());
  std::copy(offs, offs + 2, offsets.data_as<std::int64_t>());
  Tensor out;
  Attributes a;
  a.set_tensor("offsets", offsets.view());
  Status s = run_op(kOp, weight.view(), input.view(), a, &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("input[2] = 7 is out of range [0, 5)"), std::string::npos) << s.message();
  input.data_as<std::int64_t>()[2] = 3;
  offsets.data_as<std::int64_t>()[0] = 1;
  s = run_op(kOp, weight.view(), input.view(), a, &out);
  EXPECT_NE(s.message().find("offsets[0] has to be 0"), std::string::npos) << s.message();
  s = run_op(kOp, weight.view(), input.view(), Attributes{{"offsets", "0,2"}}, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("attribute offsets: '0,2': a tensor is given as an array"), std::string::npos) << s.message();
  s = run_op(kOp, weight.view(), input.view(), Attributes().set_int("offsets", 2), &out);
  EXPECT_EQ(s.code(), StatusCode::kTypeError);
  EXPECT_NE(s.message().find("attribute offsets: expected tensor|none, got int 2"), std::string::npos) << s.message();
}

TEST(EmbeddingBag, TensorAttributesThroughTheCApi) {
  const float weight[] = {1, 2, 3, 4, 5, 6};  // [3, 2]
  const std::int64_t ids[] = {2, 0, 1, 1}, offs[] = {0, 1}, w_shape[] = {3, 2}, i_shape[] = {4}, o_shape[] = {2};
  const float psw[] = {1, 2, 3, 0.5f};
  const mg_tensor x{weight, MG_DTYPE_FLOAT32, 2, w_shape, nullptr};
  const mg_tensor idx{ids, MG_DTYPE_INT64, 1, i_shape, nullptr};
  const mg_tensor off{offs, MG_DTYPE_INT64, 1, o_shape, nullptr};
  const mg_tensor wts{psw, MG_DTYPE_FLOAT32, 1, i_shape, nullptr};
  const mg_attr attrs[] = {mg_attr_tensor("offsets", &off), mg_attr_string("mode", "sum"),
                           mg_attr_tensor("per_sample_weights", &wts)};
  float out[4] = {};
  const std::int64_t out_shape[] = {2, 2};
  const mg_tensor_mut o{out, MG_DTYPE_FLOAT32, 2, out_shape, nullptr};
  ASSERT_EQ(mg_run_op(kOp, &x, &idx, attrs, 3, &o, nullptr), MG_OK) << mg_last_error();
  // bag 0: 1 * w[2] = (5, 6); bag 1: 2 * w[0] + 3 * w[1] + 0.5 * w[1] = (2 + 10.5, 4 + 14)
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 6.0f);
  EXPECT_EQ(out[2], 12.5f);
  EXPECT_EQ(out[3], 18.0f);
  const mg_attr null_tensor[] = {mg_attr_tensor("offsets", nullptr)};
  EXPECT_EQ(mg_run_op(kOp, &x, &idx, null_tensor, 1, &o, nullptr), MG_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mg_last_error()).find("attribute offsets: tensor is NULL"), std::string::npos) << mg_last_error();
}

}  // namespace
}  // namespace multigather
