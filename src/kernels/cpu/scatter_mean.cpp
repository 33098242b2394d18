// The division step of a mean scatter (torch.scatter_reduce reduce = "mean"): after the core
// scatter-add, each element that received updates is divided by how many it received (+1 when
// the input takes part). PyTorch's rule (aten scatter_reduce_two, ReductionType::MEAN): the
// count is scattered in the output's dtype, a zero count becomes 1, floating and complex
// outputs divide, integer outputs divide with rounding toward negative infinity.
#include <cmath>
#include <cstring>

#include "kernels/cpu/scatter_engine.hpp"
#include "core/index_value.hpp"  // visit_index_type
#include "core/odometer.hpp"

namespace multigather::detail {
namespace {

template <class T>
T floor_divide(T a, T b) noexcept {
  if constexpr (std::is_signed_v<T>) {
    const T q = static_cast<T>(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);
  }
}

/// Calls f(element pointer, its count) for every element of the view, with `count` (int64, the
/// view's shape, any strides: 0 where the count does not change) walked alongside.
template <class F>
void for_each_element(const MutableTensorView& v, const TensorView& count, F&& f) {
  const std::int64_t n = v.numel();
  const std::int64_t es = static_cast<std::int64_t>(element_size(v.dtype));
  std::int64_t at[kMaxRank] = {}, at_count[kMaxRank] = {};
  std::int64_t offset = 0, count_offset = 0;
  const auto* counts = static_cast<const std::int64_t*>(count.data);
  for (std::int64_t i = 0; i < n; ++i) {
    f(static_cast<std::byte*>(v.data) + offset * es, counts[count_offset]);
    next_position(at, v.shape, v.strides, &offset);
    next_position(at_count, count.shape, count.strides, &count_offset);
  }
}

template <class T, class Div>
void divide_as(const MutableTensorView& out, const TensorView& count, std::int64_t extra, Div div) {
  for_each_element(out, count, [&](std::byte* p, std::int64_t n) {
    const std::int64_t c = n + extra;
    if (n == 0 || c == 1) return;  // no update reached it, or only the input did
    T v;
    std::memcpy(&v, p, sizeof(T));
    v = div(v, c);
    std::memcpy(p, &v, sizeof(T));
  });
}

template <class T>
void divide_integer(const MutableTensorView& out, const TensorView& count, std::int64_t extra) {
  // The count in the output's dtype, as PyTorch scatters it (it wraps for a narrow dtype).
  divide_as<T>(out, count, extra, [](T v, std::int64_t c) {
    const T d = static_cast<T>(c);
    return d == 0 ? v : floor_divide<T>(v, d);
  });
}

/// The divisor of count c in T: c, or sqrt(c) computed in T (TensorFlow's sqrt_n).
template <class T>
T divisor(std::int64_t c, bool sqrt_count) {
  const T d = static_cast<T>(c);
  return sqrt_count ? static_cast<T>(std::sqrt(d)) : d;
}

template <class T>
void divide_float(const MutableTensorView& out, const TensorView& count, std::int64_t extra, bool sqrt_count) {
  divide_as<T>(out, count, extra, [&](T v, std::int64_t c) { return static_cast<T>(v / divisor<T>(c, sqrt_count)); });
}

template <float (*kTo)(std::uint16_t), std::uint16_t (*kFrom)(float)>
void divide_half(const MutableTensorView& out, const TensorView& count, std::int64_t extra, bool sqrt_count) {
  // Computed in float32 and rounded once: the correctly rounded quotient of two halves (the
  // square root of the count rounded to the half type first).
  divide_as<std::uint16_t>(out, count, extra, [&](std::uint16_t v, std::int64_t c) {
    const float d = kTo(kFrom(static_cast<float>(c)));
    return kFrom(kTo(v) / (sqrt_count ? kTo(kFrom(std::sqrt(d))) : d));
  });
}

template <class R>
void divide_complex(const MutableTensorView& out, const TensorView& count, std::int64_t extra, bool sqrt_count) {
  struct C {
    R re, im;
  };
  // PyTorch divides by the complex count c + 0i the way numpy does (c10::complex operator/):
  // rat = 0, scale = 1 / c, (re + im * 0) * scale, (im - re * 0) * scale.
  divide_as<C>(out, count, extra, [&](C v, std::int64_t c) {
    const R scale = R(1) / divisor<R>(c, sqrt_count);
    return C{(v.re + v.im * R(0)) * scale, (v.im - v.re * R(0)) * scale};
  });
}

}  // namespace

bool divide_by_count(const MutableTensorView& output, const TensorView& count, bool include_input,
                     bool sqrt_count) noexcept {
  const std::int64_t extra = include_input ? 1 : 0;
  const bool q = sqrt_count;
  switch (output.dtype) {
    case DType::kFloat32: divide_float<float>(output, count, extra, q); return true;
    case DType::kFloat64: divide_float<double>(output, count, extra, q); return true;
    case DType::kFloat16: divide_half<&half_to_float, &float_to_half>(output, count, extra, q); return true;
    case DType::kBFloat16: divide_half<&bfloat16_to_float, &float_to_bfloat16>(output, count, extra, q); return true;
    case DType::kComplex64: divide_complex<float>(output, count, extra, q); return true;
    case DType::kComplex128: divide_complex<double>(output, count, extra, q); return true;
    default:  // the integer dtypes
      if (sqrt_count) return false;
      return visit_index_type(output.dtype, [&]<class T>() {
        divide_integer<T>(output, count, extra);
        return true;
      });
  }
}

}  // namespace multigather::detail
