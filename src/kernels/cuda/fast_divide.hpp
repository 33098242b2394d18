// Internal: division by a run-time constant with a multiply-high and a shift (Granlund and
// Montgomery, "Division by invariant integers using multiplication", 1994; the form PyTorch's
// IntDivider uses). Valid for dividends and divisors in [1, 2^31) (dividend 0 too). The same code
// runs on the host (tests) and in the kernel.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace multigather::detail {

struct FastDivide {
  std::uint32_t magic = 0;
  std::uint32_t shift = 0;

  FastDivide() = default;
  /// divisor in [1, 2^31).
  explicit FastDivide(std::uint32_t divisor) {
    while (shift < 32 && (std::uint64_t{1} << shift) < divisor) ++shift;
    magic = static_cast<std::uint32_t>(
        ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - divisor)) / divisor + 1);
  }

  /// n / divisor for n in [0, 2^31).
  MULTIGATHER_HOST_DEVICE std::uint32_t divide(std::uint32_t n) const {
    const auto high = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
    return (high + n) >> shift;
  }
};

}  // namespace multigather::detail
