// The seed of the randomized tests' run: MULTIGATHER_SEED when set, else random; printed once
// per test binary so that a failing run can be replayed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace multigather::test {

inline std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("MULTIGATHER_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("random test seed = %llu (replay: MULTIGATHER_SEED=%llu)\n",
                static_cast<unsigned long long>(s), static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

}  // namespace multigather::test
