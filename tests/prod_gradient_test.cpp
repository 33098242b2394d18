// The elementwise steps of a segment product's gradient (kernels/prod_gradient.hpp), the one body
// the CPU engine runs in a loop and the CUDA engine over a grid: run here over every thread of a
// launched grid (the grid-stride loop, threads last to first), against an oracle written from
// TensorFlow's rule with the compiler's own float16 type (_Float16) and float / double
// arithmetic: derivative = 0 with two zeros in the segment, the product of the others where the
// row is 0, else result / x; the gradient rounded once to the dtype. bfloat16 against the one
// loop (its rounding is core/float16_bits.hpp's, tested there).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/prod_gradient.hpp"
#include "test_seed.hpp"

namespace multigather {
namespace {

using detail::ProdGradientParams;

template <class T>
struct Arrays {
  std::vector<T> data, non_zero, grad, product, others;
  std::vector<std::int64_t> zeros, zero_count;
};

template <class T>
Arrays<T> random_arrays(std::mt19937_64& rng, std::int64_t n) {
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_int_distribution<int> count(0, 3);
  Arrays<T> a;
  for (std::int64_t i = 0; i < n; ++i) {
    a.data.push_back(static_cast<T>(0.5 * small(rng)));  // one in nine is 0
    a.grad.push_back(static_cast<T>(0.25 * small(rng) + 0.125));
    a.product.push_back(static_cast<T>(0.75 * small(rng)));
    a.others.push_back(static_cast<T>(1.5 * small(rng) + 0.5));
    a.zero_count.push_back(count(rng));
  }
  a.non_zero.assign(static_cast<std::size_t>(n), static_cast<T>(-7));
  a.zeros.assign(static_cast<std::size_t>(n), -7);
  return a;
}

template <class T>
ProdGradientParams params_of(Arrays<T>& a) {
  ProdGradientParams p;
  p.n = static_cast<std::int64_t>(a.data.size());
  p.data = a.data.data();
  p.zeros = a.zeros.data();
  p.non_zero = a.non_zero.data();
  p.grad = a.grad.data();
  p.product = a.product.data();
  p.others = a.others.data();
  p.zero_count = a.zero_count.data();
  return p;
}

// Both steps over `threads` threads of a grid, last to first.
template <class E>
void run_on_grid(const ProdGradientParams& p, std::int64_t threads) {
  for (std::int64_t t = threads - 1; t >= 0; --t) detail::prod_zeros_thread<E>(p, t, threads);
  for (std::int64_t t = threads - 1; t >= 0; --t) detail::prod_derivative_thread<E>(p, t, threads);
}

template <class T, class E>
void check_against_the_rule(std::mt19937_64& rng) {
  for (std::int64_t n : {0, 1, 7, 300}) {
    for (std::int64_t threads : {1, 5, 64}) {
      Arrays<T> a = random_arrays<T>(rng, n);
      const Arrays<T> before = a;
      run_on_grid<E>(params_of(a), threads);
      for (std::int64_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(before.data[i]);
        EXPECT_EQ(a.zeros[i], x == 0 ? 1 : 0);
        EXPECT_EQ(static_cast<double>(a.non_zero[i]), x == 0 ? 1.0 : x);
        const double derivative = before.zero_count[i] > 1 ? 0.0
                                  : x == 0                  ? static_cast<double>(before.others[i])
                                                            : static_cast<double>(before.product[i]) / x;
        // rounded once: through float32 for 16-bit floats, as the body stores them
        const T want = sizeof(T) == 2 ? static_cast<T>(static_cast<float>(static_cast<double>(before.grad[i]) * derivative))
                                      : static_cast<T>(static_cast<double>(before.grad[i]) * derivative);
        EXPECT_EQ(std::memcmp(&a.grad[i], &want, sizeof(T)), 0)
            << "element " << i << " of " << n << ", threads " << threads;
      }
    }
  }
}

TEST(ProdGradient, OverALaunchedGridEqualsTensorFlowsRuleRoundedOnce) {
  std::mt19937_64 rng(test::run_seed() + 29);
  check_against_the_rule<float, detail::floating::Plain<float>>(rng);
  check_against_the_rule<double, detail::floating::Plain<double>>(rng);
  check_against_the_rule<_Float16, detail::floating::Bits16<false>>(rng);
}

TEST(ProdGradient, BFloat16OverALaunchedGridEqualsTheOneLoop) {
  std::mt19937_64 rng(test::run_seed() + 31);
  using E = detail::floating::Bits16<true>;
  for (std::int64_t threads : {3, 64}) {
    // bfloat16 bits of small multiples of 0.25 (their upper halves of float32)
    Arrays<float> f = random_arrays<float>(rng, 200);
    const auto bits = [](const std::vector<float>& v) {
      std::vector<std::uint16_t> out;
      for (float x : v) {
        std::uint32_t u;
        std::memcpy(&u, &x, 4);
        out.push_back(static_cast<std::uint16_t>(u >> 16));
      }
      return out;
    };
    std::vector<std::uint16_t> data = bits(f.data), grad = bits(f.grad), product = bits(f.product), others = bits(f.others);
    std::vector<std::uint16_t> grid_grad = grad, loop_grad = grad, grid_nz(200), loop_nz(200);
    std::vector<std::int64_t> grid_zeros(200), loop_zeros(200);
    ProdGradientParams p;
    p.n = 200;
    p.data = data.data();
    p.product = product.data();
    p.others = others.data();
    p.zero_count = f.zero_count.data();
    p.grad = grid_grad.data();
    p.non_zero = grid_nz.data();
    p.zeros = grid_zeros.data();
    run_on_grid<E>(p, threads);
    p.grad = loop_grad.data();
    p.non_zero = loop_nz.data();
    p.zeros = loop_zeros.data();
    run_on_grid<E>(p, 1);
    EXPECT_EQ(grid_grad, loop_grad);
    EXPECT_EQ(grid_nz, loop_nz);
    EXPECT_EQ(grid_zeros, loop_zeros);
    EXPECT_NE(grid_grad, grad);  // the step wrote
  }
}

}  // namespace
}  // namespace multigather
