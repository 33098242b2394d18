// multigather_scatter_bench: the scatter cases of docs/bench.md (S1-S5, S7) through the public
// C++ API, at 1 thread and at all cores:
//
//   scatter_inplace/<case>/threads:<n>   scatter_multiaxis_into with output = input (in place)
//   scatter_oneshot/<case>/threads:<n>   scatter_multiaxis (copies the input into a new tensor)
//
// Before the runs, each case is computed at 1 thread and at all cores and the results compared
// byte for byte (the determinism the engine promises); the line "deterministic" or "DIFFERENT"
// is printed per case. Data: float32, int64 indices uniformly random (seed 1234), unique per row
// where docs/bench.md says so. Peers: bench/scatter_peers.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "multigather/scatter.hpp"

namespace mg = multigather;

namespace {

struct ScatterCase {
  std::string name;
  mg::Dims input_shape, indices_shape, updates_shape;
  std::vector<std::int64_t> axes;
  mg::Reduction reduction = mg::Reduction::kAdd;
  std::vector<float> input, updates;
  std::vector<std::int64_t> indices;
};

ScatterCase make_case(std::string name, mg::Dims input, mg::Dims indices, mg::Dims updates,
                      std::vector<std::int64_t> axes, mg::Reduction reduction = mg::Reduction::kAdd) {
  ScatterCase c;
  c.name = std::move(name);
  c.input_shape = input;
  c.indices_shape = indices;
  c.updates_shape = updates;
  c.axes = std::move(axes);
  c.reduction = reduction;
  return c;
}

std::vector<ScatterCase> make_cases() {
  std::mt19937_64 rng(1234);
  auto uniform = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
  auto floats = [&](std::size_t n) {
    std::vector<float> v(n);
    std::normal_distribution<float> normal;
    for (auto& x : v) x = normal(rng);
    return v;
  };
  std::vector<ScatterCase> cases;
  {
    ScatterCase c = make_case("S1_embedding_backward", {50000, 512}, {8192, 1}, {8192, 512}, {0});
    c.input.assign(50000 * 512, 0.f);
    c.updates = floats(8192 * 512);
    for (int i = 0; i < 8192; ++i) c.indices.push_back(uniform(50000));
    cases.push_back(std::move(c));
  }
  {
    ScatterCase c = make_case("S2_scatter_elements_last_axis", {4096, 1024}, {4096, 256}, {4096, 256}, {1}, mg::Reduction::kNone);
    c.input = floats(4096 * 1024);
    c.updates = floats(4096 * 256);
    std::vector<std::int64_t> perm(1024);
    for (int r = 0; r < 4096; ++r) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      c.indices.insert(c.indices.end(), perm.begin(), perm.begin() + 256);
    }
    cases.push_back(std::move(c));
  }
  {
    ScatterCase c = make_case("S3_scatter_add_axis0", {1024, 4096}, {256, 4096}, {256, 4096}, {0});
    c.input.assign(1024 * 4096, 0.f);
    c.updates = floats(256 * 4096);
    for (int i = 0; i < 256 * 4096; ++i) c.indices.push_back(uniform(1024));
    cases.push_back(std::move(c));
  }
  {
    ScatterCase c = make_case("S4_scatter_nd_points_add", {4, 512, 512, 32}, {262144, 1, 1, 3}, {262144, 1, 1, 32}, {0, 1, 2});
    c.input.assign(4u * 512 * 512 * 32, 0.f);
    c.updates = floats(262144u * 32);
    for (int i = 0; i < 262144; ++i) {
      c.indices.push_back(uniform(4));
      c.indices.push_back(uniform(512));
      c.indices.push_back(uniform(512));
    }
    cases.push_back(std::move(c));
  }
  {
    ScatterCase c = make_case("S5_flat_put_add", {16777216}, {4194304}, {4194304}, {0});
    c.input.assign(16777216, 0.f);
    c.updates = floats(4194304);
    for (int i = 0; i < 4194304; ++i) c.indices.push_back(uniform(16777216));
    cases.push_back(std::move(c));
  }
  {
    ScatterCase c = make_case("S7_tiny_scatter", {16, 16}, {4, 1}, {4, 16}, {0});
    c.input.assign(256, 0.f);
    c.updates = floats(64);
    c.indices = {3, 1, 4, 1};
    cases.push_back(std::move(c));
  }
  return cases;
}

mg::ScatterOptions options_for(const ScatterCase& c, int threads) {
  mg::ScatterOptions o;
  o.reduction = c.reduction;
  o.num_threads = threads;
  return o;
}

mg::TensorView indices_of(const ScatterCase& c) {
  return mg::TensorView(c.indices.data(), mg::DType::kInt64, c.indices_shape);
}
mg::TensorView updates_of(const ScatterCase& c) {
  return mg::TensorView(c.updates.data(), mg::DType::kFloat32, c.updates_shape);
}

void scatter_inplace(benchmark::State& state, const ScatterCase& c, std::vector<float>& buffer, int threads) {
  const mg::ScatterOptions o = options_for(c, threads);
  const mg::TensorView in(buffer.data(), mg::DType::kFloat32, c.input_shape);
  const mg::MutableTensorView out(buffer.data(), mg::DType::kFloat32, c.input_shape);
  for (auto _ : state) {
    const mg::Status s = mg::scatter_multiaxis_into(in, indices_of(c), updates_of(c), c.axes, out, o);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
}

void scatter_oneshot(benchmark::State& state, const ScatterCase& c, int threads) {
  const mg::ScatterOptions o = options_for(c, threads);
  const mg::TensorView in(c.input.data(), mg::DType::kFloat32, c.input_shape);
  for (auto _ : state) {
    mg::Tensor t = mg::scatter_multiaxis(in, indices_of(c), updates_of(c), c.axes, o);
    benchmark::DoNotOptimize(t.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int all_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> thread_counts = {1};
  if (all_cores > 1) thread_counts.push_back(all_cores);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  static std::vector<ScatterCase> cases = make_cases();
  static std::vector<std::vector<float>> buffers;
  for (const ScatterCase& c : cases) {
    // Determinism: the same bytes at 1 thread and at all cores.
    std::vector<std::vector<float>> results;
    for (const int t : thread_counts) {
      mg::Tensor r = mg::scatter_multiaxis(mg::TensorView(c.input.data(), mg::DType::kFloat32, c.input_shape),
                                           indices_of(c), updates_of(c), c.axes, options_for(c, t));
      const auto* p = static_cast<const float*>(r.data());
      results.emplace_back(p, p + r.numel());
    }
    const bool same = std::all_of(results.begin(), results.end(), [&](const auto& r) {
      return std::memcmp(r.data(), results[0].data(), r.size() * sizeof(float)) == 0;
    });
    std::printf("%s: %s at 1 and %d threads\n", c.name.c_str(), same ? "deterministic" : "DIFFERENT", all_cores);
    buffers.push_back(c.input);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (const int t : thread_counts) {
      const std::string suffix = "/" + cases[i].name + "/threads:" + std::to_string(t);
      benchmark::RegisterBenchmark(("scatter_inplace" + suffix).c_str(), [i, t](benchmark::State& s) {
        scatter_inplace(s, cases[i], buffers[i], t);
      })->UseRealTime()->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("scatter_oneshot" + suffix).c_str(), [i, t](benchmark::State& s) {
        scatter_oneshot(s, cases[i], t);
      })->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
