"""A package whose PyTorch library was not built (installed before torch): multigather still
imports next to torch, plain calls run, and a call that needs torch.ops.multigather raises the
ImportError that says how to build it. The route recognizes that case by its exception type
(multigather._interop.OpsNotBuiltError), never by its message; any other ImportError of
multigather.torch_ops propagates."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import require

require("torch")

SCRIPT = textwrap.dedent("""
    import os, sys
    real = os.path.exists
    os.path.exists = lambda p: False if str(p).endswith("libmultigather_torch.so") else real(p)
    import numpy as np
    import torch
    import multigather
    from multigather import _interop, _torch_dispatch
    ops = _torch_dispatch.torch_ops()
    assert type(ops).__name__ == "_NotBuilt", type(ops)
    x = np.arange(6.0).reshape(3, 2)
    assert multigather.gather_multiaxis(x, np.array([[2], [0]]), [0]).tolist() == [[4.0, 5.0], [0.0, 1.0]]
    try:
        ops.gather
    except ImportError as error:
        assert isinstance(error.__cause__, _interop.OpsNotBuiltError), repr(error.__cause__)
        assert "are not built" in str(error) and "reinstall" in str(error), str(error)
        print("OK")
""")


def test_a_package_built_without_torch_runs_plain_calls_and_names_the_fix():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("OK"), result.stdout + result.stderr


def test_any_other_import_error_of_the_torch_ops_propagates(monkeypatch):
    import multigather
    from multigather import _interop, _torch_dispatch

    monkeypatch.setattr(_torch_dispatch, "_TORCH_OPS", None)
    monkeypatch.delattr(multigather, "torch_ops", raising=False)
    monkeypatch.setitem(sys.modules, "multigather.torch_ops", None)  # import halted: a plain ImportError
    with pytest.raises(ImportError) as raised:
        _torch_dispatch.torch_ops()
    assert not isinstance(raised.value, _interop.OpsNotBuiltError)
