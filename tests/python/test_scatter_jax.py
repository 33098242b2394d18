"""The JAX scatters against JAX itself (CPU, 64-bit enabled): ``multigather.jax.at(x)[idx]``
.set / add / subtract / multiply / min / max against ``x.at[idx]`` of the same name, on seeded
random cases: 1 to 3 integer index arrays (adjacent or separated, broadcasting against each
other), full slices and Ellipsis, values broadcast to x[idx].shape, indices negative and out of
range in every mode (None, "drop", "fill", "clip", "promise_in_bounds") and with
wrap_negative_indices=False. Reductions compare exactly (integer data, or float data whose sums
and products are exact). ``set`` with duplicate targets is undefined in JAX: it compares with
JAX where the resolved targets are unique, and with a last-wins loop everywhere (the SPEC rule).
Arrays go in as jax arrays and must come back as jax arrays.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import multigather
from conftest import require

jax = require("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

SEEDS = range(40)
MODES = [None, "drop", "fill", "clip", "promise_in_bounds"]
METHODS = ["add", "subtract", "multiply", "min", "max"]


def random_index(rng, shape, spread):
    """A random x[idx] index: integer arrays (or ints) on an increasing subset of dims, full
    slices (sometimes an Ellipsis) elsewhere; values in [-spread*D, spread*D)."""
    rank = len(shape)
    k = int(rng.randint(1, min(rank, 3) + 1))
    dims = sorted(rng.choice(rank, size=k, replace=False).tolist())
    bshape = tuple(int(s) for s in rng.randint(1, 4, size=int(rng.randint(0, 3))))
    entries: list = [slice(None)] * rank
    for d in dims:
        n = shape[d]
        lo, hi = (-spread * n, spread * n) if n else (-2, 2)
        if rng.rand() < 0.2:
            entries[d] = int(rng.randint(lo, hi))
        else:  # each array broadcasts against the others: some of its dims are 1
            ishape = tuple(s if rng.rand() < 0.7 else 1 for s in bshape)
            entries[d] = rng.randint(lo, hi, size=ishape).astype(rng.choice([np.int32, np.int64]))
    if rng.rand() < 0.3 and dims[-1] < rank - 1:  # trailing slices as an Ellipsis
        entries = entries[:dims[-1] + 1] + [Ellipsis]
    return tuple(entries)


def jax_index(index):
    return tuple(jnp.asarray(e) if isinstance(e, np.ndarray) else e for e in index)


def resolve(v, n, mode, wrap):
    """JAX's resolution of index v into a dimension of size n: None when the update drops."""
    if wrap and v < 0:
        v += n
    if mode == "clip":
        return min(max(v, 0), n - 1) if n else None
    return v if 0 <= v < n else None


def targets(shape, index, mode, wrap):
    """For every position of x[idx] in row-major order: the x position it updates (None: dropped),
    with numpy's advanced-indexing layout (adjacent arrays in place, separated ones first)."""
    rank = len(shape)
    entries = list(index)
    if any(e is Ellipsis for e in entries):
        at = next(j for j, e in enumerate(entries) if e is Ellipsis)
        entries = entries[:at] + [slice(None)] * (rank - len(entries) + 1) + entries[at + 1:]
    entries += [slice(None)] * (rank - len(entries))
    dims = [d for d, e in enumerate(entries) if not isinstance(e, slice)]
    arrays = np.broadcast_arrays(*[np.asarray(entries[d]) for d in dims])
    bshape = arrays[0].shape
    rest = [d for d in range(rank) if d not in dims]
    adjacent = dims[-1] - dims[0] == len(dims) - 1
    out = []
    # result dims: (adjacent) rest-before, B, rest-after; (separated) B, rest
    before = [d for d in rest if d < dims[0]] if adjacent else []
    after = [d for d in rest if d not in before]
    order = [("r", d) for d in before] + [("b", j) for j in range(len(bshape))] + [("r", d) for d in after]
    sizes = [shape[d] if kind == "r" else bshape[d] for kind, d in order]
    for pos in itertools.product(*[range(s) for s in sizes]):
        b = tuple(p for (kind, _), p in zip(order, pos) if kind == "b")
        target = [0] * rank
        for (kind, d), p in zip(order, pos):
            if kind == "r":
                target[d] = p
        dropped = False
        for d, a in zip(dims, arrays):
            t = resolve(int(a[b]), shape[d], mode, wrap)
            if t is None:
                dropped = True
            else:
                target[d] = t
        out.append(None if dropped else tuple(target))
    return out, tuple(sizes)


def random_values(rng, slice_shape, dtype):
    """values broadcasting to x[idx].shape: a suffix of it, some dims 1 (or a scalar)."""
    cut = int(rng.randint(0, len(slice_shape) + 1))
    vshape = tuple(s if rng.rand() < 0.7 else 1 for s in slice_shape[cut:])
    return rng.randint(-3, 4, size=vshape).astype(dtype)


def case(seed, spread=2):
    rng = np.random.RandomState(seed)
    rank = int(rng.randint(1, 5))
    shape = tuple(int(s) for s in rng.randint(1, 5, size=rank))
    dtype = rng.choice([np.float32, np.float64, np.int32, np.int64])
    x = rng.randint(-5, 6, size=shape).astype(dtype)
    index = random_index(rng, shape, spread)
    slice_shape = jnp.zeros(shape)[jax_index(index)].shape  # jax's x[idx] clamps: any index
    return rng, x, index, random_values(rng, slice_shape, dtype)


def check_same(got, want):
    assert isinstance(got, jax.Array), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", SEEDS)
def test_at_reductions_vs_jax(seed, method, mode):
    rng, x, index, values = case(seed)
    if method == "multiply":  # keep products exact and small: values in {-1, 1, 2}
        values = rng.choice(np.array([-1, 1, 2], dtype=x.dtype), size=values.shape)
    xj, vj = jnp.asarray(x), jnp.asarray(values)
    want = getattr(xj.at[jax_index(index)], method)(vj, mode=mode)
    got = getattr(multigather.jax.at(xj)[jax_index(index)], method)(vj, mode=mode)
    check_same(got, want)
    # the same with numpy operands: a numpy result with jax's values
    got_np = getattr(multigather.jax.at(x)[index], method)(values, mode=mode)
    assert isinstance(got_np, np.ndarray)
    np.testing.assert_array_equal(got_np, np.asarray(want))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", SEEDS)
def test_at_set_vs_jax_on_unique_targets_and_last_wins(seed, mode):
    rng, x, index, values = case(seed, spread=1 if seed % 2 else 2)
    xj = jnp.asarray(x)
    got = multigather.jax.at(xj)[jax_index(index)].set(jnp.asarray(values), mode=mode)
    where, slice_shape = targets(x.shape, index, mode, True)
    # The SPEC rule: in row-major order of x[idx], the last update reaching an element wins.
    want = x.copy()
    broadcast = np.broadcast_to(values, slice_shape).reshape(-1)
    for t, v in zip(where, broadcast):
        if t is not None:
            want[t] = v
    np.testing.assert_array_equal(np.asarray(got), want)
    live = [t for t in where if t is not None]
    if len(live) == len(set(live)):  # JAX defines the result: compare with it
        check_same(got, xj.at[jax_index(index)].set(jnp.asarray(values), mode=mode))


@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
@pytest.mark.parametrize("seed", range(20))
def test_at_without_negative_wrap_vs_jax(seed, mode):
    _, x, index, values = case(seed)
    xj, vj = jnp.asarray(x), jnp.asarray(values)
    want = xj.at[jax_index(index)].add(vj, mode=mode, wrap_negative_indices=False)
    got = multigather.jax.at(xj)[jax_index(index)].add(vj, mode=mode, wrap_negative_indices=False)
    check_same(got, want)


def test_at_doc_examples_and_edges():
    x = jnp.arange(5.0)
    check_same(multigather.jax.at(x)[2].add(10.0), x.at[2].add(10.0))
    check_same(multigather.jax.at(x)[10].add(10.0), x)  # dropped
    check_same(multigather.jax.at(x)[20].add(10.0, mode="clip"), x.at[20].add(10.0, mode="clip"))
    check_same(multigather.jax.at(x)[-1].set(99.0), x.at[-1].set(99.0))
    check_same(multigather.jax.at(x)[-1].set(99.0, wrap_negative_indices=False, mode="drop"), x)
    # Duplicates all add; set keeps the last (JAX: implementation-defined).
    i = jnp.array([1, 1, 1, 3])
    check_same(multigather.jax.at(x)[i].add(jnp.array([1.0, 2.0, 3.0, 4.0])),
               x.at[i].add(jnp.array([1.0, 2.0, 3.0, 4.0])))
    np.testing.assert_array_equal(np.asarray(multigather.jax.at(x)[i].set(jnp.array([7.0, 8.0, 9.0, 4.0]))),
                                  [0, 9, 2, 4, 4])
    # min / max propagate NaN as XLA does.
    y = jnp.array([1.0, jnp.nan, 3.0])
    for method in ("min", "max"):
        check_same(getattr(multigather.jax.at(y)[jnp.array([0, 1, 2, 0])], method)(jnp.array([jnp.nan, 0.0, 2.0, 5.0])),
                   getattr(y.at[jnp.array([0, 1, 2, 0])], method)(jnp.array([jnp.nan, 0.0, 2.0, 5.0])))
    # Unsigned indices past the dimension drop; an empty x[idx] changes nothing.
    check_same(multigather.jax.at(x)[jnp.array([7, 2], dtype=jnp.uint32)].add(1.0),
               x.at[jnp.array([7, 2], dtype=jnp.uint32)].add(1.0))
    check_same(multigather.jax.at(x)[jnp.zeros((0,), jnp.int32)].add(1.0), x)
    # Integer wraparound as XLA's (two's complement), Python scalars take x's dtype.
    xi = jnp.arange(5, dtype=jnp.int8)
    check_same(multigather.jax.at(xi)[jnp.array([0, 0])].add(100), xi.at[jnp.array([0, 0])].add(100))
    # 2-D with a slice, an int and Ellipsis; values broadcast.
    m = jnp.arange(24.0).reshape(2, 3, 4)
    for idx in [(1, Ellipsis, jnp.array([0, 3])), (slice(None), jnp.array([[0], [2]]), 1),
                (Ellipsis, jnp.array([-1, 0])), (jnp.array([1, 0]), jnp.array([2, 2]))]:
        check_same(multigather.jax.at(m)[idx].add(jnp.float64(0.5)), m.at[idx].add(0.5))
        check_same(multigather.jax.at(m)[idx].multiply(jnp.float64(2.0)), m.at[idx].multiply(2.0))
    # The registry form: indices stacked on a last dimension.
    check_same(multigather.jax.at_add(m, jnp.array([[1, 2], [0, -1]]), jnp.float64(1.0), index_dims=[0, 2]),
               m.at[jnp.array([1, 0]), :, jnp.array([2, -1])].add(1.0))


def test_at_errors():
    x = jnp.arange(6.0).reshape(2, 3)
    at = multigather.jax.at
    with pytest.raises(IndexError, match="Too many indices: 2-dimensional array indexed with 3 regular indices"):
        at(x)[0, 1, 2].add(1.0)
    with pytest.raises(ValueError, match=r"index entry 1 is slice\(0, 2, None\): only full slices"):
        at(x)[0, 0:2].add(1.0)
    with pytest.raises(TypeError, match="boolean masks are not"):
        at(x)[jnp.array([True, False])].add(1.0)
    with pytest.raises(ValueError, match="no integer"):
        at(x)[:].add(1.0)
    with pytest.raises(ValueError, match=r"jax.at.add: Incompatible shapes for broadcasting: values shape \[4\] "
                                         r"and requested shape \[2,3\] \(x\[idx\].shape\)"):
        at(x)[jnp.array([0, 1])].add(jnp.zeros(4))
    with pytest.raises(ValueError, match="jax.at.add: attribute mode: 'wrap' is not one of drop, fill, clip, promise_in_bounds"):
        at(x)[0].add(1.0, mode="wrap")
    with pytest.raises(TypeError, match="values dtype float64 cannot be cast safely to x's dtype int32"):
        at(jnp.zeros(3, jnp.int32))[0].add(jnp.float64(1.5))
    with pytest.raises(TypeError, match="a Python float value for an x of dtype int32"):
        at(jnp.zeros(3, jnp.int32))[0].add(1.5)
    with pytest.raises(TypeError, match=r"jax.at.set: values dtype int64 must equal x dtype float64"):
        multigather.jax.at_set(x, np.array([[0]]), np.array([1]))
