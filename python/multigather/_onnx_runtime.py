"""The ONNX Runtime custom-op library of multigather (``libmultigather_onnxruntime.so``, built from
python/onnxruntime_ops/multigather_onnxruntime.cpp; docs/onnx_runtime_library.md).

It registers the ONNX domain ``"multigather"`` (opset version 1) with two nodes, run on
multigather's CPU engine inside ONNX Runtime's CPU execution provider::

    import onnxruntime
    so = onnxruntime.SessionOptions()
    so.register_custom_ops_library(multigather.onnx.custom_ops_library())
    session = onnxruntime.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])

The model imports the opsets ``""`` and ``("multigather", 1)``. The nodes:

``multigather.GatherMultiaxis(input: T, indices: Tind) -> output: T``
    Attributes: ``axes`` (INTS, required, may be empty), ``index_mode`` (STRING, default
    ``"error"``; error | clamp | wrap | fill), ``negative_indices`` (INT 0/1, default 1),
    ``fill_value`` (FLOAT, default 0.0; used by index_mode=fill, converted to T, an error when T
    cannot hold it). Semantics: docs/spec.md section 1, as :func:`multigather.gather_multiaxis`:
    indices has input's rank, the coordinates folded into its last dimension, the non-axis
    dimensions broadcast both ways.

``multigather.ScatterMultiaxis(input: T, indices: Tind, updates: T) -> output: T``
    Attributes: ``axes`` (INTS, required), ``reduction`` (STRING, default ``"none"``; none | add |
    mul | min | max), ``index_mode`` (STRING, default ``"error"``; error | clamp | wrap | drop),
    ``negative_indices`` (INT 0/1, default 1), ``include_input`` (INT 0/1, default 1).
    Semantics: docs/spec.md section 4, as :func:`multigather.scatter_multiaxis`: output starts
    as input; the result does not depend on the thread count.

T: bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float, double. Tind: int8/16/32/64,
uint8/16/32/64. An index out of range (index_mode=error) fails the run with multigather's message
(the index, its value, the axis and its size); a bad attribute fails the session's creation.
"""

from __future__ import annotations

import os
import sys

__all__ = ["DOMAIN", "OPSET_VERSION", "custom_ops_library"]

#: The ONNX domain of the nodes GatherMultiaxis and ScatterMultiaxis.
DOMAIN = "multigather"
#: Their opset version in that domain.
OPSET_VERSION = 1


def _library_name() -> str:
    if sys.platform == "darwin":
        return "libmultigather_onnxruntime.dylib"
    if sys.platform == "win32":
        return "multigather_onnxruntime.dll"
    return "libmultigather_onnxruntime.so"


def custom_ops_library() -> str:
    """The absolute path of ``libmultigather_onnxruntime.so``, installed next to the package, for
    ``onnxruntime.SessionOptions().register_custom_ops_library(path)`` (C++:
    ``Ort::SessionOptions::RegisterCustomOpsLibrary``). The library links multigather's engine
    and not onnxruntime; it runs the nodes GatherMultiaxis and ScatterMultiaxis of the domain
    ``"multigather"`` (this module's docstring). FileNotFoundError, naming the expected path,
    when the package was built without it (the build needs ONNX Runtime's C header:
    scripts/onnxruntime-headers.sh, or MULTIGATHER_ONNXRUNTIME_INCLUDE_DIR)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _library_name())
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"multigather's ONNX Runtime custom-op library is not installed: no {path}. It is "
            "built with the package when ONNX Runtime's C header is found: run "
            "scripts/onnxruntime-headers.sh in the source tree (it fetches the header) before "
            "`pip install .`, or pass -DMULTIGATHER_ONNXRUNTIME_INCLUDE_DIR=<folder with "
            "onnxruntime_c_api.h> to CMake (pip: --config-settings=cmake.define."
            "MULTIGATHER_ONNXRUNTIME_INCLUDE_DIR=<folder>) (docs/onnx_runtime_library.md)"
        )
    return path
