"""Hypothesis strategies shared by the framework differential tests: random shapes, dtypes and
index values (in range, negative, out of range) for block, element and ND gathers."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

#: Examples per framework differential test (each example runs the framework too).
FRAMEWORK_EXAMPLES = int(os.environ.get("MULTIGATHER_FRAMEWORK_EXAMPLES", "200"))
framework_settings = settings(max_examples=FRAMEWORK_EXAMPLES)

DATA_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.uint8,
                                     np.int32, np.int64, np.bool_, np.complex64)]


def random_data(rng: np.random.Generator, shape, dtype: np.dtype) -> np.ndarray:
    """Distinct-ish values of ``dtype`` so that a wrong element shows."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    values = rng.integers(-100, 100, n) if dtype.kind in "ifc" else rng.integers(0, 100, n)
    return values.astype(dtype).reshape(shape)


def random_indices(rng, shape, size: int, dtype=np.int64, *, negative=True, out_of_range=False):
    """Indices for an axis of ``size``: [-size, size) (or [0, size) without ``negative``),
    widened by up to ``size + 2`` on both sides with ``out_of_range``."""
    lo = -size if negative else 0
    hi = size - 1
    if out_of_range:
        lo, hi = lo - size - 2, hi + size + 2
    if hi < lo:
        hi = lo
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def nd_indices(data, rng, x_shape, index_dtype=np.int64, *, negative=True, out_of_range=False):
    """(batch_dims b, indices B ++ J ++ [k]) for a GatherND-style call on ``x_shape``: random
    b < rank, 1 <= k <= rank - b, J of rank 0 to 2; ``data`` is hypothesis' st.data()."""
    r = len(x_shape)
    b = data.draw(st.integers(0, r - 1))
    k = data.draw(st.integers(1, r - b))
    j_shape = data.draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    coords = [random_indices(rng, tuple(x_shape[:b]) + j_shape, x_shape[b + j], index_dtype,
                             negative=negative, out_of_range=out_of_range) for j in range(k)]
    return b, np.stack(coords, axis=-1).astype(index_dtype)


shape_dims = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)
nonempty_shape = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2**32 - 1)
