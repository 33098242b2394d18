// The jax .at[idx] scatters (jax.at.set / add / subtract / multiply / min / max): values worked
// out by hand below each call (the same calls against JAX itself are in
// tests/python/test_scatter_jax.py), every mode's index rule, duplicates, advanced-indexing
// layouts, and the exact error messages.
#include <limits>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::expect_scatter;
using testing::expect_scatter_error;
using testing::f32;
using testing::i32;
using testing::i64;

// x = [0, 1, 2, 3, 4] at [-1, -5, -6, -7, 5, 7, 2]: -1 -> 4 and -5 -> 0 wrap; -6 -> -1 and
// -7 -> -2 stay out of range after the wrap, as do 5 and 7.
const std::vector<double> kFive = {0, 1, 2, 3, 4};
const std::vector<double> kIdx = {-1, -5, -6, -7, 5, 7, 2};

TEST(JaxAt, ModesAndNegativeIndices) {
  const Tensor x = f32({5}, kFive), i = i64({7, 1}, kIdx), hundred = f32({}, {100});
  // drop (the default), fill and promise_in_bounds skip the out-of-range updates.
  for (const char* mode : {"drop", "fill", "promise_in_bounds"}) {
    expect_scatter("jax.at.add", x, i, hundred, {{"mode", mode}}, {100, 1, 102, 3, 104});
  }
  expect_scatter("jax.at.add", x, i, hundred, {}, {100, 1, 102, 3, 104});
  // clip: -6 -> -1 -> 0, -7 -> -2 -> 0, 5 and 7 -> 4.
  expect_scatter("jax.at.add", x, i, hundred, {{"mode", "clip"}}, {300, 1, 102, 3, 304});
  // wrap_negative_indices=false, clip: every negative clamps to 0.
  expect_scatter("jax.at.add", x, i, hundred, {{"mode", "clip"}, {"wrap_negative_indices", "false"}},
                 {400, 1, 102, 3, 204});
  // wrap_negative_indices=false, drop: only 2 is in range.
  expect_scatter("jax.at.add", x, i, hundred, {{"wrap_negative_indices", "false"}}, {0, 1, 102, 3, 4});
  // set: the last update in row-major order wins (index 0: 10, 20, 30 under clip; 4: 0, 40, 50).
  const Tensor tens = f32({7}, {0, 10, 20, 30, 40, 50, 60});
  expect_scatter("jax.at.set", x, i, tens, {}, {10, 1, 60, 3, 0});
  expect_scatter("jax.at.set", x, i, tens, {{"mode", "clip"}}, {30, 1, 60, 3, 50});
  // int32 indices, an empty index array.
  expect_scatter("jax.at.add", x, i32({2, 1}, {4, -2}), f32({2}, {1, 2}), {}, {0, 1, 2, 5, 5});
  expect_scatter("jax.at.add", x, i64({0, 1}, {}), hundred, {{"mode", "clip"}}, kFive);
}

TEST(JaxAt, ReductionsAndDuplicates) {
  const Tensor x = f32({4}, {1, 2, 3, 4}), i = i64({3, 1}, {0, 0, 3});
  expect_scatter("jax.at.multiply", x, i, f32({3}, {2, 3, 5}), {}, {6, 2, 3, 20});
  expect_scatter("jax.at.subtract", x, i, f32({3}, {2, 3, 5}), {}, {-4, 2, 3, -1});
  expect_scatter("jax.at.min", x, i, f32({3}, {-1, 0, 9}), {}, {-1, 2, 3, 4});
  expect_scatter("jax.at.max", x, i, f32({3}, {-1, 0, 9}), {}, {1, 2, 3, 9});
  expect_scatter("jax.at.set", x, i, f32({3}, {7, 8, 9}), {}, {8, 2, 3, 9});
}

TEST(JaxAt, ComplexMinMaxAreLexicographicAsXlas) {
  // x.at[[0, 0, 2, 2]].max / min on complex64 (the same cases against JAX itself:
  // tests/python/test_scatter_jax.py). Element 0 starts (1, 2): the updates (1, 3) then (1, 1)
  // tie on the real part, the imaginary parts decide. Element 2 starts (0, 0): (NaN, 0) wins
  // (every comparison with NaN is false, so the update is taken), then (1, 0) replaces it.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = testing::c64({3}, {1, 2, 5, 5, 0, 0});
  const Tensor i = i64({4, 1}, {0, 0, 2, 2});
  const Tensor u = testing::c64({4}, {1, 3, 1, 1, nan, 0, 1, 0});
  testing::expect_scatter_c64("jax.at.max", x, i, u, {}, {1, 3, 5, 5, 1, 0});
  testing::expect_scatter_c64("jax.at.min", x, i, u, {}, {1, 1, 5, 5, 1, 0});
  // The NaN update last: it stays.
  const Tensor u2 = testing::c64({4}, {1, 3, 1, 1, 1, 0, nan, 0});
  testing::expect_scatter_c64("jax.at.max", x, i, u2, {}, {1, 3, 5, 5, nan, 0});
}

TEST(JaxAt, AdvancedIndexingLayouts) {
  // Adjacent index arrays on dims 0 and 1 of a [2, 3]: x[[1, 0], [2, -1]] += [5, 7].
  expect_scatter("jax.at.add", f32({2, 3}, std::vector<double>(6, 0)), i64({2, 2}, {1, 2, 0, -1}), f32({2}, {5, 7}),
                 {{"index_dims", "0,1"}}, {0, 0, 7, 0, 0, 5});
  // Separated: x[[1], :, [0]] of a [2, 2, 2] has shape [1, 2]: x[1, 0, 0] += 10, x[1, 1, 0] += 20.
  expect_scatter("jax.at.add", f32({2, 2, 2}, testing::iota(8)), i64({1, 2}, {1, 0}), f32({2}, {10, 20}),
                 {{"index_dims", "0,2"}}, {0, 1, 2, 3, 14, 5, 26, 7});
  // Index on the last dim of a [2, 3]: x[:, [2, 2]] has shape [2, 2]; values [2, 1] broadcast.
  expect_scatter("jax.at.add", f32({2, 3}, std::vector<double>(6, 0)), i64({2, 1}, {2, 2}), f32({2, 1}, {1, 10}),
                 {{"index_dims", "1"}}, {0, 0, 2, 0, 0, 20});
}

TEST(JaxAt, Errors) {
  const Tensor x = f32({2, 3}, std::vector<double>(6, 0));
  expect_scatter_error("jax.at.set", x, i64({1, 1}, {0}), i32({}, {1}), {}, StatusCode::kTypeError,
                       "jax.at.set: values dtype int32 must equal x dtype float32 (jax promotes both and casts the "
                       "result back; multigather does not cast: the Python wrapper casts values when numpy calls the "
                       "cast safe)");
  expect_scatter_error("jax.at.add", x, i64({2, 1}, {0, 1}), f32({4}, {1, 2, 3, 4}), {}, StatusCode::kInvalidArgument,
                       "jax.at.add: Incompatible shapes for broadcasting: values shape [4] and requested shape [2,3] "
                       "(x[idx].shape)");
  expect_scatter_error("jax.at.add", x, i64({2, 1}, {0, 1}), f32({}, {1}), {{"index_dims", "0,1"}},
                       StatusCode::kInvalidArgument,
                       "jax.at.add: indices shape [2,1] must be B ++ [2] (the 2 broadcast index arrays stacked on the "
                       "last dimension)");
  expect_scatter_error("jax.at.add", x, i64({1, 2}, {0, 1}), f32({}, {1}), {{"index_dims", "1,0"}},
                       StatusCode::kInvalidArgument,
                       "jax.at.add: index_dims [1,0] must be strictly increasing (the order of the index arrays in a[...])");
  expect_scatter_error("jax.at.min", x, f32({1, 1}, {0}), f32({}, {1}), {}, StatusCode::kTypeError,
                       "jax.at.min: indices dtype float32 is not an integer type");
  expect_scatter_error("jax.at.max", x, i64({1, 1}, {0}), f32({}, {1}), {{"mode", "wrap"}},
                       StatusCode::kInvalidArgument,
                       "jax.at.max: attribute mode: 'wrap' is not one of drop, fill, clip, promise_in_bounds");
}

}  // namespace
}  // namespace multigather
