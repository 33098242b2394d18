"""torch_scatter's functions (https://pytorch-scatter.readthedocs.io, the scatter and segment
reductions that PyTorch Geometric runs its message passing on) on multigather: a drop-in for
``import torch_scatter`` (version 2.1.2) with no compiled extension to build. torch_scatter's own
tests pass against it (tests/python/upstream/torch_scatter, copied from its repository).

- ``scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum")`` (reduce: sum / add /
  mul / mean / min / max; min / max give the values only) and ``scatter_sum / scatter_add /
  scatter_mul / scatter_mean``; ``scatter_min / scatter_max`` return ``(out, arg_out)``;
- ``segment_coo(src, index, out=None, dim_size=None, reduce="sum")`` (index sorted along its last
  dimension; dim = index.dim() - 1) and ``segment_csr(src, indptr, out=None, reduce="sum")``
  (dim = indptr.dim() - 1), values only, with ``segment_{sum,add,mean,min,max}_{coo,csr}``; the
  min / max forms return ``(out, arg_out)``;
- ``gather_coo(src, index, out=None)`` and ``gather_csr(src, indptr, out=None)``: each row of
  the result is its segment's row of src (the inverse of segment_coo / segment_csr);
- torch_scatter.composite: ``scatter_std``, ``scatter_logsumexp``, ``scatter_softmax``,
  ``scatter_log_softmax`` (its arithmetic on this module's functions).

scatter, segment_coo and segment_csr are ONE registry row each (``torch_scatter.scatter``,
``torch_scatter.segment_coo``, ``torch_scatter.segment_csr``; docs/spec.md section 6): a scatter
of src into the reduction's identity. What torch_scatter does beyond the rows is composed here on
torch tensors, from torch_scatter's source (csrc/cpu/*.cpp, reducer.h, scatter.py):

- min / max start from ``numeric_limits<T>::lowest()`` (max) / ``max()`` (min) and update only
  on a strictly better value: NaN is skipped, -inf (+inf for min) and the limit itself are never
  taken. scatter and segment_coo then write 0 where no value was taken; segment_csr writes 0 for
  an empty segment and the limit for a non-empty one no value beat (torch_scatter's kernels
  differ so). With ``out``, out's values are the start (no masking).
- ``arg_out``: the position along dim of the first src value equal to the result that was
  taken (with ``out``: strictly beyond out's value there), ``src.size(dim)`` where none was.
- mean: the sum divided by the count (at least 1); integers floor in scatter_mean
  (``div_(count, rounding_mode='floor')``) and truncate in segment_coo / segment_csr (C++
  integer division).
- ``out=``: scatter* and segment_coo reduce into out in place, its values taking part (a mean
  divides out + the sum by the count); segment_csr writes its result into out (out's values do
  not take part); each returns out. An empty src leaves out untouched.
- Empty inputs: an empty index gives size 0 at dim (dim_size=None); an empty indptr gives no
  segment; an empty src gives zeros.

Shapes: src any shape; ``index`` broadcasts to src as torch_scatter's ``broadcast`` does (a 1-D
index lies along ``dim``; a longer one aligns with src's leading dimensions; size 1 repeats), so
no ``index.expand`` is needed; the output is src's shape with ``dim_size`` (default
``index.max() + 1``, read from the index) or the number of segments at ``dim``. dtypes: src any
real dtype, index / indptr int64. An output element no value reaches is 0 (1 for mul). The values
of each element combine in row-major order of src: results are the same at every thread count.

Gradients (torch autograd, through ``torch.ops.multigather.torch_scatter_*`` and multigather's
torch ops): sum / mean as torch_scatter's; min / max give the gradient to the arg_out element
(not shared among ties, torch_scatter's rule; none to out's former values); mul gives each value
the product of the others in its element (exact with zeros, where torch_scatter divides by the
value); gather_coo / gather_csr: the segment sums of the incoming gradient. Double backward: sum
and mean. ``torch.jit.script`` of a function (or of a scripted caller) compiles a stand-in with
torch_scatter's signature that calls the Python function back (_torch_scatter_script.py).

Deliberate differences from torch_scatter 2.1.2, each where torch_scatter's result is undefined
or it cannot be matched here:
- an index outside [0, dim_size) (or [0, src.size(dim)) for gather_coo) is an IndexError;
  torch_scatter's CPU kernels read or write out of bounds;
- an unsorted index in segment_coo gives the scatter's result (torch_scatter's is undefined);
- arg_out of a segment_coo / segment_csr segment that holds values but took none (all NaN, or
  no value beyond the limit) is ``src.size(dim)``; torch_scatter leaves there the position of
  the previous segment (its kernels do not reset it);
- gather_csr: rows before ``indptr[.., 0]`` take segment 0's row (torch_scatter leaves them
  uninitialized);
- ``out`` is always written in place; torch_scatter's C++ paths (mul, min / max, segment_*,
  gather_*) write a non-contiguous out's contiguous copy and return that, leaving out as it was;
- segment_coo / segment_csr also take reduce="mul" (torch_scatter raises ValueError); a reduce
  outside the list is a ValueError that names it (torch_scatter's has no message);
- scripted functions call Python back: they run where Python runs and cannot be saved with
  torch.jit.save (torch_scatter's are C++ ops);
- numpy and other non-torch arrays run the registry rows alone (no ``out``, no arg_out; the rows'
  rules of docs/spec.md section 6: min / max propagate NaN, an integer mean is refused).

CUDA tensors: ``scatter``, ``segment_coo`` and ``segment_csr`` run on the CUDA engine (the CPU
engine's bytes), with their gradients (docs/spec.md section 6). ``dim_size=None`` is ``index.max() + 1`` read back from the device, as
torch_scatter reads it (one synchronization); segment_csr's ids are computed on the device. Errors: IndexError for an index
outside [0, dim_size) (out.size(dim) with out=), ValueError for shapes that do not broadcast, an
out= of another shape (src's but at dim; segment_csr: its result's), decreasing or out-of-range
indptr, TypeError for a non-int64 index, in the registry rows' words.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from ._registry import document as _registry_document
from ._registry import run_general
from ._torch_dispatch import torch_op_needed, torch_ops

__all__ = ["scatter", "scatter_sum", "scatter_add", "scatter_mul", "scatter_mean", "scatter_min", "scatter_max",
           "segment_coo", "segment_sum_coo", "segment_add_coo", "segment_mean_coo", "segment_min_coo",
           "segment_max_coo", "segment_csr", "segment_sum_csr", "segment_add_csr", "segment_mean_csr",
           "segment_min_csr", "segment_max_csr", "gather_coo", "gather_csr", "scatter_std", "scatter_logsumexp",
           "scatter_softmax", "scatter_log_softmax"]

_REDUCES = ("sum", "add", "mul", "mean", "min", "max")


def _check_reduce(reduce: str, op: str) -> None:
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: reduce = {reduce!r} must be one of {', '.join(_REDUCES)}")


def _is_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _dim(dim: int, src: Any) -> Optional[int]:
    """dim in [0, src.dim()), or None where it is out of range (the row then raises its error)."""
    n = src.dim()
    return dim % n if n and -n <= dim < n else None


def _broadcast(index: Any, src: Any, dim: int) -> Any:
    """torch_scatter's broadcast: index as a view of src's shape (stride 0 where it repeats)."""
    if index.dim() == 1:
        index = index.view([1] * dim + [-1] + [1] * (src.dim() - dim - 1))
    else:
        index = index.view(list(index.shape) + [1] * (src.dim() - index.dim()))
    return index.expand(src.shape)


def _zeros(src: Any, shape: list) -> Any:
    """Zeros of ``shape`` (an empty result), in src's autograd graph (src's gradient: zeros)."""
    out = src.new_zeros(shape)
    return out + src.reshape(-1)[:0].sum() if src.requires_grad else out


def _is_real(t: Any) -> bool:
    return not t.is_complex() and t.dtype is not sys.modules["torch"].bool


def _limits(t: Any) -> tuple:
    """torch_scatter's initial values of max and min: numeric_limits<T>::lowest() and max()."""
    import torch

    info = torch.finfo(t.dtype) if t.is_floating_point() else torch.iinfo(t.dtype)
    return info.min, info.max


def _skip_nan(src: Any, reduce: str) -> Any:
    """src with NaN replaced by a value min / max never take (torch_scatter's strict ``<`` /
    ``>`` update skips NaN): -inf for max, +inf for min. In eager mode only when src has a NaN."""
    import torch

    if not src.is_floating_point():
        return src
    # eager: one reduction decides (a NaN sum: a NaN, or +inf and -inf, which the where keeps)
    if not (torch.compiler.is_compiling() or _functorch(src)) and not bool(src.detach().sum().isnan()):
        return src
    return torch.where(torch.isnan(src), float("-inf") if reduce == "max" else float("inf"), src)


def _functorch(t: Any) -> bool:
    import torch

    check = getattr(getattr(torch._C, "_functorch", None), "is_functorch_wrapped_tensor", None)
    return bool(check(t)) if check is not None else False


def _taken(result: Any, reduce: str) -> Any:
    """The elements where some value beat torch_scatter's initial value (lowest() for max,
    max() for min): elsewhere torch_scatter writes 0."""
    lowest, highest = _limits(result)
    return result > lowest if reduce == "max" else result < highest


def _arg(src: Any, index: Any, dim: int, result: Any, counts: Optional[Any] = None, reduce: str = "max",
         before: Optional[Any] = None, valid_only: bool = False) -> Any:
    """arg_out: along dim, the first position of src equal to its element's result (src.size(dim)
    where none): a scatter min of positions, on multigather's torch ops. ``counts``: a mask of
    index's shape, False for rows that reach no element (segment_csr's rows outside indptr).
    ``before``: out's values before the reduction (out=): only a src value strictly beyond them
    counts, as torch_scatter's strict update. ``valid_only``: only values beyond the initial
    value (lowest() for max, max() for min) count."""
    import torch

    from . import torch as mg_torch

    n = src.size(dim)
    with torch.no_grad():
        full = _broadcast(index, src, dim)
        picked = mg_torch.gather(result.detach(), dim, full)
        shape = [1] * src.dim()
        shape[dim] = n
        position = torch.arange(n, device=src.device)
        mesh = getattr(src, "device_mesh", None)
        if mesh is not None:  # a DTensor: the positions too (replicated), as DTensor ops want
            from torch.distributed.tensor import DTensor, Replicate

            position = DTensor.from_local(position, mesh, [Replicate()] * mesh.ndim)
        position = position.view(shape).expand(src.shape)
        s = src.detach()
        tie = s == picked
        if counts is not None:
            tie = tie & _broadcast(counts, src, dim)
        if before is not None:
            old = mg_torch.gather(before, dim, full)
            tie = tie & (s > old if reduce == "max" else s < old)
        if valid_only and _is_real(s):
            tie = tie & _taken(s, reduce)
        position = torch.where(tie, position, torch.full_like(position, n))
        start = torch.full_like(result.detach(), n, dtype=torch.int64)
        return mg_torch.scatter_reduce(start, dim, full, position, "amin", include_self=True)


def _size_on_device(index: Any) -> Optional[int]:
    """dim_size None on a CUDA index: ``index.max() + 1`` (at least 0) read back from the device,
    as torch_scatter reads it (one synchronization); None on the CPU, where the row reads it."""
    if not (_is_tensor(index) and index.is_cuda and index.numel() > 0):
        return None
    return max(int(index.max()) + 1, 0)


def _row_scatter(src: Any, index: Any, dim: int, dim_size: Optional[int], reduce: str) -> Any:
    if torch_op_needed(src, index):
        return torch_ops().torch_scatter_scatter(src, index, dim, dim_size, reduce)
    return run_general("torch_scatter.scatter", src, index, dim=dim, dim_size=dim_size, reduce=reduce)


def _row_coo(src: Any, index: Any, dim_size: Optional[int], reduce: str) -> Any:
    if torch_op_needed(src, index):
        return torch_ops().torch_scatter_segment_coo(src, index, dim_size, reduce)
    return run_general("torch_scatter.segment_coo", src, index, dim_size=dim_size, reduce=reduce)


def _row_csr(src: Any, indptr: Any, reduce: str) -> Any:
    if torch_op_needed(src, indptr):
        return torch_ops().torch_scatter_segment_csr(src, indptr, reduce)
    return run_general("torch_scatter.segment_csr", src, indptr, reduce=reduce)


def _no_arg(result: Any, want_arg: bool, op: str) -> Any:
    """The row's result for operands that are not torch tensors (numpy: the registry row alone);
    arg_out needs torch tensors."""
    if want_arg:
        raise TypeError(f"{op}: arg_out (the min / max forms) needs torch tensors")
    return result


def _integer_mean(src: Any) -> bool:
    return not (src.is_floating_point() or src.is_complex())


def _divide(total: Any, count: Any, rounding: str) -> Any:
    """torch_scatter's mean division: true division for floats; integers floor (scatter_mean:
    ``div_(count, rounding_mode='floor')``) or truncate (segment_coo / segment_csr: C++ integer
    division in reducer.h)."""
    if total.is_floating_point() or total.is_complex():
        return total / count
    return total.div(count, rounding_mode=rounding)


def _count(src: Any, index: Any, dim: int, size: int) -> Any:
    """How many src values reach each output element along dim (at least 1), of src's shape with
    size at dim, in src's dtype."""
    ones = src.new_ones(()).expand(src.shape)
    return _row_scatter(ones, index, dim, size, "sum").clamp(min=1)


def _scatter_into(out: Any, src: Any, index: Any, dim: int, reduce: str, rounding: str = "floor") -> Any:
    """scatter with out: torch.scatter_reduce(out, dim, index, src, include_self=True) on
    multigather (out's values take part), written back into out; a mean divides out + the sum by
    the count of src values (at least 1), as torch_scatter's scatter_mean."""
    from . import torch as mg_torch

    full = _broadcast(index, src, dim)
    base = _base(out, src)
    if reduce == "mean":
        total = mg_torch.scatter_reduce(base, dim, full, src, "sum", include_self=True)
        result = _divide(total, _count(src, index, dim, out.size(dim)), rounding)
    else:
        how = {"sum": "sum", "add": "sum", "mul": "prod", "min": "amin", "max": "amax"}[reduce]
        result = mg_torch.scatter_reduce(base, dim, full, src, how, include_self=True)
    out.copy_(result)
    return out


def _base(out: Any, src: Any) -> Any:
    """out as the start of a reduction that is then copied back into out: a copy where autograd
    records the reduction (it may keep its input for the backward, which the copy would change)."""
    import torch

    if torch.is_grad_enabled() and (out.requires_grad or src.requires_grad):
        return out.clone()
    return out


def _extremum(reduce: str, src: Any, index: Any, d: int, out: Optional[Any], compute: Any, want_arg: bool) -> Any:
    """torch_scatter's min / max (scatter, segment_coo): a strict update from its initial value.
    Without out: the initial value is lowest() (max) / max() (min), so NaN, -inf (+inf for min)
    and that value itself are never taken and an element no value beat is 0. With out: out's
    values are the start (NaN and values that do not beat them are skipped; no masking).
    ``compute(src)``: the row's reduction of a src without NaN (index's view: ``index``)."""
    import torch

    from . import torch as mg_torch

    clean = _skip_nan(src, reduce)
    if out is None:
        result = compute(clean)
        if _is_real(result):
            if result.requires_grad or torch.compiler.is_compiling() or _functorch(result):
                result = torch.where(_taken(result, reduce), result, torch.zeros_like(result))
            else:  # a fresh result of the row: masked in place
                lowest, highest = _limits(result)
                result.masked_fill_(result <= lowest if reduce == "max" else result >= highest, 0)
        return (result, _arg(src, index, d, result, reduce=reduce)) if want_arg else result
    # With out: the values and arg_out without autograd, then the gradient to the arg_out
    # element only (torch_scatter's ScatterMax / ScatterMin: none to out's former values).
    n = src.size(d)
    with torch.no_grad():
        before = out.detach()
        full = _broadcast(index, src, d)
        values = mg_torch.scatter_reduce(before, d, full, clean.detach(), "amax" if reduce == "max" else "amin",
                                         include_self=True)
        arg = _arg(src, index, d, values, reduce=reduce, before=before)
    if torch.is_grad_enabled() and src.requires_grad:
        picked = mg_torch.gather(src, d, arg.clamp(max=max(n - 1, 0)))
        values = torch.where(arg < n, picked, values)
    out.copy_(values)
    return (out, arg) if want_arg else out


def _check_out(op: str, out: Any, src: Any, index: Any, dim: int) -> None:
    """out= of scatter / segment_coo: src's shape but at dim (torch_scatter's CHECK_INPUT), and
    index inside [0, out.size(dim)) (read here in eager mode; the reduction's own check
    otherwise)."""
    import torch

    if index.dtype != torch.int64:
        raise TypeError(f"{op}: index dtype {str(index.dtype).replace('torch.', '')} is not supported ({op} accepts "
                        "int64)")
    if out.dim() != src.dim() or any(out.size(i) != src.size(i) for i in range(src.dim()) if i != dim):
        raise ValueError(f"{op}: out.shape = {list(out.shape)} must be src.shape = {list(src.shape)} but at dim {dim}")
    if index.numel() == 0 or torch.compiler.is_compiling() or _functorch(index):
        return
    size = out.size(dim)
    bad = (index < 0) | (index >= size)
    if bool(bad.any()):
        where = [int(i) for i in bad.nonzero()[0]]
        raise IndexError(f"{op}: index[{','.join(map(str, where))}] = {int(index[tuple(where)])} is out of range "
                         f"for dim {dim} of out (size {size}; valid range [0, {size}))")


def _scatter(src: Any, index: Any, dim: int, out: Optional[Any], dim_size: Optional[int], reduce: str,
             want_arg: bool = False) -> Any:
    _check_reduce(reduce, "torch_scatter.scatter")
    if not _is_tensor(src):  # numpy and other arrays: the row alone
        if out is not None:
            raise TypeError("torch_scatter.scatter: out= needs torch tensors")
        return _no_arg(_row_scatter(src, index, dim, dim_size, reduce), want_arg, "torch_scatter.scatter")
    d = _dim(dim, src)
    if d is None:  # a dim outside [-src.dim(), src.dim()) or a 0-d src: the row's error
        _row_scatter(src, index, dim, dim_size, reduce)
        raise IndexError(f"torch_scatter.scatter: dim = {dim} is out of range for src of rank {src.dim()}")
    if out is None and dim_size is None and (index.numel() == 0 or src.numel() == 0):
        dim_size = 0  # torch_scatter: an empty (broadcast) index gives size 0 at dim
    if out is None and dim_size is None:
        dim_size = _size_on_device(index)
    if out is not None:  # (without out the row checks them)
        _check_out("torch_scatter.scatter", out, src, index, d)
        try:
            _broadcast(index, src, d)
        except RuntimeError:
            raise ValueError(f"torch_scatter.scatter: index.shape = {list(index.shape)} does not broadcast to "
                             f"src.shape = {list(src.shape)} (along dim {d})") from None
    if src.numel() == 0:  # torch_scatter: out untouched, else zeros (mul and min / max too)
        return _empty_result(src, out, d, dim_size, want_arg)
    if reduce in ("min", "max"):
        return _extremum(reduce, src, index, d, out,
                         lambda s: _row_scatter(s, index, d, dim_size, reduce), want_arg)
    if out is not None:
        return _scatter_into(out, src, index, d, reduce)
    if reduce == "mean" and _integer_mean(src):
        total = _row_scatter(src, index, d, dim_size, "sum")
        return _divide(total, _count(src, index, d, total.size(d)), "floor")
    return _row_scatter(src, index, d, dim_size, reduce)


def scatter(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None, dim_size: Optional[int] = None,
            reduce: str = "sum") -> Any:
    """torch_scatter.scatter: ``out[.., index[i], ..] = reduce(src[.., i, ..])`` along ``dim``
    (https://pytorch-scatter.readthedocs.io/en/latest/functions/scatter.html). src: any shape;
    index: int64, broadcast to src (module docstring); result: src's shape with dim_size at dim
    (default index.max() + 1, 0 for an empty index); reduce: sum / add / mul / mean / min / max
    (min / max: the values only, as torch_scatter's; scatter_min / scatter_max give arg_out
    too). With ``out``: reduced into out in place, which is returned. Errors: IndexError (an
    index outside [0, dim_size)), ValueError, TypeError (module docstring)."""
    if out is None and not _is_tensor(src):  # numpy and other arrays: the row alone
        return run_general("torch_scatter.scatter", src, index, dim=dim, dim_size=dim_size, reduce=reduce)
    return _scatter(src, index, dim, out, dim_size, reduce)


def scatter_sum(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="sum")."""
    return _scatter(src, index, dim, out, dim_size, "sum")


scatter_add = scatter_sum


def scatter_mul(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="mul"): an element no value reaches is 1."""
    return _scatter(src, index, dim, out, dim_size, "mul")


def scatter_mean(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                 dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="mean"): the sum divided by the count (integers floor)."""
    return _scatter(src, index, dim, out, dim_size, "mean")


def scatter_min(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> tuple:
    """torch_scatter.scatter_min: ``(out, arg_out)``; arg_out (int64, out's shape) is the first
    position along dim of the minimum (src.size(dim) where no value was taken)."""
    return _scatter(src, index, dim, out, dim_size, "min", want_arg=True)


def scatter_max(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> tuple:
    """torch_scatter.scatter_max: ``(out, arg_out)`` as scatter_min, for the maximum."""
    return _scatter(src, index, dim, out, dim_size, "max", want_arg=True)


def _segment_coo(src: Any, index: Any, out: Optional[Any], dim_size: Optional[int], reduce: str,
                 want_arg: bool = False) -> Any:
    op = "torch_scatter.segment_coo"
    _check_reduce(reduce, op)
    if not _is_tensor(src) or not _is_tensor(index) or not 0 < index.dim() <= src.dim():
        if out is not None:
            raise TypeError(f"{op}: out= needs torch tensors")
        return _no_arg(_row_coo(src, index, dim_size, reduce), want_arg, op)  # numpy, or the row's error
    k = index.dim()
    d = k - 1
    if out is None and dim_size is None and index.numel() == 0:
        dim_size = 0
    if out is None and dim_size is None and src.numel() > 0:
        dim_size = _size_on_device(index)
    if out is not None:
        _check_out(op, out, src, index, d)
    try:  # index over src's leading dimensions (size 1 repeats), as torch_scatter expands it
        full = index.expand(src.shape[:k])
    except RuntimeError:
        raise ValueError(f"{op}: index.shape = {list(index.shape)} does not broadcast to src.shape[:{k}] = "
                         f"{list(src.shape[:k])}") from None
    if src.numel() == 0:  # torch_scatter: out untouched, else zeros
        if out is None and dim_size is None:  # the last index (of each row) + 1, as torch_scatter reads it
            dim_size = int(full[..., -1].max()) + 1 if full.numel() else 0
        return _empty_result(src, out, d, dim_size, want_arg)
    if reduce in ("min", "max"):
        return _extremum(reduce, src, full, d, out, lambda s: _row_coo(s, index, dim_size, reduce), want_arg)
    if out is not None:
        return _scatter_into(out, src, full, d, reduce, "trunc")
    if reduce == "mean" and _integer_mean(src):
        total = _row_coo(src, index, dim_size, "sum")
        return _divide(total, _count(src, full, d, total.size(d)), "trunc")
    return _row_coo(src, index, dim_size, reduce)


def _empty_result(src: Any, out: Optional[Any], dim: int, dim_size: int, want_arg: bool) -> Any:
    """An empty src's result, as torch_scatter's kernels give it: out untouched, else zeros of
    src's shape with dim_size at dim; arg_out src.size(dim) (0) everywhere."""
    import torch

    if out is None:
        shape = list(src.shape)
        shape[dim] = dim_size
        out = _zeros(src, shape)
    return (out, torch.full_like(out, src.size(dim), dtype=torch.int64)) if want_arg else out


def segment_coo(src: Any, index: Any, out: Optional[Any] = None, dim_size: Optional[int] = None,
                reduce: str = "sum") -> Any:
    """torch_scatter.segment_coo: reduce src along dim = index.dim() - 1 into the segments that
    the (sorted) index names (https://pytorch-scatter.readthedocs.io/en/latest/functions/
    segment_coo.html). index: int64 of src's leading shape (size 1 broadcasts); result: src's
    shape with dim_size at dim (default index.max() + 1, 0 for an empty index); min / max: the
    values only (segment_min_coo / segment_max_coo give arg_out too). With ``out``: out's
    values take part (sum adds to them; a mean divides out + the sum by the count; min / max
    start from them), reduced in place and returned. An unsorted index gives the scatter's
    result (torch_scatter's is undefined). Errors: module docstring."""
    if out is None and not _is_tensor(src):  # numpy and other arrays: the row alone
        return run_general("torch_scatter.segment_coo", src, index, dim_size=dim_size, reduce=reduce)
    return _segment_coo(src, index, out, dim_size, reduce)


def _csr_shape(src: Any, indptr: Any, dim: int) -> list:
    shape = list(src.shape)
    shape[dim] = max(indptr.size(-1) - 1, 0)
    return shape


def _segment_csr(src: Any, indptr: Any, out: Optional[Any], reduce: str, want_arg: bool = False) -> Any:
    op = "torch_scatter.segment_csr"
    _check_reduce(reduce, op)
    if not _is_tensor(src) or not _is_tensor(indptr) or not 0 < indptr.dim() <= src.dim():
        if out is not None:
            raise TypeError(f"{op}: out= needs torch tensors")
        return _no_arg(_row_csr(src, indptr, reduce), want_arg, op)  # numpy, or the row's error
    import torch

    dim = indptr.dim() - 1
    shape = _csr_shape(src, indptr, dim)
    if out is not None:
        if src.numel() == 0:  # torch_scatter returns out untouched
            return _empty_result(src, out, dim, 0, want_arg)
        if list(out.shape) != shape:
            raise ValueError(f"{op}: out.shape = {list(out.shape)} must be {shape} (src.shape with indptr.size(-1) - 1 "
                             f"at dim {dim})")
    if indptr.size(-1) == 0 or src.numel() == 0:  # zeros (no segment, or no row), as torch_scatter's
        result = _zeros(src, shape)
        arg = torch.full(shape, src.size(dim), dtype=torch.int64, device=src.device) if want_arg else None
    elif reduce in ("min", "max"):
        result = _row_csr(_skip_nan(src, reduce), indptr, reduce)
        result, arg = _segment_csr_result(src, indptr, result, reduce, want_arg)
    elif reduce == "mean" and _integer_mean(src):
        total = _row_csr(src, indptr, "sum")
        ptr = indptr.expand(*src.shape[:dim], indptr.size(-1))
        count = (ptr[..., 1:] - ptr[..., :-1]).clamp(min=1)
        count = count.view(list(count.shape) + [1] * (src.dim() - dim - 1))
        result, arg = _divide(total, count, "trunc"), None
    else:
        result, arg = _row_csr(src, indptr, reduce), None
    if out is not None:
        out.copy_(result)
        result = out
    return (result, arg) if want_arg else result


def _segment_csr_result(src: Any, indptr: Any, result: Any, reduce: str, want_arg: bool) -> tuple:
    """segment_csr's min / max from the row's (on src without NaN): a non-empty segment no value
    beat holds the initial value (lowest() for max, max() for min: torch_scatter writes it, it
    does not mask it to 0 as scatter does); an empty segment is 0. And arg_out."""
    import torch

    if _is_real(result):
        lowest, highest = _limits(result)
        result = result.clamp(min=lowest) if reduce == "max" else result.clamp(max=highest)
    if not want_arg:
        return result, None
    dim = indptr.dim() - 1
    n = src.size(dim)
    with torch.no_grad():  # each row's segment; rows outside every segment do not count
        bounds = indptr.expand(*src.shape[:dim], indptr.size(-1)).contiguous()
        rows = torch.arange(n, device=src.device).expand(*src.shape[:dim], n).contiguous()
        segment = torch.searchsorted(bounds, rows, right=True) - 1
        inside = (rows >= bounds[..., :1]) & (rows < bounds[..., -1:])
        segment = torch.where(inside, segment, torch.zeros_like(segment))
    return result, _arg(src, segment, dim, result, inside, reduce=reduce, valid_only=True)


def segment_csr(src: Any, indptr: Any, out: Optional[Any] = None, reduce: str = "sum") -> Any:
    """torch_scatter.segment_csr: segment s of src along dim = indptr.dim() - 1 is
    [indptr[.., s], indptr[.., s+1]) (https://pytorch-scatter.readthedocs.io/en/latest/functions/
    segment_csr.html). indptr: int64 of src.shape[:dim] ++ [S + 1] (size 1 broadcasts),
    non-decreasing within [0, src.size(dim)]; result: src's shape with S at dim (0 for an empty
    indptr); min / max: the values only (segment_min_csr / segment_max_csr give arg_out too).
    With ``out``: the result is written into out (its values do not take part, as
    torch_scatter's), which is returned. Errors: module docstring."""
    if out is None and not _is_tensor(src):  # numpy and other arrays: the row alone
        return run_general("torch_scatter.segment_csr", src, indptr, reduce=reduce)
    return _segment_csr(src, indptr, out, reduce)


def gather_coo(src: Any, index: Any, out: Optional[Any] = None) -> Any:
    """torch_scatter.gather_coo: ``out[b.., e, f..] = src[b.., index[b.., e], f..]`` along
    dim = index.dim() - 1 (the inverse of segment_coo: each row gets its segment's value). index:
    int64 with src's leading dimensions (index.shape[:-1] == src.shape[:dim]); result: src's shape
    with index.size(-1) at dim. With ``out``: written into out, which is returned. Gradient: the
    segment sums of the incoming gradient. On multigather.torch.gather. IndexError for an index
    outside [0, src.size(dim)) (torch_scatter reads out of bounds)."""
    import torch

    from . import torch as mg_torch

    op = "torch_scatter.gather_coo"
    if not 0 < index.dim() <= src.dim() or list(index.shape[:-1]) != list(src.shape[:index.dim() - 1]):
        raise ValueError(f"{op}: index.shape = {list(index.shape)} must be src.shape[:dim] ++ [E] with "
                         f"src.shape = {list(src.shape)} (dim = index.dim() - 1)")
    if index.dtype != torch.int64:
        raise TypeError(f"{op}: index dtype {str(index.dtype).replace('torch.', '')} must be int64")
    dim = index.dim() - 1
    shape = list(src.shape)
    shape[dim] = index.size(dim)
    if out is not None and list(out.shape) != shape:
        raise ValueError(f"{op}: out.shape = {list(out.shape)} must be {shape} (src.shape with index.size(-1) at dim)")
    if src.numel() == 0:  # torch_scatter: zeros (out untouched)
        return out if out is not None else _zeros(src, shape)
    full = index.view(list(index.shape) + [1] * (src.dim() - index.dim())).expand(shape)
    result = mg_torch.gather(src, dim, full)
    if out is not None:
        out.copy_(result)
        return out
    return result


def gather_csr(src: Any, indptr: Any, out: Optional[Any] = None) -> Any:
    """torch_scatter.gather_csr: ``out[b.., e, f..] = src[b.., s, f..]`` for e in
    [indptr[b.., s], indptr[b.., s+1]) along dim = indptr.dim() - 1 (the inverse of segment_csr).
    indptr: int64 of src.shape[:dim] ++ [src.size(dim) + 1] (size 1 broadcasts), non-decreasing;
    result: src's shape with indptr[.., -1] (its last value) at dim. With ``out``: written into
    out, which is returned. Gradient: the segment sums of the incoming gradient. Rows before
    indptr[.., 0] take segment 0's value (torch_scatter leaves them uninitialized)."""
    import torch

    op = "torch_scatter.gather_csr"
    if not 0 < indptr.dim() <= src.dim():
        raise ValueError(f"{op}: indptr rank {indptr.dim()} must be in [1, src rank {src.dim()}]")
    if indptr.dtype != torch.int64:
        raise TypeError(f"{op}: indptr dtype {str(indptr.dtype).replace('torch.', '')} must be int64")
    dim = indptr.dim() - 1
    try:
        ptr = indptr.expand(*src.shape[:dim], indptr.size(-1))
    except RuntimeError:
        raise ValueError(f"{op}: indptr.shape = {list(indptr.shape)} does not broadcast to src.shape[:dim] ++ [S + 1] "
                         f"with src.shape = {list(src.shape)}") from None
    segments = ptr.size(-1) - 1
    if src.size(dim) != 0 and src.size(dim) != segments:
        raise ValueError(f"{op}: indptr.size(-1) = {ptr.size(-1)} must be src.size({dim}) + 1 = {src.size(dim) + 1}")
    if src.numel() == 0:
        shape = list(src.shape)
        shape[dim] = 0
        return out if out is not None else _zeros(src, shape)
    with torch.no_grad():
        if bool((ptr[..., 1:] < ptr[..., :-1]).any()) or bool((ptr < 0).any()):
            raise ValueError(f"{op}: indptr must be non-decreasing and non-negative (got {indptr.tolist()})")
        size = int(ptr.flatten()[-1])
        rows = torch.arange(size, device=src.device).expand(*ptr.shape[:-1], size).contiguous()
        segment = (torch.searchsorted(ptr.contiguous(), rows, right=True) - 1).clamp_(0, max(segments - 1, 0))
    return gather_coo(src, segment, out)


def _fixed(name: str, reduce: str, csr: bool) -> Any:
    want_arg = reduce in ("min", "max")
    if csr:
        def f(src: Any, indptr: Any, out: Optional[Any] = None) -> Any:
            return _segment_csr(src, indptr, out, reduce, want_arg)
        base = "segment_csr"
    else:
        def f(src: Any, index: Any, out: Optional[Any] = None, dim_size: Optional[int] = None) -> Any:
            return _segment_coo(src, index, out, dim_size, reduce, want_arg)
        base = "segment_coo"
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{base}(..., reduce={reduce!r})" + (" -> (out, arg_out)" if want_arg else "")
    return f


segment_sum_coo = _fixed("segment_sum_coo", "sum", False)
segment_add_coo = _fixed("segment_add_coo", "sum", False)
segment_mean_coo = _fixed("segment_mean_coo", "mean", False)
segment_min_coo = _fixed("segment_min_coo", "min", False)
segment_max_coo = _fixed("segment_max_coo", "max", False)
segment_sum_csr = _fixed("segment_sum_csr", "sum", True)
segment_add_csr = _fixed("segment_add_csr", "sum", True)
segment_mean_csr = _fixed("segment_mean_csr", "mean", True)
segment_min_csr = _fixed("segment_min_csr", "min", True)
segment_max_csr = _fixed("segment_max_csr", "max", True)


# ---- torch_scatter.composite --------------------------------------------------------------------
# Transcribed from torch_scatter/composite/{std,logsumexp,softmax}.py of
# https://github.com/rusty1s/pytorch_scatter at commit 648dda3cf964731ffb4de11eafc445a83133eda4
# (torch_scatter 2.1.2, MIT License, Copyright (c) 2020 Matthias Fey): the same arithmetic, with
# this module's scatter_sum / scatter_max and multigather.torch.gather for Tensor.gather.

def _gather(src: Any, dim: int, index: Any) -> Any:
    from . import torch as mg_torch

    return mg_torch.gather(src, dim, index)


def _full_index(index: Any, src: Any, dim: int) -> Any:
    return _broadcast(index, src, dim % src.dim())


def scatter_std(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None, dim_size: Optional[int] = None,
                unbiased: bool = True) -> Any:
    """torch_scatter.scatter_std: the standard deviation of each element's values
    (``sqrt(sum((x - mean)^2) / (count - 1 + 1e-6))``, count - 1 without ``unbiased``, both at
    least 1), as torch_scatter computes it."""
    import torch

    if out is not None:
        dim_size = out.size(dim)
    if dim < 0:
        dim = src.dim() + dim
    count_dim = dim
    if index.dim() <= dim:
        count_dim = index.dim() - 1
    ones = torch.ones(index.size(), dtype=src.dtype, device=src.device)
    count = scatter_sum(ones, index, count_dim, dim_size=dim_size)
    index = _full_index(index, src, dim)
    tmp = scatter_sum(src, index, dim, dim_size=dim_size)
    count = _broadcast(count, tmp, dim).clamp(1)
    mean = tmp.div(count)
    var = src - _gather(mean, dim, index)
    var = var * var
    out = scatter_sum(var, index, dim, out, dim_size)
    if unbiased:
        count = count.sub(1).clamp_(1)
    return out.div(count + 1e-6).sqrt()


def scatter_logsumexp(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                      dim_size: Optional[int] = None, eps: float = 1e-12) -> Any:
    """torch_scatter.scatter_logsumexp: ``log(sum(exp(x)) + eps)`` of each element's values,
    computed around their maximum; an element no value reaches is 0 (with ``out``: out's value
    where the result is not finite)."""
    import torch

    if not torch.is_floating_point(src):
        raise ValueError('`scatter_logsumexp` can only be computed over tensors with floating point data types.')
    index = _full_index(index, src, dim)
    if out is not None:
        dim_size = out.size(dim)
    elif dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() else 0
    size = list(src.size())
    size[dim] = dim_size
    max_value_per_index = torch.full(size, fill_value=float("-inf"), dtype=src.dtype, device=src.device)
    scatter_max(src, index, dim, max_value_per_index, dim_size=dim_size)
    max_per_src_element = _gather(max_value_per_index, dim, index)
    recentered_score = src - max_per_src_element
    recentered_score.masked_fill_(torch.isnan(recentered_score), float("-inf"))
    orig_out = None
    if out is not None:
        orig_out = out.clone()
        out = out.sub_(max_value_per_index).exp_()
    sum_per_index = scatter_sum(recentered_score.exp_(), index, dim, out, dim_size)
    out = sum_per_index.add_(eps).log_().add_(max_value_per_index)
    if orig_out is None:
        return out.nan_to_num_(neginf=0.0)
    mask = ~out.isfinite()
    out[mask] = orig_out[mask]
    return out


def scatter_softmax(src: Any, index: Any, dim: int = -1, dim_size: Optional[int] = None) -> Any:
    """torch_scatter.scatter_softmax: the softmax of each group of values that index sends to
    one element (result: src's shape)."""
    import torch

    if not torch.is_floating_point(src):
        raise ValueError('`scatter_softmax` can only be computed over tensors with floating point data types.')
    index = _full_index(index, src, dim)
    max_value_per_index = scatter_max(src, index, dim=dim, dim_size=dim_size)[0]
    max_per_src_element = _gather(max_value_per_index, dim, index)
    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()
    sum_per_index = scatter_sum(recentered_scores_exp, index, dim, dim_size=dim_size)
    normalizing_constants = _gather(sum_per_index, dim, index)
    return recentered_scores_exp.div(normalizing_constants)


def scatter_log_softmax(src: Any, index: Any, dim: int = -1, eps: float = 1e-12,
                        dim_size: Optional[int] = None) -> Any:
    """torch_scatter.scatter_log_softmax: the log-softmax of each group of values that index
    sends to one element (``log(sum(exp) + eps)`` as torch_scatter; result: src's shape)."""
    import torch

    if not torch.is_floating_point(src):
        raise ValueError('`scatter_log_softmax` can only be computed over tensors with floating point data types.')
    index = _full_index(index, src, dim)
    max_value_per_index = scatter_max(src, index, dim=dim, dim_size=dim_size)[0]
    max_per_src_element = _gather(max_value_per_index, dim, index)
    recentered_scores = src - max_per_src_element
    sum_per_index = scatter_sum(recentered_scores.exp(), index, dim, dim_size=dim_size)
    normalizing_constants = _gather(sum_per_index.add_(eps).log_(), dim, index)
    return recentered_scores.sub_(normalizing_constants)


# The public functions that are not one registry call each (aliases, fixed reductions, the arg
# outputs, gathers, composites): tests/python/test_pipeline.py checks the others against their rows.
_COMPOSITES = tuple(n for n in __all__ if n not in ("scatter", "segment_coo", "segment_csr"))
_registry_document(globals(), ["scatter", "segment_coo", "segment_csr"])


def _scriptable(name: str) -> Any:
    def prepare() -> Any:
        from . import _torch_scatter_script

        _torch_scatter_script.IMPLEMENTATIONS.update((n, globals()[n]) for n in __all__)
        return getattr(_torch_scatter_script, name)
    return prepare


# torch.jit.script(f) (and a scripted caller of f) compiles _torch_scatter_script's stand-in of f.
for _name in __all__:
    globals()[_name].__prepare_scriptable__ = _scriptable(_name)
del _name
