// A second, independent oracle for the CPU engine's tests: the plain odometer kernel over a
// normalized GatherPlan, one element at a time, any element size (memcpy of element_size bytes),
// one thread. It used to live in the library as run_cpu_generic (src/kernels/cpu/generic.cpp),
// as a fallback for element sizes the specialized kernels do not cover; every DType has a width
// of 1, 2, 4, 8 or 16 bytes, all covered, so the library never called it and it moved here.
// Same contract as detail::run_cpu: false when an index is out of range under kError (or a
// lookup hits an empty axis in clamp/wrap mode); an out-of-range index is never dereferenced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/cursor.hpp"
#include "plan/plan.hpp"

namespace multigather::testing {

using detail::GatherPlan;

template <class Index>
inline bool generic_odometer(const GatherPlan& p) {
  const auto es = static_cast<std::int64_t>(p.element_size);
  detail::cpu::PlanCursor at;
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

/// Runs `plan` with the odometer (see the top of this file).
inline bool run_generic_plan(const GatherPlan& plan) noexcept {
  if (plan.numel == 0) return true;
  switch (plan.index_dtype) {
    case DType::kInt8: return generic_odometer<std::int8_t>(plan);
    case DType::kUInt8: return generic_odometer<std::uint8_t>(plan);
    case DType::kInt16: return generic_odometer<std::int16_t>(plan);
    case DType::kUInt16: return generic_odometer<std::uint16_t>(plan);
    case DType::kInt32: return generic_odometer<std::int32_t>(plan);
    case DType::kUInt32: return generic_odometer<std::uint32_t>(plan);
    case DType::kInt64: return generic_odometer<std::int64_t>(plan);
    case DType::kUInt64: return generic_odometer<std::uint64_t>(plan);
    default: return false;
  }
}

}  // namespace multigather::testing
