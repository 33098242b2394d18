// stablehlo.scatter: the StableHLO spec's example (batching dims, windows, an out-of-range
// start), XLA's whole-window skip, assign's last-wins rule, and the constraint errors. The
// same op against jax.lax.scatter on random dimension numbers: tests/python/test_scatter_stablehlo.py.
#include <limits>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::expect_scatter;
using testing::expect_scatter_error;
using testing::f32;
using testing::i32;
using testing::i64;

TEST(StablehloScatter, SpecExample) {
  // https://github.com/openxla/stablehlo/blob/main/docs/spec.md#scatter: input 2x3x4x2 = 1..48,
  // updates all 1, update_computation add; the start [0, 9] is out of range (skipped).
  const Tensor input = f32({2, 3, 4, 2}, testing::iota(48, 1));
  const Tensor indices = i64({2, 2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
                                            0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0});
  const Tensor updates = f32({2, 2, 3, 2, 2}, std::vector<double>(48, 1));
  expect_scatter("stablehlo.scatter", input, indices, updates,
                 {{"update_window_dims", "3,4"}, {"inserted_window_dims", "1"}, {"input_batching_dims", "0"},
                  {"scatter_indices_batching_dims", "1"}, {"scatter_dims_to_operand_dims", "2,1"},
                  {"index_vector_dim", "3"}, {"update_computation", "add"}},
                 {3, 4, 6, 7, 6, 7, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 17, 18, 19, 20, 22, 23, 24, 25,
                  25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39, 38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48});
}

TEST(StablehloScatter, WindowsThatDoNotFitAreSkippedWhole) {
  // operand [5], windows of 2 at starts 4, 3, -1, 0: 4 and -1 do not fit (XLA skips them whole;
  // the spec's per-element text would write operand[4] += 1).
  const Attributes dn = {{"update_window_dims", "1"}, {"scatter_dims_to_operand_dims", "0"},
                         {"index_vector_dim", "1"}, {"update_computation", "add"}};
  expect_scatter("stablehlo.scatter", f32({5}, {0, 0, 0, 0, 0}), i64({4, 1}, {4, 3, -1, 0}),
                 f32({4, 2}, {1, 1, 10, 10, 100, 100, 1000, 1000}), dn, {1000, 1000, 0, 10, 10});
  // Point updates (windows of 1 on the indexed dim, the whole row on the other): the row at a
  // start out of range is skipped; index_vector_dim = rank(scatter_indices) (scalar starts).
  expect_scatter("stablehlo.scatter", f32({3, 2}, std::vector<double>(6, 0)), i32({3}, {2, 3, 0}),
                 f32({3, 2}, {1, 2, 3, 4, 5, 6}),
                 {{"update_window_dims", "1"}, {"inserted_window_dims", "0"}, {"scatter_dims_to_operand_dims", "0"},
                  {"index_vector_dim", "1"}, {"update_computation", "max"}},
                 {5, 6, 0, 0, 1, 2});
}

TEST(StablehloScatter, ComplexMaxAndMinAreLexicographic) {
  // operand complex64 [3], point updates at 0, 0, 2, 2: the spec's lexicographic max / min of
  // the (real, imaginary) pairs, NaN and ties as XLA (the update wins both).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto dn = [](const char* computation) -> Attributes {
    return {{"inserted_window_dims", "0"}, {"scatter_dims_to_operand_dims", "0"}, {"index_vector_dim", "1"},
            {"update_computation", computation}};
  };
  const Tensor x = testing::c64({3}, {1, 2, 5, 5, 0, 0});
  const Tensor i = i64({4, 1}, {0, 0, 2, 2});
  const Tensor u = testing::c64({4}, {1, 3, -0.0f, 9, 0, nan, -0.0f, 0});
  // Element 0: (1, 3) beats (1, 2); (-0, 9) loses. Element 2: (0, NaN) ties the real part and
  // NaN compares false: taken; then (-0, 0) ties the real part, NaN again: taken.
  testing::expect_scatter_c64("stablehlo.scatter", x, i, u, dn("max"), {1, 3, 5, 5, -0.0f, 0});
  testing::expect_scatter_c64("stablehlo.scatter", x, i, u, dn("min"), {-0.0f, 9, 5, 5, -0.0f, 0});
}

TEST(StablehloScatter, AssignKeepsTheLastAndPartialWindows) {
  // assign with duplicate starts: the last in row-major order wins. A window [0, 2) of a dim of
  // 3 that is not indexed writes columns 0 and 1 only.
  expect_scatter("stablehlo.scatter", f32({2, 3}, std::vector<double>(6, 0)), i64({3, 1}, {1, 0, 1}),
                 f32({3, 2}, {1, 2, 3, 4, 5, 6}),
                 {{"update_window_dims", "1"}, {"inserted_window_dims", "0"}, {"scatter_dims_to_operand_dims", "0"},
                  {"index_vector_dim", "1"}},
                 {3, 4, 0, 5, 6, 0});
}

TEST(StablehloScatter, Errors) {
  const Tensor x = f32({2, 3}, std::vector<double>(6, 0));
  const Attributes dn = {{"update_window_dims", "1"}, {"inserted_window_dims", "0"},
                         {"scatter_dims_to_operand_dims", "0"}, {"index_vector_dim", "1"}};
  expect_scatter_error("stablehlo.scatter", x, i64({2, 1}, {0, 1}), f32({2, 4}, std::vector<double>(8, 0)), dn,
                       StatusCode::kInvalidArgument,
                       "stablehlo.scatter: dim(updates, 1) = 4 must be at most dim(inputs[0], 1) = 3 (C4: an update window dim)");
  expect_scatter_error("stablehlo.scatter", x, i64({2, 1}, {0, 1}), f32({3, 3}, std::vector<double>(9, 0)), dn,
                       StatusCode::kInvalidArgument,
                       "stablehlo.scatter: dim(updates, 0) = 3 must equal dim(scatter_indices, 0) = 2 (C4: an update scatter dim)");
  expect_scatter_error("stablehlo.scatter", x, i64({2, 1}, {0, 1}), f32({2, 3}, std::vector<double>(6, 0)),
                       {{"update_window_dims", "1"}, {"scatter_dims_to_operand_dims", "0"}, {"index_vector_dim", "1"}},
                       StatusCode::kInvalidArgument,
                       "stablehlo.scatter: size(update_window_dims) + size(inserted_window_dims) + "
                       "size(input_batching_dims) = 1 must equal rank(inputs[0]) = 2 (C2)");
  expect_scatter_error("stablehlo.scatter", x, i64({2, 2}, {0, 1, 0, 1}), f32({2, 3}, std::vector<double>(6, 0)), dn,
                       StatusCode::kInvalidArgument,
                       "stablehlo.scatter: size(scatter_dims_to_operand_dims) = 1 must equal the index vector size 2 (C19)");
  expect_scatter_error("stablehlo.scatter", x, i64({2, 1}, {0, 1}), f32({2, 3}, std::vector<double>(6, 0)),
                       {{"update_window_dims", "1"}, {"inserted_window_dims", "0"}, {"scatter_dims_to_operand_dims", "0"},
                        {"index_vector_dim", "1"}, {"update_computation", "div"}},
                       StatusCode::kInvalidArgument,
                       "stablehlo.scatter: attribute update_computation: 'div' is not one of assign, add, mul, min, max");
  expect_scatter_error("stablehlo.scatter", x, i64({2, 1}, {0, 1}), i64({2, 3}, std::vector<double>(6, 0)), dn,
                       StatusCode::kTypeError, "stablehlo.scatter: updates dtype int64 must equal inputs dtype float32 (C6)");
}

}  // namespace
}  // namespace multigather
