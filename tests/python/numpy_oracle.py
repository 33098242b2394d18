"""An independent formulation of gather_multiaxis with numpy fancy indexing (the test oracle).

It shares no code with multigather: it builds one integer index array per input dimension,
broadcast to the output shape, resolves the coordinates with Python integers (object arrays, so
that uint64 and int64 values never wrap), and reads ``input[tuple(index_arrays)]``. Source:
docs/spec.md section 1.
"""

from __future__ import annotations

import numpy as np


class OracleIndexError(Exception):
    """An index that index_mode "error" (or an empty axis) rejects."""


def output_shape(input_shape, indices_shape, axes):
    r = len(input_shape)
    c = max(len(axes), 1)
    axes = [a % r for a in axes] if r else []
    logical = list(indices_shape)
    if r:
        logical[-1] //= c
    out = []
    for d in range(r):
        if d in axes:
            out.append(logical[d])
        else:
            i, l = input_shape[d], logical[d]
            out.append(l if i == 1 else i)
    return tuple(out), tuple(logical), axes


def gather_multiaxis(input, indices, axes, *, index_mode="error", negative_indices=True,
                     fill_value=0):
    """numpy result of gather_multiaxis; raises OracleIndexError where the SPEC says error."""
    input = np.asarray(input)
    indices = np.asarray(indices)
    r = input.ndim
    shape, logical, axes = output_shape(input.shape, indices.shape, axes)
    c = max(len(axes), 1)
    if r == 0:
        return input.copy()
    n_out = int(np.prod(shape))
    coords = indices.reshape(logical + (c,)) if indices.size else np.zeros(logical + (c,), np.int64)
    signed = indices.dtype.kind == "i"
    index_arrays = []
    fill_mask = np.zeros(shape, bool)
    for d in range(r):
        view_shape = [1] * r
        if d in axes:
            v = np.broadcast_to(coords[..., axes.index(d)].astype(object), shape)
            n = input.shape[d]
            if n_out and n == 0 and index_mode != "fill":
                raise OracleIndexError(f"axis {d} is empty")
            if index_mode == "wrap":
                v = v % n if n else v
                ok = np.ones(shape, bool) if n else np.zeros(shape, bool)
            else:
                if negative_indices and signed:
                    v = np.where(v < 0, v + n, v)
                ok = (v >= 0) & (v < n)
                if index_mode == "clamp" and n:
                    v = np.minimum(np.maximum(v, 0), n - 1)
                    ok = np.ones(shape, bool)
            if index_mode == "error" and not ok.all():
                raise OracleIndexError(f"axis {d}")
            fill_mask |= ~ok
            index_arrays.append(np.where(ok, v, 0).astype(np.int64))
        else:
            if input.shape[d] == 1:
                index_arrays.append(np.zeros([1] * r, np.int64))
            else:
                view_shape[d] = shape[d]
                index_arrays.append(np.arange(shape[d]).reshape(view_shape))
    if n_out == 0:
        return np.empty(shape, input.dtype)
    if input.size == 0:  # every lookup filled (an empty axis in fill mode)
        out = np.empty(shape, input.dtype)
    else:
        out = input[tuple(np.broadcast_to(a, shape) for a in index_arrays)]
    if fill_mask.any():
        out = out.copy()
        out[fill_mask] = np.asarray(fill_value).astype(input.dtype)
    return out
