// multigather_bench: the docs/bench.md cases through the public C++ API, at 1 thread and at all
// cores, each beside a memcpy of the output's size.
//
//   gather_into/<case>/threads:<n>     gather_multiaxis_into, preallocated output (validate +
//                                      plan + kernel: the whole per-call path)
//   gather_oneshot/<case>/threads:<n>  gather_multiaxis, which allocates the output
//   memcpy/<case>/threads:<n>          memcpy of the output's size (OpenMP-split for n > 1)
//
// After the runs a summary table prints each case's time, effective GB/s (docs/bench.md: output +
// index + gathered input bytes, over time) and the ratio memcpy time / gather time, where the
// memcpy is the fastest at up to that many threads. With --benchmark_repetitions=N the summary
// uses the medians.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_cases.hpp"

namespace mg = multigather;
using mg::bench::BenchCase;
using mg::bench::BenchData;

namespace {

mg::GatherOptions options_for(int threads) {
  mg::GatherOptions options;
  options.num_threads = threads;
  return options;
}

void gather_into(benchmark::State& state, const BenchCase& c, const BenchData& d, int threads) {
  const mg::GatherOptions options = options_for(threads);
  mg::MutableTensorView out = const_cast<mg::Tensor&>(d.output).mutable_view();
  for (auto _ : state) {
    const mg::Status s = mg::gather_multiaxis_into(d.input.view(), d.indices.view(), c.axes, out, options);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * d.effective_bytes));
}

void gather_oneshot(benchmark::State& state, const BenchCase& c, const BenchData& d, int threads) {
  const mg::GatherOptions options = options_for(threads);
  for (auto _ : state) {
    mg::Tensor out = mg::gather_multiaxis(d.input.view(), d.indices.view(), c.axes, options);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * d.effective_bytes));
}

void copy_baseline(benchmark::State& state, const BenchData& d, const mg::Tensor& source, int threads) {
  const auto* src = static_cast<const unsigned char*>(source.data());
  auto* dst = static_cast<unsigned char*>(const_cast<mg::Tensor&>(d.output).data());
  const auto bytes = static_cast<std::int64_t>(source.nbytes());
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const std::int64_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
      std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin));
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * 2.0 *
                                                    static_cast<double>(bytes)));
}

/// Whether a run reported an error: `Run::error_occurred` up to Google Benchmark 1.7,
/// `Run::skipped` (an enum, 0 when not skipped) from 1.8 on.
template <class R>
bool failed(const R& run) {
  if constexpr (requires { run.skipped; }) {
    return run.skipped != decltype(run.skipped){};
  } else {
    return run.error_occurred;
  }
}

/// Console output as usual, plus the times kept for the summary (medians when repeated).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (failed(run)) continue;
      const std::string name = run.run_name.function_name;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      if (median || seconds_.count(name) == 0 || !has_median_[name]) {
        seconds_[name] = run.real_accumulated_time / static_cast<double>(run.iterations);
        has_median_[name] = median;
      }
    }
  }
  double seconds(const std::string& name) const {
    const auto it = seconds_.find(name);
    return it == seconds_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, bool> has_median_;
};

std::string bench_name(const char* kind, const BenchCase& c, int threads) {
  return std::string(kind) + "/" + c.name + "/threads:" + std::to_string(threads);
}

std::string load_average() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const int all_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> thread_counts = {1};
  if (all_cores > 1) thread_counts.push_back(all_cores);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const auto& cases = mg::bench::bench_cases();
  std::vector<BenchData> data;
  std::vector<mg::Tensor> copy_sources;
  data.reserve(cases.size());
  for (const BenchCase& c : cases) {
    data.push_back(mg::bench::make_bench_data(c));
    copy_sources.emplace_back(c.dtype, data.back().output.shape());
    std::memset(copy_sources.back().data(), 1, copy_sources.back().nbytes());
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const BenchCase& c = cases[i];
    const BenchData& d = data[i];
    const mg::Tensor& source = copy_sources[i];
    for (const int t : thread_counts) {
      benchmark::RegisterBenchmark(bench_name("gather_into", c, t).c_str(),
                                   [&c, &d, t](benchmark::State& s) { gather_into(s, c, d, t); })
          ->UseRealTime()->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(bench_name("gather_oneshot", c, t).c_str(),
                                   [&c, &d, t](benchmark::State& s) { gather_oneshot(s, c, d, t); })
          ->UseRealTime()->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(bench_name("memcpy", c, t).c_str(),
                                   [&d, &source, t](benchmark::State& s) { copy_baseline(s, d, source, t); })
          ->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  }

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\n(load average at the end: %s)\n", load_average().c_str());
  std::printf("\n| # | case | threads | into ms | into GB/s | one-shot ms | memcpy ms | memcpy/into |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const BenchCase& c = cases[i];
    for (const int t : thread_counts) {
      const double into = reporter.seconds(bench_name("gather_into", c, t));
      const double oneshot = reporter.seconds(bench_name("gather_oneshot", c, t));
      // The best memcpy at up to t threads (a busy machine can make the t-thread copy slower).
      double copy = 0;
      for (const int u : thread_counts) {
        const double s = reporter.seconds(bench_name("memcpy", c, u));
        if (u <= t && s > 0 && (copy == 0 || s < copy)) copy = s;
      }
      if (into <= 0) continue;
      if (c.name == "tiny") {
        std::printf("| %d | %s | %d | %.4f us | %.2f | %.4f us | %.4f us | %.2f |\n", c.number,
                    c.name.c_str(), t, into * 1e6, data[i].effective_bytes / into / 1e9,
                    oneshot * 1e6, copy * 1e6, copy / into);
      } else {
        std::printf("| %d | %s | %d | %.3f | %.2f | %.3f | %.3f | %.2f |\n", c.number,
                    c.name.c_str(), t, into * 1e3, data[i].effective_bytes / into / 1e9,
                    oneshot * 1e3, copy * 1e3, copy / into);
      }
    }
  }
  return 0;
}
