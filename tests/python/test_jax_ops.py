"""multigather inside JAX transformations (multigather._jax_ffi, python/src/jax_ffi.cpp): jit,
grad, vmap (nested), checkpoint and shard_map, through the XLA FFI custom call.

Oracles: the eager call (the DLPack path, no FFI), numpy, and JAX's own ops (jnp.take,
jnp.take_along_axis, lax.gather, .at[].add / .set) and their gradients; jax.test_util.check_grads
(numerical differences in float64); Python loops for vmap; the unsharded call for shard_map."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import multigather
from conftest import require

jax = require("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

RNG = np.random.default_rng(7)


def _x(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _i(high, *shape, low=0):
    return RNG.integers(low, high, size=shape).astype(np.int64)


# (id, function of (x, i[, u]) calling multigather, operands as numpy arrays, numpy oracle)
GATHERS = [
    ("gather_multiaxis", lambda x, i: multigather.gather_multiaxis(x, i, [1]),
     (_x(3, 5), _i(5, 3, 4)), lambda x, i: np.take_along_axis(x, i, axis=1)),
    ("gather_multiaxis-2axes-broadcast",
     lambda x, i: multigather.gather_multiaxis(x, i, [2, 0]),
     (_x(4, 1, 6), _i(4, 1, 3, 2)), None),
    ("gather_multiaxis-fill",
     lambda x, i: multigather.gather_multiaxis(x, i, [0], index_mode="fill", fill_value=-1.5),
     (_x(4, 3), _i(7, 5, 3, low=-6)), None),
    ("jax.numpy.take", lambda x, i: multigather.jax.take(x, i, axis=1),
     (_x(3, 6), _i(6, 2, 4, low=-6)), lambda x, i: np.take(x, i, axis=1)),
    ("jax.numpy.take-none-clip", lambda x, i: multigather.jax.take(x, i, mode="clip"),
     (_x(3, 4), _i(15, 5, low=-3)), lambda x, i: np.take(x, i, mode="clip")),
    ("jax.numpy.take_along_axis",
     lambda x, i: multigather.jax.take_along_axis(x, i, axis=0),
     (_x(5, 3), _i(5, 4, 3)), lambda x, i: np.take_along_axis(x, i, axis=0)),
    ("jax.numpy.take_along_axis-axis-None",
     lambda x, i: multigather.jax.take_along_axis(x, i, axis=None),
     (_x(3, 4), _i(12, 7)), lambda x, i: np.take_along_axis(x, i, axis=None)),
    ("numpy.take", lambda x, i: multigather.numpy.take(x, i, axis=0),
     (_x(5, 2, 3), _i(5, 4)), lambda x, i: np.take(x, i, axis=0)),
    ("onnx.GatherND", lambda x, i: multigather.onnx.gather_nd(x, i),
     (_x(4, 3, 2), _i(3, 5, 2)), lambda x, i: x[i[..., 0], i[..., 1]]),
    ("torch.gather", lambda x, i: multigather.torch.gather(x, 1, i),
     (_x(3, 5), _i(5, 3, 2)), lambda x, i: np.take_along_axis(x, i, axis=1)),
    ("tf.gather-batch_dims", lambda x, i: multigather.tf.gather(x, i, axis=1, batch_dims=1),
     (_x(2, 5, 3), _i(5, 2, 4)), lambda x, i: np.stack([np.take(x[b], i[b], axis=0) for b in range(2)])),
    ("stablehlo.gather-point",
     lambda x, i: multigather.stablehlo.gather(
         x, i, offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
         index_vector_dim=1, slice_sizes=[1, 3]),
     (_x(6, 3), _i(6, 4, 1)), lambda x, i: x[i[:, 0]]),
    ("stablehlo.gather-window",
     lambda x, i: multigather.stablehlo.gather(
         x, i, offset_dims=[1, 2], collapsed_slice_dims=[], start_index_map=[0, 1],
         index_vector_dim=1, slice_sizes=[2, 2]),
     (_x(5, 4), _i(4, 3, 2)),
     lambda x, i: np.stack([x[min(a, 3):min(a, 3) + 2, min(b, 2):min(b, 2) + 2] for a, b in i])),
]

SCATTERS = [
    ("scatter_multiaxis-add",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"),
     (_x(4, 3), _i(4, 5, 3), _x(5, 3)),
     lambda x, i, u: _np_add_at(x, i, u)),
    ("scatter_multiaxis-none",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [1]),
     (_x(3, 6), np.array([[5, 0], [2, 2], [1, 4]]), _x(3, 2)), None),
    ("scatter_multiaxis-add-broadcast-updates",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"),
     (_x(4, 3), _i(4, 6, 3), _x(1, 3)), None),
    ("scatter_multiaxis-add-drop",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add", index_mode="drop"),
     (_x(4, 3), _i(7, 6, 3, low=-5), _x(6, 3)), None),
    ("onnx.ScatterND-add",
     lambda x, i, u: multigather.onnx.scatter_nd(x, i, u, reduction="add"),
     (_x(4, 3), _i(4, 5, 1), _x(5, 3)), None),
    ("jax.at.add", lambda x, i, u: multigather.jax.at(x)[i[:, 0], :].add(u),
     (_x(5, 3), _i(5, 6, 1), _x(6, 3)), None),
    ("jax.at.set-2d", lambda x, i, u: multigather.jax.at(x)[i[:, 0], i[:, 1]].set(u),
     (_x(4, 5), np.array([[3, 4], [0, 0], [1, 2]]), _x(3)), None),
    ("jax.at.add-drop", lambda x, i, u: multigather.jax.at(x)[i[:, 0]].add(u),
     (_x(4, 2), _i(9, 6, 1, low=-7), _x(6, 2)), None),
    ("stablehlo.scatter-add-window",
     lambda x, i, u: multigather.stablehlo.scatter(
         x, i, u, update_window_dims=[1], inserted_window_dims=[0],
         scatter_dims_to_operand_dims=[0], index_vector_dim=1, update_computation="add"),
     (_x(5, 3), _i(5, 4, 1), _x(4, 3)), None),
    ("tf.tensor_scatter_nd_update",
     lambda x, i, u: multigather.tf.tensor_scatter_nd_update(x, i, u),
     (_x(5, 2), np.array([[4], [0], [2]]), _x(3, 2)), None),
]


def _np_add_at(x, i, u):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            out[i[r, c], c] += u[r, c]
    return out


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize("name,fn,operands,oracle", GATHERS + SCATTERS, ids=_ids(GATHERS + SCATTERS))
def test_jit_equals_eager_and_numpy(name, fn, operands, oracle):
    eager = np.asarray(fn(*operands))  # numpy in: the direct path
    jitted = jax.jit(fn)(*[jnp.asarray(a) for a in operands])
    assert isinstance(jitted, jax.Array)
    np.testing.assert_array_equal(np.asarray(jitted), eager)
    if oracle is not None:
        np.testing.assert_array_equal(eager, oracle(*operands))


@pytest.mark.parametrize("name,fn,operands,oracle", GATHERS, ids=_ids(GATHERS))
def test_gather_gradients_numerically(name, fn, operands, oracle):
    x, i = operands
    check_grads(lambda a: fn(a, jnp.asarray(i)), (jnp.asarray(x),), order=1, modes=["rev"])


@pytest.mark.parametrize("name,fn,operands,oracle", SCATTERS, ids=_ids(SCATTERS))
def test_scatter_gradients_numerically(name, fn, operands, oracle):
    x, i, u = operands
    check_grads(lambda a, b: fn(a, jnp.asarray(i), b), (jnp.asarray(x), jnp.asarray(u)),
                order=1, modes=["rev"])


def test_grads_equal_jax_take_take_along_axis_and_lax_gather():
    x = jnp.asarray(_x(5, 4))
    i = jnp.asarray(np.array([[0, 3], [3, 3], [1, 0]]))  # duplicates: their cotangents add
    w = jnp.asarray(_x(3, 2, 4))

    def loss(take):
        return jax.grad(lambda a: (take(a) * w).sum())(x)

    np.testing.assert_array_equal(loss(lambda a: multigather.jax.take(a, i, axis=0)),
                                  loss(lambda a: jnp.take(a, i, axis=0)))
    j = jnp.asarray(np.array([[1, 1, 0, 3], [2, 0, 0, 3], [4, 4, 4, 4]]))
    w2 = jnp.asarray(_x(3, 4))
    np.testing.assert_array_equal(
        jax.grad(lambda a: (multigather.jax.take_along_axis(a, j, axis=0) * w2).sum())(x),
        jax.grad(lambda a: (jnp.take_along_axis(a, j, axis=0) * w2).sum())(x))
    # lax.gather with StableHLO dimension numbers: windows of 2 x 4 rows at clamped starts.
    starts = jnp.asarray(np.array([[0], [4], [2]]))
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0,))
    w3 = jnp.asarray(_x(3, 2, 4))
    ours = jax.grad(lambda a: (multigather.stablehlo.gather(
        a, starts, offset_dims=[1, 2], collapsed_slice_dims=[], start_index_map=[0],
        index_vector_dim=1, slice_sizes=[2, 4]) * w3).sum())(x)
    theirs = jax.grad(lambda a: (lax.gather(a, starts, dn, slice_sizes=(2, 4),
                                            mode=lax.GatherScatterMode.CLIP) * w3).sum())(x)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_scatter_grads_equal_jax_at_add_and_set():
    x = jnp.asarray(_x(5, 3))
    rows = np.array([1, 4, 1, 0])
    u = jnp.asarray(_x(4, 3))
    w = jnp.asarray(_x(5, 3))
    idx = jnp.asarray(np.repeat(rows[:, None], 3, axis=1))  # gather_multiaxis form of x[rows]

    def ours(reduction):
        return jax.grad(lambda a, b: (multigather.scatter_multiaxis(
            a, idx, b, [0], reduction=reduction) * w).sum(), argnums=(0, 1))(x, u)

    for reduction, at in (("add", lambda a, b: a.at[rows].add(b)),
                          ("none", lambda a, b: a.at[rows].set(b))):
        mine = ours(reduction)
        theirs = jax.grad(lambda a, b: (at(a, b) * w).sum(), argnums=(0, 1))(x, u)
        np.testing.assert_array_equal(mine[0], theirs[0])
        if reduction == "add":
            np.testing.assert_array_equal(mine[1], theirs[1])
        else:
            # jax leaves which duplicate wins unspecified; multigather: the LAST (row-major).
            expected = np.asarray(w)[rows].copy()
            expected[0] = 0  # row 1 is written again by update 2
            np.testing.assert_array_equal(mine[1], expected)


def test_grads_of_jax_at_and_stablehlo_scatter_equal_jax():
    x = jnp.asarray(_x(5, 3))
    rows = jnp.asarray(np.array([1, 4, 1, 0, 7]))  # 7: out of range, dropped (JAX's default)
    u = jnp.asarray(_x(5, 3))
    w = jnp.asarray(_x(5, 3))
    for method in ("add", "set"):
        ours = jax.grad(lambda a, b: (getattr(multigather.jax.at(a)[rows], method)(b) * w).sum(),
                        argnums=(0, 1))(x, u)
        theirs = jax.grad(lambda a, b: (getattr(a.at[rows], method)(b) * w).sum(),
                          argnums=(0, 1))(x, u)
        np.testing.assert_array_equal(ours[0], theirs[0], err_msg=method)
        if method == "add":
            np.testing.assert_array_equal(ours[1], theirs[1])
    # lax.scatter_add through stablehlo.scatter, windows of 2 rows (one does not fit: skipped)
    starts = jnp.asarray(np.array([[0], [3], [4], [1]]))
    upd = jnp.asarray(_x(4, 2, 3))
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    ours = jax.grad(lambda a, b: (multigather.stablehlo.scatter(
        a, starts, b, update_window_dims=[1, 2], inserted_window_dims=[],
        scatter_dims_to_operand_dims=[0], index_vector_dim=1, update_computation="add") * w).sum(),
        argnums=(0, 1))(x, upd)
    theirs = jax.grad(lambda a, b: (lax.scatter_add(a, starts, b, dn,
                                                    mode=lax.GatherScatterMode.FILL_OR_DROP) * w).sum(),
                      argnums=(0, 1))(x, upd)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_a_scatter_in_place_leaves_a_live_input_intact():
    # The scatter's output aliases its input: XLA copies the input when it is used again.
    x = jnp.asarray(_x(4, 3))
    i = jnp.asarray(np.array([[1, 0, 3]]))
    u = jnp.asarray(_x(1, 3))
    f = jax.jit(lambda a, b, c: (multigather.scatter_multiaxis(a, b, c, [0], reduction="add"), a * 2))
    out, twice = f(x, i, u)
    np.testing.assert_array_equal(twice, np.asarray(x) * 2)
    np.testing.assert_array_equal(out, multigather.scatter_multiaxis(np.asarray(x), np.asarray(i),
                                                                     np.asarray(u), [0], reduction="add"))
    y = jnp.asarray(np.asarray(x))
    jax.jit(lambda a, b, c: multigather.scatter_multiaxis(a, b, c, [0]))(y, i, u)
    np.testing.assert_array_equal(y, np.asarray(x))


def test_vmap_matches_a_python_loop():
    x = _x(3, 6, 4)
    i = _i(6, 3, 5, 1, low=-6)
    take = lambda a, b: multigather.jax.take(a, b[:, 0], axis=0)  # noqa: E731
    for in_axes, xs, ids in (((0, 0), x, i), ((None, 0), x[0], i), ((0, None), x, i[0])):
        got = jax.vmap(take, in_axes=in_axes)(jnp.asarray(xs), jnp.asarray(ids))
        want = np.stack([np.take(xs if in_axes[0] is None else xs[b],
                                 (ids if in_axes[1] is None else ids[b])[:, 0], axis=0)
                         for b in range(3)])
        np.testing.assert_array_equal(got, want)
    # nested: batch over two dimensions, input batched on the outer one only
    xx = _x(2, 5, 3)
    ii = _i(5, 2, 2, 6)  # [q, p, :]
    got = jax.vmap(jax.vmap(lambda a, b: multigather.gather_multiaxis(a, b[:, None], [0]),
                            in_axes=(None, 0)), in_axes=(0, 1))(jnp.asarray(xx), jnp.asarray(ii))
    want = np.stack([np.stack([xx[p][ii[q, p]] for q in range(2)]) for p in range(2)])
    assert got.shape == (2, 2, 6, 3)
    np.testing.assert_array_equal(got, want)


def test_vmap_of_scatters_and_of_a_copying_lowering():
    x = _x(3, 4, 2)
    i = _i(4, 3, 5, 2)
    u = _x(3, 5, 2)
    f = lambda a, b, c: multigather.scatter_multiaxis(a, b, c, [0], reduction="add")  # noqa: E731
    for in_axes in ((0, 0, 0), (None, 0, 0), (0, None, 0), (None, None, 0), (0, 0, None)):
        args = [a if ax is not None else a[0] for a, ax in zip((x, i, u), in_axes)]
        got = jax.vmap(f, in_axes=in_axes)(*[jnp.asarray(a) for a in args])
        want = np.stack([np.asarray(f(*[a if ax is None else a[b] for a, ax in zip(args, in_axes)]))
                         for b in range(3)])
        np.testing.assert_array_equal(got, want, err_msg=str(in_axes))
    # A mean scatter (a scatter-add, then a division by the count): the lifted call divides too.
    m = lambda a, b, c: multigather.torch.scatter_reduce(a, 0, b, c, "mean", include_self=False)  # noqa: E731
    xm, im, um = _x(3, 4, 2), _i(4, 3, 5, 2), _x(3, 5, 2)
    got = jax.vmap(m)(jnp.asarray(xm), jnp.asarray(im), jnp.asarray(um))
    np.testing.assert_array_equal(got, np.stack([np.asarray(m(xm[b], im[b], um[b])) for b in range(3)]))
    # StableHLO windows copy the indices: examples run one by one, same results.
    g = lambda a, s: multigather.stablehlo.gather(  # noqa: E731
        a, s, offset_dims=[1, 2], collapsed_slice_dims=[], start_index_map=[0, 1],
        index_vector_dim=1, slice_sizes=[2, 2])
    xs, ss = _x(3, 5, 4), _i(5, 3, 4, 2)
    got = jax.vmap(g)(jnp.asarray(xs), jnp.asarray(ss))
    np.testing.assert_array_equal(got, np.stack([np.asarray(g(xs[b], ss[b])) for b in range(3)]))


def test_per_example_gradients_and_checkpoint():
    x = jnp.asarray(_x(6, 3))
    i = jnp.asarray(_i(6, 4, 2))
    loss = lambda a, b: (multigather.jax.take(a, b, axis=0) ** 2).sum()  # noqa: E731
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))(x, i)
    want = np.stack([np.asarray(jax.grad(lambda a: (jnp.take(a, i[b], axis=0) ** 2).sum())(x))
                     for b in range(4)])
    np.testing.assert_array_equal(per_example, want)
    remat = jax.grad(jax.checkpoint(lambda a: loss(a, i)))(x)
    np.testing.assert_array_equal(remat, jax.grad(lambda a: (jnp.take(a, i, axis=0) ** 2).sum())(x))


def test_errors_inside_jit():
    x = jnp.asarray(_x(5, 3))
    bad = jnp.asarray(np.array([[1], [7]]))
    f = jax.jit(lambda a, b: multigather.gather_multiaxis(a, b, [0]))
    with pytest.raises(Exception, match=r"indices\[1,0\] = 7 is out of range for axis 0 of size 5"):
        np.asarray(f(x, bad))
    # shapes and attributes fail at trace time, with the core's exception type
    with pytest.raises(ValueError, match="axis"):
        jax.jit(lambda a, b: multigather.jax.take(a, b, axis=5))(x, bad)
    with pytest.raises(TypeError, match="immutable"):
        jax.jit(lambda a, b: multigather.gather_multiaxis(a, b, [0], out=a))(x, bad)
    # a batched out-of-range index names its batch element
    g = jax.vmap(lambda a, b: multigather.gather_multiaxis(a, b, [0]), in_axes=(None, 0))
    with pytest.raises(Exception, match=r"batch element \[1\]: indices\[1,0\] = 9 is out of range"):
        np.asarray(g(x, jnp.asarray(np.array([[[0], [1]], [[2], [9]]]))))


COPYING_LOWERINGS = {"stablehlo.gather-window"}


def _lowerings():
    return multigather._multigather.jax_ffi_lowerings()


@pytest.fixture
def ffi_gathers():
    """Gathers under jit as the FFI call (the default sends most to XLA's own gather)."""
    multigather.jax.set_jit_ops("ffi")
    yield
    multigather.jax.set_jit_ops("auto")


@pytest.mark.usefixtures("ffi_gathers")
@pytest.mark.parametrize("name,fn,operands,oracle", GATHERS + SCATTERS, ids=_ids(GATHERS + SCATTERS))
def test_one_handler_state_serves_every_call_of_an_executable(name, fn, operands, oracle):
    # The FFI handler's instantiate stage keeps each call site's decoded attributes and its
    # lowering: calls of the same executable on new data give a fresh executable's results
    # (and the eager call's), and lower no more after the first call.
    jitted = jax.jit(fn)
    rng = np.random.default_rng(3)
    runs = []
    for _ in range(4):
        fresh = [a if a.dtype.kind in "iu" and _ == 0 else
                 (rng.permutation(a.ravel()).reshape(a.shape) if a.dtype.kind in "iu"
                  else rng.standard_normal(a.shape).astype(a.dtype)) for a in operands]
        runs.append(fresh)
    first = np.asarray(jitted(*[jnp.asarray(a) for a in runs[0]]))
    np.testing.assert_array_equal(first, np.asarray(fn(*runs[0])))
    before = _lowerings()
    for fresh in runs[1:]:
        got = np.asarray(jitted(*[jnp.asarray(a) for a in fresh]))
        np.testing.assert_array_equal(got, np.asarray(fn(*fresh)))  # eager: no FFI
    # The kept lowering, moved to each call's buffers; a lowering that copies an operand (the
    # StableHLO windows) is made again on every call.
    assert _lowerings() - before == (len(runs) - 1 if name in COPYING_LOWERINGS else 0)
    for fresh in runs[1:]:  # a new executable (a new function object) lowers once
        before = _lowerings()
        again = jax.jit(lambda *a: fn(*a))(*[jnp.asarray(a) for a in fresh])
        np.testing.assert_array_equal(np.asarray(again), np.asarray(fn(*fresh)))
        assert _lowerings() - before == 1


@pytest.mark.usefixtures("ffi_gathers")
def test_gradients_and_vmap_keep_their_lowering_too():
    x, i = jnp.asarray(_x(6, 4)), jnp.asarray(_i(6, 5))
    u = jnp.asarray(_x(5, 4))
    grad = jax.jit(jax.grad(lambda a, b: (multigather.jax.take(a, i, axis=0) * b).sum(), argnums=(0, 1)))
    scatter_grad = jax.jit(jax.grad(
        lambda a, v: (multigather.scatter_multiaxis(a, i[:, None], v, [0], reduction="add") ** 2).sum(),
        argnums=(0, 1)))
    batched = jax.jit(jax.vmap(lambda a, b: multigather.jax.take(a, b, axis=0)))
    xs, idx = jnp.asarray(_x(3, 6, 4)), jnp.asarray(_i(6, 3, 5))
    for call in range(3):
        w = jnp.asarray(_x(5, 4))
        before = _lowerings()
        ga, gb = grad(x, w)
        sa, sv = scatter_grad(x, u + call)
        out = batched(xs + call, idx)
        made = _lowerings() - before
        assert made == (0 if call else 5), made  # forward + VJP, twice; the batched gather
        ea, eb = jax.grad(lambda a, b: (jnp.take(a, i, axis=0) * b).sum(), argnums=(0, 1))(x, w)
        np.testing.assert_allclose(np.asarray(ga), np.asarray(ea), rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(gb), np.asarray(eb))
        ra, rv = jax.grad(lambda a, v: (a.at[i].add(v) ** 2).sum(), argnums=(0, 1))(x, u + call)
        np.testing.assert_allclose(np.asarray(sa), np.asarray(ra), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(sv), np.asarray(rv), rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(out), np.stack([np.take(np.asarray(xs[k] + call), np.asarray(idx[k]), axis=0) for k in range(3)]))


def test_a_scatter_under_jit_reports_an_index_error_and_leaves_its_operand_intact():
    # The FFI scatter writes XLA's result buffer without a pass over the indices first
    # (python/src/jax_ffi.cpp): a bad index mid-way fails the call with the message numpy's
    # path gives, and the operand (aliased to the result, not donated) keeps its values.
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal((6, 3000)).astype(np.float32)
    idx_np = rng.integers(0, 3000, (6, 2000))
    u_np = rng.standard_normal((6, 2000)).astype(np.float32)
    x = jnp.asarray(x_np)
    f = jax.jit(lambda a, i, u: multigather.scatter_multiaxis(a, i, u, [1], reduction="add"))
    want = x_np.copy()
    np.add.at(want, (np.arange(6)[:, None], idx_np), u_np)
    np.testing.assert_allclose(np.asarray(f(x, jnp.asarray(idx_np), jnp.asarray(u_np))), want, rtol=1e-5, atol=1e-5)
    bad = idx_np.copy()
    bad[4, 1500] = 3000
    with pytest.raises(IndexError) as numpy_error:
        multigather.scatter_multiaxis(x_np, bad, u_np, [1], reduction="add")
    with pytest.raises(Exception, match=re.escape(str(numpy_error.value))):
        np.asarray(f(x, jnp.asarray(bad), jnp.asarray(u_np)))
    np.testing.assert_array_equal(np.asarray(x), x_np)
    np.testing.assert_allclose(np.asarray(f(x, jnp.asarray(idx_np), jnp.asarray(u_np))), want, rtol=1e-5, atol=1e-5)


def test_a_kept_lowering_still_reports_an_index_error_and_recovers():
    x = jnp.asarray(_x(5, 3))
    f = jax.jit(lambda a, b: multigather.gather_multiaxis(a, b, [0]))
    good = jnp.asarray(np.array([[1], [4]]))
    np.testing.assert_array_equal(np.asarray(f(x, good)), np.asarray(x)[[1, 4]])
    with pytest.raises(Exception, match=r"indices\[1,0\] = 7 is out of range for axis 0 of size 5"):
        np.asarray(f(x, jnp.asarray(np.array([[1], [7]]))))
    np.testing.assert_array_equal(np.asarray(f(x, good)), np.asarray(x)[[1, 4]])
    g = jax.jit(jax.vmap(lambda a, b: multigather.gather_multiaxis(a, b, [0]), in_axes=(None, 0)))
    ok = jnp.asarray(np.array([[[0], [1]], [[2], [3]]]))
    np.testing.assert_array_equal(np.asarray(g(x, ok))[1], np.asarray(x)[[2, 3]])
    with pytest.raises(Exception, match=r"batch element \[1\]: indices\[1,0\] = 9 is out of range"):
        np.asarray(g(x, jnp.asarray(np.array([[[0], [1]], [[2], [9]]]))))


def _bench_cases():
    """bench/jax_ops.py's cases on small shapes: (name, jax's function, multigather's, operands,
    the differentiable arguments)."""
    mj = multigather.jax
    rng = np.random.default_rng(11)
    f = lambda *shape: rng.standard_normal(shape)  # noqa: E731  (float64: exact comparisons)
    table, idx = f(50, 8), rng.integers(0, 50, 12)
    x5 = f(2, 6, 5, 3)
    i5 = np.stack([rng.integers(0, 6, (2, 9)), rng.integers(0, 5, (2, 9))], -1)
    b5 = np.arange(2)[:, None]
    x7, i7 = f(64), rng.integers(0, 64, 40)
    xs3, is3, us3 = f(10, 7), rng.integers(0, 10, (4, 7)), f(4, 7)
    cols = np.arange(7)[None, :]
    xs4 = f(2, 6, 5, 3)
    is4 = np.stack([rng.integers(0, 2, 30), rng.integers(0, 6, 30), rng.integers(0, 5, 30)], -1)
    us4 = f(30, 3)
    return [
        ("1 embedding", lambda t, i: jnp.take(t, i, axis=0), lambda t, i: mj.take(t, i, axis=0), (table, idx), (0,)),
        ("10 embedding_times_two", lambda t, i: jnp.take(t, i, axis=0) * 2.0,
         lambda t, i: mj.take(t, i, axis=0) * 2.0, (table, idx), (0,)),
        ("2 mid_axis_block", lambda x, i: jnp.take(x, i, axis=1), lambda x, i: mj.take(x, i, axis=1),
         (f(3, 10, 4), rng.integers(0, 10, 6)), (0,)),
        ("3 elements_last_axis", lambda x, i: jnp.take_along_axis(x, i, axis=-1),
         lambda x, i: mj.take_along_axis(x, i, axis=-1), (f(5, 9), rng.integers(0, 9, (5, 4))), (0,)),
        ("4 elements_axis0", lambda x, i: jnp.take_along_axis(x, i, axis=0),
         lambda x, i: mj.take_along_axis(x, i, axis=0), (f(9, 5), rng.integers(0, 9, (4, 5))), (0,)),
        ("5 gathernd_batch1", lambda x, i: x[b5, i[..., 0], i[..., 1]],
         lambda x, i: multigather.gather_multiaxis(x, i[:, :, None, :], [1, 2])[:, :, 0, :], (x5, i5), (0,)),
        ("6 nhwc_xy", lambda x, i: x[b5, i[..., 1], i[..., 0]],
         lambda x, i: multigather.gather_multiaxis(x, i[:, :, None, :], [2, 1])[:, :, 0, :],
         (f(2, 5, 6, 3), np.stack([rng.integers(0, 6, (2, 9)), rng.integers(0, 5, (2, 9))], -1)), (0,)),
        ("7 flat_take", lambda x, i: jnp.take(x, i), lambda x, i: mj.take(x, i), (x7, i7), (0,)),
        ("9 tiny", lambda x, i: jnp.take(x, i, axis=0), lambda x, i: mj.take(x, i, axis=0),
         (f(16, 16), np.array([3, 1, 4, 1])), (0,)),
        ("S1 embedding_backward", lambda z, i, u: z.at[i].add(u),
         lambda z, i, u: multigather.scatter_multiaxis(z, i[:, None], u, [0], reduction="add"),
         (np.zeros_like(table), idx, f(12, 8)), (0, 2)),
        ("S3 scatter_add_axis0", lambda x, i, u: x.at[i, cols].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"), (xs3, is3, us3), (0, 2)),
        ("S4 scatter_nd_points", lambda x, i, u: x.at[i[:, 0], i[:, 1], i[:, 2]].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(x, i.reshape(1, 1, -1, 3), u.reshape(1, 1, -1, 3),
                                                        [0, 1, 2], reduction="add"), (xs4, is4, us4), (0, 2)),
        ("S5 flat_put_add", lambda x, i, u: x.at[i].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"), (x7, i7, f(40)), (0, 2)),
    ]


@pytest.mark.parametrize("case", _bench_cases(), ids=lambda c: c[0])
def test_gradients_under_jit_equal_jax_on_every_bench_case(case):
    # bench/jax_ops.py's cases (S6 is case 1's gradient): jax.grad of a weighted sum under jit,
    # through multigather's FFI VJP and through JAX's own ops.
    name, theirs, ours, operands, argnums = case
    operands = [jnp.asarray(a) for a in operands]
    w = jnp.asarray(np.random.default_rng(1).standard_normal(np.shape(theirs(*operands))))

    def loss(fn):
        return jax.jit(jax.grad(lambda *a: (fn(*a) * w).sum(), argnums=argnums))

    want, got = loss(theirs)(*operands), loss(ours)(*operands)
    for g_want, g_got in zip(want, got):
        np.testing.assert_allclose(np.asarray(g_got), np.asarray(g_want), rtol=1e-13, atol=1e-13, err_msg=name)


def test_non_differentiable_scatters_say_so():
    x, u = jnp.asarray(_x(4, 2)), jnp.asarray(_x(3, 2))
    i = jnp.asarray(np.array([[0, 1], [3, 3], [0, 0]]))
    f = lambda a: multigather.scatter_multiaxis(a, i, u, [0], reduction="max",  # noqa: E731
                                                include_input=False).sum()
    assert float(jax.jit(f)(x)) == pytest.approx(float(np.asarray(
        multigather.scatter_multiaxis(np.asarray(x), np.asarray(i), np.asarray(u), [0],
                                      reduction="max", include_input=False)).sum()))
    with pytest.raises(NotImplementedError, match="reduction max is not implemented for this call .* "
                                                  "starts without its input"):
        jax.grad(f)(x)
    mean = lambda a: multigather.torch.scatter_reduce(  # noqa: E731
        a, 0, jnp.asarray(np.array([[0, 1], [3, 3], [0, 0]])), u, "mean").sum()
    with pytest.raises(NotImplementedError, match="reduction mean"):
        jax.grad(mean)(x)


def test_scatter_mul_gradients_extend_jaxs_rule_to_repeated_indices():
    """.at[].multiply and scatter_multiaxis(reduction="mul"): in the input JAX's rule, in the
    updates the product of everything else the element combined, for repeated indices too (JAX
    differentiates only unique ones): numerical differences with zeros among the updates (one
    and two at an element) and in the input, JAX's own gradient where it has one."""
    x = _x(5, 3)
    x[4, 0] = 0
    u = _x(9, 3)
    u[3, 0] = u[4, 1] = u[5, 1] = u[1, 2] = 0
    x, u = jnp.asarray(x), jnp.asarray(u)
    i = jnp.asarray(np.array([0, 1, 1, 3, 3, 3, 4, 7, -1]))  # 7: dropped; -1: element 4
    ours = lambda a, b: multigather.jax.at(a)[i].multiply(b, mode="drop")  # noqa: E731
    check_grads(ours, (x, u), order=1, modes=["rev"])
    check_grads(jax.jit(ours), (x, u), order=1, modes=["rev"])
    np.testing.assert_allclose(
        np.asarray(jax.grad(lambda a: (ours(a, u) ** 2).sum())(x)),
        np.asarray(jax.grad(lambda a: (a.at[i].multiply(u, mode="drop") ** 2).sum())(x)), rtol=1e-14, atol=1e-14)
    unique = jnp.asarray(np.array([0, 2, 4]))
    np.testing.assert_allclose(
        np.asarray(jax.grad(lambda b: (multigather.jax.at(x)[unique].multiply(b) ** 2).sum())(u[:3])),
        np.asarray(jax.grad(lambda b: (x.at[unique].multiply(b, unique_indices=True) ** 2).sum())(u[:3])),
        rtol=1e-14, atol=1e-14)
    error_mode = lambda a, b: multigather.scatter_multiaxis(  # noqa: E731
        a, jnp.broadcast_to(jnp.clip(i, 0, 4)[:, None], b.shape), b, [0], reduction="mul")
    check_grads(jax.jit(error_mode), (x, u), order=1, modes=["rev"])


def _ties(*shape):
    """Small integers as floats: many updates equal each other and the input."""
    return RNG.integers(-3, 3, size=shape).astype(np.float64)


# (id, multigather's min / max scatter, JAX's own): the gradient is JAX's rule (a max or min
# shares the cotangent equally among the input element and the updates equal to the result).
EXTREMAL_SCATTERS = [
    ("jax.at.max", lambda x, i, u: multigather.jax.at(x)[i].max(u), lambda x, i, u: x.at[i].max(u)),
    ("jax.at.min-drop", lambda x, i, u: multigather.jax.at(x)[i].min(u, mode="drop"),
     lambda x, i, u: x.at[i].min(u, mode="drop")),
    ("scatter_multiaxis-max-error-mode", lambda x, i, u: multigather.scatter_multiaxis(
        x, jnp.broadcast_to(i[:, None], u.shape), u, [0], reduction="max"), lambda x, i, u: x.at[i].max(u)),
]


@pytest.mark.parametrize("name,ours,theirs", EXTREMAL_SCATTERS, ids=[c[0] for c in EXTREMAL_SCATTERS])
@pytest.mark.parametrize("rows", [8, 40000])  # 40000 x 8 update positions: auto's FFI forward
def test_scatter_min_max_gradients_are_jaxs_own(name, ours, theirs, rows):
    x = jnp.asarray(_ties(rows // 4 + 2, 8))
    high = x.shape[0] + (3 if "drop" in name else 0)
    i = jnp.asarray(_i(high, rows))
    u = jnp.asarray(_ties(rows, 8))
    w = jnp.asarray(_x(*x.shape))
    for wrap in (lambda f: f, jax.jit):
        want = wrap(jax.grad(lambda a, b: (theirs(a, i, b) * w).sum(), argnums=(0, 1)))(x, u)
        got = wrap(jax.grad(lambda a, b: (ours(a, i, b) * w).sum(), argnums=(0, 1)))(x, u)
        # JAX's rule sums coefficients like (-1 + 1 / (n + 1)) / refs per update: the same
        # shares in another association (element-wise indices) differ in the last bits
        for g_want, g_got in zip(want, got):
            np.testing.assert_allclose(np.asarray(g_got), np.asarray(g_want), rtol=1e-14, atol=1e-14, err_msg=name)
    np.testing.assert_array_equal(np.asarray(jax.jit(ours)(x, i, u)), np.asarray(theirs(x, i, u)))


def test_at_subtract_is_differentiable_as_jaxs_own():
    # x.at[idx].subtract(values): the engines negate the values (the lowering's step), and the
    # VJP gives values the negated cotangent: jax.grad equals JAX's own .at[].subtract's, with
    # duplicate rows, eager and under jit.
    x, v = jnp.asarray(_x(4, 2)), jnp.asarray(_x(3, 2))
    rows = jnp.asarray(np.array([1, 3, 1]))
    w = jnp.asarray(_x(4, 2)) + 2.0

    def ours(a, b):
        return (multigather.jax.at(a)[rows].subtract(b) * w).sum()

    def theirs(a, b):
        return (a.at[rows].subtract(b) * w).sum()

    assert float(jax.jit(ours)(x, v)) == pytest.approx(float(theirs(x, v)))
    for f in (jax.grad(ours, argnums=(0, 1)), jax.jit(jax.grad(ours, argnums=(0, 1)))):
        gx, gv = f(x, v)
        want_x, want_v = jax.grad(theirs, argnums=(0, 1))(x, v)
        np.testing.assert_array_equal(np.asarray(gx), np.asarray(want_x))
        np.testing.assert_array_equal(np.asarray(gv), np.asarray(want_v))


SHARD_MAP_SCRIPT = textwrap.dedent("""
    import numpy as np, jax, jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P
    import multigather
    assert len(jax.devices()) == 2, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("d",))
    rng = np.random.default_rng(0)
    # 1. a row-sharded embedding table, ids replicated: each device looks up the rows it owns
    #    (fill 0 elsewhere), psum adds the two halves.
    table = jnp.asarray(rng.standard_normal((8, 5)))
    ids = jnp.asarray(rng.integers(0, 8, size=(6,)))
    def local_lookup(t, i):
        rows = t.shape[0]
        start = jax.lax.axis_index("d") * rows
        # rows of other devices (negative or past the end) fill with 0: no negative wrap
        local = multigather.gather_multiaxis(t, (i - start)[:, None], [0], index_mode="fill",
                                             negative_indices=False)
        return jax.lax.psum(local, "d")
    sharded = jax.jit(jax.shard_map(local_lookup, mesh=mesh, in_specs=(P("d"), P()),
                                    out_specs=P()))
    np.testing.assert_array_equal(sharded(table, ids), multigather.jax.take(np.asarray(table), np.asarray(ids), axis=0))
    # its gradient through the sharded lookup equals the unsharded one
    w = jnp.asarray(rng.standard_normal((6, 5)))
    g_sharded = jax.grad(lambda t: (sharded(t, ids) * w).sum())(table)
    g_plain = jax.grad(lambda t: (jnp.take(t, ids, axis=0) * w).sum())(table)
    np.testing.assert_allclose(g_sharded, g_plain, rtol=0, atol=1e-12)
    # 2. point sampling: the points (indices) sharded, the image replicated.
    image = jnp.asarray(rng.standard_normal((3, 6, 7)))
    points = jnp.asarray(np.stack([rng.integers(0, 6, 10), rng.integers(0, 7, 10)], axis=1))
    def sample(img, pts):
        return multigather.gather_multiaxis(img, pts.reshape(1, -1, 2), [1, 2])
    sharded_sample = jax.jit(jax.shard_map(sample, mesh=mesh, in_specs=(P(), P("d")),
                                           out_specs=P(None, "d")))
    np.testing.assert_array_equal(sharded_sample(image, points), sample(image, points))
    print("shard_map OK")
""")


def test_shard_map_on_two_host_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1")
    result = subprocess.run([sys.executable, "-c", SHARD_MAP_SCRIPT], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "shard_map OK" in result.stdout


def test_vendored_xla_ffi_headers_match_the_installed_jaxlib():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "third_party", "xla_ffi")
    installed = jax.ffi.include_dir()
    for name in ("api.h", "c_api.h", "ffi.h"):
        with open(os.path.join(root, "xla", "ffi", "api", name), "rb") as f:
            vendored = f.read()
        with open(os.path.join(installed, "xla", "ffi", "api", name), "rb") as f:
            assert f.read() == vendored, (
                f"third_party/xla_ffi/xla/ffi/api/{name} differs from jaxlib {jax.__version__}'s: "
                f"copy the new headers and update third_party/xla_ffi/README.md")


# ---- under jit: XLA's own gather or the FFI call (multigather.jax.set_jit_ops) ------------

def _custom_calls(fn, *operands) -> int:
    return jax.jit(fn).lower(*[jnp.asarray(a) for a in operands]).as_text().count("custom_call")


@pytest.mark.parametrize("name,fn,operands,oracle", GATHERS, ids=_ids(GATHERS))
def test_both_jit_paths_equal_eager_with_gradients_and_vmap(name, fn, operands, oracle):
    """Every gather case under jit as XLA's gather ("xla", where the lowering allows: not index
    mode error) and as the FFI call: values equal the eager call's, gradients equal each other's,
    vmap equals a loop; the HLO holds the custom call only on the FFI path."""
    x, i = (jnp.asarray(a) for a in operands)
    eager = np.asarray(fn(*operands))
    error_mode = name in ("gather_multiaxis", "gather_multiaxis-2axes-broadcast", "onnx.GatherND",
                          "torch.gather", "tf.gather-batch_dims", "numpy.take")
    grads, batched = {}, {}
    try:
        for mode in ("xla", "ffi"):
            multigather.jax.set_jit_ops(mode)
            f = lambda a, b: fn(a, b)  # noqa: E731  (a new function: JAX caches traces per function)
            np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, i)), eager)
            calls = _custom_calls(f, x, i)
            assert (calls > 0) == (mode == "ffi" or error_mode or name == "stablehlo.gather-window"), (mode, calls)
            grads[mode] = np.asarray(jax.jit(jax.grad(lambda a: (f(a, i) ** 2).sum()))(x))
            batched[mode] = np.asarray(jax.jit(jax.vmap(f, in_axes=(0, None)))(jnp.stack([x, x * 2]), i))
    finally:
        multigather.jax.set_jit_ops("auto")
    np.testing.assert_allclose(grads["xla"], grads["ffi"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(batched["xla"], batched["ffi"])
    np.testing.assert_array_equal(batched["ffi"][1], np.asarray(fn(np.asarray(x) * 2, operands[1])))


@pytest.mark.parametrize("name,fn,operands,oracle", SCATTERS, ids=_ids(SCATTERS))
def test_both_jit_paths_equal_eager_for_scatters_with_gradients_and_vmap(name, fn, operands, oracle):
    """Every scatter case under jit as XLA's scatter ("xla", where the lowering allows: not index
    mode error) and as the FFI call: values equal the eager call's bit for bit, gradients (of
    input and updates, the FFI call's VJP on both paths) and vmap equal each other's."""
    x, i, u = (jnp.asarray(a) for a in operands)
    eager = np.asarray(fn(*operands))
    error_mode = name in ("scatter_multiaxis-add", "scatter_multiaxis-none", "scatter_multiaxis-add-broadcast-updates",
                          "onnx.ScatterND-add", "tf.tensor_scatter_nd_update")
    grads, batched = {}, {}
    try:
        for mode in ("xla", "ffi"):
            multigather.jax.set_jit_ops(mode)
            f = lambda a, b, c: fn(a, b, c)  # noqa: E731
            np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, i, u)), eager)
            calls = _custom_calls(f, x, i, u)
            assert (calls > 0) == (mode == "ffi" or error_mode), (mode, calls)
            grads[mode] = [np.asarray(g) for g in jax.jit(jax.grad(lambda a, c: (f(a, i, c) ** 2).sum(),
                                                                   argnums=(0, 1)))(x, u)]
            batched[mode] = np.asarray(jax.jit(jax.vmap(f, in_axes=(0, None, None)))(jnp.stack([x, x * 2]), i, u))
    finally:
        multigather.jax.set_jit_ops("auto")
    for a, b in zip(grads["xla"], grads["ffi"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(batched["xla"], batched["ffi"])
    np.testing.assert_array_equal(batched["ffi"][1], np.asarray(fn(np.asarray(x) * 2, *operands[1:])))


def _dup(high, *shape, low=0):
    """Indices with many duplicates (each target reached several times)."""
    return _i(high, *shape, low=low)


def _scaled(*shape, dtype=np.float64):
    return (_x(*shape) * 1000).astype(dtype)


# (id, scatter of (x, i, u), operands): XLA's scatter on the CPU combines in the engine's order,
# so its bytes equal the eager call's (docs/spec.md section 3: row-major order of the updates).
SCATTER_BYTES = [
    ("add-f64-clamp", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add", index_mode="clamp"),
     (_x(5, 4), _dup(8, 60, 4, low=-3), _scaled(60, 4))),
    ("add-f32-wrap-2axes", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0, 1], reduction="add",
                                                                          index_mode="wrap"),
     (_x(6, 5, 3, dtype=np.float32), _dup(7, 40, 1, 6, low=-7), _scaled(40, 1, 3, dtype=np.float32))),
    ("add-f32-drop-broadcast-updates",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [1], reduction="add", index_mode="drop"),
     (_x(3, 4, dtype=np.float32), _dup(6, 3, 50, low=-6), _scaled(1, 50, dtype=np.float32))),
    ("mul-f64-drop-no-negatives",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="mul", index_mode="drop",
                                                   negative_indices=False),
     (_x(4, 3), _dup(5, 30, 3, low=-2), _x(30, 3) + 1)),
    ("none-f64-duplicates-last-wins",
     lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], index_mode="clamp"),
     (_x(4, 3), _dup(4, 25, 3), _x(25, 3))),
    ("add-int8-wraps", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add", index_mode="wrap"),
     (_i(100, 3, 2).astype(np.int8), _dup(3, 50, 2), _i(120, 50, 2).astype(np.int8))),
    ("min-int32", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [1], reduction="min", index_mode="clamp"),
     (_i(1000, 2, 5).astype(np.int32), _dup(5, 2, 30), _i(1000, 2, 30, low=-1000).astype(np.int32))),
    ("max-int64", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [1], reduction="max", index_mode="clamp"),
     (_i(1000, 2, 5), _dup(5, 2, 30), _i(1000, 2, 30, low=-1000))),
    ("mul-int64", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="mul", index_mode="wrap"),
     (_i(9, 3, 2, low=-9), _dup(3, 40, 2), _i(9, 40, 2, low=-9))),
    ("none-bool", lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], index_mode="clamp"),
     (_i(2, 4, 3).astype(bool), _dup(4, 9, 3), _i(2, 9, 3).astype(bool))),
    ("jax.at.min-int-clip", lambda x, i, u: multigather.jax.at(x)[i[:, 0]].min(u, mode="clip"),
     (_i(50, 5, 3), _dup(8, 30, 1, low=-8), _i(50, 30, 3, low=-50))),
    ("jax.at.multiply-drop", lambda x, i, u: multigather.jax.at(x)[i[:, 0], :].multiply(u, mode="drop"),
     (_x(5, 3), _dup(7, 20, 1, low=-7), _x(20, 3))),
    ("stablehlo.scatter-add-window", SCATTERS[8][1],
     (_x(5, 3), _dup(5, 30, 1), _scaled(30, 3))),
]


@pytest.mark.parametrize("name,fn,operands", SCATTER_BYTES, ids=[c[0] for c in SCATTER_BYTES])
def test_xla_scatter_gives_the_engines_bytes(name, fn, operands):
    eager = np.asarray(fn(*operands))
    args = [jnp.asarray(a) for a in operands]
    try:
        multigather.jax.set_jit_ops("xla")
        f = lambda a, b, c: fn(a, b, c)  # noqa: E731
        assert _custom_calls(f, *args) == 0
        jitted = np.asarray(jax.jit(f)(*args))
    finally:
        multigather.jax.set_jit_ops("auto")
    assert jitted.dtype == eager.dtype
    assert jitted.tobytes() == eager.tobytes(), name


def test_auto_sends_small_scatters_to_xla_and_the_rest_to_the_ffi():
    """auto: XLA's scatter for at most 262144 update positions, the FFI call above that, for
    float16 (multigather sums in float32), float min / max (NaN and signed-zero rules) and a
    scatter without its input (include_input false); an elementwise producer fuses into XLA's."""
    add = lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add", index_mode="clamp")  # noqa: E731
    small = (jnp.asarray(_x(16, 16)), jnp.asarray(_i(16, 4, 16)), jnp.asarray(_x(4, 16)))
    large = (jnp.asarray(_x(64, 512)), jnp.asarray(_i(64, 520, 512)), jnp.asarray(_x(520, 512)))
    broadcast = (large[0], large[1], jnp.asarray(_x(1, 512)))  # G counts, not the updates given
    assert _custom_calls(add, *small) == 0
    assert _custom_calls(add, *large) == 1
    assert _custom_calls(add, *broadcast) == 1
    half = [a.astype(jnp.float16) if a.dtype == jnp.float64 else a for a in small]
    assert _custom_calls(add, *half) == 1
    for reduction in ("min", "max"):
        assert _custom_calls(lambda x, i, u: multigather.scatter_multiaxis(
            x, i, u, [0], reduction=reduction, index_mode="clamp"), *small) == 1
    assert _custom_calls(lambda x, i, u: multigather.scatter_multiaxis(
        x, i, u, [0], reduction="add", index_mode="clamp", include_input=False), *small) == 1
    fused = jax.jit(lambda x, i, u: add(x, i, u * 2.0))
    hlo = fused.lower(*small).compile().as_text()
    assert "custom-call" not in hlo
    np.testing.assert_array_equal(np.asarray(fused(*small)),
                                  np.asarray(add(*[np.asarray(a) for a in small[:2]], np.asarray(small[2]) * 2.0)))


def test_auto_sends_large_element_gathers_to_the_ffi_and_the_rest_to_xla():
    """auto: a gather whose lookups each read one element (take_along_axis, a flat take, a
    column take) is the FFI call from 16384 lookups on, XLA's gather below; one whose lookups
    read rows is XLA's gather (bench/jax_ops.py --gather-sizes); all give numpy's values."""
    x, x3 = _x(128, 512), _x(3, 16, 4)
    rows, cols, down, flat = _i(128, 40), _i(512, 128, 128), _i(128, 32, 512), _i(128 * 512, 16384)
    along = lambda axis: lambda a, i: multigather.jax.take_along_axis(a, i, axis=axis)  # noqa: E731
    take = lambda axis=None: lambda a, i: multigather.jax.take(a, i, axis=axis)  # noqa: E731
    ffi = [(along(1), (x, cols), np.take_along_axis(x, cols, axis=1)),
           (along(0), (x, down), np.take_along_axis(x, down, axis=0)),
           (take(), (x, flat), np.take(x, flat)),
           (take(1), (x, cols[0]), np.take(x, cols[0], axis=1))]
    xla = [(along(1), (x, cols[:, :127]), np.take_along_axis(x, cols[:, :127], axis=1)),  # 16256 lookups
           (take(), (x, flat[:16383]), np.take(x, flat[:16383])),
           (take(0), (x, rows), np.take(x, rows, axis=0)),
           (take(1), (x3, rows % 16), np.take(x3, rows % 16, axis=1))]
    for cases, calls in ((ffi, 1), (xla, 0)):
        for fn, operands, want in cases:
            args = [jnp.asarray(a) for a in operands]
            assert _custom_calls(fn, *args) == calls, want.shape
            np.testing.assert_array_equal(np.asarray(jax.jit(fn)(*args)), want)


def test_xla_gather_fuses_with_its_consumer_and_auto_keeps_float16_on_the_ffi():
    table = jnp.asarray(_x(50, 8))
    ids = jnp.asarray(_i(50, 30))
    fused = jax.jit(lambda t, i: multigather.jax.take(t, i, axis=0) * 2.0)
    hlo = fused.lower(table, ids).compile().as_text()
    assert "custom-call" not in hlo and "fusion" in hlo
    np.testing.assert_array_equal(np.asarray(fused(table, ids)), np.asarray(table)[np.asarray(ids)] * 2.0)
    half = table.astype(jnp.float16)
    assert _custom_calls(lambda t, i: multigather.jax.take(t, i, axis=0), half, ids) == 1
    with pytest.raises(ValueError, match="'both' is not 'auto', 'xla' or 'ffi'"):
        multigather.jax.set_jit_ops("both")
    assert multigather.jax.jit_ops() == "auto"


def test_a_plain_jax_message_passing_layer_trains_the_same_on_multigather():
    """Client code: a graph layer written for JAX (gather the source nodes, transform, sum and
    max into the destination nodes), then the same layer with multigather's drop-ins: loss and
    gradients equal the unmodified layer's, eager and jitted, with auto's paths (XLA's gather
    and scatter-add, the FFI call's float max)."""
    rng = np.random.default_rng(3)
    nodes, edges, width = 60, 300, 8
    src, dst = jnp.asarray(rng.integers(0, nodes, edges)), jnp.asarray(rng.integers(0, nodes, edges))
    h = jnp.asarray(rng.standard_normal((nodes, width)))
    weight = jnp.asarray(rng.standard_normal((width, width)))

    def layer(take, at):
        def loss(w, h):
            messages = take(h, src, axis=0) @ w
            summed = at(jnp.zeros_like(h))[dst].add(jnp.tanh(messages))
            pooled = at(jnp.full_like(h, -1e9))[dst].max(messages)
            return (jax.nn.relu(summed) + 0.1 * pooled).sum()
        return jax.value_and_grad(loss, argnums=(0, 1))

    native = layer(jnp.take, lambda x: x.at)
    ours = layer(multigather.jax.take, multigather.jax.at)
    for wrap in (lambda f: f, jax.jit):
        (want, want_grads), (got, got_grads) = wrap(native)(weight, h), wrap(ours)(weight, h)
        np.testing.assert_allclose(float(got), float(want), rtol=1e-13)
        for g_got, g_want in zip(got_grads, want_grads):
            np.testing.assert_allclose(np.asarray(g_got), np.asarray(g_want), rtol=1e-12, atol=1e-12)
