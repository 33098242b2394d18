"""Differential tests of multigather.scatter_multiaxis (docs/spec.md section 4) against
independent numpy formulations that share no code with multigather:

- a plain Python loop over the positions of G in row-major order (targets resolved with Python
  integers, each combine done by a numpy ufunc on 0-d arrays of the dtype), for small cases;
- ``np.add.at`` / ``np.multiply.at`` / ``np.minimum.at`` / ``np.maximum.at`` (unbuffered: every
  update combines, in order) on the same targets, for the reductions.

Hypothesis draws ranks 0-5, input dtypes (float16 / bfloat16 / complex / bool / integers),
index dtypes, the index modes error / clamp / wrap / drop with and without the negative rule,
broadcasting of input, indices and updates, strided and reversed views, ``out=`` and in place.
Also: determinism at several thread counts, the adjoint identity with gather_multiaxis (and
torch.autograd where torch is installed), and the errors.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multigather

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")

EXAMPLES = int(os.environ.get("MULTIGATHER_SCATTER_EXAMPLES", "400"))
DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8,
                                np.uint16, np.int32, np.int64, np.bool_, np.complex64,
                                np.complex128)]
INDEX_DTYPES = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                      np.int64, np.uint64)]
REDUCTIONS = ["none", "add", "mul", "min", "max"]
MODES = ["error", "clamp", "wrap", "drop"]


class OracleIndexError(Exception):
    pass


def gather_shape(input_shape, indices_shape, axes):
    r = len(input_shape)
    c = max(len(axes), 1)
    axes = [a % r for a in axes]
    logical = list(indices_shape)
    if r:
        logical[-1] //= c
    g = []
    for d in range(r):
        if d in axes:
            g.append(logical[d])
        else:
            g.append(logical[d] if input_shape[d] == 1 else input_shape[d])
    return tuple(g), tuple(logical), axes


def targets(input_shape, indices, axes, mode, negative):
    """For every position o of G (row-major): the input position it reaches, or None (drop)."""
    g, logical, axes = gather_shape(input_shape, indices.shape, axes)
    r = len(input_shape)
    c = max(len(axes), 1)
    signed = indices.dtype.kind == "i"
    coords = indices.reshape(tuple(logical) + (c,)) if r else indices
    out = []
    for o in np.ndindex(*g):
        q = tuple(0 if logical[e] == 1 else o[e] for e in range(r))
        i = [0 if input_shape[d] == 1 else o[d] for d in range(r)]
        dropped = False
        for j, axis in enumerate(axes):
            v = int(coords[q + (j,)])
            n = input_shape[axis]
            if negative and signed and mode != "wrap" and v < 0:
                v += n
            if not 0 <= v < n:
                if mode == "error" or (n == 0 and mode in ("clamp", "wrap")):
                    raise OracleIndexError(f"index {v} for axis {axis} of size {n}")
                if mode == "clamp":
                    v = 0 if v < 0 else n - 1
                elif mode == "wrap":
                    v %= n
                else:
                    dropped = True
            i[axis] = v
        out.append((o, None if dropped else tuple(i)))
    return g, out


UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}
BOOL_UFUNC = {"add": np.logical_or, "max": np.logical_or, "mul": np.logical_and,
              "min": np.logical_and}


def complex_pick(a, b, reduction):
    """Complex max / min by StableHLO's lexicographic order as XLA runs it: the output side a is
    kept when it compares strictly greater (max) / less (min), real parts first, imaginary parts
    when the real parts are equal; else the update b (a tie, or NaN in the deciding comparison)."""
    better = (lambda x, y: x > y) if reduction == "max" else (lambda x, y: x < y)
    keep = better(a.imag, b.imag) if a.real == b.real else better(a.real, b.real)
    return a if keep else b


def combine(a, b, reduction, dtype):
    if reduction == "none":
        return b
    if dtype.kind == "c" and reduction in ("min", "max"):
        return complex_pick(np.asarray(a, dtype)[()], np.asarray(b, dtype)[()], reduction)
    ufunc = (BOOL_UFUNC if dtype == np.bool_ else UFUNC)[reduction]
    with np.errstate(all="ignore"):
        return ufunc(np.asarray(a, dtype), np.asarray(b, dtype)).astype(dtype)[()]


def oracle_loop(input, indices, updates, axes, reduction, mode, negative, include_input):
    g, pairs = targets(input.shape, indices, axes, mode, negative)
    out = np.array(input, copy=True)
    ub = np.broadcast_to(updates, g)
    reached = set()
    for o, i in pairs:
        if i is None:
            continue
        if not include_input and reduction != "none" and i not in reached:
            out[i] = ub[o]
        else:
            out[i] = combine(out[i], ub[o], reduction, input.dtype)
        reached.add(i)
    return out


def oracle_ufunc_at(input, indices, updates, axes, reduction, mode, negative):
    """np.<ufunc>.at over the same targets (include_input=True)."""
    g, pairs = targets(input.shape, indices, axes, mode, negative)
    out = np.array(input, copy=True)
    kept = [(o, i) for o, i in pairs if i is not None]
    if not kept:
        return out
    ub = np.broadcast_to(updates, g)
    values = np.array([ub[o] for o, _ in kept], dtype=input.dtype)
    index = tuple(np.array([i[d] for _, i in kept], dtype=np.intp) for d in range(input.ndim))
    ufunc = (BOOL_UFUNC if input.dtype == np.bool_ else UFUNC)[reduction]
    with np.errstate(all="ignore"):
        ufunc.at(out, index, values)
    return out


def values(rng, shape, dtype):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        return rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype,
                            endpoint=True).reshape(shape)
    if dtype.kind == "c":
        return (rng.integers(-9, 10, n) / 4 + 1j * rng.integers(-9, 10, n) / 4).astype(dtype).reshape(shape)
    return (rng.integers(-64, 65, n) / 8).astype(dtype).reshape(shape)


def strided(rng, array, kind):
    if kind == "contiguous" or array.ndim == 0:
        return array
    if kind == "reversed":
        return np.ascontiguousarray(array[(slice(None, None, -1),) * array.ndim])[
            (slice(None, None, -1),) * array.ndim]
    big = np.empty(tuple(2 * s for s in array.shape), array.dtype)
    view = big[(slice(None, None, 2),) * array.ndim]
    view[...] = array
    return view


@st.composite
def cases(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    r = draw(st.integers(0, 5))
    input_shape = [draw(st.integers(1, 4)) for _ in range(r)]
    k = draw(st.integers(0, min(r, 2)))
    axes = list(rng.permutation(r)[:k]) if r else []
    axes = [int(a) - (r if draw(st.booleans()) else 0) for a in axes]
    norm = [a % r for a in axes]
    logical = []
    for d in range(r):
        if d in norm:
            logical.append(draw(st.integers(0, 5)))
        else:
            choice = draw(st.sampled_from(["equal", "index1", "input1"]))
            if choice == "index1":
                logical.append(1)
            elif choice == "input1":
                input_shape[d] = 1
                logical.append(draw(st.integers(1, 4)))
            else:
                logical.append(input_shape[d])
    c = max(k, 1)
    indices_shape = list(logical)
    if r:
        indices_shape[-1] *= c
    dtype = draw(st.sampled_from(DTYPES))
    index_dtype = draw(st.sampled_from(INDEX_DTYPES))
    mode = draw(st.sampled_from(MODES))
    reduction = draw(st.sampled_from(REDUCTIONS))
    negative = draw(st.booleans())
    signed = index_dtype.kind == "i"
    size = [input_shape[a] for a in norm] or [1]
    n = int(np.prod(indices_shape)) if r else 1
    raw = []
    for t in range(n):
        s = size[t % c]
        v = int(rng.integers(0, s))
        if signed and negative and rng.random() < 0.3:
            v -= s
        if (mode != "error" or rng.random() < 0.03) and rng.random() < 0.2:
            v = int(rng.integers(-2 * s - 2 if signed else 0, 2 * s + 3))
        raw.append(v)
    info = np.iinfo(index_dtype)
    indices = np.array([min(max(v, info.min), info.max) for v in raw], dtype=index_dtype).reshape(indices_shape)
    g, _, _ = gather_shape(input_shape, indices_shape, axes)
    updates_shape = [1 if draw(st.integers(0, 4)) == 0 else s for s in g]
    input = values(rng, tuple(input_shape), dtype)
    updates = values(rng, tuple(updates_shape), dtype)
    if dtype.kind == "c" and reduction in ("min", "max"):  # NaN, -0 and inf parts, ties on the real part
        for a in (input, updates):
            parts = a.reshape(-1).view(a.real.dtype)  # a is C-contiguous: a view of its parts
            pick = rng.random(parts.size) < 0.25
            parts[pick] = rng.choice(np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], parts.dtype), int(pick.sum()))
    layout = draw(st.sampled_from(["contiguous", "strided", "reversed"]))
    return dict(input=strided(rng, input, layout), indices=strided(rng, indices, layout),
                updates=updates, axes=axes, reduction=reduction, mode=mode, negative=negative,
                include_input=draw(st.booleans()), out=draw(st.sampled_from(["new", "out", "inplace"])))


def same(a, b, reduction="none"):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    if a.dtype.kind == "c" and reduction == "mul":
        # numpy's complex multiply may fuse (FMA) the products: equal to the last bits only.
        np.testing.assert_allclose(a, b, rtol=1e-5 if a.dtype == np.complex64 else 1e-13)
        return
    if a.dtype.kind == "c" and reduction in ("min", "max"):  # chosen, never computed: every bit
        assert a.tobytes() == b.copy(order="C").tobytes(), (a, b)
        return
    assert a.tobytes() == b.copy(order="C").tobytes() or np.array_equal(a, b, equal_nan=True), (a, b)


@settings(max_examples=EXAMPLES, deadline=None)
@given(cases())
def test_matches_the_row_major_loop(case):
    input, indices, updates = case["input"], case["indices"], case["updates"]
    kw = dict(reduction=case["reduction"], index_mode=case["mode"],
              negative_indices=case["negative"], include_input=case["include_input"])
    try:
        want = oracle_loop(input, indices, updates, case["axes"], case["reduction"], case["mode"],
                           case["negative"], case["include_input"])
    except OracleIndexError:
        with pytest.raises(IndexError):
            multigather.scatter_multiaxis(input, indices, updates, case["axes"], **kw)
        return
    if case["out"] == "new":
        got = multigather.scatter_multiaxis(input, indices, updates, case["axes"], **kw)
    elif case["out"] == "out":
        out = np.full(input.shape, 0, input.dtype)
        got = multigather.scatter_multiaxis(input, indices, updates, case["axes"], out=out, **kw)
        assert got is out
    else:
        inplace = input.copy()
        got = multigather.scatter_multiaxis(inplace, indices, updates, case["axes"], out=inplace, **kw)
        assert got is inplace
    same(np.asarray(got).copy(order="C"), want, case["reduction"])
    # np.maximum / np.minimum on complex propagate NaN and keep a on ties (not StableHLO's rule)
    complex_order = input.dtype.kind == "c" and case["reduction"] in ("min", "max")
    if case["include_input"] and case["reduction"] != "none" and input.ndim > 0 and not complex_order:
        same(np.asarray(got).copy(order="C"), oracle_ufunc_at(input, indices, updates, case["axes"],
                                                        case["reduction"], case["mode"], case["negative"]),
             case["reduction"])


def test_add_matches_np_add_at_on_a_larger_case_and_is_deterministic():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((300, 64)).astype(np.float32)
    idx = rng.integers(0, 300, (20000, 1))
    u = rng.standard_normal((20000, 64)).astype(np.float32)
    want = x.copy()
    np.add.at(want, idx[:, 0], u)
    results = []
    old = multigather.get_num_threads()
    try:
        for threads in (1, 2, 4, 8, 2):
            multigather.set_num_threads(threads)
            results.append(multigather.scatter_multiaxis(x, idx, u, [0], reduction="add"))
    finally:
        multigather.set_num_threads(old)
    for r in results:
        assert r.tobytes() == results[0].tobytes()
    np.testing.assert_array_equal(results[0], want)  # np.add.at also adds in row-major order


def test_adjoint_of_gather_in_float64():
    rng = np.random.default_rng(3)
    for _ in range(50):
        x = rng.integers(-9, 10, (4, 1, 5)).astype(np.float64)
        idx = rng.integers(-5, 5, (4, 3, 2))
        y = multigather.gather_multiaxis(x, idx, [2, 0], index_mode="clamp")
        gy = rng.integers(-9, 10, y.shape).astype(np.float64)
        gx = multigather.scatter_multiaxis(np.zeros_like(x), idx, gy, [2, 0], reduction="add",
                                           index_mode="clamp")
        assert float(np.sum(y * gy)) == float(np.sum(x * gx))


def test_gradients_equal_torch_autograd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = torch.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    cases = [
        ("gather", torch.tensor(rng.integers(0, 6, (5, 4)))),
        ("index_select", torch.tensor(rng.integers(0, 5, (7,)))),
        ("take_along_dim", torch.tensor(rng.integers(-6, 6, (1, 9)))),
    ]
    for name, index in cases:
        if name == "gather":
            y = torch.gather(x, 1, index)
            idx, axes = index.numpy(), [1]
        elif name == "index_select":
            y = torch.index_select(x, 0, index)
            idx, axes = index.numpy().reshape(-1, 1), [0]
        else:
            y = torch.take_along_dim(x, index, dim=1)
            idx, axes = index.numpy() % 6, [1]
        g = torch.tensor(rng.standard_normal(tuple(y.shape)))
        (want,) = torch.autograd.grad(y, x, g)
        got = multigather.scatter_multiaxis(np.zeros((5, 6)), idx, g.numpy(), axes, reduction="add")
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


def test_errors_name_the_argument():
    x = np.zeros((3, 4), np.float32)
    idx = np.zeros((2, 4), np.int64)
    with pytest.raises(ValueError, match=r"updates shape \[2,5\] does not broadcast to the scatter "
                       r"shape \[2,4\] .*updates.shape\[1\] = 5 must be 4 or 1"):
        multigather.scatter_multiaxis(x, idx, np.zeros((2, 5), np.float32), [0])
    with pytest.raises(TypeError, match="updates dtype float64 must equal input dtype float32"):
        multigather.scatter_multiaxis(x, idx, np.zeros((2, 4)), [0])
    with pytest.raises(ValueError, match="attribute index_mode: 'fill' is not one of error, clamp, wrap, drop"):
        multigather.scatter_multiaxis(x, idx, np.zeros((2, 4), np.float32), [0], index_mode="fill")
    f8 = ml_dtypes.float8_e4m3fn
    with pytest.raises(TypeError, match=r"reduction max is not supported for float8_e4m3fn \(8-bit floats "
                       r"have no arithmetic here; only reduction none\)"):
        multigather.scatter_multiaxis(x.astype(f8), idx, np.zeros((2, 4), f8), [0], reduction="max")
    bad = idx.copy()
    bad[1, 2] = 3
    target = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(IndexError, match=r"indices\[1,2\] = 3 is out of range for axis 0 of size 3"):
        multigather.scatter_multiaxis(target, bad, np.ones((2, 4), np.float32), [0], out=target)
    np.testing.assert_array_equal(target, np.arange(12, dtype=np.float32).reshape(3, 4))
    with pytest.raises(ValueError, match="overlaps input but is not input itself"):
        big = np.zeros(13, np.float32)
        multigather.scatter_multiaxis(big[:12].reshape(3, 4), idx, np.zeros((2, 4), np.float32),
                                      [0], out=big[1:].reshape(3, 4))
    with pytest.raises(ValueError, match="scatter_multiaxis is a scatter: it needs updates"):
        multigather.run("scatter_multiaxis", x, idx, axes=[0])


def test_registry_run_and_explain():
    x = np.ones(5, np.int32)
    got = multigather.run("scatter_multiaxis", x, np.array([4, 4, 0]), updates=np.array([1, 2, 3], np.int32),
                          axes=[0], reduction="add")
    want = x.copy()
    np.add.at(want, [4, 4, 0], [1, 2, 3])
    np.testing.assert_array_equal(got, want)
    assert multigather.output_shape("scatter_multiaxis", (5,), (3,), updates_shape=(3,), axes=[0]) == (5,)
    text = multigather.explain("scatter_multiaxis", (5,), (3,), updates_shape=(1,), axes=[0])
    assert "scatter_multiaxis(updates [1]" in text and "the LAST in row-major order" in text


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    x = torch.zeros(4, 3)
    got = multigather.scatter_multiaxis(x, torch.tensor([[1], [1], [3]]), torch.ones(3, 3), [0],
                                        reduction="add")
    assert isinstance(got, torch.Tensor)
    want = torch.zeros(4, 3).index_add_(0, torch.tensor([1, 1, 3]), torch.ones(3, 3))
    assert torch.equal(got, want)
    multigather.scatter_multiaxis(x, torch.tensor([[2]]), torch.full((1, 3), 7.0), [0], out=x)
    assert torch.equal(x[2], torch.full((3,), 7.0))
