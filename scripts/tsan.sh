#!/usr/bin/env bash
# Builds the library and the concurrency test (tests/concurrency/) with ThreadSanitizer in
# build-tsan/ and runs it: 8 caller threads, each making hundreds of calls through every C++
# entry point, results checked against the reference kernel; any data race fails the run.
#
# Each call runs on one engine thread (MULTIGATHER_TSAN=1 makes the test pass num_threads = 1,
# and OMP_NUM_THREADS=1): GCC's libgomp is not built with TSan, so its barriers and thread pool
# show up as races that are not there. What this checks is the library's state shared between
# CALLERS (the op registry, lowering caches, the output memory cache, static initialisation).
#
#   scripts/tsan.sh                 MULTIGATHER_JOBS sets the build parallelism
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${MULTIGATHER_JOBS:-$(nproc)}
LAUNCHER=()
command -v ccache >/dev/null 2>&1 && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-tsan -DMULTIGATHER_SANITIZE=thread -DMULTIGATHER_CUDA=OFF \
  -DMULTIGATHER_BUILD_TESTS=ON -DMULTIGATHER_BUILD_BENCHMARKS=OFF -DMULTIGATHER_BUILD_CLI=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCHER[@]}" >/dev/null
cmake --build build-tsan -j "$JOBS" --target multigather_concurrency_test
MULTIGATHER_TSAN=1 OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --test-dir build-tsan -L concurrency --output-on-failure
