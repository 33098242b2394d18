"""torch_scatter's functions (https://pytorch-scatter.readthedocs.io, the scatter and segment
reductions that PyTorch Geometric runs its message passing on) on multigather: a drop-in for
``import torch_scatter`` with no compiled extension to build.

- ``scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum")`` (reduce: sum / add /
  mul / mean / min / max) and ``scatter_sum / scatter_add / scatter_mul / scatter_mean``;
  ``scatter_min / scatter_max`` return ``(out, arg_out)``;
- ``segment_coo(src, index, out=None, dim_size=None, reduce="sum")`` (index sorted along its last
  dimension; dim = index.dim() - 1) and ``segment_csr(src, indptr, out=None, reduce="sum")``
  (dim = indptr.dim() - 1), with ``segment_{sum,add,mean,min,max}_{coo,csr}``; the min / max
  forms return ``(out, arg_out)``.

Each is ONE registry row (``torch_scatter.scatter``, ``torch_scatter.segment_coo``,
``torch_scatter.segment_csr``; docs/spec.md section 6): a scatter of src into the reduction's
identity. Shapes: src any shape; ``index`` broadcasts to src as torch_scatter's ``broadcast``
does (a 1-D index lies along ``dim``; a longer one aligns with src's leading dimensions; size 1
repeats), so no ``index.expand`` is needed; the output is src's shape with ``dim_size`` (default
``index.max() + 1``, read from the index) or the number of segments at ``dim``. dtypes: src any
real dtype (mean: integers floor), index / indptr int64. An output element no value reaches is 0
(1 for mul). The values of each element combine in row-major order of src: results are the same
at every thread count.

``arg_out`` (min / max): for each output element, the position along ``dim`` of the FIRST src
value equal to the result, ``src.size(dim)`` where no value reached it (torch_scatter's
convention). Gradients (torch autograd, through ``torch.ops.multigather.torch_scatter_*``):
sum / mean as torch_scatter's; min / max give the gradient to the arg_out element (not shared
among ties, torch_scatter's rule); mul gives each value the product of the others in its element
(exact with zeros, where torch_scatter divides by the value). Double backward: sum and mean.

CUDA tensors: ``scatter`` / ``segment_coo`` with a given ``dim_size`` run on the CUDA engine
(the CPU engine's bytes), with their gradients but mul's; ``dim_size=None``, ``segment_csr``
(both read index values on the host) and mul's gradient raise a ValueError that says so
(docs/spec.md section 6).

``out=``: ``scatter*`` reduce into ``out`` in place and return it, as torch_scatter does (its
values take part; a mean's count does not include it). ``segment_coo`` / ``segment_csr`` do not
take ``out`` (NotImplementedError). Errors: IndexError for an index outside [0, dim_size),
ValueError for shapes that do not broadcast, decreasing or out-of-range indptr, TypeError for a
non-int64 index, with the registry's messages.
"""

from __future__ import annotations

from typing import Any, Optional

from ._registry import document as _registry_document
from ._registry import run_general
from ._torch_route import torch_op_needed, torch_ops

__all__ = ["scatter", "scatter_sum", "scatter_add", "scatter_mul", "scatter_mean", "scatter_min", "scatter_max",
           "segment_coo", "segment_sum_coo", "segment_add_coo", "segment_mean_coo", "segment_min_coo",
           "segment_max_coo", "segment_csr", "segment_sum_csr", "segment_add_csr", "segment_mean_csr",
           "segment_min_csr", "segment_max_csr"]

_REDUCES = ("sum", "add", "mul", "mean", "min", "max")


def _check_reduce(reduce: str, op: str) -> None:
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: reduce = {reduce!r} must be one of {', '.join(_REDUCES)}")


def _broadcast(index: Any, src: Any, dim: int) -> Any:
    """torch_scatter's broadcast: index as a view of src's shape (stride 0 where it repeats)."""
    if index.dim() == 1:
        index = index.view([1] * dim + [-1] + [1] * (src.dim() - dim - 1))
    else:
        index = index.view(list(index.shape) + [1] * (src.dim() - index.dim()))
    return index.expand(src.shape)


def _arg(src: Any, index: Any, dim: int, result: Any, counts: Optional[Any] = None) -> Any:
    """arg_out: along dim, the first position of src equal to its element's result (src.size(dim)
    where none): a scatter min of positions, on multigather's torch ops. ``counts``: a mask of
    index's shape, False for rows that reach no element (segment_csr's rows outside indptr)."""
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
        tie = src.detach() == picked
        if counts is not None:
            tie = tie & _broadcast(counts, src, dim)
        position = torch.where(tie, position, torch.full_like(position, n))
        start = torch.full_like(result.detach(), n, dtype=torch.int64)
        return mg_torch.scatter_reduce(start, dim, full, position, "amin", include_self=True)


def scatter(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None, dim_size: Optional[int] = None,
            reduce: str = "sum") -> Any:
    """torch_scatter.scatter: ``out[.., index[i], ..] = reduce(src[.., i, ..])`` along ``dim``
    (https://pytorch-scatter.readthedocs.io/en/latest/functions/scatter.html). src: any shape;
    index: int64, broadcast to src (module docstring); result: src's shape with dim_size at dim
    (default index.max() + 1); reduce: sum / add / mul / mean / min / max (min / max: the values
    only, see scatter_min / scatter_max). With ``out``: reduced into out in place, which is
    returned. Errors: IndexError (an index outside [0, dim_size)), ValueError, TypeError (module
    docstring)."""
    if out is not None:  # composed in Python (below): its reduce is checked here, the row's by the row
        _check_reduce(reduce, "torch_scatter.scatter")
        return _scatter_into(out, src, index, dim, reduce)
    if torch_op_needed(src, index):
        return torch_ops().torch_scatter_scatter(src, index, dim, dim_size, reduce)
    return run_general("torch_scatter.scatter", src, index, dim=dim, dim_size=dim_size, reduce=reduce)


def _scatter_into(out: Any, src: Any, index: Any, dim: int, reduce: str) -> Any:
    """scatter with out: torch.scatter_reduce(out, dim, index, src, include_self=True) on
    multigather (out's values take part), written back into out; a mean divides out + the sum by
    the count of src values (at least 1), as torch_scatter's scatter_mean."""
    from . import torch as mg_torch

    d = dim % src.dim()
    full = _broadcast(index, src, d)
    if reduce == "mean":
        total = mg_torch.scatter_reduce(out, d, full, src, "sum", include_self=True)
        count = scatter(src.new_ones(()).expand(src.shape), index, d, dim_size=out.size(d)).clamp_(min=1)
        result = total / count if total.is_floating_point() else total.div(count, rounding_mode="floor")
    else:
        how = {"sum": "sum", "add": "sum", "mul": "prod", "min": "amin", "max": "amax"}[reduce]
        result = mg_torch.scatter_reduce(out, d, full, src, how, include_self=True)
    out.copy_(result)
    return out


def scatter_sum(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="sum")."""
    return scatter(src, index, dim, out, dim_size, "sum")


scatter_add = scatter_sum


def scatter_mul(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="mul"): an element no value reaches is 1."""
    return scatter(src, index, dim, out, dim_size, "mul")


def scatter_mean(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                 dim_size: Optional[int] = None) -> Any:
    """scatter(..., reduce="mean"): the sum divided by the count (integers floor)."""
    return scatter(src, index, dim, out, dim_size, "mean")


def _scatter_extremum(reduce: str, src: Any, index: Any, dim: int, out: Optional[Any],
                      dim_size: Optional[int]) -> tuple:
    result = scatter(src, index, dim, out, dim_size, reduce)
    return result, _arg(src, index, dim % src.dim(), result)


def scatter_min(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> tuple:
    """torch_scatter.scatter_min: ``(out, arg_out)``; arg_out (int64, out's shape) is the first
    position along dim of the minimum (src.size(dim) where no value reached the element)."""
    return _scatter_extremum("min", src, index, dim, out, dim_size)


def scatter_max(src: Any, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None) -> tuple:
    """torch_scatter.scatter_max: ``(out, arg_out)`` as scatter_min, for the maximum."""
    return _scatter_extremum("max", src, index, dim, out, dim_size)


def _no_out(out: Any, op: str) -> None:
    if out is not None:
        raise NotImplementedError(f"{op}: out= is not supported here; use the returned tensor")


def segment_coo(src: Any, index: Any, out: Optional[Any] = None, dim_size: Optional[int] = None,
                reduce: str = "sum") -> Any:
    """torch_scatter.segment_coo: reduce src along dim = index.dim() - 1 into the segments that
    the (sorted) index names (https://pytorch-scatter.readthedocs.io/en/latest/functions/
    segment_coo.html). index: int64 of src's leading shape (size 1 broadcasts); result: src's
    shape with dim_size at dim (default index.max() + 1). min / max: ``(out, arg_out)``. An
    unsorted index gives the scatter's result (torch_scatter's is undefined). Errors: module
    docstring."""
    _no_out(out, "torch_scatter.segment_coo")  # reduce: the row checks it
    if torch_op_needed(src, index):
        result = torch_ops().torch_scatter_segment_coo(src, index, dim_size, reduce)
    else:
        result = run_general("torch_scatter.segment_coo", src, index, dim_size=dim_size, reduce=reduce)
    if reduce in ("min", "max"):
        full = index.expand(src.shape[:index.dim()])
        return result, _arg(src, full, index.dim() - 1, result)
    return result


def segment_csr(src: Any, indptr: Any, out: Optional[Any] = None, reduce: str = "sum") -> Any:
    """torch_scatter.segment_csr: segment s of src along dim = indptr.dim() - 1 is
    [indptr[.., s], indptr[.., s+1]) (https://pytorch-scatter.readthedocs.io/en/latest/functions/
    segment_csr.html). indptr: int64 of src.shape[:dim] ++ [S + 1] (size 1 broadcasts),
    non-decreasing within [0, src.size(dim)]; result: src's shape with S at dim. min / max:
    ``(out, arg_out)``. Errors: module docstring."""
    _no_out(out, "torch_scatter.segment_csr")  # reduce: the row checks it
    if torch_op_needed(src, indptr):
        result = torch_ops().torch_scatter_segment_csr(src, indptr, reduce)
    else:
        result = run_general("torch_scatter.segment_csr", src, indptr, reduce=reduce)
    if reduce in ("min", "max"):
        import torch

        dim = indptr.dim() - 1
        n = src.size(dim)
        with torch.no_grad():  # each row's segment; rows outside every segment do not count
            bounds = indptr.expand(*src.shape[:dim], indptr.size(-1)).contiguous()
            rows = torch.arange(n, device=src.device).expand(*src.shape[:dim], n).contiguous()
            segment = torch.searchsorted(bounds, rows, right=True) - 1
            inside = (rows >= bounds[..., :1]) & (rows < bounds[..., -1:])
            segment = torch.where(inside, segment, torch.zeros_like(segment))
        return result, _arg(src, segment, dim, result, inside)
    return result


def _fixed(name: str, base: Any, reduce: str, csr: bool) -> Any:
    if csr:
        def f(src: Any, indptr: Any, out: Optional[Any] = None) -> Any:
            return base(src, indptr, out, reduce)
    else:
        def f(src: Any, index: Any, out: Optional[Any] = None, dim_size: Optional[int] = None) -> Any:
            return base(src, index, out, dim_size, reduce)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{base.__name__}(..., reduce={reduce!r})" + (" -> (out, arg_out)" if reduce in ("min", "max") else "")
    return f


segment_sum_coo = _fixed("segment_sum_coo", segment_coo, "sum", False)
segment_add_coo = _fixed("segment_add_coo", segment_coo, "sum", False)
segment_mean_coo = _fixed("segment_mean_coo", segment_coo, "mean", False)
segment_min_coo = _fixed("segment_min_coo", segment_coo, "min", False)
segment_max_coo = _fixed("segment_max_coo", segment_coo, "max", False)
segment_sum_csr = _fixed("segment_sum_csr", segment_csr, "sum", True)
segment_add_csr = _fixed("segment_add_csr", segment_csr, "sum", True)
segment_mean_csr = _fixed("segment_mean_csr", segment_csr, "mean", True)
segment_min_csr = _fixed("segment_min_csr", segment_csr, "min", True)
segment_max_csr = _fixed("segment_max_csr", segment_csr, "max", True)

# The public functions that are not one registry call each (aliases, fixed reductions, the arg
# outputs): tests/python/test_pipeline.py checks the others against their rows.
_COMPOSITES = tuple(n for n in __all__ if n not in ("scatter", "segment_coo", "segment_csr"))
_registry_document(globals(), ["scatter", "segment_coo", "segment_csr"])
