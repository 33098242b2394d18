"""multigather: one gather operator, ``gather_multiaxis``, that every ML framework's gather
lowers onto, for numpy, torch, jax, cupy and tensorflow arrays.

    output = gather_multiaxis(input, indices, axes)

r = input.ndim = indices.ndim = output.ndim, k = len(axes), c = max(k, 1). The last dimension
of ``indices`` holds the coordinates (its size is a multiple of c); the logical indices shape L
is indices.shape with the last entry divided by c. For every output position o::

    output.shape[d] = L[d]                             for d in axes
    output.shape[d] = broadcast(input.shape[d], L[d])  for d not in axes (equal, or one is 1)
    output[o] = input[i],  i[d] = o[d] (0 where input.shape[d] == 1) for d not in axes,
                           i[axes[j]] = resolve(indices[q[0], ..., q[r-1] * c + j])
                           with q[e] = o[e] (0 where L[e] == 1)

Source: docs/spec.md section 1 of the multigather repository (normative). Framework adapters with
each framework's own signature live in the submodules ``multigather.numpy``,
``multigather.onnx``, ``multigather.torch``, ``multigather.tf``, ``multigather.jax``,
``multigather.stablehlo``, ``multigather.coreml``, ``multigather.tosa``, ``multigather.mlir``,
``multigather.webnn`` and ``multigather.dml`` (and ``multigather.torch_scatter``, torch_scatter's
functions); ``multigather.run(op, ...)`` runs any registry op by name.
"""

from __future__ import annotations

from typing import Any, Sequence

import sys as _sys

import numpy as _np

from . import _interop, _jax_ffi, _registry, _torch_dispatch
from . import _multigather as _core

__all__ = ["gather_multiaxis", "scatter_multiaxis", "run", "ops", "output_shape", "explain", "Svg",
           "max_rank", "ArgumentTypeError",
           "set_num_threads", "get_num_threads", "__version__"]
__version__ = "0.1.0"

#: The exception of an invalid argument (shape, rank, axis, attribute) of an op whose framework
#: throws TypeError for every invalid argument (WebNN's MLGraphBuilder methods:
#: ``multigather.webnn``). A subclass of TypeError and of ValueError, so that ``except
#: ValueError`` catches it as it catches the other families' argument errors (which stay
#: ValueError). The registry row says which ops raise it (``OpSpec::argument_error``).
ArgumentTypeError = _core.ArgumentTypeError

# The core operators' handles for the door (python/src/op_fast.cpp: run_op_fast).
_GATHER_MULTIAXIS = _registry.fast_op("gather_multiaxis", "axes", "index_mode", "negative_indices",
                                      "fill_value")
_SCATTER_MULTIAXIS = _registry.fast_op("scatter_multiaxis", "axes", "reduction", "index_mode",
                                       "negative_indices", "include_input")
_run_fast = _registry.run_fast
_NDARRAY = _np.ndarray


def set_num_threads(num_threads: int) -> None:
    """Sets how many CPU threads every later call may use (process-wide, like
    ``torch.set_num_threads``).

    Args:
      num_threads: 0 (the default): automatic, about one thread per 256 KiB of work, at most
        OMP_NUM_THREADS or the cores, and cores that the 1-minute load average shows busy are
        left alone; n > 0: at most n threads, busy cores or not (small calls still stay on one).

    Raises:
      ValueError: num_threads < 0.
    """
    _core.set_num_threads(num_threads)


def get_num_threads() -> int:
    """The value set by :func:`set_num_threads` (0: automatic)."""
    return _core.get_num_threads()


#: Largest rank of any array the core accepts (framework lowerings may add unit dimensions).
max_rank: int = _core.max_rank


def gather_multiaxis(
    input: Any,
    indices: Any,
    axes: Sequence[int],
    *,
    index_mode: str = "error",
    negative_indices: bool = True,
    fill_value: Any = 0,
    out: Any = None,
) -> Any:
    """Gathers elements of ``input`` at the coordinates in ``indices`` along ``axes``.

    Args:
      input: array of rank r (numpy, torch, jax, cupy, tensorflow, or anything that speaks
        DLPack or the buffer protocol; non-contiguous and broadcast views are read in place).
        Any dtype: bool, int8-64, uint8-64, float16, bfloat16 (ml_dtypes or framework),
        float32, float64, complex64, complex128, float8_e4m3fn, float8_e5m2.
      indices: integer array (int8-64, uint8-64) of rank r; its last dimension is a multiple of
        max(len(axes), 1) and holds the coordinate tuples (innermost, contiguous in the logical
        sense: coordinate j of logical position q is indices[q[0], ..., q[r-1] * c + j]).
      axes: k distinct ints in [-r, r); coordinate j addresses input dimension axes[j]. Any
        order, need not be contiguous; [] broadcasts input to the output shape.
      index_mode: what happens to an index outside [0, n) after the negative rule:
        "error" (IndexError), "clamp" (to [0, n-1]), "wrap" (floor modulo n; the negative rule
        is not applied first), "fill" (the element becomes ``fill_value``).
      negative_indices: v < 0 becomes v + n first (signed index dtypes; not in "wrap").
      fill_value: bool, int or float used by "fill", converted to input's dtype (must be
        representable: ValueError otherwise).
      out: optional writable array of the output shape and input's dtype (any strides, on
        input's device, not overlapping input or indices); it is filled and returned. A call
        that raises leaves it unchanged, as numpy's mode="raise" does (on the CPU: the indices
        are checked in a pass of their own before the first write; on a CUDA device an
        IndexError may leave part of it written). torch's conjugate and negative views
        (``.conj()``, ``._neg_view()``) receive the true values.

    torch tensors (without ``out``) go through ``torch.ops.multigather.gather_multiaxis``
    (``multigather.torch_ops``) whenever autograd or PyTorch's tracing can see the call (an
    input that requires grad, torch.compile, torch.export, modes): differentiable in input
    (the gradient is scatter_multiaxis add, docs/spec.md section 4), traceable by torch.compile
    and torch.export. With ``out``, a tensor that requires grad is a RuntimeError (the result
    could not carry a grad_fn).

    CUDA arrays (torch, cupy, jax: DLPack device kDLCUDA), in a build with the CUDA engine
    (``multigather._multigather.has_cuda``): gathered on their device, on the framework's
    current stream, zero-copy; the result is new memory on the same device. index_mode="error"
    waits for the stream (to raise IndexError with the same message as on the CPU); the other
    modes return once the kernel is enqueued.

    Returns:
      A new C-contiguous array of the output shape and input's dtype, of input's framework
      (numpy in, numpy out; torch in, torch out), or ``out``.

    Raises:
      IndexError: an index out of range under index_mode="error", e.g.
        "indices[3,1] = 7 is out of range for axis 2 of size 5 (valid range [-5, 5))".
      ValueError: ranks, shapes (not broadcastable, last indices dimension not a multiple of
        len(axes)), axes (out of range, repeated), index_mode, fill_value, out's shape,
        device arrays in a CPU-only build.
      TypeError: non-integer indices, unsupported dtypes (named as the framework names them),
        out of another dtype; index_mode not a str, negative_indices not a bool, fill_value
        None; sparse, quantized or (with out) meta torch tensors.
      MemoryError: the output cannot be allocated ("Unable to allocate 4.00 EiB for an array
        with shape (...) and data type float32").
      KeyboardInterrupt: Ctrl-C (SIGINT) during the call: the engine checks for it about every
        4 million lookups and stops (multigather/interrupt.hpp).

    The GIL is released while the kernel runs.
    """
    if type(input) is not _NDARRAY and out is None and _torch_dispatch.torch_op_needed(input, indices):
        # torch.ops.multigather.gather_multiaxis: autograd, torch.compile, torch.export.
        return _torch_dispatch.torch_ops().gather_multiaxis(input, indices, list(axes), index_mode,
                                                     bool(negative_indices), fill_value)
    if index_mode is not None and negative_indices is not None and fill_value is not None:
        # The door (the registry row gather_multiaxis, its Lowering cached; None would mean the
        # row's default there, a TypeError here), for numpy, torch (CPU or CUDA), cupy, jax
        # arrays alike. NotImplemented when no reader takes an operand as is (a JAX tracer, a
        # torch tensor autograd must see, ...): then the ways below.
        result = _run_fast(_GATHER_MULTIAXIS, input, indices, out, axes, index_mode, negative_indices,
                           fill_value)
        if result is not NotImplemented:
            return result
    if _jax_ffi.traced(input, indices):
        # Inside jax.jit / grad / vmap / shard_map: the XLA FFI custom call (multigather._jax_ffi).
        return _jax_ffi.run("gather_multiaxis", input, indices, None, out, dict(
            axes=_interop._ints(axes, "axes"), index_mode=index_mode,
            negative_indices=bool(negative_indices), fill_value=fill_value))
    return _interop.call(
        input,
        indices,
        axes,
        index_mode=index_mode,
        negative_indices=negative_indices,
        fill_value=fill_value,
        out=out,
    )


def scatter_multiaxis(
    input: Any,
    indices: Any,
    updates: Any,
    axes: Sequence[int],
    *,
    reduction: str = "none",
    index_mode: str = "error",
    negative_indices: bool = True,
    include_input: bool = True,
    out: Any = None,
) -> Any:
    """The dual of :func:`gather_multiaxis`: ``output`` starts as a copy of ``input``, then each
    update is combined into the element that gather_multiaxis would read for its position.

    G is the shape ``gather_multiaxis(input, indices, axes)`` would return (same rules and
    errors). For every position o of G in row-major (C) order::

        i = the input position gather_multiaxis reads for o
        output[i] = combine(output[i], updates[o])     (updates broadcast to G)

    Args:
      input: array of rank r, any dtype gather_multiaxis takes (numpy, torch, jax, cupy,
        tensorflow, DLPack or buffer protocol; read in place).
      indices: integer array of rank r, exactly as for gather_multiaxis.
      updates: array of rank r and input's dtype whose shape broadcasts to G (each dimension
        G's size or 1: a size-1 dimension repeats its value).
      axes: k distinct ints in [-r, r), as for gather_multiaxis.
      reduction: "none" (the LAST update reaching an element, in row-major order of G, wins),
        "add", "mul", "min", "max" (the updates reaching an element combine in row-major order).
        Integers wrap; float16/bfloat16 round each step to their own precision; NaN propagates
        through float min/max; bool: add/max = or, mul/min = and; complex min/max: StableHLO's
        lexicographic (real, imaginary) order as XLA runs it (the output element is kept when
        it compares strictly greater, for max, else the update is taken: a tie or a NaN in
        the deciding comparison takes the update, so NaN does not propagate).
      index_mode: "error" (IndexError, raised before anything is written), "clamp", "wrap",
        or "drop" (an update whose index is out of range is skipped, as JAX mode="drop").
      negative_indices: v < 0 becomes v + n first (signed index dtypes; not in "wrap").
      include_input: add/mul/min/max start from input's element (True) or from the first
        update reaching it (False; elements no update reaches keep input's value).
      out: optional writable array of input's shape and dtype; it may be ``input`` itself
        (in place), else it must not overlap input, indices or updates.

    Determinism: the result is bit-identical at every thread count and on every run (each
    output element is combined by one owning thread, in row-major order), float add included.

    Returns:
      A new C-contiguous array of input's shape, dtype and framework, or ``out``.

    Raises:
      IndexError: an index out of range under "error" (nothing is written, even in place).
      ValueError: the errors of gather_multiaxis; updates rank or shape not broadcastable to G
        ("updates shape [2,5] does not broadcast to the scatter shape [2,3] ...:
        updates.shape[1] = 5 must be 3 or 1"); index_mode "fill"; out overlapping input
        without being it, or overlapping indices or updates.
      TypeError: updates dtype different from input's; a reduction the dtype lacks (float8
        arithmetic); non-integer indices.

    torch tensors (without ``out``) go through ``torch.ops.multigather.scatter_multiaxis`` when
    autograd or tracing can see the call:
    reduction "none" and "add" are differentiable in input and updates (under "none" only the
    winning update of each element gets a gradient); "mul", "min", "max" raise
    NotImplementedError in backward.

    Source: docs/spec.md section 4. The GIL is released while the kernel runs. CUDA arrays
    (torch, cupy) scatter on the device, with the CPU engine's bytes (deterministic).
    """
    if out is None and _torch_dispatch.torch_op_needed(input, indices, updates):
        # torch.ops.multigather.scatter_multiaxis: autograd, torch.compile, torch.export.
        return _torch_dispatch.torch_ops().scatter_multiaxis(
            input, indices, updates, list(axes), reduction, index_mode, bool(negative_indices),
            bool(include_input))
    # The door (the registry row scatter_multiaxis); NotImplemented when no reader takes an
    # operand as is: then the operands are normalized (run_scatter_general).
    if (reduction is not None and index_mode is not None and negative_indices is not None
            and include_input is not None):  # None: the row's default there, a TypeError here
        result = _run_fast(_SCATTER_MULTIAXIS, input, indices, updates, out, axes, reduction,
                           index_mode, negative_indices, include_input)
        if result is not NotImplemented:
            return result
    _interop.check_not_none(index_mode, negative_indices, "'error', 'clamp', 'wrap' or 'drop'")
    return _registry.run_scatter_general(
        "scatter_multiaxis", input, indices, updates, out, axes=axes, reduction=reduction,
        index_mode=index_mode, negative_indices=negative_indices, include_input=include_input)


#: multigather.run(op, input, indices, *, updates=None, out=None, **attrs): the one door from
#: Python into the C++ pipeline, a C function (python/src/op_fast_bindings.cpp: run_door):
#: readers, a cached Lowering, execute; for a call whose operands no reader takes as is, the
#: fallback _registry.run_general_call normalizes them and calls the door again. Its
#: documentation: help(multigather.run).
run = _core.run
_core.set_run_fallback(_registry.run_general_call)


def ops() -> list[str]:
    """The names of every registry op in this build, sorted."""
    return _registry.names()


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int], *,
                 input_dtype: str = "float32", indices_dtype: str = "int64",
                 updates_shape: Sequence[int] | None = None, **attrs: Any) -> tuple[int, ...]:
    """The output shape of registry op ``op`` for these shapes, dtypes and attributes, without
    data (a scatter op needs ``updates_shape``, and its output has the input's shape). Raises
    ValueError like ``run`` for shapes and attributes that break the op's rules, TypeError for
    dtypes."""
    return _registry.output_shape(op, input_shape, indices_shape, input_dtype, indices_dtype,
                                  updates_shape, **attrs)


class Svg(str):
    """An SVG picture (the text, a ``str``) that Jupyter and IPython show inline through
    ``_repr_svg_``. Write it with ``open("out.svg", "w").write(picture)``."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


def _array_and_shape(name: str, array: Any, shape: Sequence[int] | None, why: str):
    """explain(format="svg"): an operand given as an array (its shape) or as a shape alone."""
    if array is not None:
        array = _np.asarray(array)
        if shape is not None and tuple(shape) != array.shape:
            raise ValueError(f"{name}_shape {tuple(shape)} differs from {name}.shape "
                             f"{array.shape} (give one of them)")
        shape = array.shape
    if shape is None:
        raise ValueError(f"{name}_shape is required{why} (or {name}=, an array)")
    return array, shape


def explain(op: str, input_shape: Sequence[int] | None = None,
            indices_shape: Sequence[int] | None = None, *, input_dtype: str = "float32",
            indices_dtype: str = "int64", format: str = "text", input: Any = None,
            indices: Any = None, cells: Sequence[int] | None = None, max_cells: int = 400,
            updates_shape: Sequence[int] | None = None, updates: Any = None, **attrs: Any) -> str:
    """How registry op ``op`` runs on these shapes.

    format="text" (the default): its signature, formula and source, the one gather_multiaxis
    call it becomes (input and indices views, axes, index policy), the core's output shape and
    the framework's (the text of ``multigather explain OP``). A scatter op needs
    ``updates_shape``; its text shows the scatter_multiaxis call, the updates view, the
    reduction and the duplicate rule.

    format="svg": a picture of how the op moves data (``multigather explain OP --svg FILE``),
    returned as an :class:`Svg` (a ``str`` with ``_repr_svg_``, shown inline in notebooks):
    the lowered call's input, indices (actual and logical shape) and output as grids laid out
    the way numpy prints arrays; every output cell coloured like the input cell it takes;
    arrows for the lookups of ``cells`` (C-order positions in the output; default: all for at
    most 6 output cells, else 4 spread out) from the input cell and from the indices cells
    that gave each coordinate; broadcast dimensions, negative, clamped, wrapped and filled
    lookups marked; the framework call, the lowered call and the formula as captions. Every
    output ``<rect class="output">`` carries ``data-output`` (its C-order position in the
    output), ``data-input`` (the element offset of the input element it takes, -1 when filled),
    ``data-indices`` and ``data-resolution``. Source: ``src/explain/explain_svg_draw.cpp``.

    A scatter op (``updates_shape`` or ``updates`` given) draws the destination input, the
    updates (broadcast to G, the gather shape), the output and the indices; each output cell
    an update reaches takes the colour of the last update reaching it and shows how they
    combine (reduction none: the winner, the last in row-major order of G; add/mul/min/max:
    the terms in combine order), cells reached more than once are framed red ("xN"), dropped
    updates hatched, untouched cells show the input (kept); ``cells`` are positions in G (one
    per update). Its output ``<rect class="output">`` carries ``data-output``, ``data-input``,
    ``data-updates`` (the positions of G reaching it, in combine order), ``data-update-cells``
    and ``data-combine``.

    Args:
      op: a registry op name (``ops()``).
      input_shape, indices_shape: the shapes (tuples of ints); each may be left out when the
        array (``input`` / ``indices``) is given.
      input_dtype, indices_dtype: dtype names, used when the array is not given.
      format: "text" or "svg".
      input: optional host array (numpy or anything with the buffer protocol / DLPack on the
        CPU), format="svg" only: the picture shows its values; without it, input cells show
        their C-order positions (as if input were np.arange).
      indices: optional integer host array, format="svg" only: the lookups use it; without
        it, the indices are filled n-1, n-2, ..., 0 per coordinate (always in range).
      cells: the output cells whose lookups get arrows (format="svg").
      updates_shape: a scatter op's updates shape (may be left out with ``updates``).
      updates: optional host array, a scatter op with format="svg" only: the picture shows its
        values; without it, update cells show ``u`` and their C-order position.
      max_cells: the most cells drawn for input, indices or output (format="svg").
      **attrs: the op's attributes, as for ``run``.

    Raises:
      ValueError: an unknown op or format, shapes or attributes the op's rules reject, a
        picture larger than max_cells ("format='svg': the output has 4096 cells; pictures are
        drawn up to 400 cells ..."), a cell outside the output, input/indices/cells/max_cells
        with format="text", a shape missing with its array missing too.
      IndexError: indices out of range under the op's error rule (format="svg" with indices).
      TypeError: dtypes.
    """
    if format not in ("text", "svg"):
        raise ValueError(f"format: {format!r} is not one of 'text', 'svg'")
    if format == "text":
        for name, value in (("input", input), ("indices", indices), ("updates", updates),
                            ("cells", cells)):
            if value is not None:
                raise ValueError(f"{name}= is an argument of format='svg' (the text explains "
                                 "shapes only)")
        if input_shape is None or indices_shape is None:
            raise ValueError("input_shape and indices_shape are required with format='text'")
        return _registry.explain(op, input_shape, indices_shape, input_dtype, indices_dtype,
                                 updates_shape, **attrs)
    scatter = _registry.is_scatter(op)
    if not scatter and (updates_shape is not None or updates is not None):
        raise ValueError(f"{op} is a gather: it takes no updates (updates_shape=, updates=)")
    input, input_shape = _array_and_shape("input", input, input_shape, "")
    indices, indices_shape = _array_and_shape("indices", indices, indices_shape, "")
    if scatter:
        updates, updates_shape = _array_and_shape("updates", updates, updates_shape,
                                                  f": {op} is a scatter")
    return Svg(_core.explain_svg(op, [int(s) for s in input_shape], input_dtype,
                                 [int(s) for s in indices_shape], indices_dtype, attrs,
                                 input, indices, [int(c) for c in (cells or [])],
                                 int(max_cells),
                                 None if updates_shape is None else [int(s) for s in updates_shape],
                                 updates))


# The framework modules: each registry op with its framework's signature.
from . import coreml, dml, jax, mlir, numpy, onnx, stablehlo, tf, torch, torch_scatter, tosa, webnn  # noqa: E402,F401

if "torch" in _sys.modules:  # register torch.ops.multigather.* now (before any tracing)
    _torch_dispatch.torch_ops()
