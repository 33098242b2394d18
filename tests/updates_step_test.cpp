// The updates' step (Lowering::updates_step; kernels/updates_step.hpp), the one body both
// engines run: on the host over every thread of a launched grid (the CUDA kernel's grid-stride
// loop: thread t of T takes elements t, t + T, ...) and in one loop (the CPU engine), against an
// oracle written from the rules: negation flips each sign bit of a floating or complex element
// and negates an integer in two's complement; scale multiplies in the dtype (the factor rounded
// to the dtype; float16 / bfloat16: the exact product rounded once; complex: the product with
// (factor, 0); integers: the factor truncated, the product wrapping). Strided sources and a
// broadcast (stride 0) dimension included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/float16_bits.hpp"
#include "kernels/updates_step.hpp"
#include "multigather/tensor.hpp"

namespace multigather {
namespace {

using detail::UpdatesStepParams;
using detail::bfloat16_bits_to_float;
using detail::float_to_bfloat16_bits;
using detail::float_to_half_bits;
using detail::half_bits_to_float;

// The oracle: element `in` (bytes of `dtype`) after the step, into `out`.
void oracle(DType dtype, bool negate, double factor, std::int64_t integer_factor, const std::byte* in,
            std::byte* out) {
  const std::size_t es = element_size(dtype);
  std::memcpy(out, in, es);
  if (negate) {
    switch (dtype) {
      case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
        out[es - 1] ^= std::byte{0x80};
        return;
      case DType::kComplex64: case DType::kComplex128:
        out[es / 2 - 1] ^= std::byte{0x80};
        out[es - 1] ^= std::byte{0x80};
        return;
      default: {
        std::uint64_t v = 0;
        std::memcpy(&v, in, es);
        v = ~v + 1;  // two's complement, the low es bytes kept
        std::memcpy(out, &v, es);
        return;
      }
    }
  }
  switch (dtype) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, in, 4);
      v = v * static_cast<float>(factor);
      std::memcpy(out, &v, 4);
      return;
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, in, 8);
      v = v * factor;
      std::memcpy(out, &v, 8);
      return;
    }
    case DType::kFloat16: case DType::kBFloat16: {
      const bool brain = dtype == DType::kBFloat16;
      std::uint16_t b;
      std::memcpy(&b, in, 2);
      const auto to = [&](std::uint16_t x) { return brain ? bfloat16_bits_to_float(x) : half_bits_to_float(x); };
      const auto from = [&](float x) { return brain ? float_to_bfloat16_bits(x) : float_to_half_bits(x); };
      // two 16-bit floats' product is exact in double (and in float): rounded once to the dtype
      const double exact = static_cast<double>(to(b)) * static_cast<double>(to(from(static_cast<float>(factor))));
      b = from(static_cast<float>(exact));
      std::memcpy(out, &b, 2);
      return;
    }
    case DType::kComplex64: case DType::kComplex128: {
      const bool wide = dtype == DType::kComplex128;
      double re = 0, im = 0;
      if (wide) {
        std::memcpy(&re, in, 8);
        std::memcpy(&im, in + 8, 8);
        const double r2 = re * factor - im * 0.0, i2 = re * 0.0 + im * factor;
        std::memcpy(out, &r2, 8);
        std::memcpy(out + 8, &i2, 8);
      } else {
        float r, i;
        std::memcpy(&r, in, 4);
        std::memcpy(&i, in + 4, 4);
        const float c = static_cast<float>(factor);
        const float r2 = r * c - i * 0.0f, i2 = r * 0.0f + i * c;
        std::memcpy(out, &r2, 4);
        std::memcpy(out + 4, &i2, 4);
      }
      return;
    }
    default: {  // integers: the low bits of the product, the factor cut to the dtype first
      std::uint64_t v = 0, a = static_cast<std::uint64_t>(integer_factor);
      std::memcpy(&v, in, es);
      const int bits = static_cast<int>(es) * 8;
      if (bits < 64) {
        const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
        a &= mask;
        const bool signed_type = dtype == DType::kInt8 || dtype == DType::kInt16 || dtype == DType::kInt32;
        if (signed_type && (a >> (bits - 1)) != 0) a |= ~mask;  // sign-extended
        if (signed_type && (v >> (bits - 1)) != 0) v |= ~mask;
      }
      const std::uint64_t p = v * a;
      std::memcpy(out, &p, es);
      return;
    }
  }
}

// Random bytes for `n` elements of `dtype`, with NaN, infinities and signed zeros among the
// floating ones.
std::vector<std::byte> random_elements(DType dtype, std::int64_t n, std::mt19937_64& rng) {
  std::vector<std::byte> b(static_cast<std::size_t>(n) * element_size(dtype));
  for (auto& x : b) x = static_cast<std::byte>(rng());
  if (dtype == DType::kFloat32 && n >= 4) {
    const float specials[4] = {std::nanf(""), -INFINITY, -0.0f, 0.0f};
    std::memcpy(b.data(), specials, sizeof specials);
  }
  return b;
}

TEST(UpdatesStep, EveryDtypeOverALaunchedGridAndOneLoopEqualsTheRule) {
  std::mt19937_64 rng(53);
  const Dims shape = {3, 4, 5};
  int checked = 0;
  for (bool negate : {true, false}) {
    for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64, DType::kComplex64,
                        DType::kComplex128, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32,
                        DType::kUInt32, DType::kInt64, DType::kUInt64, DType::kBool}) {
      for (double factor : {2.5, -3.0, 0.0, 1e-3}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + (negate ? " negate" : " scale by " + std::to_string(factor)));
        // The source: [3, 4, 5] with dimension 1 broadcast (stride 0) and dimension 2 reversed
        // (a strided view of a [3, 5] buffer).
        const std::int64_t es = static_cast<std::int64_t>(element_size(dtype));
        const std::vector<std::byte> source = random_elements(dtype, 15, rng);
        const TensorView from(source.data() + 4 * es, dtype, shape, Dims{5, 0, -1});
        std::vector<std::byte> got(60 * static_cast<std::size_t>(es)), want(got.size());
        const MutableTensorView to(got.data(), dtype, shape);
        const UpdatesStepParams p =
            detail::updates_step_params(from, to, factor, static_cast<std::int64_t>(factor));
        for (std::int64_t threads : {std::int64_t{1}, std::int64_t{7}, std::int64_t{64}}) {
          std::memset(got.data(), 0xA5, got.size());
          const bool has = detail::visit_updates_step(dtype, negate, [&]<class Op>() {
            for (std::int64_t t = 0; t < threads; ++t) detail::updates_step_thread<Op>(p, t, threads);
          });
          if (!has) {
            // The dtypes without the step: bool (neither), unsigned 16..64-bit integers (scale).
            EXPECT_TRUE(dtype == DType::kBool || (!negate && (dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
                                                               dtype == DType::kUInt64)));
            break;
          }
          for (std::int64_t i = 0; i < 3; ++i) {
            for (std::int64_t j = 0; j < 4; ++j) {
              for (std::int64_t k = 0; k < 5; ++k) {
                const std::byte* in = source.data() + (4 + 5 * i - k) * es;
                oracle(dtype, negate, factor, static_cast<std::int64_t>(factor), in,
                       want.data() + ((i * 4 + j) * 5 + k) * es);
              }
            }
          }
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << threads << " threads";
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 2 * 4 * 3 * 10);
}

}  // namespace
}  // namespace multigather
