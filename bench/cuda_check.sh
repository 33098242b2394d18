#!/usr/bin/env bash
# Everything the CUDA backend needs checked on a GPU machine, in one call (METHOD.md: few, full
# calls): configure + build with CUDA, the GPU tests against the CPU reference, the C++
# benchmark, then the PyTorch CUDA / CuPy peers. Run from the repository root:
#
#   bash bench/cuda_check.sh [build-dir]          (default build-gpu)
#
# GoogleTest: found by CMake when installed; otherwise set GTEST_SRC to a googletest source tree
# (e.g. a carried copy of Debian's /usr/src/googletest) and it is built first.
# Output: the test summary and the two benchmark tables; full logs under ${OUT:-.}/cuda_check/.
set -euo pipefail
build=${1:-build-gpu}
logs=${OUT:-.}/cuda_check
mkdir -p "$logs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

extra=()
if [[ -n "${GTEST_SRC:-}" ]]; then
  cmake -S "$GTEST_SRC" -B "$build-gtest" -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF \
        -DCMAKE_INSTALL_PREFIX="$PWD/$build-gtest/install" > "$logs/gtest.log" 2>&1
  cmake --build "$build-gtest" -j 16 --target install >> "$logs/gtest.log" 2>&1
  extra+=("-DGTest_DIR=$PWD/$build-gtest/install/lib/cmake/GTest")
fi
python_opt=OFF
python3 -c "import nanobind" 2>/dev/null && python_opt=ON
configure() {
  cmake -S . -B "$build" -DMULTIGATHER_CUDA=ON -DMULTIGATHER_BUILD_PYTHON=$python_opt \
        -DMULTIGATHER_BUILD_CLI=OFF -DMULTIGATHER_BUILD_BENCHMARKS="$1" "${extra[@]}" \
        > "$logs/configure.log" 2>&1
}
# The CPU benchmark needs Google Benchmark; without it, build the GPU benchmark by hand.
benchmarks=ON
configure ON || { benchmarks=OFF; configure OFF; } || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j 16 > "$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
if [[ $benchmarks == OFF ]]; then
  mkdir -p "$build/bench"
  cuda_root=$(dirname "$(dirname "$(command -v nvcc)")")
  g++ -O2 -std=c++20 -Iinclude -Ibench -I"$cuda_root/include" bench/cuda_bench.cpp \
      bench/bench_cases.cpp "$build/src/libmultigather.a" -L"$cuda_root/lib64" -lcudart_static \
      -fopenmp -ldl -lrt -lpthread -o "$build/bench/multigather_cuda_bench"
fi

echo "== GPU tests (every CUDA path against the CPU reference) =="
"$build/tests/multigather_tests" --gtest_filter='Cuda*' > "$logs/tests.log" 2>&1 && status=0 || status=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|replay:" "$logs/tests.log" | head -40
echo "== multigather CUDA vs a D2D copy of the output =="
"$build/bench/multigather_cuda_bench" | tee "$logs/cuda_bench.txt"
if [[ $python_opt == ON ]] && python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  export PYTHONPATH="$PWD/$build/python/package${PYTHONPATH:+:$PYTHONPATH}"
  echo "== Python: CUDA arrays (tests/python/test_cuda.py) =="
  python3 -m pytest tests/python/test_cuda.py -q -p no:cacheprovider 2>&1 | tail -5 | tee "$logs/pytest_cuda.txt"
  echo "== PyTorch CUDA and CuPy peers, multigather through Python =="
  python3 bench/cuda_peers.py | tee "$logs/cuda_peers.txt"
fi
exit "$status"
