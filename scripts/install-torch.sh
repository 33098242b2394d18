#!/usr/bin/env bash
# PyTorch for the Python tests (tests/python/test_torch*.py), pinned, without the several GB of
# CUDA wheels that `pip install torch` pulls: the CUDA toolkit of the machine (/usr/local/cuda:
# cudart, cublas, cudnn, cusparse, cufft, nvrtc, ...) stands in for them; only the four NVIDIA
# packages torch links against that the toolkit lacks come from PyPI.
#
#   source scripts/install-torch.sh     (what scripts/test-python.sh does: also exports
#                                        LD_LIBRARY_PATH for the tests)
#   scripts/install-torch.sh            (installs; prints the LD_LIBRARY_PATH to use)
#   PYTHON=python3.11                   the interpreter (default python3)
#
# A fast no-op when `import torch` already works (e.g. torch 2.15.0+cu132 preinstalled). torch's
# own RPATH finds the NVIDIA packages (site-packages/nvidia/*/lib) and ld.so.conf usually lists
# the toolkit; LD_LIBRARY_PATH adds both in case the machine's loader configuration does not.

_mg_torch_main() {
  local python=${PYTHON:-python3}
  local cuda_home=${CUDA_HOME:-/usr/local/cuda}
  # One interpreter start: import torch (the check) and print the library folders: the NVIDIA
  # packages' (site-packages/nvidia/*/lib, wherever the namespace package lives: a venv with
  # --system-site-packages sees the system ones) and the toolkit's.
  local probe='
import glob, importlib.util, os, sys
dirs = []
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    dirs += sorted(glob.glob(os.path.join(root, "*", "lib")))
dirs += [p for p in (os.path.join(sys.argv[1], "lib64"), os.path.join(sys.argv[1], "lib"))
         if os.path.isdir(p)]
print(":".join(dirs))
if sys.argv[2] == "check":
    import torch  # noqa: F401
'
  local dirs
  if ! dirs=$("$python" -c "$probe" "$cuda_home" check 2>/dev/null); then
    echo "install-torch.sh: installing torch 2.15.0 (no CUDA wheels; toolkit at $cuda_home)" >&2
    "$python" -m pip install -q --no-deps \
      torch==2.15.0 \
      filelock==4.2.11 typing-extensions==4.15.0 sympy==1.14.0 mpmath==1.3.0 \
      networkx==3.6.1 jinja2==3.1.6 markupsafe==3.0.3 fsspec==2026.9.0 \
      nvidia-nccl-cu13==2.30.7 nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2 \
      nvidia-cufile==1.20.0.107 || return 1
    dirs=$("$python" -c "$probe" "$cuda_home" dirs) || return 1
    LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$python" -c "import torch" \
      || { echo "install-torch.sh: import torch still fails (above)" >&2; return 1; }
  fi
  case ":${LD_LIBRARY_PATH:-}:" in
    *":$dirs:"*) ;;  # already there (sourced twice)
    *) [ -z "$dirs" ] || export LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # executed
  set -euo pipefail
  _mg_torch_main
  echo "export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
else  # sourced: LD_LIBRARY_PATH stays exported in the caller
  _mg_torch_main || return 1
fi
