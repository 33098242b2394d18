// GPU benchmark of multigather's CUDA backend on the cases of docs/bench.md, beside the
// limit: a device-to-device copy (cudaMemcpyAsync) of the output's size.
//
//   cuda_bench [--warmup N] [--reps N] [--batch N] [case ...]   (cases: docs/bench.md names; default all)
//   cuda_bench --list                                  (each case's shapes; needs no device)
//
// Method: the CPU benchmark's cases and data (bench_cases.cpp: a non-zero pattern, random
// in-range indices from a fixed seed), checked against the CPU core once, then warm-up calls and
// batches of back-to-back calls timed with CUDA events, the median per-call time reported;
// operand sets rotate so that one call's input is not still in L2 from the previous call.
// multigather runs in error mode through gather_multiaxis_cuda_enqueue with a device flag (the
// kernel checks every index; nothing synchronizes), like PyTorch's device-side asserts; "sync"
// is gather_multiaxis_cuda_into, which synchronizes the stream in error mode to return a Status.
// Columns:
//   copy us     the D2D copy of the output's bytes (read + write counted in its GB/s)
//   mg us       multigather, error mode, enqueue form
//   GB/s        effective: (output + index + gathered input bytes) / time, as in docs/bench.md
//   vs copy     copy time / multigather time (1.0 = as fast as copying the output)
// PyTorch CUDA and CuPy peers are timed by bench/cuda_peers.py.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_cases.hpp"
#include "multigather/cuda.hpp"

namespace {

using multigather::DType;
using multigather::bench::BenchCase;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(const multigather::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "multigather error in %s: %s\n", what, s.message().c_str());
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times back-to-back calls: each rep records an event, makes `batch` calls, records another;
// returns the median over reps of (elapsed / batch) in us. While the host enqueues faster than
// the GPU runs, this is the kernel's time; otherwise it is the host's cost per call.
double time_events(cudaStream_t stream, int warmup, int reps, int batch,
                   const std::function<void(int)>& call) {
  int i = 0;
  for (; i < warmup; ++i) call(i);
  check(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(start, stream), "record");
    for (int b = 0; b < batch; ++b) call(i++);
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    us.push_back(ms * 1000.0 / batch);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(us);
}

// Host wall time per call over `calls` back-to-back calls (for the per-call overhead case).
double time_host_per_call(cudaStream_t stream, int calls, const std::function<void(int)>& call) {
  for (int i = 0; i < 100; ++i) call(i);
  check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> per_call;
  for (int round = 0; round < 7; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call(i);
    check(cudaStreamSynchronize(stream), "sync");
    const auto t1 = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  return median(per_call);
}

struct DeviceArray {
  void* data = nullptr;
  explicit DeviceArray(std::size_t bytes) { check(cudaMalloc(&data, bytes ? bytes : 1), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

void run_case(const BenchCase& c, int warmup, int reps, int batch, cudaStream_t stream) {
  // The CPU benchmark's data (bench_cases.cpp): a non-zero pattern, indices from a fixed seed.
  multigather::bench::BenchData data = multigather::bench::make_bench_data(c);
  const std::size_t in_bytes = data.input.nbytes();
  const std::size_t ix_bytes = data.indices.nbytes();
  const std::size_t out_bytes = data.output.nbytes();
  const multigather::Dims out_shape = data.output.shape();

  // Enough copies of the operands that one rotation exceeds the L2 cache several times.
  int l2 = 0, device = 0;
  check(cudaGetDevice(&device), "device");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
  const std::size_t per_set = in_bytes + ix_bytes + out_bytes;
  const int sets = static_cast<int>(std::clamp<std::size_t>(
      (4 * static_cast<std::size_t>(l2) + per_set - 1) / per_set, 1, 8));
  std::vector<std::unique_ptr<DeviceArray>> inputs, indices, outputs;
  for (int s = 0; s < sets; ++s) {
    inputs.push_back(std::make_unique<DeviceArray>(in_bytes));
    indices.push_back(std::make_unique<DeviceArray>(ix_bytes));
    outputs.push_back(std::make_unique<DeviceArray>(out_bytes));
    check(cudaMemcpy(inputs.back()->data, data.input.data(), in_bytes, cudaMemcpyHostToDevice), "upload");
    check(cudaMemcpy(indices.back()->data, data.indices.data(), ix_bytes, cudaMemcpyHostToDevice), "upload");
  }
  DeviceArray copy_src(out_bytes * static_cast<std::size_t>(sets));
  DeviceArray copy_dst(out_bytes * static_cast<std::size_t>(sets));
  DeviceArray flag(sizeof(std::uint32_t));
  check(cudaMemset(flag.data, 0, sizeof(std::uint32_t)), "flag");

  const auto gather = [&](int i, bool sync) {
    const int s = i % sets;
    multigather::TensorView in(inputs[static_cast<std::size_t>(s)]->data, c.dtype, c.input_shape);
    multigather::TensorView ix(indices[static_cast<std::size_t>(s)]->data, DType::kInt64, c.indices_shape);
    multigather::MutableTensorView out(outputs[static_cast<std::size_t>(s)]->data, c.dtype, out_shape);
    if (sync) {
      check(multigather::gather_multiaxis_cuda_into(in, ix, c.axes, out, {}, stream), c.name.c_str());
    } else {
      check(multigather::gather_multiaxis_cuda_enqueue(in, ix, c.axes, out, {}, stream,
                                                       static_cast<std::uint32_t*>(flag.data)),
            c.name.c_str());
    }
  };
  const auto copy = [&](int i) {
    const std::size_t off = static_cast<std::size_t>(i % sets) * out_bytes;
    check(cudaMemcpyAsync(static_cast<char*>(copy_dst.data) + off,
                          static_cast<char*>(copy_src.data) + off, out_bytes,
                          cudaMemcpyDeviceToDevice, stream), "copy");
  };

  // Correctness spot check against the CPU core before timing.
  {
    gather(0, true);
    std::vector<std::byte> got(out_bytes);
    check(cudaMemcpy(got.data(), outputs[0]->data, out_bytes, cudaMemcpyDeviceToHost), "download");
    check(multigather::gather_multiaxis_into(data.input.view(), data.indices.view(), c.axes,
                                             data.output.mutable_view()), "CPU core");
    if (std::memcmp(data.output.data(), got.data(), out_bytes) != 0) {
      std::fprintf(stderr, "%s: GPU output differs from the CPU core\n", c.name.c_str());
      std::exit(1);
    }
  }

  const double copy_us = time_events(stream, warmup, reps, batch, copy);
  const double mg_us = time_events(stream, warmup, reps, batch, [&](int i) { gather(i, false); });
  const double sync_us = time_events(stream, warmup, reps, batch, [&](int i) { gather(i, true); });
  std::uint32_t raised = 0;
  check(cudaMemcpy(&raised, flag.data, 4, cudaMemcpyDeviceToHost), "flag");
  if (raised != 0) {
    std::fprintf(stderr, "%s: the kernel flagged an index out of range\n", c.name.c_str());
    std::exit(1);
  }
  std::printf("| %-18s | %10.2f | %10.2f | %10.2f | %8.1f | %8.1f | %6.2f |", c.name.c_str(),
              copy_us, mg_us, sync_us, 2.0 * static_cast<double>(out_bytes) / copy_us / 1e3,
              data.effective_bytes / mg_us / 1e3, copy_us / mg_us);
  if (c.name == "tiny") {
    const double host_us = time_host_per_call(stream, 10000, [&](int i) { gather(i, false); });
    const double host_sync_us = time_host_per_call(stream, 10000, [&](int i) { gather(i, true); });
    std::printf(" host us/call: enqueue %.2f, sync %.2f", host_us, host_sync_us);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int warmup = 10, reps = 21, batch = 10;
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      for (const BenchCase& c : multigather::bench::bench_cases()) {
        const auto shape = multigather::output_shape(c.input_shape, c.indices_shape, c.axes);
        std::printf("%-18s input %s %s, indices %s int64 -> output %s\n", c.name.c_str(),
                    multigather::to_string(c.input_shape).c_str(),
                    std::string(multigather::dtype_name(c.dtype)).c_str(),
                    multigather::to_string(c.indices_shape).c_str(),
                    multigather::to_string(shape.output_shape).c_str());
      }
      return 0;
    }
    if (a == "--warmup" && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--batch" && i + 1 < argc) {
      batch = std::atoi(argv[++i]);
    } else {
      wanted.push_back(a);
    }
  }
  if (!multigather::cuda_device_available()) {
    // The runtime's own reason (no driver, driver too old for this runtime, no device, ...).
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    std::printf("cuda_bench: no CUDA device available (cudaGetDeviceCount: %d devices, %s: %s); "
                "nothing to measure\n", count, cudaGetErrorName(error), cudaGetErrorString(error));
    // On a machine that has a GPU (bench/cuda_check.sh sets this when nvidia-smi lists one),
    // not measuring is a failure.
    const char* require = std::getenv("MULTIGATHER_REQUIRE_GPU");
    return require != nullptr && std::string(require) == "1" ? 1 : 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("device: %s, %d SMs, L2 %d MiB; warm-up %d, median of %d batches of %d calls\n\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, warmup, reps, batch);
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::printf("| %-18s | %10s | %10s | %10s | %8s | %8s | %6s |\n", "case", "copy us", "mg us",
              "mg sync us", "copy GB/s", "mg GB/s", "vs copy");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(20, '-').c_str(), std::string(12, '-').c_str(),
              std::string(12, '-').c_str(), std::string(12, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(8, '-').c_str());
  for (const BenchCase& c : multigather::bench::bench_cases()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), c.name) == wanted.end()) continue;
    run_case(c, warmup, reps, batch, stream);
  }
  cudaStreamDestroy(stream);
  return 0;
}
