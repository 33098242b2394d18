// float16 / bfloat16 <-> float32 for the wide-accumulator scatters (widen.hpp).
#include "kernels/cpu/widen.hpp"

#include <cstring>

#include "core/float16_bits.hpp"
#include "core/odometer.hpp"

namespace multigather::detail::cpu {
namespace {

/// Calls body(element offset in a view of `shape` / `strides`, t) at each position t, in C order.
template <class Body>
void for_each_position(const Dims& shape, const Dims& strides, Body&& body) {
  std::int64_t numel = 1;
  for (int d = 0; d < shape.size(); ++d) numel *= shape[d];
  if (numel == 0) return;
  std::int64_t pos[kMaxRank] = {};
  std::int64_t offset = 0;
  std::int64_t t = 0;
  do {
    body(offset, t++);
  } while (next_position(pos, shape, strides, &offset));
}

}  // namespace

bool widens(const ScatterOptions& options, DType dtype) noexcept {
  return options.wide_accumulator && (dtype == DType::kFloat16 || dtype == DType::kBFloat16) &&
         (options.reduction == Reduction::kAdd || options.reduction == Reduction::kMul);
}

Tensor widened(const TensorView& from) {
  Tensor out(DType::kFloat32, from.shape);
  float* to = out.data_as<float>();
  const auto* bits = static_cast<const std::uint16_t*>(from.data);
  const bool brain = from.dtype == DType::kBFloat16;
  for_each_position(from.shape, from.strides, [&](std::int64_t offset, std::int64_t t) {
    to[t] = brain ? bfloat16_bits_to_float(bits[offset]) : half_bits_to_float(bits[offset]);
  });
  return out;
}

void narrow_into(const TensorView& from, const MutableTensorView& to) noexcept {
  const auto* values = static_cast<const float*>(from.data);
  auto* bits = static_cast<std::uint16_t*>(to.data);
  const bool brain = to.dtype == DType::kBFloat16;
  for_each_position(to.shape, to.strides, [&](std::int64_t offset, std::int64_t t) {
    bits[offset] = brain ? float_to_bfloat16_bits(values[t]) : float_to_half_bits(values[t]);
  });
}

}  // namespace multigather::detail::cpu
