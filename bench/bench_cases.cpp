// docs/bench.md's cases as gather_multiaxis calls and their data.
#include "bench_cases.hpp"

#include <cstring>
#include <random>

namespace multigather::bench {

const std::vector<BenchCase>& bench_cases() {
  static const std::vector<BenchCase> cases = {
      // ONNX Gather axis 0: table [50000,512], indices [8192] -> [8192,512].
      {1, "embedding", DType::kFloat32, {50000, 512}, {8192, 1}, {0}},
      // Gather on the middle axis: [32,1024,256], 512 indices on axis 1 -> [32,512,256].
      {2, "mid_axis_block", DType::kFloat32, {32, 1024, 256}, {1, 512, 1}, {1}},
      // GatherElements axis -1: [4096,1024], indices [4096,256].
      {3, "elements_last_axis", DType::kFloat32, {4096, 1024}, {4096, 256}, {1}},
      // GatherElements axis 0: [1024,4096], indices [256,4096].
      {4, "elements_axis0", DType::kFloat32, {1024, 4096}, {256, 4096}, {0}},
      // GatherND batch_dims=1: [4,512,512,32], indices [4,65536,2] -> [4,65536,32].
      {5, "gathernd_batch1", DType::kFloat32, {4, 512, 512, 32}, {4, 65536, 1, 2}, {1, 2}},
      // NHWC (x,y) sampling: x addresses W (axis 2), y addresses H (axis 1).
      {6, "nhwc_xy", DType::kFloat32, {8, 256, 256, 16}, {8, 4096, 1, 2}, {2, 1}},
      // Flat take: 16M floats, 4M random indices.
      {7, "flat_take", DType::kFloat32, {16777216}, {4194304}, {0}},
      // fp16 embedding, 128-byte rows.
      {8, "embedding_fp16", DType::kFloat16, {1000000, 64}, {65536, 1}, {0}},
      // Per-call overhead: [16,16], 4 indices on axis 0.
      {9, "tiny", DType::kFloat32, {16, 16}, {4, 1}, {0}},
  };
  return cases;
}


BenchData make_bench_data(const BenchCase& c) {
  BenchData d;
  d.input = Tensor(c.dtype, c.input_shape);
  auto* in = static_cast<std::uint32_t*>(d.input.data());
  const std::size_t words = d.input.nbytes() / 4;
  for (std::size_t w = 0; w < words; ++w) in[w] = static_cast<std::uint32_t>(w * 2654435761u);

  d.indices = Tensor(DType::kInt64, c.indices_shape);
  std::mt19937_64 rng(1234);
  const auto k = static_cast<std::int64_t>(c.axes.size());
  auto* ix = d.indices.data_as<std::int64_t>();
  for (std::int64_t n = 0; n < d.indices.numel(); ++n) {
    std::int64_t axis = c.axes[static_cast<std::size_t>(n % k)];
    if (axis < 0) axis += c.input_shape.size();
    std::uniform_int_distribution<std::int64_t> pick(0, c.input_shape[static_cast<int>(axis)] - 1);
    ix[n] = pick(rng);
  }

  const GatherShape shape = output_shape(c.input_shape, c.indices_shape, c.axes);
  d.output = Tensor(c.dtype, shape.output_shape);
  std::memset(d.output.data(), 0, d.output.nbytes());  // touched once, outside the timing
  d.effective_bytes = 2.0 * static_cast<double>(d.output.nbytes()) +
                      static_cast<double>(d.indices.nbytes());
  return d;
}

}  // namespace multigather::bench
