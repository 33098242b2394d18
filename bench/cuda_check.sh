#!/usr/bin/env bash
# Everything the CUDA backend needs checked on a GPU machine, in one call (METHOD.md: few, full
# calls), on the GPU image as it is (nvcc, CMake, ninja, Python with torch/cupy/nanobind/
# scikit-build-core, GoogleTest and Google Benchmark >= 1.8; no CLI11, nlohmann-json, apt or internet):
#
#   1. configure + build (CUDA on): library, GoogleTest suite, GPU benchmark
#   2. Python package: pip install --no-build-isolation (CUDA on) into <build>/site, in the
#      background while step 1 builds
#   3. C++ GPU tests (Cuda*: every CUDA path against the CPU reference)
#   4. the same GPU tests under compute-sanitizer memcheck (fewer random cases)
#   5. Python GPU tests (tests/python/test_cuda.py, test_jax_cuda.py, the CUDA cases of
#      test_torch_native.py)
#   6. C++ GPU benchmark (multigather_cuda_bench: multigather vs a D2D copy)
#   7. PyTorch CUDA / CuPy peers (bench/cuda_peers.py; needs only torch and cupy, runs whatever
#      failed before it)
# Each step reports on its own (ok / FAIL / no device / not run) in a summary table at the end;
# a failing step does not stop the later ones.
#
# Usage, from the repository root (the device call in bench/README.md):
#   bash scripts/gpu-deps.sh                      on a machine with the Debian packages: fills
#                                                 .gpu-deps/, which the device call carries
#   bash bench/cuda_check.sh [options]
#     --build-dir DIR        default build-gpu
#     --deps DIR             carried dependencies (default .gpu-deps when it exists); used only
#                            where find_package finds nothing (cmake/CarriedDependencies.cmake)
#     --hide-system-deps     the rehearsal: CMake may not see this machine's GoogleTest, Google
#                            Benchmark, CLI11 and nlohmann-json (CMAKE_DISABLE_FIND_PACKAGE_*),
#                            as on the GPU image
#     --jobs N               build parallelism (default: all cores)
#     --no-timeouts          no per-step time limits (a slow machine's rehearsal)
#
# No silent pass: when nvidia-smi lists a GPU, MULTIGATHER_REQUIRE_GPU=1 is exported and every
# GPU test that would skip, and a benchmark that finds no device, fails instead; the runtime's
# cudaGetDeviceCount answer is printed (CudaGather.DeviceIsThere, multigather_cuda_bench).
# Without a GPU the GPU steps report "no device" after everything built.
#
# Exit status: 0 every step ok; 1 some step FAILED; 3 nothing failed but there was no device
# (the rehearsal's expected result). Logs: ${OUT:-<build>}/cuda_check/ (at most 8 files, what
# the device tool brings back).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
start_time=$SECONDS

build="build-gpu"
deps=""
hide=0
jobs=$(nproc)
timeouts=1
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift ;;
    --build-dir=*) build=${1#*=} ;;
    --deps) deps=$2; shift ;;
    --deps=*) deps=${1#*=} ;;
    --hide-system-deps) hide=1 ;;
    --jobs) jobs=$2; shift ;;
    --jobs=*) jobs=${1#*=} ;;
    --no-timeouts) timeouts=0 ;;
    *) echo "cuda_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $deps && -d .gpu-deps ]]; then deps=.gpu-deps; fi
if [[ -n $deps ]]; then deps=$(cd "$deps" && pwd); fi
build_abs=$(mkdir -p "$build" && cd "$build" && pwd)
logs=${OUT:-$build_abs}/cuda_check
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"

say() { echo "$@" | tee -a "$summary"; }
# Seconds for `timeout` (0: none): a step's own limit, cut so that the whole script ends within
# MULTIGATHER_CHECK_SECONDS (default 560: the device tool stops a command at 600) with `$2`
# seconds (default 150) left for the peers table, which runs last.
budget=${MULTIGATHER_CHECK_SECONDS:-560}
limit() {
  ((timeouts)) || { echo 0; return; }
  local left=$((budget - ${2:-150} - (SECONDS - start_time)))
  ((left < 20)) && left=20
  echo $(($1 < left ? $1 : left))
}

# ---- Environment ---------------------------------------------------------------------------
if ! command -v nvcc > /dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
gpu=0
if command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
  gpu=1
  export MULTIGATHER_REQUIRE_GPU=${MULTIGATHER_REQUIRE_GPU:-1}
fi
PYTHON=${PYTHON:-python3}
say "== cuda_check.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ)"
if ((gpu)); then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
else
  say "gpu: none listed by nvidia-smi ($(command -v nvidia-smi > /dev/null && echo 'nvidia-smi -L lists none' || echo 'no nvidia-smi')): GPU steps will report 'no device'"
fi
say "nvcc: $(nvcc --version 2> /dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' || true)  cmake: $(cmake --version | sed -n 1s/'cmake version '//p)  ninja: $(ninja --version 2> /dev/null || echo none)  c++: $(c++ -dumpfullversion 2> /dev/null)"
say "python: $("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $("$PYTHON" - << 'EOF'
import importlib.metadata as m
names = ["torch", "cupy-cuda13x", "cupy-cuda12x", "numpy", "nanobind", "scikit-build-core", "pytest", "hypothesis", "jax"]
found = []
for n in names:
    try:
        found.append(f"{n} {m.version(n)}")
    except m.PackageNotFoundError:
        pass
print(", ".join(found))
EOF
)"
say "deps: ${deps:-none carried}$([[ -f $deps/PROVENANCE ]] && echo " ($(grep -vc '^#' "$deps/PROVENANCE") entries in PROVENANCE)")$( ((hide)) && echo '; system GoogleTest/benchmark/CLI11/nlohmann-json hidden from CMake (rehearsal)')"
say "MULTIGATHER_REQUIRE_GPU=${MULTIGATHER_REQUIRE_GPU:-unset}; build: $build; logs: $logs"

# ---- Step bookkeeping ------------------------------------------------------------------------
declare -a step_names step_results step_seconds
record() {  # name, result, seconds
  step_names+=("$1"); step_results+=("$2"); step_seconds+=("$3")
  say "-- $1: $2 (${3}s)"
}

cmake_args=(-DMULTIGATHER_CUDA=ON -DMULTIGATHER_BUILD_TESTS=ON -DMULTIGATHER_BUILD_BENCHMARKS=ON
            -DMULTIGATHER_BUILD_CLI=OFF -DMULTIGATHER_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Release)
if [[ -n $deps ]]; then cmake_args+=("-DMULTIGATHER_DEPS_DIR=$deps"); fi
hidden=()
if ((hide)); then
  hidden=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
          -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
  cmake_args+=("${hidden[@]}")
fi
if command -v ccache > /dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  launcher=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache -Ccmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
else
  launcher=()
fi
if [[ ! -f $build/CMakeCache.txt ]] && command -v ninja > /dev/null; then cmake_args+=(-G Ninja); fi

# ---- 2 (background). Python package --------------------------------------------------------
# pip --no-build-isolation uses this interpreter's scikit-build-core and nanobind; where either
# is older than pyproject.toml's pin (or absent), the carried copy of the pin is used instead.
pin() { sed -n "s/.*\"$1==\([0-9.]*\)\".*/\1/p" pyproject.toml | head -1; }
older_than_pin() {  # distribution: true when not installed or older than the pin
  "$PYTHON" - "$1" "$(pin "$1")" << 'EOF'
import importlib.metadata as m, sys
def key(v):
    return tuple(int(p) if p.isdigit() else 0 for p in v.split(".")[:3])
try:
    have = m.version(sys.argv[1])
except m.PackageNotFoundError:
    sys.exit(0)
sys.exit(0 if key(have) < key(sys.argv[2]) else 1)
EOF
}
pip_env=()
# The XLA FFI headers: the image's jaxlib's when it has one (they match the XLA the handlers are
# registered with; python/CMakeLists.txt says which it took, and why not), else the vendored copy.
pip_cfg=(-Ccmake.define.MULTIGATHER_CUDA=ON -Ccmake.define.MULTIGATHER_BUILD_CLI=OFF
         "-Cbuild-dir=$build_abs/python-wheel")
pip_cfg+=("${launcher[@]}")
for define in "${hidden[@]}"; do pip_cfg+=("-Ccmake.define.${define#-D}"); done
if [[ -n $deps ]]; then pip_cfg+=("-Ccmake.define.MULTIGATHER_DEPS_DIR=$deps"); fi
if older_than_pin scikit-build-core && [[ -d $deps/python/scikit-build-core ]]; then
  pip_env+=("PYTHONPATH=$deps/python/scikit-build-core${PYTHONPATH:+:$PYTHONPATH}")
  say "python: scikit-build-core older than $(pin scikit-build-core) or absent: the carried copy builds"
fi
if older_than_pin nanobind && [[ -d $deps/python/nanobind/nanobind/cmake ]]; then
  pip_cfg+=("-Ccmake.define.nanobind_ROOT=$deps/python/nanobind/nanobind/cmake")
  say "python: nanobind older than $(pin nanobind) or absent: the carried copy builds"
fi
site=$build_abs/site
pip_log=$logs/pip.log
pip_started=0

start_pip() {
  rm -rf "$site"
  pip_t0=$SECONDS
  (env "${pip_env[@]}" CMAKE_BUILD_PARALLEL_LEVEL=$(((jobs + 1) / 2)) \
     timeout "$(limit 480)" "$PYTHON" -m pip install -v --no-build-isolation --no-deps --no-index \
       --target "$site" "${pip_cfg[@]}" . > "$pip_log" 2>&1
   echo $? > "$build_abs/pip.rc") &
  pip_pid=$!
  pip_started=1
}

# ---- 1. Configure + build ----------------------------------------------------------------------
build_log=$logs/build.log
t0=$SECONDS
rm -f "$build_abs/pip.rc"
if timeout "$(limit 180)" cmake -S . -B "$build" "${cmake_args[@]}" > "$build_log" 2>&1; then
  start_pip
  # Keep going past a target that fails (a benchmark against another Google Benchmark, say): the
  # GPU tests still run when their own binary built.
  keep_going=(-- -k 0)
  if grep -q '^CMAKE_GENERATOR:INTERNAL=Unix Makefiles' "$build/CMakeCache.txt"; then keep_going=(-- -k); fi
  touch "$build_abs/build.stamp"
  if timeout "$(limit 480)" cmake --build "$build" -j "$jobs" "${keep_going[@]}" >> "$build_log" 2>&1; then
    record "configure + build (C++, CUDA)" ok $((SECONDS - t0))
    built=1
    bench_built=1
  else
    grep -B2 -A12 'FAILED:' "$build_log" | head -60
    record "configure + build (C++, CUDA)" "FAIL (build; $build_log)" $((SECONDS - t0))
    built=0
    # The test binary built in this run (not a stale one): the GPU tests still run.
    [[ $build/tests/multigather_tests -nt $build_abs/build.stamp ]] && built=1
    bench_built=0
    [[ $build/bench/multigather_cuda_bench -nt $build_abs/build.stamp ]] && bench_built=1
  fi
else
  tail -30 "$build_log"
  record "configure + build (C++, CUDA)" "FAIL (configure; $build_log)" $((SECONDS - t0))
  built=0
  bench_built=0
  start_pip  # the Python build configures on its own
fi
if grep -q "GoogleTest from the carried\|from the carried headers\|no Google Benchmark" "$build_log"; then
  grep "multigather: .*carried\|no Google Benchmark" "$build_log" | sed 's/^-- /   /' | tee -a "$summary"
fi

# A GPU step's result from its exit status and whether a device was there.
gpu_result() {  # rc, log, extra
  if [[ $1 == 124 || $1 == 137 ]]; then echo "FAIL (timed out; $2)"
  elif [[ $1 != 0 ]]; then echo "FAIL (exit $1; $2)"
  elif ((gpu)); then echo ok
  else echo "no device"
  fi
}

# ---- 3. C++ GPU tests --------------------------------------------------------------------------
tests_log=$logs/tests.log
t0=$SECONDS
if ((built)); then
  timeout "$(limit 240)" "$build/tests/multigather_tests" --gtest_filter='Cuda*' > "$tests_log" 2>&1
  rc=$?
  grep -E "INFO|^\[  (PASSED|FAILED|SKIPPED) |tests? ran|replay:" "$tests_log" | head -30
  record "C++ GPU tests (Cuda*)" "$(gpu_result $rc "$tests_log")" $((SECONDS - t0))
else
  record "C++ GPU tests (Cuda*)" "not run (no build)" 0
fi

# ---- 4. compute-sanitizer ------------------------------------------------------------------------
san_log=$logs/sanitizer.log
t0=$SECONDS
if ((!built)); then
  record "compute-sanitizer memcheck" "not run (no build)" 0
elif ! command -v compute-sanitizer > /dev/null; then
  record "compute-sanitizer memcheck" "$( ((gpu)) && echo 'FAIL (no compute-sanitizer)' || echo 'no device (no compute-sanitizer)')" 0
elif ((!gpu)); then
  record "compute-sanitizer memcheck" "no device" 0
else
  # 300 random cases (each a few launches under the sanitizer); the 2 GiB case is left out.
  MULTIGATHER_TEST_CASES=300 timeout "$(limit 180)" compute-sanitizer --tool memcheck \
    --error-exitcode 97 "$build/tests/multigather_tests" \
    --gtest_filter='CudaGather.*:-CudaGather.InputBeyond32BitOffsets' > "$san_log" 2>&1
  rc=$?
  grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$san_log" | head -10
  record "compute-sanitizer memcheck" "$(gpu_result $rc "$san_log")" $((SECONDS - t0))
fi

# ---- 2 (joined). Python package ------------------------------------------------------------------
t0=$SECONDS
if ((pip_started)); then wait "$pip_pid"; fi
pip_rc=$(cat "$build_abs/pip.rc" 2> /dev/null || echo 1)
if [[ $pip_rc == 0 ]]; then
  record "Python package (pip --no-build-isolation, CUDA)" ok $((SECONDS - pip_t0))
else
  tail -30 "$pip_log"
  record "Python package (pip --no-build-isolation, CUDA)" "FAIL (exit $pip_rc; $pip_log)" $((SECONDS - pip_t0))
fi

# ---- 5. Python GPU tests ---------------------------------------------------------------------
py_log=$logs/pytest.log
t0=$SECONDS
if [[ $pip_rc == 0 ]]; then
  PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" timeout "$(limit 180)" \
    "$PYTHON" -m pytest tests/python/test_cuda.py tests/python/test_jax_cuda.py \
    tests/python/test_torch_native.py -k cuda -q -rs -p no:cacheprovider > "$py_log" 2>&1
  rc=$?
  tail -8 "$py_log"
  record "Python GPU tests (test_cuda.py, test_jax_cuda.py, torch CUDA backward)" "$(gpu_result $rc "$py_log")" $((SECONDS - t0))
else
  record "Python GPU tests (test_cuda.py, test_jax_cuda.py, torch CUDA backward)" "not run (no package)" 0
fi

# ---- 6. C++ GPU benchmark ------------------------------------------------------------------------
bench_log=$logs/cuda_bench.txt
t0=$SECONDS
if ((bench_built)) && [[ -x $build/bench/multigather_cuda_bench ]]; then
  timeout "$(limit 180)" "$build/bench/multigather_cuda_bench" > "$bench_log" 2>&1
  rc=$?
  cat "$bench_log"
  record "C++ GPU benchmark (multigather_cuda_bench)" "$(gpu_result $rc "$bench_log")" $((SECONDS - t0))
else
  record "C++ GPU benchmark (multigather_cuda_bench)" "not run (no build)" 0
fi

# ---- 7. PyTorch / CuPy peers -------------------------------------------------------------------
peers_log=$logs/cuda_peers.txt
t0=$SECONDS
peers_path=${PYTHONPATH:-}
if [[ $pip_rc == 0 ]]; then peers_path="$site${peers_path:+:$peers_path}"; fi
PYTHONPATH=$peers_path PYTHONUNBUFFERED=1 timeout "$(limit 240 0)" "$PYTHON" bench/cuda_peers.py \
  > "$peers_log" 2>&1
rc=$?
cat "$peers_log"
result=$(gpu_result $rc "$peers_log")
if [[ $pip_rc != 0 && $result == ok ]]; then result="ok (without multigather: no package)"; fi
record "PyTorch / CuPy peers (cuda_peers.py)" "$result" $((SECONDS - t0))

# ---- Summary -------------------------------------------------------------------------------------
say ""
say "== summary ($((SECONDS - start_time)) s)"
say "| step | result | s |"
say "|---|---|---:|"
failed=0
nodevice=0
for i in "${!step_names[@]}"; do
  say "| ${step_names[$i]} | ${step_results[$i]} | ${step_seconds[$i]} |"
  case ${step_results[$i]} in
    ok*) ;;
    "no device"*) nodevice=1 ;;
    *) failed=1 ;;
  esac
done
if ((failed)); then
  say "cuda_check.sh: FAILED"
  exit 1
elif ((nodevice)); then
  say "cuda_check.sh: everything built; the GPU steps found no device (exit 3)"
  exit 3
fi
say "cuda_check.sh: every step ok"
exit 0
