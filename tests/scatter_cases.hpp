// Test support (not a test): random scatter_multiaxis cases (every reduction, dtypes of every
// width, all index types, every mode, broadcasting both ways, strided and reversed outputs) and
// their run through the CPU engine or the reference kernel. Shared by the CPU engine's tests
// (scatter_core_test.cpp) and the CUDA scatter's (cuda_scatter_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "multigather/gather.hpp"
#include "multigather/scatter.hpp"
#include "test_seed.hpp"

namespace multigather::test {

namespace mg = ::multigather;

inline std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
inline bool chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

struct Case {
  mg::DType dtype = mg::DType::kFloat32;
  mg::DType index_dtype = mg::DType::kInt64;
  mg::Dims input_shape, indices_shape, updates_shape;
  std::vector<std::int64_t> axes;
  mg::ScatterOptions options;
  std::vector<std::byte> input, indices, updates;
  mg::Dims output_strides;  // strided output (elements), over a buffer of output_span elements
  std::int64_t output_origin = 0, output_span = 0;
};

// Finite values for the float types: NaN payloads are not part of the contract (a vectorized
// a * b may propagate the other operand's payload); NaN propagation is tested on its own.
inline void fill_random(std::mt19937_64& rng, std::vector<std::byte>& bytes, mg::DType t, std::int64_t n) {
  const std::size_t es = mg::element_size(t);
  bytes.assign(static_cast<std::size_t>(n) * es, std::byte{0});
  for (std::int64_t i = 0; i < n; ++i) {
    std::byte* p = bytes.data() + static_cast<std::size_t>(i) * es;
    switch (t) {
      case mg::DType::kFloat32: { float v = static_cast<float>(uniform(rng, -1000, 1000)) / 7.f; std::memcpy(p, &v, 4); break; }
      case mg::DType::kFloat64: { double v = static_cast<double>(uniform(rng, -1000, 1000)) / 7.0; std::memcpy(p, &v, 8); break; }
      case mg::DType::kFloat16: { std::uint16_t v = mg::float_to_half(static_cast<float>(uniform(rng, -64, 64)) / 4.f); std::memcpy(p, &v, 2); break; }
      case mg::DType::kBFloat16: { std::uint16_t v = mg::float_to_bfloat16(static_cast<float>(uniform(rng, -64, 64)) / 4.f); std::memcpy(p, &v, 2); break; }
      case mg::DType::kComplex64: { float v[2] = {static_cast<float>(uniform(rng, -9, 9)) / 3.f, static_cast<float>(uniform(rng, -9, 9)) / 3.f}; std::memcpy(p, v, 8); break; }
      case mg::DType::kComplex128: { double v[2] = {static_cast<double>(uniform(rng, -9, 9)) / 3.0, static_cast<double>(uniform(rng, -9, 9)) / 3.0}; std::memcpy(p, v, 16); break; }
      case mg::DType::kBool: { std::uint8_t v = static_cast<std::uint8_t>(uniform(rng, 0, 1)); std::memcpy(p, &v, 1); break; }
      default: for (std::size_t b = 0; b < es; ++b) p[b] = static_cast<std::byte>(uniform(rng, 0, 255)); break;
    }
  }
}

inline Case random_case(std::mt19937_64& rng) {
  static const mg::DType dtypes[] = {mg::DType::kFloat32, mg::DType::kFloat64, mg::DType::kInt8, mg::DType::kUInt16,
                                     mg::DType::kInt32, mg::DType::kInt64, mg::DType::kFloat16, mg::DType::kBFloat16,
                                     mg::DType::kBool, mg::DType::kComplex64, mg::DType::kComplex128};
  static const mg::DType index_dtypes[] = {mg::DType::kInt8, mg::DType::kUInt8, mg::DType::kInt16, mg::DType::kInt32,
                                           mg::DType::kUInt32, mg::DType::kInt64, mg::DType::kUInt64};
  Case c;
  c.dtype = dtypes[uniform(rng, 0, std::size(dtypes) - 1)];
  c.index_dtype = index_dtypes[uniform(rng, 0, std::size(index_dtypes) - 1)];
  const int r = static_cast<int>(uniform(rng, 1, 4));
  c.input_shape = mg::Dims::filled(r, 1);
  for (int d = 0; d < r; ++d) c.input_shape[d] = uniform(rng, 1, 6);
  const int k = static_cast<int>(uniform(rng, 0, std::min(r, 2)));
  std::vector<int> dims(static_cast<std::size_t>(r));
  for (int d = 0; d < r; ++d) dims[static_cast<std::size_t>(d)] = d;
  std::shuffle(dims.begin(), dims.end(), rng);
  for (int j = 0; j < k; ++j) c.axes.push_back(dims[static_cast<std::size_t>(j)]);
  // Logical indices: axis dims any size (duplicates likely); others equal, 1, or input 1.
  mg::Dims logical = mg::Dims::filled(r, 1);
  for (int d = 0; d < r; ++d) {
    const bool axis = std::find(c.axes.begin(), c.axes.end(), d) != c.axes.end();
    if (axis) {
      logical[d] = uniform(rng, 1, 8);
    } else if (chance(rng, 0.2)) {
      logical[d] = 1;  // indices broadcast
    } else if (c.input_shape[d] == 1 || chance(rng, 0.15)) {
      if (c.input_shape[d] != 1) c.input_shape[d] = 1;  // input broadcast: updates sum into it
      logical[d] = uniform(rng, 1, 5);
    } else {
      logical[d] = c.input_shape[d];
    }
  }
  const int cs = std::max(k, 1);
  c.indices_shape = logical;
  c.indices_shape[r - 1] *= cs;
  mg::GatherShape g;
  EXPECT_TRUE(mg::infer_shape(c.input_shape, c.indices_shape, c.axes, &g).ok());
  c.updates_shape = g.output_shape;
  for (int d = 0; d < r; ++d) {
    if (chance(rng, 0.2)) c.updates_shape[d] = 1;  // updates broadcast
  }
  static const mg::Reduction reductions[] = {mg::Reduction::kNone, mg::Reduction::kAdd, mg::Reduction::kMul,
                                             mg::Reduction::kMin, mg::Reduction::kMax};
  c.options.reduction = reductions[uniform(rng, 0, 4)];
  static const mg::IndexMode modes[] = {mg::IndexMode::kError, mg::IndexMode::kClamp, mg::IndexMode::kWrap,
                                        mg::IndexMode::kDrop};
  c.options.index_mode = modes[uniform(rng, 0, 3)];
  c.options.negative_indices = chance(rng, 0.7);
  c.options.include_input = chance(rng, 0.7);
  std::int64_t n = 0;
  mg::element_count(c.input_shape, &n);
  fill_random(rng, c.input, c.dtype, n);
  mg::element_count(c.updates_shape, &n);
  fill_random(rng, c.updates, c.dtype, n);
  mg::element_count(c.indices_shape, &n);
  const std::size_t is = mg::element_size(c.index_dtype);
  c.indices.assign(static_cast<std::size_t>(n) * is, std::byte{0});
  const bool out_of_range = c.options.index_mode != mg::IndexMode::kError || chance(rng, 0.05);
  const bool is_signed = c.index_dtype == mg::DType::kInt8 || c.index_dtype == mg::DType::kInt16 ||
                         c.index_dtype == mg::DType::kInt32 || c.index_dtype == mg::DType::kInt64;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t size = k > 0 ? c.input_shape[static_cast<int>(c.axes[static_cast<std::size_t>(i % cs)])] : 1;
    std::int64_t v = uniform(rng, 0, size - 1);
    if (is_signed && c.options.negative_indices && chance(rng, 0.3)) v -= size;
    if (out_of_range && chance(rng, 0.15)) v = is_signed ? uniform(rng, -2 * size - 2, 2 * size + 2) : uniform(rng, 0, 2 * size + 2);
    std::memcpy(c.indices.data() + static_cast<std::size_t>(i) * is, &v, is);  // little endian
  }
  // Output: contiguous, or a strided view (gaps, reversed dimensions) of a larger buffer.
  c.output_strides = mg::contiguous_strides(c.input_shape);
  c.output_span = c.input_shape.size() ? c.output_strides[0] * c.input_shape[0] : 1;
  if (chance(rng, 0.3)) {
    std::int64_t stride = 1;
    for (int d = r - 1; d >= 0; --d) {
      stride *= uniform(rng, 1, 2);
      c.output_strides[d] = stride;
      stride *= c.input_shape[d];
    }
    c.output_span = stride;
    for (int d = 0; d < r; ++d) {
      if (chance(rng, 0.3)) {
        c.output_origin += c.output_strides[d] * (c.input_shape[d] - 1);
        c.output_strides[d] = -c.output_strides[d];
      }
    }
  }
  return c;
}

/// n complex elements of `dtype` whose parts are drawn from {NaN, -inf, -1, -0, +0, 1, inf}.
inline void fill_special_complex(std::mt19937_64& rng, std::vector<std::byte>& bytes, mg::DType dtype, std::int64_t n) {
  static const double parts[] = {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(),
                                 -1.0, -0.0, 0.0, 1.0, std::numeric_limits<double>::infinity()};
  const std::size_t es = mg::element_size(dtype);
  bytes.assign(static_cast<std::size_t>(n) * es, std::byte{0});
  for (std::int64_t i = 0; i < n; ++i) {
    const double re = parts[uniform(rng, 0, 6)], im = parts[uniform(rng, 0, 6)];
    std::byte* p = bytes.data() + static_cast<std::size_t>(i) * es;
    if (dtype == mg::DType::kComplex64) {
      const float f[2] = {static_cast<float>(re), static_cast<float>(im)};
      std::memcpy(p, f, 8);
    } else {
      const double d[2] = {re, im};
      std::memcpy(p, d, 16);
    }
  }
}

/// random_case's shapes, index modes, broadcasting and output views, made complex64 /
/// complex128 min / max over fill_special_complex's parts: ties on the real part, NaN on either
/// side and both zeros everywhere (the combine only chooses, so results compare byte for byte).
inline Case random_complex_order_case(std::mt19937_64& rng) {
  Case c = random_case(rng);
  c.dtype = chance(rng, 0.5) ? mg::DType::kComplex64 : mg::DType::kComplex128;
  c.options.reduction = chance(rng, 0.5) ? mg::Reduction::kMin : mg::Reduction::kMax;
  std::int64_t n = 0;
  mg::element_count(c.input_shape, &n);
  fill_special_complex(rng, c.input, c.dtype, n);
  mg::element_count(c.updates_shape, &n);
  fill_special_complex(rng, c.updates, c.dtype, n);
  return c;
}

inline std::string describe(const Case& c) {
  std::string axes;
  for (auto a : c.axes) axes += std::to_string(a) + " ";
  return std::string("input ") + mg::to_string(c.input_shape) + " indices " + mg::to_string(c.indices_shape) +
         " (" + std::string(mg::dtype_name(c.index_dtype)) + ") updates " + mg::to_string(c.updates_shape) +
         " axes [" + axes + "] dtype " + std::string(mg::dtype_name(c.dtype)) + " reduction " +
         std::string(mg::reduction_name(c.options.reduction)) + " mode " +
         std::string(mg::index_mode_name(c.options.index_mode)) + " negative " +
         std::to_string(c.options.negative_indices) + " include_input " + std::to_string(c.options.include_input) +
         " output strides " + mg::to_string(c.output_strides);
}

struct Result {
  mg::Status status;
  std::vector<std::byte> bytes;
};

/// Byte equality of two outputs of dtype `t`, where any NaN equals any NaN: a NaN that the
/// arithmetic makes (inf * 0, inf - inf) has the hardware's bits (x86's default NaN is negative,
/// CUDA's canonical NaN positive with every payload bit set); NaN bits are not in the contract.
inline bool same_up_to_nan_bits(const std::vector<std::byte>& a, const std::vector<std::byte>& b, mg::DType t) {
  if (a.size() != b.size()) return false;
  std::size_t width = 0;  // bytes of one float component; 0: not a float type
  std::uint64_t exponent = 0, mantissa = 0;
  switch (t) {
    case mg::DType::kFloat16: width = 2; exponent = 0x7c00; mantissa = 0x3ff; break;
    case mg::DType::kBFloat16: width = 2; exponent = 0x7f80; mantissa = 0x7f; break;
    case mg::DType::kFloat32: case mg::DType::kComplex64: width = 4; exponent = 0x7f800000; mantissa = 0x7fffff; break;
    case mg::DType::kFloat64: case mg::DType::kComplex128:
      width = 8; exponent = 0x7ff0000000000000; mantissa = 0xfffffffffffff; break;
    default: return a == b;
  }
  auto is_nan = [&](const std::byte* p) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, p, width);  // little-endian
    return (bits & exponent) == exponent && (bits & mantissa) != 0;
  };
  for (std::size_t i = 0; i + width <= a.size(); i += width) {
    if (std::memcmp(a.data() + i, b.data() + i, width) != 0 && !(is_nan(a.data() + i) && is_nan(b.data() + i))) {
      return false;
    }
  }
  return true;
}

/// The case's operands, and its output viewed over `*output_bytes`: a buffer of output_span
/// elements poisoned with 0x5a, so that a write outside the view, or a missed one, shows.
struct CaseViews {
  mg::TensorView input, indices, updates;
  mg::MutableTensorView output;
};

inline CaseViews views_of(const Case& c, std::vector<std::byte>* output_bytes) {
  const std::size_t es = mg::element_size(c.dtype);
  output_bytes->assign(static_cast<std::size_t>(c.output_span) * es, std::byte{0x5a});
  return {mg::TensorView(c.input.data(), c.dtype, c.input_shape),
          mg::TensorView(c.indices.data(), c.index_dtype, c.indices_shape),
          mg::TensorView(c.updates.data(), c.dtype, c.updates_shape),
          mg::MutableTensorView(output_bytes->data() + c.output_origin * static_cast<std::int64_t>(es), c.dtype,
                                c.input_shape, c.output_strides)};
}

inline Result run_case(const Case& c, bool reference, int threads) {
  Result res;
  const CaseViews v = views_of(c, &res.bytes);
  mg::ScatterOptions o = c.options;
  o.num_threads = threads;
  res.status = reference ? mg::scatter_multiaxis_reference(v.input, v.indices, v.updates, c.axes, v.output, o)
                         : mg::scatter_multiaxis_into(v.input, v.indices, v.updates, c.axes, v.output, o);
  return res;
}

}  // namespace multigather::test
