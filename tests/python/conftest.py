"""Shared pytest configuration of the Python tests.

Hypothesis runs derandomized (the same examples on every run, so CI is reproducible; a failure
prints the falsifying example and the @reproduce_failure blob). MULTIGATHER_HYPOTHESIS_EXAMPLES
raises or lowers the example count of the differential suites; MULTIGATHER_HYPOTHESIS_RANDOM=1
switches to fresh random examples (hypothesis then prints the seed of a failing run).
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

EXAMPLES = int(os.environ.get("MULTIGATHER_HYPOTHESIS_EXAMPLES", "2000"))

settings.register_profile(
    "multigather",
    max_examples=EXAMPLES,
    derandomize=os.environ.get("MULTIGATHER_HYPOTHESIS_RANDOM") != "1",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("multigather")


def require(module: str):
    """Imports ``module`` or skips the test with a reason naming the missing package. In CI
    (CI=true) torch is required: scripts/test-python.sh installs it (scripts/install-torch.sh),
    so its tests fail instead of skipping when it does not import."""
    if module == "torch" and os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install {module})")
