"""The core operator's index resolution written in an array library's ops (torch for the
Inductor rules, jax.numpy for the XLA path under jax.jit): docs/spec.md section 1's resolve(v, n)
per coordinate, and the index arrays of an advanced-indexing gather or scatter."""

from __future__ import annotations

from typing import Any, Optional


class Namespace:
    """The ops resolve() needs: the module's where / remainder / clip, and the four below."""

    def __init__(self, module: Any):
        self.where, self.remainder, self.clip = module.where, module.remainder, module.clip

    def compact(self, coords: Any, logical: list) -> Any:
        """coords with a broadcast dimension taken once (where the library can see one)."""
        return coords

    def as_index(self, coords: Any) -> Any:
        raise NotImplementedError

    def zero(self) -> Any:
        raise NotImplementedError

    def arange(self, n: int) -> Any:
        raise NotImplementedError


class Resolved:
    """The index arrays of an advanced-indexing gather (aten.index, x[...]) for the first
    `len(index)` dimensions (the later ones are taken whole: no coordinate, no broadcast), each
    broadcastable to G's first dimensions; `valid` (fill / drop): where every coordinate was in range (broadcastable to G);
    `axis_index`: per axis, its resolved coordinate (broadcastable to G)."""

    def __init__(self, index: list, valid: Optional[Any], axis_index: dict):
        self.index, self.valid, self.axis_index = index, valid, axis_index


def logical_shape(indices_shape, axes) -> list:
    """The core indices' shape without their coordinates: indices_shape with its last dimension
    divided by the number of axes (at least 1)."""
    c = max(len(axes), 1)
    return list(indices_shape[:-1]) + [indices_shape[-1] // c]


def indexed_dims(x_shape, axes, g_shape, logical) -> int:
    """How many leading dimensions of the core input an advanced-indexing gather indexes; the
    dimensions after them are taken whole (neither an axis nor moved by the indices, and of G's
    size), so each lookup reads a block of their product's elements."""
    m = len(x_shape)
    while m > 0 and (m - 1) not in axes and x_shape[m - 1] == g_shape[m - 1] and logical[m - 1] == 1:
        m -= 1
    return m


def resolve(xp: Namespace, x_shape, indices: Any, axes, g_shape, mode: str, negative: bool,
            wrap_negatives: bool = False, checked: bool = False) -> Resolved:
    """resolve(v, n) of docs/spec.md section 1 per coordinate of the core indices, in xp's ops.
    In error mode a value stays out of range for the compiler's bounds check; an index op wraps
    one negative turn itself (wrap_negatives: done here, for scatters, which do not). A negative
    value of a row without the negative rule is sent to n, unless the consumer's own bounds check
    refuses it as it is (checked: Inductor's gather and scatter, which do not wrap)."""
    r = len(x_shape)
    logical = logical_shape(indices.shape, axes)
    coords = xp.as_index(xp.compact(indices.reshape(logical + [max(len(axes), 1)]), logical))
    index, valid, axis_index = [], None, {}
    for e in range(r):
        if e in axes:
            n = x_shape[e]
            v = coords[..., list(axes).index(e)]
            if mode == "wrap":
                v = xp.remainder(v, n)
            elif mode == "clamp":
                if negative:
                    v = xp.where(v < 0, v + n, v)
                v = xp.clip(v, 0, n - 1)
            elif mode == "error":
                if not negative:
                    if not checked:
                        v = xp.where(v < 0, n, v)  # out of range: the bounds check sees it
                elif wrap_negatives:
                    v = xp.where(v < 0, v + n, v)
            else:  # fill, drop: out of range is flagged, read at 0
                if negative:
                    v = xp.where(v < 0, v + n, v)
                ok = (v >= 0) & (v < n)
                valid = ok if valid is None else valid & ok
                v = xp.where(ok, v, 0)
            index.append(v)
            axis_index[e] = v
        elif x_shape[e] == 1:
            index.append(xp.zero())
        else:
            shape = [1] * r
            shape[e] = g_shape[e]
            index.append(xp.arange(g_shape[e]).reshape(shape))
    # Dimensions after the last one that needs a tensor are taken whole (a plain slice).
    m = indexed_dims(x_shape, axes, g_shape, logical)
    index = [t if t.ndim == 0 else t.reshape(list(t.shape[:m])) for t in index[:m]]
    return Resolved(index, valid, axis_index)


def fill_scalar(text: str, is_bool: bool, is_float: bool):
    """lowering_views' fill_value (text) as a Python scalar of the input's kind."""
    if is_bool:
        return text.lower() in ("1", "true")
    if is_float:
        return float(text)
    return int(float(text)) if "." in text or "e" in text.lower() else int(text)
