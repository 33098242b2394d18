// jax.numpy.take / take_along_axis: the JAX index modes (docs/semantics.md section 7):
// fill (default, dtype-dependent fill values), clip (take: no wrap; take_along_axis: wrap first),
// wrap, promise_in_bounds; empty axes. Values worked by hand from the jax.numpy docs' rules.
#include <cmath>
#include <cstring>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(JaxTake, FillModeDefaultsByDtype) {
  Tensor out = run_op("jax.numpy.take", f32({3}, {1, 2, 3}).view(), i64({4}, {0, 5, -1, -4}).view());
  const std::vector<float> v = values_f32(out);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3.0f);  // -1 wraps once
  EXPECT_TRUE(std::isnan(v[3]));  // -4 stays out of range after one wrap
  const Tensor ints = make_tensor(DType::kInt32, {2}, {5, 6});
  Tensor o2 = run_op("jax.numpy.take", ints.view(), i64({2}, {1, 2}).view());
  EXPECT_EQ(o2.data_as<std::int32_t>()[0], 6);
  EXPECT_EQ(o2.data_as<std::int32_t>()[1], INT32_MIN);
  const Tensor u8 = make_tensor(DType::kUInt8, {2}, {5, 6});
  Tensor o3 = run_op("jax.numpy.take", u8.view(), i64({1}, {9}).view());
  EXPECT_EQ(o3.data_as<std::uint8_t>()[0], 255);
  expect_op("jax.numpy.take", f32({3}, {1, 2, 3}), i64({2}, {7, 0}), {{"fill_value", "-1.5"}}, {2}, {-1.5, 1});
}

TEST(JaxTake, ClipWrapAndNoPromise) {
  const Tensor a = f32({3}, {1, 2, 3});
  const Tensor idx = i64({3}, {-1, 5, 1});
  expect_op("jax.numpy.take", a, idx, {{"mode", "clip"}}, {3}, {1, 3, 2});  // -1 -> 0 (no wrap)
  expect_op("jax.numpy.take", a, idx, {{"mode", "wrap"}}, {3}, {3, 3, 2});  // modulo
  // jnp.take refuses promise_in_bounds (jax 0.10: ValueError "Invalid mode ... for np.take");
  // take_along_axis takes it.
  expect_error("jax.numpy.take", a, idx, {{"mode", "promise_in_bounds"}}, StatusCode::kInvalidArgument,
               "jax.numpy.take: Invalid mode 'promise_in_bounds' for np.take");
  expect_op("jax.numpy.take", f32({2, 2}, iota(4)), i64({1}, {1}), {{"axis", "1"}}, {2, 1}, {1, 3});
}

TEST(JaxTakeAlongAxis, ClipWrapsNegativesFirst) {
  const Tensor a = f32({3}, {1, 2, 3});
  expect_op("jax.numpy.take_along_axis", a, i64({3}, {-1, 5, 1}), {{"mode", "clip"}}, {3}, {3, 3, 2});
  Tensor out = run_op("jax.numpy.take_along_axis", f32({2, 2}, iota(4)).view(), i64({1, 2}, {1, 2}).view(),
                      {{"axis", "1"}});
  ASSERT_EQ(to_string(out.shape()), "[2,2]");  // broadcast
  const std::vector<float> v = values_f32(out);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3.0f);
  EXPECT_TRUE(std::isnan(v[3]));
}

TEST(JaxTakeAlongAxis, EmptyAxisGivesZeros) {
  expect_op("jax.numpy.take_along_axis", f32({2, 0}, {}), i64({2, 3}, {0, 1, 2, 0, 1, 2}), {{"axis", "1"}}, {2, 3},
            {0, 0, 0, 0, 0, 0});
}

TEST(JaxTake, Errors) {
  expect_error("jax.numpy.take", f32({0}, {}), i64({1}, {0}), {}, StatusCode::kOutOfRange,
               "jax.numpy.take: Cannot do a non-empty jnp.take() from an empty axis.");
  expect_error("jax.numpy.take", f32({2}, {0, 1}), i64({1}, {0}), {{"mode", "raise"}}, StatusCode::kInvalidArgument,
               "jax.numpy.take: The 'raise' mode to jnp.take is not supported.");
  expect_error("jax.numpy.take_along_axis", f32({2}, {0, 1}), i64({1}, {0}), {{"mode", "wrap"}},
               StatusCode::kInvalidArgument, "jax.numpy.take_along_axis: attribute mode: 'wrap' is not one of fill, clip, promise_in_bounds");
}

}  // namespace
}  // namespace multigather
