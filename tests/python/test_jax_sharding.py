"""multigather's JAX ops under plain ``jax.jit`` with sharded operands, on 8 host devices (1-D
and 2-D meshes): each of XLA's four strategies (docs/distributed.md) keeps the sharded operand
split, the compiled HLO holds no all-gather, the results and gradients equal the unsharded
ones (the oracles: JAX's own ops on unsharded arrays, and multigather's unsharded call), and an
out-of-range index under index_mode error still fails with the unsharded call's message.

The checks run in one child interpreter: XLA_FLAGS=--xla_force_host_platform_device_count=8
must be set before JAX starts, and the other JAX tests have started it with one device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import require

SCRIPT = textwrap.dedent(r"""
    import json, os, re, sys, traceback
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import multigather
    import multigather.jax as mj

    assert len(jax.devices()) == 8, jax.devices()
    mesh1 = Mesh(np.array(jax.devices()).reshape(8), ("x",))
    mesh2 = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    rng = np.random.default_rng(5)
    results = {}

    def put(a, mesh, spec):
        return jax.device_put(jnp.asarray(a), NamedSharding(mesh, spec))

    def collectives(f, *args):
        text = f.lower(*args).compile().as_text()
        return {name: len(re.findall(name + r"(-start)?\(", text))
                for name in ("all-gather", "all-reduce", "all-to-all", "collective-permute")}

    def spec_of(a):
        spec = tuple(a.sharding.spec)
        while spec and spec[-1] is None:
            spec = spec[:-1]
        return spec

    def case(name):
        def wrap(fn):
            try:
                fn()
                results[name] = "ok"
            except Exception:
                results[name] = traceback.format_exc(limit=6)
            return fn
        return wrap

    table = rng.standard_normal((1024, 32)).astype(np.float32)
    ids = rng.integers(0, 1024, size=(4, 64)).astype(np.int32)

    def embed_loss(t, i):
        return (mj.take(t, i, axis=0) ** 2 * jnp.arange(32.0)).sum()

    def embed_loss_ref(t, i):
        return (jnp.take(t, i, axis=0) ** 2 * jnp.arange(32.0)).sum()

    @case("row_sharded_table")
    def _():
        # trivially sliced operand: each device gathers its rows, the pieces are summed
        f = jax.jit(lambda t, i: mj.take(t, i, axis=0))
        args = (put(table, mesh1, P("x", None)), put(ids, mesh1, P()))
        out = f(*args)
        np.testing.assert_array_equal(np.asarray(out), table[ids])
        c = collectives(f, *args)
        assert c["all-gather"] == 0 and c["all-reduce"] >= 1, c
        g = jax.jit(jax.grad(embed_loss))
        grad = g(*args)
        np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(embed_loss_ref)(table, ids)),
                                   rtol=1e-6, atol=1e-6)
        assert spec_of(grad) == ("x",), grad.sharding
        assert collectives(g, *args)["all-gather"] == 0

    @case("batch_sharded_ids")
    def _():
        # index pass-through: the output is split like the indices
        f = jax.jit(lambda t, i: mj.take(t, i, axis=0))
        args = (put(table, mesh1, P()), put(ids.reshape(-1), mesh1, P("x")))
        out = f(*args)
        np.testing.assert_array_equal(np.asarray(out), table[ids.reshape(-1)])
        assert spec_of(out) == ("x",), out.sharding
        assert collectives(f, *args)["all-gather"] == 0

    @case("point_sampling")
    def _():
        # index-parallel: image and points split by batch, the output stays split (index mode
        # clamp: in mode error the points replicate, so that every device checks every index)
        image = rng.standard_normal((8, 16, 16, 4)).astype(np.float32)
        points = rng.integers(0, 16, size=(8, 100, 1, 2)).astype(np.int32)
        f = jax.jit(lambda im, p: multigather.gather_multiaxis(im, p, [1, 2], index_mode="clamp"))
        args = (put(image, mesh1, P("x")), put(points, mesh1, P("x")))
        out = f(*args)
        b = np.arange(8)[:, None, None]
        expected = image[b, points[..., 0], points[..., 1]]
        np.testing.assert_array_equal(np.asarray(out), expected)
        assert spec_of(out) == ("x",), out.sharding
        assert collectives(f, *args)["all-gather"] == 0
        loss = lambda im, p: (multigather.gather_multiaxis(im, p, [1, 2], index_mode="clamp") ** 2).sum()
        ref = lambda im, p: (im[jnp.arange(8)[:, None, None], p[..., 0], p[..., 1]] ** 2).sum()
        g = jax.jit(jax.grad(loss))
        np.testing.assert_allclose(np.asarray(g(*args)), np.asarray(jax.grad(ref)(image, points)),
                                   rtol=1e-6)
        assert collectives(g, *args)["all-gather"] == 0

    @case("feature_sharded_table")
    def _():
        # operand pass-through on a 2-D mesh: rows on x, features on y
        f = jax.jit(lambda t, i: mj.take(t, i, axis=0))
        args = (put(table, mesh2, P("x", "y")), put(ids, mesh2, P()))
        out = f(*args)
        np.testing.assert_array_equal(np.asarray(out), table[ids])
        assert spec_of(out) == (None, None, "y"), out.sharding
        assert collectives(f, *args)["all-gather"] == 0
        g = jax.jit(jax.grad(embed_loss))
        np.testing.assert_allclose(np.asarray(g(*args)),
                                   np.asarray(jax.grad(embed_loss_ref)(table, ids)), rtol=1e-6, atol=1e-6)

    @case("rows_and_ids_sharded_2d")
    def _():
        # table rows on x, ids on y: both strategies at once
        f = jax.jit(lambda t, i: mj.take(t, i, axis=0))
        args = (put(table, mesh2, P("x", None)), put(ids, mesh2, P("y")))
        out = f(*args)
        np.testing.assert_array_equal(np.asarray(out), table[ids])
        assert collectives(f, *args)["all-gather"] == 0
        g = jax.jit(jax.grad(embed_loss))
        np.testing.assert_allclose(np.asarray(g(*args)),
                                   np.asarray(jax.grad(embed_loss_ref)(table, ids)), rtol=1e-6, atol=1e-6)

    @case("index_modes_exact")
    def _():
        # every index rule resolves against the whole axis, also out of range
        bad = ids.copy()
        bad[0, :6] = [-1, -1024, 1023, 1024, 5000, -5000]
        t = put(table, mesh1, P("x", None))
        i = put(bad, mesh1, P())
        for mode, fill in (("clip", None), ("wrap", None), ("fill", None), ("fill", -7.5), ("fill", 0.0)):
            f = jax.jit(lambda t, i: mj.take(t, i, axis=0, mode=mode, fill_value=fill))
            expected = jnp.take(table, bad, axis=0, mode=mode, fill_value=fill)
            np.testing.assert_array_equal(np.asarray(f(t, i)), np.asarray(expected), err_msg=str((mode, fill)))
            assert collectives(f, t, i)["all-gather"] == 0
        f = jax.jit(lambda t, i: multigather.run("numpy.take", t, i, axis=0))
        np.testing.assert_array_equal(np.asarray(f(t, put(ids - 1024, mesh1, P()))), table[ids - 1024])

    @case("error_mode_raises")
    def _():
        bad = ids.copy()
        bad[2, 7] = 1024
        f = jax.jit(lambda t, i: multigather.run("numpy.take", t, i, axis=0))
        whole = None
        try:
            np.asarray(jax.jit(lambda t, i: multigather.run("numpy.take", t, i, axis=0))(table, bad))
        except Exception as error:
            whole = str(error)
        assert whole is not None and "out of range" in whole, whole
        try:
            np.asarray(f(put(table, mesh1, P("x", None)), put(bad, mesh1, P())))
        except Exception as error:
            message = str(error)
        else:
            raise AssertionError("no error for an out-of-range index on a row-sharded table")
        core = re.search(r"numpy\.take: .*?\)\)", whole).group(0)
        assert core in message, (core, message)

    @case("replication_warns")
    def _():
        # no silent all-gather: an operand that arrives split and cannot stay split (numpy.take
        # without an axis flattens its input) gets a ReplicationWarning naming op, operand and
        # dimension; the strategies' calls get none
        import warnings
        from multigather._jax_sharding import ReplicationWarning
        t, i = put(table, mesh1, P("x", None)), put(ids, mesh1, P())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            flat = jax.jit(lambda t, i: multigather.run("numpy.take", t, i))
            np.testing.assert_array_equal(np.asarray(flat(t, i)), table.reshape(-1)[ids])
            assert collectives(flat, t, i)["all-gather"] >= 1
        messages = [str(w.message) for w in caught if issubclass(w.category, ReplicationWarning)]
        assert any("numpy.take (call) replicates input along its dimension 0" in m and "('x',)" in m
                   and "merges, splits or copies" in m for m in messages), messages
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = jax.jit(jax.grad(embed_loss))
            np.asarray(f(t, i))
            f.lower(t, i).compile()
        assert not [w for w in caught if issubclass(w.category, ReplicationWarning)], \
            [str(w.message) for w in caught]

    x = rng.standard_normal((512, 8)).astype(np.float32)
    rows = rng.integers(0, 512, size=(96,)).astype(np.int32)
    values = rng.standard_normal((96, 8)).astype(np.float32)

    @case("scatter_add_row_sharded")
    def _():
        # each device applies the updates that land in its rows: no all-gather, no all-reduce
        f = jax.jit(lambda x, i, v: mj.at_add(x, i[:, None], v))
        args = (put(x, mesh1, P("x", None)), put(rows, mesh1, P()), put(values, mesh1, P()))
        out = f(*args)
        expected = jnp.asarray(x).at[rows].add(values)
        np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-6)
        assert spec_of(out) == ("x",), out.sharding
        c = collectives(f, *args)
        assert c["all-gather"] == 0 and c["all-reduce"] == 0, c
        loss = lambda x, i, v: (mj.at_add(x, i[:, None], v) ** 2).sum()
        ref = lambda x, i, v: (x.at[i].add(v) ** 2).sum()
        g = jax.jit(jax.grad(loss, argnums=(0, 2)))
        got, want = g(*args), jax.grad(ref, argnums=(0, 2))(x, rows, values)
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
        assert collectives(g, *args)["all-gather"] == 0

    @case("scatter_add_update_sharded")
    def _():
        # the updates split: each device adds its share, the sums are all-reduced
        f = jax.jit(lambda x, i, v: mj.at_add(x, i[:, None], v))
        args = (put(x, mesh1, P()), put(rows, mesh1, P("x")), put(values, mesh1, P("x")))
        out = f(*args)
        np.testing.assert_allclose(np.asarray(out), np.asarray(jnp.asarray(x).at[rows].add(values)),
                                   rtol=1e-5, atol=1e-6)
        assert collectives(f, *args)["all-gather"] == 0

    @case("scatter_set_row_sharded")
    def _():
        dup = rows.copy()
        dup[10] = dup[3]  # a duplicate: the last update wins, as unsplit
        f = jax.jit(lambda x, i, v: mj.at_set(x, i[:, None], v))
        args = (put(x, mesh1, P("x", None)), put(dup, mesh1, P()), put(values, mesh1, P()))
        whole = jax.jit(lambda x, i, v: mj.at_set(x, i[:, None], v))(x, dup, values)
        np.testing.assert_array_equal(np.asarray(f(*args)), np.asarray(whole))
        assert collectives(f, *args)["all-gather"] == 0

    data = rng.standard_normal((800, 16)).astype(np.float32)
    seg = rng.integers(-2, 50, size=(800,)).astype(np.int32)  # negatives are dropped

    @case("segment_sum_sharded")
    def _():
        # a GNN's edges split over the devices (data rows and ids alike): each device sums its
        # rows into every segment, the partial sums are all-reduced; no all-gather, and the
        # data's gradient stays split like the data. Features split: no collective at all.
        import warnings
        from multigather._jax_sharding import ReplicationWarning
        want = np.asarray(jax.ops.segment_sum(data, seg, 48))
        f = jax.jit(lambda d, i: mj.segment_sum(d, i, 48))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = (put(data, mesh1, P("x", None)), put(seg, mesh1, P("x")))
            np.testing.assert_allclose(np.asarray(f(*rows)), want, rtol=1e-5, atol=1e-5)
            c = collectives(f, *rows)
            assert c["all-gather"] == 0 and c["all-reduce"] == 1, c
            cols = (put(data, mesh1, P(None, "x")), put(seg, mesh1, P()))
            out = f(*cols)
            np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)
            assert spec_of(out) == (None, "x"), out.sharding
            c = collectives(f, *cols)
            assert c["all-gather"] == 0 and c["all-reduce"] == 0, c
            loss = lambda d, i: (mj.segment_sum(d, i, 48) ** 2 * jnp.arange(16.0)).sum()
            ref = lambda d, i: (jax.ops.segment_sum(d, i, 48) ** 2 * jnp.arange(16.0)).sum()
            g = jax.jit(jax.grad(loss))
            for args in (rows, cols):
                grad = g(*args)
                np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(ref)(data, seg)), rtol=1e-5, atol=1e-5)
                assert spec_of(grad) == spec_of(args[0]), (grad.sharding, args[0].sharding)
                assert collectives(g, *args)["all-gather"] == 0
        assert not [w for w in caught if issubclass(w.category, ReplicationWarning)], \
            [str(w.message) for w in caught]
        # tf's unsorted_segment_sum is the same core call, but it checks its ids itself (an id
        # >= num_segments is TF's error): split rows replicate, with a warning that says why, so
        # that every device checks every id
        import multigather.tf as mtf
        h = jax.jit(lambda d, i: mtf.unsorted_segment_sum(d, jnp.clip(i, 0, 47), 48))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.testing.assert_allclose(np.asarray(h(*rows)), np.asarray(jax.ops.segment_sum(data, np.clip(seg, 0, 47), 48)),
                                       rtol=1e-5, atol=1e-5)
        assert [w for w in caught if issubclass(w.category, ReplicationWarning) and
                "checks every index on every device" in str(w.message)], [str(w.message) for w in caught]

    @case("segment_max_replicates_rows")
    def _():
        # a maximum needs all of a segment's rows: rows split replicate, with the warning; the
        # features still pass through
        import warnings
        from multigather._jax_sharding import ReplicationWarning
        f = jax.jit(lambda d, i: mj.segment_max(d, i, 48))
        want = np.asarray(jax.ops.segment_max(data, seg, 48))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = (put(data, mesh1, P("x", None)), put(seg, mesh1, P("x")))
            np.testing.assert_array_equal(np.asarray(f(*rows)), want)
        messages = [str(w.message) for w in caught if issubclass(w.category, ReplicationWarning)]
        assert any("jax.ops.segment_max (call) replicates input along its dimension 0" in m
                   and "combine for a sum only" in m for m in messages), messages
        cols = (put(data, mesh1, P(None, "x")), put(seg, mesh1, P()))
        out = f(*cols)
        np.testing.assert_array_equal(np.asarray(out), want)
        assert spec_of(out) == (None, "x") and collectives(f, *cols)["all-gather"] == 0

    @case("vmap_under_sharding")
    def _():
        # jax.vmap's batch dimension is one more batch factor: a batch split over devices
        # stays split (per-example code vmapped over a sharded batch), gradients included
        f = jax.jit(jax.vmap(lambda t, i: mj.take(t, i, axis=0), in_axes=(None, 0)))
        args = (put(table, mesh1, P()), put(ids[:, :8].T.copy(), mesh1, P("x")))
        out = f(*args)
        np.testing.assert_array_equal(np.asarray(out), table[ids[:, :8].T])
        assert spec_of(out) == ("x",), out.sharding
        assert collectives(f, *args)["all-gather"] == 0
        g = jax.jit(jax.vmap(jax.grad(lambda t, i: (mj.take(t, i, axis=0) ** 2).sum()), in_axes=(None, 0)))
        want = jax.vmap(jax.grad(lambda t, i: (jnp.take(t, i, axis=0) ** 2).sum()), in_axes=(None, 0))(table, ids[:, :8].T)
        np.testing.assert_allclose(np.asarray(g(*args)), np.asarray(want), rtol=1e-6)
        assert collectives(g, *args)["all-gather"] == 0
        # a batched scatter on a batch-sharded input, and vmap over the batch of point clouds
        xs = rng.standard_normal((8, 64, 4)).astype(np.float32)
        rows8 = rng.integers(0, 64, size=(8, 16)).astype(np.int32)
        v8 = rng.standard_normal((8, 16, 4)).astype(np.float32)
        h = jax.jit(jax.vmap(lambda x, i, v: mj.at_add(x, i[:, None], v)))
        hargs = (put(xs, mesh1, P("x")), put(rows8, mesh1, P("x")), put(v8, mesh1, P("x")))
        want = jax.vmap(lambda x, i, v: x.at[i].add(v))(xs, rows8, v8)
        np.testing.assert_allclose(np.asarray(h(*hargs)), np.asarray(want), rtol=1e-6)
        assert collectives(h, *hargs)["all-gather"] == 0
        # a row-sharded table under vmap: each device's piece, lifted by the batch dimension
        f = jax.jit(jax.vmap(lambda t, i: mj.take(t, i, axis=0), in_axes=(None, 0)))
        args = (put(table, mesh1, P("x", None)), put(ids, mesh1, P()))
        np.testing.assert_array_equal(np.asarray(f(*args)), table[ids])
        assert collectives(f, *args)["all-gather"] == 0
        loss = lambda t, i: (jax.vmap(lambda t, i: mj.take(t, i, axis=0), in_axes=(None, 0))(t, i) ** 2).sum()
        ref = lambda t, i: (jnp.take(t, i, axis=0) ** 2).sum()
        g = jax.jit(jax.grad(loss))
        np.testing.assert_allclose(np.asarray(g(*args)), np.asarray(jax.grad(ref)(table, ids)), rtol=1e-6, atol=1e-6)
        assert collectives(g, *args)["all-gather"] == 0
        # and an out-of-range index of one example still fails
        bad = ids.copy()
        bad[3, 5] = 5000
        try:
            np.asarray(jax.jit(jax.vmap(lambda t, i: multigather.run("numpy.take", t, i, axis=0),
                                        in_axes=(None, 0)))(args[0], put(bad, mesh1, P())))
        except Exception as error:
            assert "5000" in str(error) and "out of range" in str(error), str(error)
        else:
            raise AssertionError("no error for an out-of-range index under vmap")

    @case("every_op_every_sharding")
    def _():
        # every gather and scatter case of test_jax_ops.py, with each operand dimension of even
        # size split over 2 devices (and all operands split at once): jit equals the eager call,
        # and jit(grad) equals the unsharded jit(grad) (float64)
        sys.path.insert(0, os.environ["MULTIGATHER_TESTS_DIR"])
        import test_jax_ops as cases  # enables x64, as its own tests do
        mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
        failures, runs = [], 0
        for name, fn, operands, _ in cases.GATHERS + cases.SCATTERS:
            eager = np.asarray(fn(*operands))
            even = [[d for d, n in enumerate(np.shape(a)) if n % 2 == 0 and n > 0] for a in operands]
            layouts = [{k: d} for k in range(len(operands)) for d in even[k]]
            layouts.append({k: dims[0] for k, dims in enumerate(even) if dims})
            floats = [k for k, a in enumerate(operands) if np.issubdtype(np.asarray(a).dtype, np.floating)]
            weight = jnp.asarray(np.random.default_rng(1).standard_normal(eager.shape))
            loss = lambda *a: (fn(*a) * weight).sum()
            grad = jax.jit(jax.grad(loss, argnums=tuple(floats)))
            try:
                want_grad = grad(*[jnp.asarray(a) for a in operands])
            except NotImplementedError:
                want_grad = None
            for layout in layouts:
                args = [put(a, mesh, P(*([None] * layout[k] + ["x"])) if k in layout else P())
                        for k, a in enumerate(operands)]
                runs += 1
                try:
                    got = np.asarray(jax.jit(fn)(*args))
                    np.testing.assert_allclose(got, eager, rtol=1e-12, atol=1e-12)
                    if want_grad is not None:
                        for a, b in zip(grad(*args), want_grad):
                            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
                except Exception as error:
                    failures.append(f"{name} {layout}: {type(error).__name__}: {str(error)[:300]}")
        assert runs > 60 and not failures, "\n".join(failures)

    print("RESULTS " + json.dumps(results))
""")

CASES = ["row_sharded_table", "batch_sharded_ids", "point_sampling", "feature_sharded_table",
         "rows_and_ids_sharded_2d", "index_modes_exact", "error_mode_raises",
         "scatter_add_row_sharded", "scatter_add_update_sharded", "scatter_set_row_sharded",
         "vmap_under_sharding", "every_op_every_sharding", "replication_warns", "segment_sum_sharded",
         "segment_max_replicates_rows"]


@pytest.fixture(scope="module")
def results() -> dict:
    require("jax")
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["MULTIGATHER_TESTS_DIR"] = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-4000:] + proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULTS "):])


@pytest.mark.parametrize("name", CASES)
def test_sharded(results: dict, name: str) -> None:
    assert results.get(name) == "ok", results.get(name, "the case did not run")


ERROR_MODE_SCRIPT = textwrap.dedent(r"""
    import warnings
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import multigather as mg

    mesh = Mesh(np.array(jax.devices()), ("x",))
    table = jnp.arange(32.).reshape(8, 4)
    good = np.array([0, 1, 2, 3, 4, 5, 6, 7])
    bad = good.copy()
    bad[5] = 99
    calls = {
        "gather_multiaxis": lambda t, i: mg.gather_multiaxis(t, i[:, None], [0]).sum(),
        "torch.index_select": lambda t, i: mg.run("torch.index_select", t, i, dim=0).mean(),
        "tf.math.unsorted_segment_sum": lambda t, i: mg.run("tf.math.unsorted_segment_sum", t, i,
                                                           num_segments=8).sum(),
    }
    for name, call in calls.items():
        f = jax.jit(call)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ids = jax.device_put(jnp.asarray(good), NamedSharding(mesh, P("x")))
            assert np.allclose(f(table, ids), call(table, good)), name  # right values, sharded ids
        assert any("index_mode 'error'" in str(w.message) for w in caught), (name, [str(w.message) for w in caught])
        try:
            np.asarray(f(table, jax.device_put(jnp.asarray(bad), NamedSharding(mesh, P("x")))))
        except Exception as error:
            message = str(error)
        else:
            raise AssertionError(name + ": no error")
        assert "out of range" in message and "[5" in message, (name, message)  # the global position
        print("raised", name, flush=True)
    print("done")
""")


def test_error_mode_on_sharded_indices_raises_on_every_device():
    """An out-of-range index in ONE device's shard of the indices, in index_mode 'error', under
    plain jax.jit, followed by a collective (a sum): every device raises, with the unsplit
    call's message (the global position), and the process lives. It used to fail on that
    device alone while the others waited at the collective, until XLA aborted the process."""
    require("jax")
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-c", ERROR_MODE_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
