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

  /// The offset `at` (this cursor's input or indices) one step on by `strides` (p.input_strides
  /// or p.indices_strides), as advance() would leave it, without moving: a copy of the cursor
  /// costs more (its positions, stored a word at a time, reloaded wide: store-forwarding stalls
  /// that were a third of a small scatter's kernel time, perf).
  template <class Strides>
  std::int64_t peek_next(const GatherPlan& p, int dims, const Strides& strides, std::int64_t at) const noexcept {
    for (int d = dims - 1; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      at += strides[du];
      if (pos[d] + 1 < p.shape[du]) break;
      at -= strides[du] * p.shape[du];
    }
    return at;
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
