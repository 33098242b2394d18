"""Lowerings: how a framework gather becomes one gather_multiaxis call.

A Lowering is shapes only (no data): the leading part of the input to read, the views of input
and indices (unit dimensions inserted, dimensions merged), the axes, the index policy, and the
shape the output takes at the end. The C++ extension applies it to the caller's arrays without
copies (python/src/module.cpp), ``explain`` prints it, ``output_shape`` reads it. The recipes
are those of research/semantics.md section 16 and seeds/Multigather.md ("Operator mappings").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from . import _interop

Shape = tuple[int, ...]
_POSITION = re.compile(r"^indices\[([0-9,]*)\]( = .*)$", re.S)


@dataclass(frozen=True)
class Lowering:
    """One framework call as one gather_multiaxis call."""

    op: str
    input_shape: Shape  # the input view the core reads (after input_part)
    indices_shape: Shape  # the indices view (actual shape: coordinates folded into the last dim)
    axes: tuple[int, ...]
    result_shape: Shape  # the framework's output shape
    index_mode: str = "error"
    negative_indices: bool = True
    fill_value: Any = 0
    input_part: Optional[Shape] = None  # read input[:p0, :p1, ...] only (torch.gather's rule)
    rule: str = ""  # the framework's formula, one line
    notes: tuple[str, ...] = field(default_factory=tuple)
    # An index pre-pass (StableHLO windows): the framework's indices -> the core's indices.
    prepare_indices: Optional[Callable[[Any], Any]] = None

    def replace(self, **changes: Any) -> "Lowering":
        """A copy with some fields changed."""
        return replace(self, **changes)

    def run(self, input: Any, indices: Any, out: Any = None) -> Any:
        """Applies the lowering to framework arrays; returns the input framework's array.
        A callable fill_value is a default that depends on the input's dtype."""
        fill_value = self.fill_value
        if callable(fill_value):
            fill_value = fill_value(input.dtype if hasattr(input, "dtype") else None)
        if self.prepare_indices is not None:
            indices = self.prepare_indices(indices)
        try:
            return self._call(input, indices, fill_value, out)
        except IndexError as error:
            raise IndexError(self._user_position(str(error), shape_of(indices))) from None

    def _user_position(self, message: str, indices_shape: Shape) -> str:
        """Rewrites "indices[p] = v ..." from the lowered indices view's position to the
        caller's (the view is a row-major reshape of the caller's indices)."""
        match = _POSITION.match(message)
        if not match or self.prepare_indices is not None:
            return message
        position = [int(p) for p in match.group(1).split(",") if p]
        if len(position) != len(self.indices_shape) or numel(indices_shape) == 0:
            return message
        flat_index = 0
        for p, n in zip(position, self.indices_shape):
            flat_index = flat_index * n + p
        user = []
        for n in reversed(indices_shape):
            user.append(flat_index % n)
            flat_index //= n
        return f"indices[{','.join(str(p) for p in reversed(user))}]{match.group(2)}"

    def _call(self, input: Any, indices: Any, fill_value: Any, out: Any) -> Any:
        return _interop.call(
            input,
            indices,
            self.axes,
            index_mode=self.index_mode,
            negative_indices=self.negative_indices,
            fill_value=fill_value,
            out=out,
            input_part=self.input_part,
            input_shape=self.input_shape,
            indices_shape=self.indices_shape,
            result_shape=self.result_shape,
        )

    def explain(self, input_shape: Sequence[int], indices_shape: Sequence[int]) -> str:
        lines = [f"{self.op}: input {dims(input_shape)}, indices {dims(indices_shape)}"]
        if self.rule:
            lines.append(f"  rule: {self.rule}")
        if self.input_part is not None:
            lines.append(f"  read the leading part input[{', '.join(':' + str(p) for p in self.input_part)}]")
        lines.append(
            f"  gather_multiaxis(input {dims(self.input_shape)}, indices {dims(self.indices_shape)}, "
            f"axes {dims(self.axes)}, index_mode={self.index_mode}, "
            f"negative_indices={self.negative_indices}"
            + (f", fill_value={_fill_text(self.fill_value)}" if self.index_mode == "fill" else "")
            + ")"
        )
        lines.append(f"  output reshaped to {dims(self.result_shape)}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def _fill_text(value: Any) -> str:
    return "(by dtype: NaN, int min, uint max, True)" if callable(value) else str(value)


def dims(values: Sequence[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def normalize_axis(op: str, name: str, axis: int, rank: int) -> int:
    """``axis`` in [-rank, rank) made non-negative, else ValueError naming op and rank."""
    if not -rank <= axis < rank:
        raise ValueError(f"{op}: {name} {axis} is out of range [{-rank}, {rank}) for rank {rank}")
    return axis % rank


def block(op: str, x: Shape, i: Shape, axis: int, batch_dims: int = 0, **policy) -> Lowering:
    """Block gather (ONNX Gather, numpy.take with an axis, tf.gather, Core ML gather):
    out = x[:a] ++ i[b:] ++ x[a+1:]; out[p, q, s] = x[p, i[p_batch, q], s]."""
    r, q, a, b = len(x), len(i), axis, batch_dims
    input_view = x[: a + 1] + (1,) * (q - b) + x[a + 1 :]
    indices_view = i[:b] + (1,) * (a - b + 1) + i[b:] + (1,) * (r - a - 1)
    return Lowering(op, input_view, indices_view, (a,), x[:a] + i[b:] + x[a + 1 :], **policy)


def elements(op: str, x: Shape, i: Shape, axis: int, *, leading_part: bool = False,
             **policy) -> Lowering:
    """Element gather (GatherElements, torch.gather, take_along_axis): out[p, j, s] =
    x[p, i[p, j, s], s] with out.shape = broadcast (or, with ``leading_part``, i.shape reading
    the leading part of x)."""
    part = None
    if leading_part:
        part = tuple(x[d] if d == axis else i[d] for d in range(len(x)))
        x = part
    lowering = Lowering(op, x, i, (axis,), (), **policy)
    result = _output_shape(lowering)
    return Lowering(op, x, i, (axis,), result, input_part=part, **policy)


def flat(op: str, x: Shape, i: Shape, **policy) -> Lowering:
    """Flat gather (torch.take, numpy.take with axis=None): out[j] = x.flatten()[i[j]],
    out.shape = i.shape."""
    return Lowering(op, (numel(x),), (numel(i),), (0,), i, **policy)


def nd(op: str, x: Shape, i: Shape, batch_dims: int, **policy) -> Lowering:
    """ND gather (ONNX GatherND, tf.gather_nd): with x = B ++ Xk ++ T and i = B ++ J ++ [k],
    out[b, j, t] = x[b, i[b, j, :], t], out.shape = B ++ J ++ T. ValueError unless
    1 <= k <= rank(x) - b."""
    b, k = batch_dims, i[-1]
    if not 1 <= k <= len(x) - b:
        raise ValueError(f"{op}: indices.shape[-1] = {k} must be in [1, rank - batch_dims] = "
                         f"[1, {len(x) - b}]")
    B, J, T = i[:b], i[b:-1], x[b + k :]
    input_view = x[: b + k] + (1,) * len(J) + T
    logical = B + (1,) * k + J + (1,) * len(T)
    indices_view = logical[:-1] + (logical[-1] * k,)
    return Lowering(op, input_view, indices_view, tuple(range(b, b + k)), B + J + T, **policy)


def _output_shape(lowering: Lowering) -> Shape:
    from . import _multigather as _core

    return _core.shape_info(list(lowering.input_shape), list(lowering.indices_shape),
                            list(lowering.axes))["output_shape"]


def kernel_output_shape(lowering: Lowering) -> Shape:
    """The output shape of the core call itself (before the final reshape); raises the core's
    ValueError when the lowered shapes break a rule."""
    return _output_shape(lowering)


def shape_of(array: Any) -> Shape:
    """The shape of any framework's array (lists and scalars through numpy)."""
    shape = getattr(array, "shape", None)
    if shape is None:
        import numpy as np

        shape = np.shape(array)
    return tuple(int(s) for s in shape)
