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

  /// The input and indices offsets one step on (as advance() would leave them), without moving:
  /// a copy of the cursor costs more (its positions, stored a word at a time, reloaded wide:
  /// store-forwarding stalls that were a third of a small scatter's kernel time, perf).
  void peek_next(const GatherPlan& p, int dims, std::int64_t* next_input, std::int64_t* next_indices) const noexcept {
    std::int64_t in = input, ix = indices;
    for (int d = dims - 1; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      in += p.input_strides[du];
      ix += p.indices_strides[du];
      if (pos[d] + 1 < p.shape[du]) break;
      in -= p.input_strides[du] * p.shape[du];
      ix -= p.indices_strides[du] * p.shape[du];
    }
    *next_input = in;
    *next_indices = ix;
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
