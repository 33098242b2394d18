"""Work that waits for a module's import: ``after_import(name, register)`` calls register() now if
the module is imported, else right after its import (a one-shot import hook). Importing
multigather imports neither torch.distributed, nor Inductor, nor Dynamo; what it registers there
(DTensor strategies, Inductor rules, routing()'s frame rule) waits for them."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Callable


def after_import(name: str, register: Callable[[], None]) -> None:
    """register() now if module ``name`` is imported, else right after it is (its exec_module
    wrapped once; the finder removes itself on first use)."""
    if name in sys.modules:
        register()
        return

    class _AfterImport(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            exec_module = spec.loader.exec_module

            def exec_and_register(module):
                exec_module(module)
                register()

            spec.loader.exec_module = exec_and_register
            return spec

    sys.meta_path.insert(0, _AfterImport())
