"""Arrays in, arrays out: which framework an array belongs to, how it reaches the C++ core
without a copy, and how a result goes back to that framework.

Every array that speaks DLPack or the buffer protocol is accepted (numpy, torch, jax, cupy,
tensorflow, memoryview, ...); the core reads it in place, strides included. numpy arrays of the
ml_dtypes types (bfloat16, float8_e4m3fn, float8_e5m2), which numpy cannot export through
DLPack, travel as same-width unsigned views tagged with their real dtype name. Python lists and
scalars become numpy arrays. The result is an array of the input's framework: numpy in, numpy
out; torch in, torch out (through that framework's ``from_dlpack``, zero-copy).
"""

from __future__ import annotations

import operator
import sys
from typing import Any, Optional, Sequence

import numpy as np

from . import _multigather as _core


class OpsNotBuiltError(ImportError):
    """libmultigather_torch.so is missing: the package was built without torch (raised by
    multigather.torch_ops.library_path; _torch_dispatch.torch_ops catches it by type). Here, in a
    module both import, so that neither imports the other."""


# numpy dtypes (from ml_dtypes) that numpy cannot export through DLPack or the buffer protocol;
# the door's numpy reader takes them by name.
_ML_DTYPES = frozenset(("bfloat16", "float8_e4m3fn", "float8_e5m2"))
_FRAMEWORKS = {"numpy", "torch", "jax", "jaxlib", "cupy", "tensorflow"}


def framework_of(array: Any) -> str:
    """The framework whose array type ``array`` has: "numpy", "torch", "jax", "cupy",
    "tensorflow"; anything else (memoryview, lists) counts as "numpy"."""
    root = type(array).__module__.split(".", 1)[0]
    if root == "jaxlib":
        return "jax"
    return root if root in _FRAMEWORKS else "numpy"


def _no_grad_check(array: Any, name: str) -> None:
    if array.requires_grad and sys.modules["torch"].is_grad_enabled():
        raise RuntimeError(
            f"{name} requires grad, but this call runs outside autograd (its result would have "
            f"no grad_fn): use multigather.gather_multiaxis / scatter_multiaxis or "
            f"multigather.torch.* (torch.ops.multigather.*, differentiable) without out=, or "
            f"pass {name}.detach()")


def _is_array(obj: Any) -> bool:
    if hasattr(obj, "__dlpack__"):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def to_core(array: Any, name: str, *, writable: bool = False) -> Any:
    """``array`` as an object one of the door's readers takes (numpy's C API reads ml_dtypes'
    bfloat16 and float8 arrays too). Never copies an array; Python lists and scalars become
    numpy arrays. Raises TypeError for dtypes the core cannot hold, ValueError for a read-only
    ``out``."""
    framework = framework_of(array)
    if writable and not (isinstance(array, np.ndarray) or hasattr(array, "__dlpack__")):
        raise TypeError(f"{name} must be a writable array, not {type(array).__name__}")
    if framework == "numpy":
        if not isinstance(array, np.ndarray) and not _is_array(array):
            array = np.asarray(array)
        if isinstance(array, np.ndarray):
            if writable and not array.flags.writeable:
                raise ValueError(f"{name} is read-only")
            if array.dtype.name in _ML_DTYPES:
                return array
            if array.dtype.kind in "OUSVMm":
                raise TypeError(f"{name} dtype {array.dtype} is not supported")
            if array.dtype.kind in "fc" and array.dtype.itemsize > _MAX_FLOAT_ITEMSIZE[array.dtype.kind]:
                raise TypeError(f"{name} dtype {array.dtype} (long double) is not supported "
                                f"(supported: {_SUPPORTED})")
            if not array.dtype.isnative:
                raise TypeError(
                    f"{name} dtype {array.dtype.str} is not supported (non-native byte order)"
                )
            if any(st % array.itemsize for st in array.strides):
                raise ValueError(
                    f"{name} strides {array.strides} (bytes) are not whole multiples of its element "
                    f"size {array.itemsize}: multigather addresses elements, not bytes (a packed "
                    f"record field?); pass np.ascontiguousarray({name})")
    elif framework == "torch":
        _check_torch_layout(array, name)
        if writable:
            if array.requires_grad and sys.modules["torch"].is_grad_enabled():
                # As torch's own out= overloads: writing into it would bypass autograd.
                raise RuntimeError(
                    f"{name} requires grad: functions with out= arguments don't support "
                    f"automatic differentiation (pass {name}.detach(), or call without out=)")
            if array.is_inference() and not sys.modules["torch"].is_inference_mode_enabled():
                # torch's own rule for writes into inference tensors.
                raise RuntimeError(
                    f"{name}: Inplace update to inference tensor outside InferenceMode is not "
                    f"allowed (torch's rule; write inside torch.inference_mode(), or pass a "
                    f"{name}.clone())")
            return array
        if array.requires_grad:
            _no_grad_check(array, name)
            array = array.detach()
        if array.is_conj():
            array = array.resolve_conj()
        if array.is_neg():
            array = array.resolve_neg()
    elif framework == "jax" and writable:
        raise TypeError(f"{name} cannot be a jax array: jax arrays are immutable")
    else:
        # jax, cupy, tensorflow: an unsupported dtype by the framework's own name (DLPack would
        # say "DLPack code 11, 8 bits").
        dtype_name = getattr(getattr(array, "dtype", None), "name", None)
        if isinstance(dtype_name, str) and dtype_name not in _DTYPE_NAMES:
            raise TypeError(f"{name} dtype {dtype_name} is not supported (supported: {_SUPPORTED})")
    return array


_MAX_FLOAT_ITEMSIZE = {"f": 8, "c": 16}  # float64, complex128: no long double
_SUPPORTED = ("bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, "
              "complex128, float8_e4m3fn, float8_e5m2")
_DTYPE_NAMES = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                          "complex128", "float8_e4m3fn", "float8_e5m2"))


def _check_torch_layout(array: Any, name: str) -> None:
    """TypeError, naming ``name`` and the fix, for the torch tensors that hold no strided
    elements to read or write: sparse, mkldnn, quantized, meta."""
    torch = sys.modules["torch"]
    if array.layout != torch.strided:
        raise TypeError(f"{name} is a {array.layout} tensor: multigather reads and writes strided "
                        f"(dense) tensors; pass {name}.to_dense()")
    if array.is_quantized:
        raise TypeError(f"{name} is a quantized tensor ({array.dtype}): multigather has no "
                        f"quantized dtypes; pass {name}.dequantize() or {name}.int_repr()")
    if array.is_meta:
        raise TypeError(f"{name} is a meta tensor (no data): without out=, torch's meta tensors "
                        f"get the output's shape through torch.ops.multigather (its fake "
                        f"kernels); with out=, pass real tensors")
    if array.dtype not in _torch_dtypes():
        raise TypeError(f"{name} dtype {array.dtype} is not supported (supported: {_SUPPORTED})")


_TORCH_DTYPES: Optional[frozenset] = None


def _torch_dtypes() -> frozenset:
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        torch = sys.modules["torch"]
        _TORCH_DTYPES = frozenset(getattr(torch, n) for n in _DTYPE_NAMES if hasattr(torch, n))
    return _TORCH_DTYPES


def has_view_bits(array: Any) -> bool:
    """Whether ``array`` is a torch tensor with its conjugate or negative bit set (a lazy
    ``.conj()`` or ``._neg_view()``): its memory holds conj(x) or -x of its values."""
    return framework_of(array) == "torch" and (array.is_conj() or array.is_neg())


def _through_resolved(out: Any, run: Any) -> Any:
    """Writes into ``out``, a torch conjugate / negative view, through a plain copy of its values:
    ``run(staged)`` runs the call into the copy, then ``out.copy_(staged)`` writes the values back
    through the bits (and bumps out's version counter), only once the call succeeded."""
    to_core(out, "out", writable=True)  # out's own checks (requires_grad, inference)
    torch = sys.modules["torch"]
    with torch.no_grad():
        staged = out.resolve_conj().resolve_neg().clone()
    run(staged)
    with torch.no_grad():
        out.copy_(staged)
    return out


def _ints(values: Sequence[int], name: str) -> list[int]:
    out = []
    for j, v in enumerate(values):
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{name}[{j}] must be an int, not {type(v).__name__}") from None
    return out


def _fill_scalar(value: Any) -> Any:
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value  # the core raises TypeError for anything else


def mark_written(out: Any) -> None:
    """After writing into ``out``: a torch tensor's version counter is bumped, as PyTorch's own
    out= and in-place ops do, so that autograd raises ("modified by an inplace operation")
    when a tensor it saved for backward was overwritten, instead of computing a wrong gradient.
    Inference tensors have no counter."""
    if framework_of(out) == "torch" and not out.is_inference():
        sys.modules["torch"]._C._autograd._unsafe_set_version_counter((out,), (out._version + 1,))


def call_door(handle: int, input: Any, indices: Any, updates: Any, out: Any,
              attrs: Sequence[Any]) -> Any:
    """The door's call (the extension's run_op_fast) for a call its readers did not take as is:
    the operands normalized here (to_core: lists and buffers as numpy arrays, torch tensors
    detached in no-grad mode, their negative and conjugate bits resolved, out's write checks),
    then ``run_op_fast(handle | NORMALIZED, input, indices[, updates], out, *attrs)``, the same
    Lowering cache and execute. ``updates`` is None for a gather; ``out`` may be ``input``
    itself for a scatter (in place). The result is in the input's framework, or ``out``."""
    if out is not None and has_view_bits(out):
        # Into a plain copy of out's values (in place, the copy is also the input).
        return _through_resolved(out, lambda staged: call_door(
            handle, staged if input is out else input, indices, updates, staged, attrs))
    operands = [to_core(input, "input"), to_core(indices, "indices")]
    if updates is not None:
        operands.append(to_core(updates, "updates"))
    operands.append(None if out is None else to_core(out, "out", writable=True))
    result = _core.run_op_fast(handle | NORMALIZED, *operands, *attrs)
    if result is NotImplemented:
        names = ("input", "indices", "updates")
        raise TypeError(f"{', '.join(names[:len(operands) - 1])} must be arrays (numpy, torch, "
                        f"DLPack or buffer-protocol objects), not "
                        f"{', '.join(type(o).__name__ for o in operands[:-1])}")
    if out is not None:
        mark_written(out)
        return out
    return result


#: The handle bit of a call whose operands call_door normalized (op_fast.hpp: kNormalized).
NORMALIZED = _core.normalized_handle_bit


def check_not_none(index_mode: Any, negative_indices: Any, modes: str, fill_value: Any = 0) -> None:
    """TypeError naming the argument for None where the core operators take no None (in the
    registry row, None means the default). Every other bad value is the door's to word (the
    registry's one message: "gather_multiaxis: attribute index_mode: 'x' is not one of ...")."""
    if index_mode is None:
        raise TypeError(f"index_mode must be a str ({modes}), not None")
    if negative_indices is None:
        raise TypeError("negative_indices must be a bool, not None")
    if fill_value is None:
        raise TypeError("fill_value must be a bool, int or float, not None")


def call(input: Any, indices: Any, axes: Sequence[int], *, index_mode: str = "error",
         negative_indices: bool = True, fill_value: Any = 0, out: Any = None) -> Any:
    """One gather_multiaxis call through the door with its operands normalized (call_door); the
    result is in the input's framework, or ``out``."""
    check_not_none(index_mode, negative_indices, "'error', 'clamp', 'wrap' or 'fill'",
                   fill_value=fill_value)
    return call_door(_GATHER_MULTIAXIS, input, indices, None, out,
                     (axes, index_mode, negative_indices, _fill_scalar(fill_value)))


_GATHER_MULTIAXIS = _core.op_handle("gather_multiaxis", ["axes", "index_mode", "negative_indices",
                                                         "fill_value"])
