"""multigather.jax and multigather.stablehlo against JAX (CPU, 64-bit enabled) on random cases:
jnp.take in modes fill / clip / wrap (default fill values included), jnp.take_along_axis in
modes fill / clip / promise_in_bounds, and jax.lax.gather (StableHLO gather, mode CLIP: the
StableHLO spec's clamp) with random dimension numbers: point gathers, windowed slices, partial
non-indexed slices, reordered start_index_map, index_vector_dim anywhere, and batching dims.
Arrays go in as jax arrays and must come back as jax arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import multigather
from conftest import require
from framework_cases import framework_settings, random_data, random_indices, seeds

jax = require("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

# Dimension sizes, 0 one time in ten (empty axes have their own rules in jax).
SIZES = st.sampled_from([1, 2, 3, 4, 0, 2, 3, 4, 1, 3])
JAX_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.int32,
                                    np.int64, np.uint8, np.uint32, np.bool_, np.complex64)]


def same(got, expected):
    assert isinstance(got, jax.Array)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()


@framework_settings
@given(st.lists(SIZES, min_size=1, max_size=3).map(tuple),
       st.lists(st.integers(0, 3), max_size=3).map(tuple), st.data(),
       st.sampled_from(JAX_DTYPES), st.sampled_from([None, "fill", "clip", "wrap"]),
       st.booleans(), seeds)
def test_take_matches_jax(a_shape, i_shape, data, dtype, mode, oob, seed):
    rng = np.random.default_rng(seed)
    a = jnp.asarray(random_data(rng, a_shape, dtype))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    size = a.size if axis is None else a.shape[axis]
    indices = jnp.asarray(random_indices(rng, i_shape, size, np.int32, out_of_range=oob))
    fill_value = data.draw(st.sampled_from([None, None, 1])) if mode in (None, "fill") else None
    kwargs = dict(axis=axis, mode=mode, fill_value=fill_value)
    try:
        expected = jnp.take(a, indices, **kwargs)
    except IndexError:
        event("both raise IndexError")
        with pytest.raises(IndexError):
            multigather.jax.take(a, indices, **kwargs)
        return
    event(f"mode {mode}")
    got = multigather.jax.take(a, indices, **kwargs)
    if a.size == 0:
        # JAX returns a wrongly shaped empty array when `a` is empty (jnp.take(zeros((0, 2)),
        # zeros((0, 3), int), axis=0).shape == (0, 2)); multigather keeps numpy's documented
        # shape (0, 3, 2), which jax.numpy.take claims to follow.
        event("empty a: numpy's shape, not jax's")
        expected = np.take(np.asarray(a), np.asarray(indices), axis=axis, mode="clip")
        assert isinstance(got, jax.Array) and got.shape == expected.shape
        return
    same(got, expected)


@framework_settings
@given(st.lists(SIZES, min_size=1, max_size=4).map(tuple), st.integers(0, 4),
       st.data(), st.sampled_from(JAX_DTYPES),
       st.sampled_from([None, "fill", "clip", "promise_in_bounds"]), st.booleans(), seeds)
def test_take_along_axis_matches_jax(a_shape, j, data, dtype, mode, oob, seed):
    rng = np.random.default_rng(seed)
    a = jnp.asarray(random_data(rng, a_shape, dtype))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    i_shape = tuple(j if d == axis % a.ndim else data.draw(st.sampled_from([n, 1]))
                    for d, n in enumerate(a_shape))
    negative = mode != "promise_in_bounds"  # jax leaves negatives unwrapped there
    indices = jnp.asarray(random_indices(rng, i_shape, a_shape[axis], np.int64,
                                         negative=negative or oob, out_of_range=oob))
    if mode == "promise_in_bounds" and oob:
        event("promise broken: XLA clamps")
    expected = jnp.take_along_axis(a, indices, axis=axis, mode=mode)
    same(multigather.jax.take_along_axis(a, indices, axis=axis, mode=mode), expected)


@st.composite
def gather_dimension_numbers(draw):
    """Random valid StableHLO gather dimension numbers and shapes."""
    r = draw(st.integers(1, 4))
    operand_shape = tuple(draw(st.integers(1, 4)) for _ in range(r))
    dims = list(range(r))
    batching = sorted(draw(st.lists(st.sampled_from(dims), unique=True, max_size=1)))
    free = [d for d in dims if d not in batching]
    start_index_map = draw(st.permutations(free))[: draw(st.integers(0, len(free)))]
    collapsed = sorted(d for d in start_index_map if draw(st.booleans()))
    slice_sizes = []
    for d in dims:
        if d in batching or d in collapsed:
            slice_sizes.append(1)
        else:
            slice_sizes.append(draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1,
                                                operand_shape[d])))
    batch_shape = list(draw(st.lists(st.integers(1, 3), max_size=2)))
    start_batching = []
    for d in batching:  # a start_indices batch dim paired with each operand batching dim
        pos = draw(st.integers(0, len(batch_shape)))
        batch_shape.insert(pos, operand_shape[d])
        start_batching = [p + (p >= pos) for p in start_batching] + [pos]
    index_vector_dim = draw(st.integers(0, len(batch_shape)))
    if len(start_index_map) != 1 and index_vector_dim == len(batch_shape):
        index_vector_dim = len(batch_shape) - 1 if batch_shape else 0
    start_shape = list(batch_shape)
    if index_vector_dim < len(batch_shape) + 1 and not (
            len(start_index_map) == 1 and index_vector_dim == len(batch_shape)
            and draw(st.booleans())):
        start_shape.insert(index_vector_dim, len(start_index_map))
    else:
        index_vector_dim = len(start_shape)  # implicit size-1 index vector
    start_batching = [p + (p >= index_vector_dim and index_vector_dim < len(start_shape))
                      for p in start_batching]
    offset_count = r - len(collapsed) - len(batching)
    result_rank = len(batch_shape) + offset_count
    offset_dims = sorted(draw(st.permutations(range(result_rank)))[:offset_count])
    return dict(operand_shape=operand_shape, start_shape=tuple(start_shape),
                dn=lax.GatherDimensionNumbers(
                    offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
                    start_index_map=tuple(start_index_map),
                    operand_batching_dims=tuple(batching),
                    start_indices_batching_dims=tuple(start_batching)),
                index_vector_dim=index_vector_dim, slice_sizes=tuple(slice_sizes))


@framework_settings
@given(gather_dimension_numbers(), st.sampled_from([np.float32, np.int8, np.float16]),
       st.sampled_from([np.int32, np.int64, np.uint32]), seeds)
def test_stablehlo_gather_matches_lax_gather(case, dtype, index_dtype, seed):
    rng = np.random.default_rng(seed)
    operand = jnp.asarray(random_data(rng, case["operand_shape"], np.dtype(dtype)))
    lo = 0 if np.dtype(index_dtype).kind == "u" else -6
    start = rng.integers(lo, 7, case["start_shape"]).astype(index_dtype)
    dn, ivd = case["dn"], case["index_vector_dim"]
    if ivd != len(case["start_shape"]) - 0 and ivd < len(case["start_shape"]):
        pass
    # lax.gather puts the index vector last: move index_vector_dim there for JAX.
    jax_start = np.moveaxis(start, ivd, -1) if ivd < start.ndim else start[..., None]
    sb = tuple(p - (p > ivd) if ivd < start.ndim else p for p in dn.start_indices_batching_dims)
    jax_dn = dn._replace(start_indices_batching_dims=sb)
    expected = lax.gather(operand, jnp.asarray(jax_start), jax_dn, case["slice_sizes"],
                          mode=lax.GatherScatterMode.CLIP)
    event("windowed" if any(s > 1 for d, s in enumerate(case["slice_sizes"])
                            if d in dn.start_index_map) else "point")
    if dn.operand_batching_dims:
        event("batching dims")
    got = multigather.stablehlo.gather(
        operand, jnp.asarray(start), offset_dims=dn.offset_dims,
        collapsed_slice_dims=dn.collapsed_slice_dims, start_index_map=dn.start_index_map,
        index_vector_dim=ivd, slice_sizes=case["slice_sizes"],
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.start_indices_batching_dims)
    same(got, expected)


def test_stablehlo_spec_example():
    """The gather example of the StableHLO spec (openxla.org/stablehlo/spec#gather)."""
    operand = np.array([[[[1, 2], [3, 4], [5, 6], [7, 8]],
                         [[9, 10], [11, 12], [13, 14], [15, 16]],
                         [[17, 18], [19, 20], [21, 22], [23, 24]]],
                        [[[25, 26], [27, 28], [29, 30], [31, 32]],
                         [[33, 34], [35, 36], [37, 38], [39, 40]],
                         [[41, 42], [43, 44], [45, 46], [47, 48]]]])
    start = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                      [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]])
    got = multigather.stablehlo.gather(
        operand, start, offset_dims=[3, 4], collapsed_slice_dims=[1],
        operand_batching_dims=[0], start_indices_batching_dims=[1], start_index_map=[2, 1],
        index_vector_dim=3, slice_sizes=[1, 1, 2, 2])
    expected = np.array([[[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                          [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
                         [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
                          [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]])
    np.testing.assert_array_equal(got, expected)
