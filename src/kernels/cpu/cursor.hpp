// Internal: a C-order position over the leading dimensions of a plan, with its element offsets
// in the input, the indices and the output (the odometer every CPU kernel walks).
#pragma once

#include <cstdint>

#include "plan/plan.hpp"

namespace multigather::detail::cpu {

struct PlanCursor {
  std::int64_t pos[kMaxRank] = {};
  std::int64_t input = 0, indices = 0, output = 0;  // element offsets of `pos`

  /// Moves to flat position `flat` (C order over the plan's dimensions [0, dims)).
  void seek(const GatherPlan& p, int dims, std::int64_t flat) noexcept {
    input = indices = output = 0;
    for (int d = dims - 1; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      pos[d] = flat % p.shape[du];
      flat /= p.shape[du];
      input += pos[d] * p.input_strides[du];
      indices += pos[d] * p.indices_strides[du];
      output += pos[d] * p.output_strides[du];
    }
  }

  /// One step in C order over dimensions [0, dims); after the last position, back to 0.
  void advance(const GatherPlan& p, int dims) noexcept {
    for (int d = dims - 1; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      input += p.input_strides[du];
      indices += p.indices_strides[du];
      output += p.output_strides[du];
      if (++pos[d] < p.shape[du]) return;
      input -= p.input_strides[du] * p.shape[du];
      indices -= p.indices_strides[du] * p.shape[du];
      output -= p.output_strides[du] * p.shape[du];
      pos[d] = 0;
    }
  }
};

}  // namespace multigather::detail::cpu
