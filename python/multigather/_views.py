"""A Lowering's strided views written as view ops (ONNX's names: Reshape, Slice, Transpose,
Expand, Concat), through an emitter: standard ONNX nodes for the model rewrite
(``multigather.onnx.lower_model``), torch ops for the Inductor rules (``_torch_inductor``).

A view is ``{shape, strides, offset}`` in elements of a C-contiguous source tensor of a known
shape (``_multigather.lowering_views``). It is expressible when its dimensions of size > 1 and
non-zero stride nest inside the source without overlap: the source is then reshaped so that each
such dimension is one dimension of the reshape (with filler dimensions between them), sliced to
the view's part, transposed into the view's order and broadcast along its stride-0 dimensions.
Anything else (overlapping windows) raises ``NotAView``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = ["NotAView", "ViewPlan", "plan_view"]


class NotAView(ValueError):
    """The view is not a reshape / slice / transpose / broadcast of its source."""


@dataclass
class ViewPlan:
    """How a view sits in its source, outermost first.

    extents: the source reshaped (row-major, as the source's own element order);
    owner: per extent, the view dimension it carries (None: a filler dimension, size 1 taken);
    starts: per extent, where the view's part begins;
    sizes: per extent, how much the view takes (the owner's size, or 1)."""

    source_shape: tuple[int, ...]
    shape: tuple[int, ...]
    extents: list[int]
    owner: list[int | None]
    starts: list[int]
    sizes: list[int]

    @property
    def covers_source(self) -> bool:
        """The view takes every source element once (a permutation of the source)."""
        return all(st == 0 and sz == ex for st, sz, ex in zip(self.starts, self.sizes, self.extents))

    @property
    def broadcast_dims(self) -> list[int]:
        return [d for d, n in enumerate(self.shape) if n > 1 and d not in self.owner]


def is_reshape(plan: ViewPlan) -> bool:
    """The view is its source reshaped: every element once, in the source's order."""
    real = [o for o in plan.owner if o is not None]
    return plan.covers_source and not plan.broadcast_dims and real == sorted(real)


def plan_view(source_shape: Sequence[int], shape: Sequence[int], strides: Sequence[int],
              offset: int = 0) -> ViewPlan:
    """The plan of a strided view of a C-contiguous source (elements). Raises NotAView."""
    n = math.prod(source_shape)
    real = sorted((d for d, size in enumerate(shape) if size > 1 and strides[d] != 0),
                  key=lambda d: strides[d])
    if any(strides[d] < 0 for d in real):
        raise NotAView(f"negative stride in view {tuple(shape)} strides {tuple(strides)}")
    inner: list[tuple[int, int | None]] = []  # (extent, owner), innermost first
    covered = 1
    for i, d in enumerate(real):
        stride = strides[d]
        if stride % covered:
            raise NotAView(f"stride {stride} of view dimension {d} does not nest")
        if stride > covered:
            inner.append((stride // covered, None))
        bound = strides[real[i + 1]] if i + 1 < len(real) else n
        if bound % stride or bound < stride:
            raise NotAView(f"stride {stride} of view dimension {d} does not nest in {bound}")
        inner.append((bound // stride, d))
        covered = bound
    if covered < n:
        if n % covered:
            raise NotAView(f"view does not nest in {n} elements")
        inner.append((n // covered, None))
    inner.reverse()
    extents = [e for e, _ in inner]
    owner = [o for _, o in inner]
    starts = [0] * len(extents)
    rest = offset
    for i in reversed(range(len(extents))):
        starts[i] = rest % extents[i]
        rest //= extents[i]
    if rest:
        raise NotAView(f"offset {offset} lies outside the source")
    sizes = [shape[o] if o is not None else 1 for o in owner]
    for st, sz, ex, o in zip(starts, sizes, extents, owner):
        if st + sz > ex:
            raise NotAView(f"view dimension {o} (size {sz}) overlaps its neighbours")
    return ViewPlan(tuple(source_shape), tuple(shape), extents, owner, starts, sizes)


Emit = Callable[..., str]  # emit(op_type, inputs, **attributes) -> output name
Const = Callable[[Sequence[int]], str]  # an int64 1-D constant's name


def read_view(emit: Emit, const: Const, source: str, plan: ViewPlan) -> str:
    """Emits the ops that read ``plan``'s view out of ``source``; returns the view's name."""
    x = source
    real_outer_first = [o for o in plan.owner if o is not None]
    squeezed = [1 if n > 1 and d in plan.broadcast_dims else n for d, n in enumerate(plan.shape)]
    if is_reshape(plan):  # one Reshape does it
        if list(plan.source_shape) != squeezed:
            x = emit("Reshape", [x, const(squeezed)])
        return emit("Expand", [x, const(plan.shape)]) if plan.broadcast_dims else x
    if list(plan.source_shape) != plan.extents:
        x = emit("Reshape", [x, const(plan.extents)])
    cut = [i for i, (st, sz, ex) in enumerate(zip(plan.starts, plan.sizes, plan.extents)) if st or sz != ex]
    if cut:
        x = emit("Slice", [x, const([plan.starts[i] for i in cut]),
                           const([plan.starts[i] + plan.sizes[i] for i in cut]), const(cut)])
    current = list(plan.sizes)
    view_order = sorted(real_outer_first)
    if real_outer_first != view_order:
        x = emit("Reshape", [x, const([plan.shape[d] for d in real_outer_first])])
        x = emit("Transpose", [x], perm=[real_outer_first.index(d) for d in view_order])
        current = [plan.shape[d] for d in view_order]
    if current != squeezed:
        x = emit("Reshape", [x, const(squeezed)])
    if plan.broadcast_dims:
        x = emit("Expand", [x, const(plan.shape)])
    return x


def write_view(emit: Emit, const: Const, view: str, plan: ViewPlan, base: str | None = None) -> str:
    """The inverse of read_view: the source tensor whose ``plan`` view is ``view``. The view must
    take each source element once, or, with ``base`` (a source-shaped tensor), once at most: the
    elements it does not take are base's. Returns the source's name."""
    if plan.broadcast_dims:
        raise NotAView("a broadcast view cannot be written back")
    if not plan.covers_source and base is None:
        raise NotAView("the view takes part of its source; writing it back needs a base")
    real_outer_first = [o for o in plan.owner if o is not None]
    view_order = sorted(real_outer_first)
    x = view
    if real_outer_first != view_order:
        x = emit("Reshape", [x, const([plan.shape[d] for d in view_order])])
        x = emit("Transpose", [x], perm=[view_order.index(d) for d in real_outer_first])
    if plan.covers_source:
        return emit("Reshape", [x, const(plan.source_shape)]) if tuple(plan.shape) != plan.source_shape or \
            real_outer_first != view_order else x
    x = emit("Reshape", [x, const(plan.sizes)])
    b = emit("Reshape", [base, const(plan.extents)])
    lo, hi = list(plan.starts), [s + z for s, z in zip(plan.starts, plan.sizes)]
    for d, extent in enumerate(plan.extents):
        if lo[d] == 0 and hi[d] == extent:
            continue
        pieces = []
        for a, z in ((0, lo[d]), (hi[d], extent)):
            if z > a:
                starts = [a if e == d else lo[e] for e in range(len(lo))]
                ends = [z if e == d else hi[e] for e in range(len(hi))]
                pieces.append(emit("Slice", [b, const(starts), const(ends)]))
        x = emit("Concat", pieces[:1] + [x] + pieces[1:] if lo[d] > 0 else [x] + pieces, axis=d)
        lo[d], hi[d] = 0, extent
    return emit("Reshape", [x, const(plan.source_shape)])


def array_emitter(reshape: Callable, broadcast: Callable, permute: Callable, narrow: Callable,
                  concat: Callable) -> Emit:
    """An emitter that computes the view ops on arrays of one library: reshape(x, shape),
    broadcast(x, shape), permute(x, perm), narrow(x, axis, start, length), concat(arrays, axis)
    (the torch rules of ``_torch_inductor``, the jax.numpy ones of ``_jax_xla``)."""
    def emit(op: str, inputs: list, **attrs) -> object:
        x = inputs[0]
        if op == "Reshape":
            return reshape(x, inputs[1])
        if op == "Expand":
            return broadcast(x, inputs[1])
        if op == "Transpose":
            return permute(x, attrs["perm"])
        if op == "Slice":
            starts, ends = inputs[1], inputs[2]
            axes = inputs[3] if len(inputs) > 3 else range(len(starts))
            for a, start, end in zip(axes, starts, ends):
                x = narrow(x, a, start, end - start)
            return x
        if op == "Concat":
            return concat(inputs, attrs["axis"])
        raise NotAView(f"no array form for {op}")
    return emit


def int_list(values: Sequence[int]) -> list:
    """The ``const`` of an array emitter: the values themselves."""
    return [int(v) for v in values]


def plan_of(source_shape: Sequence[int], view: dict) -> ViewPlan:
    """plan_view of a view as lowering_views gives it ({shape, strides, offset})."""
    return plan_view(list(source_shape), view["shape"], view["strides"], view["offset"])


def read_array_view(emit: Emit, source, view: dict):
    """``view`` ({shape, strides, offset}: lowering_views) read out of the array ``source``."""
    return read_view(emit, int_list, source, plan_of(source.shape, view))
