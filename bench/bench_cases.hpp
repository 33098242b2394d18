// The benchmark cases of docs/bench.md, written as gather_multiaxis calls, with their data
// (input filled with a pattern, indices uniformly random in range from a fixed seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multigather/multigather.hpp"

namespace multigather::bench {

/// One docs/bench.md case: shapes, axes and the dtypes, in gather_multiaxis terms.
struct BenchCase {
  int number = 0;            // docs/bench.md's numbering (1..9)
  std::string name;          // docs/bench.md's name ("embedding", "nhwc_xy", ...)
  DType dtype = DType::kFloat32;
  Dims input_shape;
  Dims indices_shape;        // last dimension = lookups along it x len(axes)
  std::vector<std::int64_t> axes;
};

/// The nine cases, in docs/bench.md order.
const std::vector<BenchCase>& bench_cases();

/// A case's tensors, allocated once: input, int64 indices, a preallocated output.
struct BenchData {
  Tensor input;
  Tensor indices;
  Tensor output;
  /// docs/bench.md's effective bytes: output bytes + index bytes + gathered input bytes.
  double effective_bytes = 0;
};

/// Builds the data of `c` (indices from a fixed seed, uniformly random in each axis's range).
BenchData make_bench_data(const BenchCase& c);

}  // namespace multigather::bench
