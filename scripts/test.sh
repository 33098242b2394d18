#!/usr/bin/env bash
# Installs the dependencies (scripts/setup.sh), builds everything and runs every test suite.
#
#   scripts/test.sh                          build/ : C++ suite (CTest), then the later steps
#   scripts/test.sh --sanitize=address,undefined
#                                            build-sanitize/ : the C++ suite with sanitizers only
#   scripts/test.sh --build-dir DIR          another build folder
#
# Exits non-zero on the first failure. MULTIGATHER_JOBS sets the build parallelism (default:
# all cores). Extra CMake arguments can be passed in MULTIGATHER_CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=""
SANITIZE=""
while (($#)); do
  case $1 in
    --sanitize=*) SANITIZE=${1#*=} ;;
    --sanitize) SANITIZE=$2; shift ;;
    --build-dir=*) BUILD_DIR=${1#*=} ;;
    --build-dir) BUILD_DIR=$2; shift ;;
    *) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $BUILD_DIR ]]; then
  BUILD_DIR=$([[ -n $SANITIZE ]] && echo build-sanitize || echo build)
fi
JOBS=${MULTIGATHER_JOBS:-$(nproc)}

scripts/setup.sh

# ---- Step 1: C++ (library, CLI, GoogleTest suite through CTest) ------------------------------
CMAKE_ARGS=(-DMULTIGATHER_BUILD_TESTS=ON)
if [[ -n $SANITIZE ]]; then
  # Host code only: ASan cannot instrument device code and trips over the CUDA runtime.
  CMAKE_ARGS+=(-DMULTIGATHER_SANITIZE="$SANITIZE" -DMULTIGATHER_BUILD_BENCHMARKS=OFF
              -DMULTIGATHER_CUDA=OFF)
fi
# shellcheck disable=SC2206
CMAKE_ARGS+=(${MULTIGATHER_CMAKE_ARGS:-})
cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}"
cmake --build "$BUILD_DIR" -j "$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"

if [[ -n $SANITIZE ]]; then
  exit 0  # the steps below do not run under sanitizers
fi

# ---- Step 2: Python package (pinned test requirements, pip install ., pytest) ----------------
scripts/test-python.sh
# Append further test steps here, each one failing the script on error.
