#!/usr/bin/env bash
# The README's Python command, `python3 -m pip install .`, exactly as a user runs it (pip's
# isolated build, no extra flags), in two fresh virtual environments:
#   1. torch installed first (scripts/install-torch.sh's pinned torch): the package must come
#      with the torch ops (libmultigather_torch: torch.ops.multigather.*, gradients) and
#      multigather._torch_fast, built against that torch, and torch.compile must fuse them;
#   2. no torch: the package installs and runs numpy arrays; a torch op is not there.
# Each venv then runs a small check script against the frameworks' own results. The venvs live in
# a temporary folder that is removed at the end. PYTHON=python3.11 sets the base interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_torch='
import torch, multigather
import multigather.torch_ops  # loads libmultigather_torch: ImportError if it was not built
x = torch.arange(12.).reshape(3, 4).requires_grad_()
i = torch.tensor([[2, 0, 1, 2]])
y = torch.ops.multigather.gather(x, 0, i)            # the C++ op (libmultigather_torch)
y.sum().backward()
x2 = x.detach().clone().requires_grad_()
torch.gather(x2, 0, i).sum().backward()
assert torch.equal(y, torch.gather(x2, 0, i)) and torch.equal(x.grad, x2.grad), (y, x.grad, x2.grad)
import multigather._torch_fast  # noqa: F401  (built against this torch)
# torch.compile fuses the op into its consumer (the Inductor rules of the installed package)
from torch._inductor.utils import run_and_get_code
w = torch.randint(-8, 8, (64, 8)).float().requires_grad_()  # small integers: every sum is exact
k = torch.randint(0, 64, (20,))
out, code = run_and_get_code(torch.compile(lambda w: (torch.ops.multigather.index_select(w, 0, k) * 2).sum()), w)
assert "multigather.index_select.default(" not in code[0], "index_select stayed an extern call"
assert torch.equal(out, (w[k] * 2).sum()), out
print("torch ops ok", torch.__version__, "(torch.compile fuses them)")
'
check_plain='
import numpy as np, multigather, importlib.util
x = np.arange(12).reshape(3, 4)
got = multigather.gather_multiaxis(x, np.array([[2], [0], [1]]), axes=[1])
assert (got == np.take_along_axis(x, np.array([[2], [0], [1]]), axis=1)).all(), got
assert importlib.util.find_spec("torch") is None
print("numpy ok")
'

echo "test-readme-install: 1. fresh venv, torch first, then python3 -m pip install ."
"$PYTHON" -m venv "$tmp/with-torch"
(
  export PYTHON="$tmp/with-torch/bin/python"
  source scripts/install-torch.sh
  "$PYTHON" -m pip install -q "numpy==2.4.6"
  "$PYTHON" -m pip install -q .
  cd "$tmp" && "$PYTHON" -c "$check_torch"
)

echo "test-readme-install: 2. fresh venv without torch, python3 -m pip install ."
"$PYTHON" -m venv "$tmp/plain"
"$tmp/plain/bin/python" -m pip install -q .
(cd "$tmp" && "$tmp/plain/bin/python" -c "$check_plain")
echo "test-readme-install: passed"
