"""multigather.numpy against numpy itself, on random cases: numpy.take in its three modes (with
and without an axis), numpy.take_along_axis (broadcasting both ways, axis=None), and numpy
advanced indexing expressed as one gather_multiaxis call (adjacent and separated index arrays:
the recipe of docs/semantics.md section 16). Out-of-range cases must raise IndexError exactly
when numpy does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import multigather
from framework_cases import (DATA_DTYPES, framework_settings, nonempty_shape, random_data,
                             random_indices, seeds, shape_dims)


def same(got, expected):
    assert type(got) is np.ndarray
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@framework_settings
@given(nonempty_shape, shape_dims, st.sampled_from(DATA_DTYPES),
       st.sampled_from(["raise", "wrap", "clip"]), st.one_of(st.none(), st.integers(-3, 2)),
       st.booleans(), seeds)
def test_take_matches_numpy(a_shape, i_shape, dtype, mode, axis, out_of_range, seed):
    rng = np.random.default_rng(seed)
    a = random_data(rng, a_shape, dtype)
    if axis is not None and not -a.ndim <= axis < a.ndim:
        axis = axis % a.ndim
    size = a.size if axis is None else a.shape[axis]
    indices = random_indices(rng, i_shape, size, rng.choice([np.int32, np.int64, np.int8]),
                             out_of_range=out_of_range)
    try:
        expected = np.take(a, indices, axis=axis, mode=mode)
    except IndexError:
        event("both raise IndexError")
        with pytest.raises(IndexError):
            multigather.numpy.take(a, indices, axis=axis, mode=mode)
        return
    event(f"mode {mode}: both compute")
    same(multigather.numpy.take(a, indices, axis=axis, mode=mode), expected)
    out = np.empty_like(expected)
    assert multigather.numpy.take(a, indices, axis=axis, mode=mode, out=out) is out
    same(out, expected)


@framework_settings
@given(nonempty_shape, st.integers(0, 4), st.data(), st.sampled_from(DATA_DTYPES), st.booleans(),
       seeds)
def test_take_along_axis_matches_numpy(a_shape, j, data, dtype, out_of_range, seed):
    rng = np.random.default_rng(seed)
    a = random_data(rng, a_shape, dtype)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    i_shape = []
    for d, n in enumerate(a_shape):
        if d == axis % a.ndim:
            i_shape.append(j)
        else:  # broadcasting both ways: equal, indices 1, or input 1 with the indices larger
            i_shape.append(data.draw(st.sampled_from([n, 1] + ([3] if n == 1 else []))))
    indices = random_indices(rng, tuple(i_shape), a.shape[axis], out_of_range=out_of_range)
    try:
        expected = np.take_along_axis(a, indices, axis=axis)
    except IndexError:
        event("both raise IndexError")
        with pytest.raises(IndexError):
            multigather.numpy.take_along_axis(a, indices, axis=axis)
        return
    event("both compute")
    same(multigather.numpy.take_along_axis(a, indices, axis=axis), expected)


@framework_settings
@given(nonempty_shape, st.integers(0, 5), seeds)
def test_take_along_axis_none_flattens(a_shape, n, seed):
    rng = np.random.default_rng(seed)
    a = random_data(rng, a_shape, np.dtype(np.float32))
    indices = random_indices(rng, (n,), a.size)
    same(multigather.numpy.take_along_axis(a, indices, axis=None),
         np.take_along_axis(a, indices, axis=None))


def test_take_mode_examples_from_the_numpy_docs():
    a = np.array([4, 3, 5, 7, 6, 8])
    same(multigather.numpy.take(a, [0, 1, 4]), np.array([4, 3, 6]))
    same(multigather.numpy.take(a, [[0, 1], [2, 3]]), np.array([[4, 3], [5, 7]]))
    same(multigather.numpy.take(a, [-1, 6, 13], mode="wrap"), np.array([8, 4, 3]))
    same(multigather.numpy.take(a, [-1, 6, 13], mode="clip"), np.array([4, 8, 8]))
    # Positions are the caller's (not the lowered view's); the C++ registry prefixes the op.
    with pytest.raises(IndexError, match=r"^(numpy.take: )?indices\[2\] = 13 is out of range "
                                         r"for (axis 0|the flattened input) of size 6 "
                                         r"\(valid range \[-6, 6\)\)$"):
        multigather.numpy.take(a, [0, 1, 13])
    with pytest.raises(IndexError, match=r"^(numpy.take: )?indices\[1,0\] = 6 is out of range "
                                         r"for axis 1 of size 3 \(valid range \[-3, 3\)\)$"):
        multigather.numpy.take(a.reshape(2, 3), [[0, 1], [6, 1]], axis=1)


@framework_settings
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple), st.data(), seeds)
def test_advanced_indexing_as_one_gather_multiaxis_call(x_shape, data, seed):
    """x[..., i0, ..., i1, ...]: index arrays broadcast to B; adjacent index arrays put B in
    place, separated ones put B first (numpy's rule). One call: input [1]*m ++ x, logical
    indices B ++ [1]*r with the coordinates stacked last, axes m + (indexed dims)."""
    rng = np.random.default_rng(seed)
    x = random_data(rng, x_shape, np.dtype(np.int32))
    r = x.ndim
    dims = sorted(data.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True)))
    b_shape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple))
    arrays = [random_indices(rng, b_shape, x_shape[d]) for d in dims]
    key = [slice(None)] * r
    for d, arr in zip(dims, arrays):
        key[d] = arr
    expected = x[tuple(key)]

    m, k = len(b_shape), len(dims)
    coords = np.stack(arrays, axis=-1).reshape(b_shape + (1,) * (r - 1) + (k,))
    got = multigather.gather_multiaxis(x.reshape((1,) * m + x_shape), coords,
                                       [m + d for d in dims])
    # got has shape B ++ x.shape with indexed dims of size 1: drop them.
    got = got.reshape(b_shape + tuple(s for d, s in enumerate(x_shape) if d not in dims))
    adjacent = dims == list(range(dims[0], dims[0] + k))
    if adjacent:  # numpy puts B where the indexed dims were
        got = np.moveaxis(got, list(range(m)), list(range(dims[0], dims[0] + m)))
    same(got, expected)
    stacked = np.stack(arrays, axis=-1)  # the registry's own adapter
    same(multigather.numpy.advanced_index(x, stacked, index_dims=dims), expected)
