"""Which road a torch call takes: ``torch.ops.multigather.*`` (the dispatcher: autograd,
torch.compile, torch.export; the C++ ops of libmultigather_torch) or the door directly (the
same registry row and execute, without the dispatcher), and the loading of
``multigather.torch_ops`` (whose import loads the C++ ops and their fake implementations) the
first time a torch tensor is seen. Never imports torch itself.

Imports: _interop (OpsNotBuiltError), torch_ops (lazily), which imports _registry; nothing here
is imported back by them (no import circle)."""

from __future__ import annotations

import sys
from typing import Any

from ._interop import OpsNotBuiltError

# torch.Tensor once the PyTorch ops are registered (multigather.torch_ops), else None; and
# PyTorch's state queries, bound once (their attribute lookups cost more than the calls).
_TORCH_TENSOR: Any = None
_TORCH_OPS: Any = None
_is_compiling: Any = None
_torch_function_mode: Any = None
_dispatch_modes: Any = None
_grad_enabled: Any = None
_functorch_wrapped: Any = None


def is_compiling() -> bool:
    """Whether torch.compile / torch.export is tracing this call: torch.compiler.is_compiling
    once torch is imported (torch_ops() rebinds this name to it, so that a wrapper's check is
    one C-level call that Dynamo folds to True while tracing), else False."""
    if "torch" in sys.modules:
        torch_ops()
        return _is_compiling()
    return False


class _NotBuilt:
    """Stands for multigather.torch_ops when its library was not built (a package built without
    torch): plain tensors still run through the door; a call that needs a torch op (autograd,
    torch.func, tracing) raises the ImportError that says how to build it."""

    def __init__(self, error: ImportError) -> None:
        self._error = error

    def __getattr__(self, name: str) -> Any:
        raise ImportError(str(self._error)) from self._error


def torch_ops() -> Any:
    """The module multigather.torch_ops (its import registers torch.ops.multigather.*), or a
    stand-in that raises its ImportError on use when the library was not built."""
    global _TORCH_OPS, _TORCH_TENSOR, _is_compiling, _torch_function_mode, _dispatch_modes
    global _grad_enabled, is_compiling, _functorch_wrapped
    if _TORCH_OPS is None:
        try:
            from . import torch_ops as module
        except OpsNotBuiltError as error:
            module = _NotBuilt(error)

        torch = sys.modules["torch"]
        _is_compiling = is_compiling = torch.compiler.is_compiling
        _torch_function_mode = torch._C._is_torch_function_mode_enabled
        _dispatch_modes = torch._C._len_torch_dispatch_stack
        _grad_enabled = torch.is_grad_enabled
        _functorch_wrapped = getattr(getattr(torch._C, "_functorch", None),
                                     "is_functorch_wrapped_tensor", lambda t: False)
        _TORCH_TENSOR = torch.Tensor
        _TORCH_OPS = module
    return _TORCH_OPS


def torch_op_needed(input: Any, *others: Any) -> bool:
    """Whether a call on ``input`` (and ``others``) must go through ``torch.ops.multigather.*``:
    input is a torch tensor and autograd or PyTorch's tracing could see the call (an operand
    that requires grad in grad mode, torch.compile / torch.export, a FakeTensor or other tensor
    subclass, a meta tensor (the op's fake kernel gives the meta result), a tensor inside a
    torch.func transform (vmap, grad: functorch's wrapped tensors), an active torch function or
    dispatch mode). False for plain tensors in eager mode:
    the caller runs the op's real implementation directly (the same execute path, without the
    dispatcher's per-call cost; measured: bench/README.md, "Measurements behind the CPU engine's
    choices"), and for non-torch arrays. Registers the ops the first time torch is seen
    imported; never imports torch itself."""
    cls = _TORCH_TENSOR
    if cls is None:
        if "torch" not in sys.modules:
            return False
        torch_ops()
        cls = _TORCH_TENSOR
    if not isinstance(input, cls):
        return False
    if _is_compiling() or _torch_function_mode() or _dispatch_modes():
        return True
    grad = _grad_enabled()
    for t in (input, *others):
        if isinstance(t, cls) and (type(t) is not cls or (grad and t.requires_grad) or
                                   _functorch_wrapped(t) or t.is_meta):
            return True
    return False


def call_op(name: str, args: tuple, kwargs: Any) -> Any:
    """``torch.ops.<name>(*args, **kwargs)`` straight through the dispatcher from C++
    (multigather._torch_fast.call_op), for the call that the fast path leaves to the torch op
    only because autograd must see it: plain CPU tensors, one requiring grad in grad mode, no
    torch function or dispatch mode; the same operator, autograd node and errors as the torch.ops
    call, without that door's Python frames and schema matching (bench/README.md, "Issue 54's
    per-call work"). NotImplemented for any other call, and where _torch_fast is off
    (``multigather._core.torch_fast_state()``): the caller then takes torch.ops. Rebinds this
    module's name to the C function (or to a stand-in) once the fast path has loaded its hooks;
    loads them through args[0] when no torch tensor has reached the fast path yet (a process
    whose calls all require grad, as a training loop's do).
    Callers check is_compiling() first (Dynamo cannot trace a C function)."""
    global call_op
    from . import _multigather as _core

    state = _core.torch_fast_state()
    if state == "torch not seen yet" and args:  # the first calls of a process all require grad
        state = _core.load_torch_fast(args[0])
    if state.startswith("on"):
        call_op = sys.modules["multigather._torch_fast"].call_op
        return call_op(name, args, kwargs)
    if state.startswith("off"):
        call_op = _not_called
    return NotImplemented


def _not_called(name: str, args: tuple, kwargs: Any) -> Any:
    return NotImplemented


def skip_as_root_frames(functions: list) -> None:
    """Dynamo never compiles these functions' frames as frames of their own, nor the frames they
    call (it still inlines them where it traces a caller, so compiled models keep them in their
    graphs). A model frame that Dynamo gives up on (a graph break inside a loop) then runs them
    eagerly, as it runs torch's own functions, instead of making each call a graph of its own
    whose AOTAutograd wrappers cost more than the op (180-290 us a call against the op's 10-200:
    bench/README.md, the compiled mixture of experts). Applied when torch._dynamo.eval_frame is
    imported (now, if it is: importing multigather imports no Dynamo); a torch without the frame
    strategies keeps Dynamo's default. One consequence: ``torch.compile(multigather.torch.gather)``
    itself runs eagerly; compile a function or model that calls it."""
    from ._import_hooks import after_import

    def apply() -> None:
        try:
            from torch._C._dynamo.eval_frame import set_code_exec_strategy
            from torch._dynamo.types import FrameAction, FrameExecStrategy
        except ImportError:
            return
        for fn in functions:
            code = getattr(fn, "__code__", None)
            if code is not None:
                set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))

    after_import("torch._dynamo.eval_frame", apply)
