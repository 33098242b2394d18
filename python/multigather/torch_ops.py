"""multigather's operators in PyTorch: ``torch.ops.multigather.*``, registered from C++.

Importing this module (``import multigather`` does it when torch is already imported, and the
first call of a multigather function on a torch tensor does it otherwise) loads the shared
library that registers them (``library_path()``: ``libmultigather_torch.so``, built with the
package against the installed torch; python/torch_library/multigather_torch.cpp) and adds
their fake (meta) implementations, for ``torch.compile(fullgraph=True, dynamic=True)`` and
``torch.export``.

One op per registry row that says it has one (the row's ``torch_op``: the torch and
torch_scatter families but embedding_bag, and the two core rows), its schema generated from the
row (the signature's argument order and defaults, the attributes' types), and one
``<op>_backward``; the table at the end of this docstring lists them, from the rows. Besides:
``embedding(input, weight, padding_idx=None)`` (F.embedding: index_select of rows; padding_idx
>= 0 here) and ``embedding_bag`` (a custom op of this module). ``index_fill``'s value is a 0-d
tensor; ``index_put`` takes the registry form (indices stacked on a last dimension;
``multigather.torch.index_put`` takes PyTorch's tuple).

Kernels (C++): CPU and CUDA run the registry row's lowering and execute on the tensors' memory
(no copy; torch's intra-op thread count; CUDA on the current stream, in a build with the CUDA
engine). Autograd: the gradient of every op is the generic VJP of its row (docs/spec.md section
4, ``execute_vjp``): a gather's input gradient is the scatter-add of the output gradient through
the same lowering (index_mode fill becomes drop); a scatter's are the output gradient, zeroed
where an update overwrote the element, and the output gradient gathered at each update's
target (PyTorch's rows: every duplicate gets it, as PyTorch's own ops; ``scatter_multiaxis``:
only the update that wins), summed over broadcast dimensions; index_add's alpha scales it.
Backward ops are differentiable again (double backward). scatter_reduce's prod, amax, amin and
mean follow PyTorch's formulas (prod / amax / amin: one op, scatter_reduce_values_backward, not
differentiable again); scatter_multiaxis with mul, min or max raises NotImplementedError in
backward. vmap: a batching rule for every op (one call with batch_rank + 1). Indices get no
gradient. Errors are IndexError, ValueError and TypeError with the registry's messages.

Fake implementations take the output shape from the core's shape inference
(``multigather.output_shape``; no data is read). Symbolic sizes (dynamic shapes, torch.export's
Dim) stay symbolic: the core checks their hints, and the op's shape rule in torch sizes,
checked against the core's answer, gives the symbolic shape.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from . import _registry
from ._import_hooks import after_import
from ._interop import OpsNotBuiltError



def library_path() -> str:
    """The path of ``libmultigather_torch.so``, the shared library that registers
    ``torch.ops.multigather.*`` from C++ (engine included): ``torch.ops.load_library(path)``
    makes the ops available with no multigather Python package (an AOTInductor package's
    runtime, a libtorch program that dlopens it). Raises ImportError when the package was built
    without torch (torch was not installed when ``pip install .`` ran: install torch, then
    reinstall the package; its build finds the torch of the environment it installs into)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmultigather_torch.so")
    if not os.path.exists(path):
        raise OpsNotBuiltError(
            f"multigather's PyTorch ops are not built ({path} is missing): the package was built "
            f"without torch; install torch, then reinstall the package (`python3 -m pip install "
            f"--force-reinstall --no-deps .` from its source), whose build finds that torch")
    return path


def _load() -> None:
    if not hasattr(torch.ops.multigather, "gather_multiaxis"):
        torch.ops.load_library(library_path())


_load()
_ops = torch.ops.multigather

embedding = _ops.embedding.default


def _op_handles() -> tuple[dict, str]:
    """The OpOverload of every row's op (multigather.torch_ops.index_add is
    torch.ops.multigather.index_add.default), and this docstring's table of them: both from the
    rows, so a new row with a torch op appears here with nothing else written."""
    handles, lines = {}, []
    for row_name in _registry.torch_op_rows():
        name = _registry.torch_op_name(row_name)
        handles[name] = getattr(_ops, name).default
        schema = str(handles[name]._schema).replace("multigather::", "", 1)
        lines.append(f"- ``{schema}``: {row_name}")
    return handles, "\n".join(lines)


_handles, _table = _op_handles()
globals().update(_handles)
__all__ = ["library_path", *_handles, "embedding", "embedding_bag", "embedding_bag_backward",
           "set_compiled_scatters", "compiled_scatters"]
__doc__ = f"{__doc__ or ''}\nThe ops (``torch.ops.multigather.<op>``, held here by the same name):\n\n{_table}\n"


# ---- fake implementations -----------------------------------------------------------------------

# torch dtype -> multigather dtype name (for the shape inference of the fake implementations).
_DTYPE_NAMES = {
    torch.bool: "bool", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
    torch.complex64: "complex64", torch.complex128: "complex128",
}
for _name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _DTYPE_NAMES[getattr(torch, _name)] = _name


def _dtype(t: Tensor, name: str) -> str:
    try:
        return _DTYPE_NAMES[t.dtype]
    except KeyError:
        raise TypeError(f"{name} dtype {t.dtype} is not supported by multigather") from None


def _hint(size) -> int:
    if isinstance(size, torch.SymInt):
        from torch.fx.experimental.symbolic_shapes import guarding_hint_or_throw

        return int(guarding_hint_or_throw(size))
    return int(size)


def _infer(op: str, input, indices, updates=None,
           symbolic: Optional[Callable[[list], Any]] = None, **attrs) -> list:
    """The output shape of registry op ``op`` for operands of these shapes (and dtypes), from
    the core's shape inference (its rules and errors; no data). With symbolic sizes (dynamic
    shapes), the core checks the sizes' hints and ``symbolic(core_shape)`` gives the shape in the
    symbolic sizes (the op's rule, written in torch; a segment rule takes the number of segments
    from the core's answer), which must agree with the core's answer on the hints; without
    ``symbolic`` the sizes are specialized to their hints. Operands are (shape, dtype) pairs."""
    shape = list(_registry.output_shape(
        op, [_hint(s) for s in input[0]], [_hint(s) for s in indices[0]], input[1], indices[1],
        None if updates is None else [_hint(s) for s in updates[0]], **attrs))
    shapes = [t[0] for t in (input, indices, updates) if t is not None]
    if not any(isinstance(s, torch.SymInt) for t in shapes for s in t):
        return shape
    if symbolic is None:
        for t in shapes:  # specialize: guards that each size equals its hint
            for s in t:
                int(s)
        return shape
    sym = list(symbolic(shape))
    if [_hint(s) for s in sym] != shape:
        raise AssertionError(f"multigather::{op}: symbolic shape {sym} disagrees with the core's "
                             f"{shape}")
    return sym


def _numel(shape) -> Any:
    n = 1
    for s in shape:
        n = n * s
    return n


# Each gather row's shape rule in torch sizes (scatters: input's shape), on one example's
# shapes: rule(input_shape, indices_shape, attrs).
def _gather_multiaxis_shape(input, indices, attrs, core=None):
    axes = attrs["axes"]
    rank, c = len(input), max(len(axes), 1)
    logical = list(indices[:-1]) + [indices[-1] // c] if rank else []
    dims = {a % rank for a in axes} if rank else set()
    return [logical[d] if d in dims or input[d] == 1 else input[d] for d in range(rank)]


def _take_along_dim_shape(input, indices, attrs, core=None):
    dim = attrs["dim"]
    if dim is None:
        return [_numel(indices)]
    d0 = dim % len(input)
    return [indices[d] if d == d0 or input[d] == 1 else input[d] for d in range(len(input))]


def _index_select_shape(input, index, attrs, core=None):
    if len(input) == 0:
        return []
    shape = list(input)
    shape[attrs["dim"] % len(input)] = _numel(index)
    return shape


def _segment_shape(segment_dim):
    """A segment row's shape rule: the data's shape with its segment dimension (segment_dim(data
    shape, ids shape, attrs)) holding the number of segments. That number comes from the ids
    (their shape: lengths, offsets, indptr; or dim_size), so the ids' sizes and the data's size
    along that dimension are specialized (guards); the data's other sizes stay symbolic."""
    def rule(input, indices, attrs, core):
        for size in indices:
            int(size)  # guards: the ids' shape decides the number of segments
        d = segment_dim(input, indices, attrs)
        if len(core) != len(input):
            for size in input:
                int(size)
            return core
        int(input[d])
        return [core[k] if k == d else input[k] for k in range(len(input))]
    return rule


_SYMBOLIC = {
    "torch.segment_reduce": _segment_shape(lambda x, i, a: a["axis"] % len(x)),
    "torch_scatter.scatter": _segment_shape(lambda x, i, a: a["dim"] % len(x)),
    "torch_scatter.segment_coo": _segment_shape(lambda x, i, a: len(i) - 1),
    "torch_scatter.segment_csr": _segment_shape(lambda x, i, a: len(i) - 1),
    "gather_multiaxis": _gather_multiaxis_shape,
    "torch.gather": lambda input, index, attrs, core=None: list(index),
    "torch.take": lambda input, index, attrs, core=None: list(index),
    "torch.take_along_dim": _take_along_dim_shape,
    "torch.index_select": _index_select_shape,
}


def check_same_device(op: str, named: list) -> None:
    """RuntimeError, in PyTorch's words, when the tensors of ``named`` ((argument name, tensor or
    None) pairs, the op's input first) are not all on one device: the fake (meta) kernel, which
    the dispatcher picks for a call that mixes meta and real tensors, would return an
    uninitialized tensor (and a routed in-place method copy it into its tensor)."""
    tensors = [(name, t) for name, t in named if isinstance(t, Tensor)]
    devices = {t.device for _, t in tensors}
    if len(devices) <= 1:
        return
    if op in ("torch.index_add", "torch.index_copy"):  # PyTorch's own check for these two
        got = ", ".join(f"({'self' if n == 'input' else n}) {t.device}" for n, t in tensors[:-1])
        raise RuntimeError(f"{op.split('.')[-1]}(): self, index and source expected to be in the same device, "
                           f"but got {got}, and ({tensors[-1][0]}) {tensors[-1][1].device}")
    first = tensors[0][1].device
    other_name, other = next((n, t) for n, t in tensors if t.device != first)
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {first} and "
                       f"{other.device}! ({op}: {tensors[0][0]} is on {first}, {other_name} on {other.device})")


def _batch_shape(tensors, batch_rank: int) -> list:
    """The leading batch_rank sizes of a batched call: per dimension, the size that is not 1."""
    shape = []
    for j in range(batch_rank):
        sizes = [t.shape[j] for t in tensors if t is not None]
        shape.append(next((s for s in sizes if _hint(s) != 1), 1))
    return shape


def _register_fakes() -> None:
    """A fake implementation for every op and its backward, from the row's operand names and
    the schema's argument names (the schema is generated from the same row)."""
    for row_name, row in _registry.OPS.items():
        op_name = _registry.torch_op_name(row_name)
        packet = getattr(_ops, op_name, None) if op_name is not None else None
        if packet is None:
            continue
        names = [a.name for a in packet.default._schema.arguments]
        defaults = {a.name: a.default_value for a in packet.default._schema.arguments
                    if a.has_default_value()}
        operands = (row["input_name"], row["indices_name"], row["updates_name"])
        scatter = row["updates_name"] in names
        segment = row["kind"] == "segment"
        rule = _SYMBOLIC.get(row_name)

        def bind(args, kwargs, names=names, defaults=defaults):
            bound = dict(defaults)
            bound.update(zip(names, args))
            bound.update(kwargs)
            return bound

        def forward(*args, _row=row_name, _bind=bind, _operands=operands, _scatter=scatter,
                    _rule=rule, _segment=segment, **kwargs):
            bound = _bind(args, kwargs)
            b = bound.pop("batch_rank", 0)
            input, indices = bound.pop(_operands[0]), bound.pop(_operands[1])
            updates = bound.pop(_operands[2]) if _scatter else None
            check_same_device(_row, [(_operands[0], input), (_operands[1], indices), (_operands[2], updates)])
            batch = _batch_shape((input, indices, updates), b)
            x = (list(input.shape[b:]), _dtype(input, "input"))
            i = (list(indices.shape[b:]), _dtype(indices, "indices"))
            u = None if updates is None else (list(updates.shape[b:]), _dtype(updates, "updates"))
            if _rule is not None:
                symbolic = (lambda core: _rule(x[0], i[0], bound, core))
            elif _segment:
                # [segments, ...] without a rule of its own: the sizes specialize to their hints
                # (a recompile per size under dynamic=True, never a wrong symbolic shape).
                symbolic = None
            else:
                symbolic = (lambda core: x[0])  # a scatter: input's shape
            return input.new_empty(batch + _infer(_row, x, i, u, symbolic=symbolic, **bound))

        # The backward's arguments after grad_output: input and updates as their sizes.
        backward_names = [a.name for a in getattr(_ops, op_name + "_backward").default._schema
                          .arguments][1:]

        def backward(grad_output, *args, _names=backward_names, _operands=operands,
                     _scatter=scatter, _segment=segment, _op=op_name, **kwargs):
            bound = dict(zip(_names, args))
            bound.update(kwargs)
            check_same_device(_op + "_backward", [("grad_output", grad_output)] +
                              [(k, v) for k, v in bound.items() if isinstance(v, Tensor)])
            b = bound.get("batch_rank", 0)
            unused = list(grad_output.shape[:b]) + [0]  # a gradient not asked for
            # A segment row's backward takes its data (a max / min / prod gradient reads it).
            input_size = (list(bound[_operands[0]].shape) if _segment
                          else list(bound[_operands[0] + "_size"]))
            if not _scatter:
                return grad_output.new_empty(input_size)
            return (grad_output.new_empty(input_size if bound.get("input_grad", True) else unused),
                    grad_output.new_empty(list(bound[_operands[2] + "_size"])
                                          if bound.get("updates_grad", True) else unused))

        torch.library.register_fake(f"multigather::{op_name}")(forward)
        torch.library.register_fake(f"multigather::{op_name}_backward")(backward)


_register_fakes()


@torch.library.register_fake("multigather::scatter_reduce_values_backward")
def _(grad_output, input, dim, index, src, result, reduce, include_self, *, batch_rank=0):
    """The gradients of scatter_reduce prod / amax / amin (PyTorch's rules): input's and src's
    shapes."""
    check_same_device("scatter_reduce_values_backward", [("grad_output", grad_output), ("input", input),
                                                          ("index", index), ("src", src), ("result", result)])
    return input.new_empty(input.shape), src.new_empty(src.shape)


# ---- embedding_bag -------------------------------------------------------------------------------
#
# torch.nn.functional.embedding_bag: registry row "torch.nn.functional.embedding_bag", whose
# lowering reduces each bag straight from the table (the fused kernel). Its operands include two
# optional tensors (offsets, per_sample_weights), so its op is defined here with torch.library's
# custom_op (schema, fake, autograd) instead of the generated C++ rows. grad_weight is the row's
# own VJP (execute_vjp: one fused pass, deterministic), the op embedding_bag_backward, which has no
# gradient of its own (double backward raises); grad per_sample_weights is the row-wise dot
# product of each row's bag gradient and its weight row, in torch ops.

def _bag_ids(input: Tensor, offsets: Optional[Tensor], include_last_offset: bool,
             padding_idx: Optional[int], num_embeddings: int) -> tuple[Tensor, Tensor, int]:
    """(rows, bag, B): the table row (int64) and bag of every input element, flattened; bag is
    B for an element at padding_idx (the row checked the offsets: every element is in a bag)."""
    rows = input.reshape(-1).to(torch.int64)
    n = rows.numel()
    position = torch.arange(n, device=input.device)
    if input.dim() == 2:  # its rows are the bags (F.embedding_bag ignores include_last_offset)
        length = input.shape[1]
        starts = torch.arange(0, n, max(length, 1), device=input.device)[:input.shape[0]]
        include_last_offset = False
    else:
        starts = offsets.to(torch.int64)
    bags = starts.numel() - 1 if include_last_offset else starts.numel()
    bag = torch.searchsorted(starts[:bags], position, right=True) - 1 if bags else torch.full_like(position, bags)
    if padding_idx is not None:
        pad = padding_idx + num_embeddings if padding_idx < 0 else padding_idx
        bag = torch.where(rows == pad, bags, bag)
    return rows, bag, bags


@torch.library.custom_op("multigather::embedding_bag", mutates_args=())
def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, mode: str = "mean",
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """torch.nn.functional.embedding_bag (registry row "torch.nn.functional.embedding_bag"):
    out [B, D] of weight's dtype, each bag's rows of weight [V, D] reduced (sum / mean / max) in
    one fused pass. Differentiable in weight and per_sample_weights."""
    return _registry.run_general("torch.nn.functional.embedding_bag", weight.detach(), input, offsets=offsets,
                                 mode=mode, per_sample_weights=None if per_sample_weights is None
                                 else per_sample_weights.detach(),
                                 include_last_offset=include_last_offset, padding_idx=padding_idx)


@embedding_bag.register_fake
def _(input, weight, offsets=None, mode="mean", per_sample_weights=None, include_last_offset=False,
      padding_idx=None):
    check_same_device("torch.nn.functional.embedding_bag", [("weight", weight), ("input", input),
                                                             ("offsets", offsets),
                                                             ("per_sample_weights", per_sample_weights)])
    if input.dim() == 2:  # its rows are the bags, include_last_offset or not (F.embedding_bag)
        return weight.new_empty((input.shape[0], weight.shape[1]))
    bags = offsets.shape[0]
    return weight.new_empty((bags - 1 if include_last_offset else bags, weight.shape[1]))


@torch.library.custom_op("multigather::embedding_bag_backward", mutates_args=())
def embedding_bag_backward(grad: Tensor, input: Tensor, weight: Tensor, offsets: Optional[Tensor], mode: str,
                           per_sample_weights: Optional[Tensor], include_last_offset: bool,
                           padding_idx: Optional[int]) -> Tensor:
    """The gradient of embedding_bag for weight: the row's VJP (execute_vjp: one fused pass,
    workers owning disjoint columns, the same bytes at every thread count): each row of a bag
    gets the bag's gradient, times its per_sample_weight (sum), divided by the bag's count
    (mean), or only the first row holding the max of each column (max). CUDA tensors: the CUDA
    engine's passes on torch's current stream (a stable sort of the terms by table element, then
    each element's terms added in bag order: the CPU engine's bytes; one synchronization reads
    the checks of ids and offsets)."""
    grad_weight = torch.empty(weight.shape, dtype=weight.dtype, device=weight.device)
    tensors = {k: v.detach() for k, v in (("offsets", offsets), ("per_sample_weights", per_sample_weights))
               if v is not None}
    _registry._core.vjp_into("torch.nn.functional.embedding_bag", weight.detach(), input, grad.contiguous(),
                             grad_weight, {"mode": mode, "include_last_offset": include_last_offset,
                                           "padding_idx": padding_idx}, tensors)
    return grad_weight


@embedding_bag_backward.register_fake
def _(grad, input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
    check_same_device("embedding_bag_backward", [("grad", grad), ("input", input), ("weight", weight),
                                                 ("offsets", offsets), ("per_sample_weights", per_sample_weights)])
    return weight.new_empty(weight.shape)


def _embedding_bag_setup(ctx, inputs, output) -> None:
    input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx = inputs
    ctx.mode = mode
    ctx.save_for_backward(input, weight, offsets, per_sample_weights, output if mode == "max" else None)
    ctx.include_last_offset, ctx.padding_idx = include_last_offset, padding_idx


def _embedding_bag_backward(ctx, grad):
    input, weight, offsets, per_sample_weights, output = ctx.saved_tensors
    # needs_input_grad covers the arguments the call passed (the dispatcher drops trailing defaults)
    needs = list(ctx.needs_input_grad) + [False] * 7
    grad_weight = grad_psw = None
    if needs[1]:
        grad_weight = embedding_bag_backward(grad, input, weight, offsets, ctx.mode, per_sample_weights,
                                             ctx.include_last_offset, ctx.padding_idx)
    if needs[4] and per_sample_weights is not None:
        # d out[b] / d w[n] = weight[input[n]] for the rows of bag b: the row-wise dot product of
        # each row's bag gradient and its weight row (0 for a padding row, which reads the extra
        # zero row B). No data-dependent shapes (torch.compile).
        rows, bag, bags = _bag_ids(input, offsets, ctx.include_last_offset, ctx.padding_idx, weight.shape[0])
        gathered = index_select(torch.cat([grad, grad.new_zeros((1, grad.shape[1]))]), 0, bag)
        rows_of_weight = index_select(weight, 0, rows)
        if grad.dtype in (torch.float16, torch.bfloat16):
            # PyTorch's CPU kernel (_embedding_bag_per_sample_weights_backward) forms each dot
            # product in float32 and rounds it once; products rounded to 16 bits lose ~10 steps
            gathered, rows_of_weight = gathered.float(), rows_of_weight.float()
        grad_psw = ((gathered * rows_of_weight).sum(1).to(grad.dtype)
                    .reshape(per_sample_weights.shape))
    return None, grad_weight, None, None, grad_psw, None, None


embedding_bag.register_autograd(_embedding_bag_backward, setup_context=_embedding_bag_setup)


# ---- DTensor and Inductor ------------------------------------------------------------------------

def _register_dtensor() -> None:
    """DTensor sharding strategies for every op (multigather._dtensor)."""
    from . import _dtensor

    _dtensor.register()


def _register_inductor_decompositions() -> None:
    """Inductor's rules for every op (multigather._torch_inductor: fused under torch.compile)."""
    from . import _torch_inductor

    _torch_inductor.register_decompositions()


def _register_inductor_fallbacks() -> None:
    from . import _torch_inductor

    _torch_inductor.register_fallbacks()


after_import("torch.distributed.tensor", _register_dtensor)
after_import("torch._inductor.decomposition", _register_inductor_decompositions)
after_import("torch._inductor.lowering", _register_inductor_fallbacks)

from ._torch_inductor import compiled_scatters, set_compiled_scatters  # noqa: E402
