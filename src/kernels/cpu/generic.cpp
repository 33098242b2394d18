// The generic CPU kernel: one odometer over the normalized plan, one element at a time, any
// element size. The engine (engine.cpp) runs the specialized kernels; this one serves element
// sizes they do not cover and is a second, independent check in the equivalence tests.
#include <cstring>

#include "kernels/cpu/cpu.hpp"
#include "kernels/cpu/cursor.hpp"

namespace multigather::detail {
namespace {

template <class Index>
bool run_generic(const GatherPlan& p) {
  const auto es = static_cast<std::int64_t>(p.element_size);
  cpu::PlanCursor at;
  bool ok = true;
  for (std::int64_t n = 0; n < p.numel; ++n) {
    std::int64_t src = at.input;
    bool fill = false;
    for (int j = 0; j < p.k; ++j) {
      Index raw;
      std::memcpy(&raw, p.indices + (at.indices + j * p.coord_stride) * static_cast<std::int64_t>(sizeof(Index)), sizeof(Index));
      const std::int64_t size = p.axis_sizes[static_cast<std::size_t>(j)];
      std::int64_t v;
      bool in_range;
      if constexpr (sizeof(Index) == 8 && !std::is_signed_v<Index>) {
        in_range = raw < static_cast<std::uint64_t>(size);
        v = in_range ? static_cast<std::int64_t>(raw) : INT64_MAX;  // huge stays huge
      } else {
        v = static_cast<std::int64_t>(raw);
        if (p.negative_indices && v < 0) v += size;
        in_range = v >= 0 && v < size;
      }
      if (!in_range) {
        if (p.index_mode == IndexMode::kFill) {
          fill = true;
          continue;
        }
        if (size == 0 || p.index_mode == IndexMode::kError) {
          ok = false;
          fill = true;  // write nothing read from an invalid place
          continue;
        }
        if (p.index_mode == IndexMode::kClamp) {
          v = (v < 0) ? 0 : size - 1;
        } else {  // kWrap: floor modulo of the raw value
          if constexpr (std::is_signed_v<Index>) {
            v = static_cast<std::int64_t>(raw) % size;
            if (v < 0) v += size;
          } else {
            v = static_cast<std::int64_t>(static_cast<std::uint64_t>(raw) % static_cast<std::uint64_t>(size));
          }
        }
      }
      src += v * p.axis_strides[static_cast<std::size_t>(j)];
    }
    std::byte* dst = p.output + at.output * es;
    if (fill) {
      std::memcpy(dst, p.fill_bytes.data(), p.element_size);
    } else {
      std::memcpy(dst, p.input + src * es, p.element_size);
    }
    at.advance(p, p.rank);
  }
  return ok;
}

}  // namespace

bool run_cpu_generic(const GatherPlan& plan) noexcept {
  if (plan.numel == 0) return true;
  switch (plan.index_dtype) {
    case DType::kInt8: return run_generic<std::int8_t>(plan);
    case DType::kUInt8: return run_generic<std::uint8_t>(plan);
    case DType::kInt16: return run_generic<std::int16_t>(plan);
    case DType::kUInt16: return run_generic<std::uint16_t>(plan);
    case DType::kInt32: return run_generic<std::int32_t>(plan);
    case DType::kUInt32: return run_generic<std::uint32_t>(plan);
    case DType::kInt64: return run_generic<std::int64_t>(plan);
    case DType::kUInt64: return run_generic<std::uint64_t>(plan);
    default: return false;
  }
}

}  // namespace multigather::detail
