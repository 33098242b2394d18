// Test support (not a test) for the GPU tests: what the CUDA runtime says about devices, and
// SKIP_WITHOUT_DEVICE(), which skips a GPU test without a device, or FAILS it under
// MULTIGATHER_REQUIRE_GPU=1 (bench/cuda_check.sh sets it where nvidia-smi lists a GPU).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "multigather/cuda.hpp"

namespace multigather {

// What the CUDA runtime says about devices: its count and cudaGetDeviceCount's error (no driver,
// a driver older than this runtime, no device, ...).
inline std::string device_count_answer() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return "cudaGetDeviceCount: " + std::to_string(count) + " devices, " + cudaGetErrorName(error) +
         " (" + cudaGetErrorString(error) + ")";
}

// bench/cuda_check.sh sets MULTIGATHER_REQUIRE_GPU=1 where nvidia-smi lists a GPU: there a GPU
// test that would skip for want of a device fails instead.
inline bool gpu_required() {
  const char* v = std::getenv("MULTIGATHER_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

#define SKIP_WITHOUT_DEVICE()                                                                 \
  do {                                                                                        \
    if (!cuda_device_available()) {                                                           \
      if (gpu_required()) FAIL() << "MULTIGATHER_REQUIRE_GPU=1 but " << device_count_answer(); \
      GTEST_SKIP() << "no CUDA device available (" << device_count_answer() << ")";           \
    }                                                                                         \
  } while (0)

}  // namespace multigather
