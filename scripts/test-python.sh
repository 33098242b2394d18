#!/usr/bin/env bash
# Builds and installs the Python package, then runs its tests (tests/python): the hypothesis
# differential suite of gather_multiaxis and the framework suites (numpy, ONNX Runtime,
# TensorFlow, JAX, PyTorch: scripts/install-torch.sh installs torch 2.15.0 when `import torch`
# fails). The tests run in one pytest-xdist worker process per core (every test module must pass
# in any process and any order: a fresh worker has imported only what its tests imported). About
# 5 minutes on 2 cores, plus the build.
#
#   scripts/test-python.sh              pinned test requirements + `pip install .` + pytest
#   MULTIGATHER_HYPOTHESIS_EXAMPLES=N   examples of the core differential suites (default 2000)
#   MULTIGATHER_FRAMEWORK_EXAMPLES=N    examples per framework differential test (default 200)
#   MULTIGATHER_HYPOTHESIS_RANDOM=1     fresh random examples instead of the derandomized ones
#   MULTIGATHER_JOBS=N                  pytest worker processes (default: all cores; 0: in this one)
#   PYTHON=python3.11                   the interpreter (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip install -q -r requirements-test.txt
source scripts/install-torch.sh  # pinned torch; exports LD_LIBRARY_PATH
# Built without pip's isolated environment (its build requirements are pinned in
# requirements-test.txt, as in pyproject.toml), so that the build sees the installed torch and
# makes multigather._torch_fast for it; the test suite checks that it is on.
# ONNX Runtime's C header for the custom-op library (Debian 13's libonnxruntime-dev, unpacked
# into .deps/; python/CMakeLists.txt finds it there)
scripts/onnxruntime-headers.sh >/dev/null
"$PYTHON" -m pip install -q --no-build-isolation .
MULTIGATHER_EXPECT_TORCH_FAST=1 MULTIGATHER_EXPECT_ORT_LIBRARY=1 "$PYTHON" -m pytest tests/python -q -n "${MULTIGATHER_JOBS:-$(nproc)}" "$@"
