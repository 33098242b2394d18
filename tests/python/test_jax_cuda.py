"""jax.grad through multigather ops on a CUDA JAX device (the CUDA FFI handlers of a CUDA build:
execute_vjp on the CUDA engine, on XLA's stream). Skipped without a JAX GPU device or without
the CUDA handler; under MULTIGATHER_REQUIRE_GPU=1 (bench/cuda_check.sh, where nvidia-smi lists a
GPU) a missing CUDA handler is a failure instead (a JAX without its CUDA plugin still skips).

The checks run in a child interpreter: the other JAX tests pin JAX to the CPU platform
(jax_platforms = "cpu", set when test_jax_ops.py is imported), and a platform cannot be added to
a JAX process afterwards.

Oracles: JAX's own gradients (jnp.take, jnp.take_along_axis, .at[].add / .set,
jax.ops.segment_*) on the same GPU, to rounding (XLA's GPU scatter-add sums in its own order),
and multigather's gradients on the CPU engine, byte for byte (the CUDA engine's deterministic
scatter-add sums in row-major order, as the CPU engine does)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import require

REQUIRE_GPU = os.environ.get("MULTIGATHER_REQUIRE_GPU") == "1"

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import multigather

    DRY_RUN = len(sys.argv) > 1 and sys.argv[1] == "--on-the-cpu"  # the script's own check
    if DRY_RUN:
        gpus = jax.devices("cpu")
    else:
        if "CUDA" not in multigather._multigather.jax_ffi_handlers():
            print("SKIP: this build of multigather has no CUDA FFI handler (MULTIGATHER_CUDA=OFF or "
                  "no XLA FFI headers)")
            sys.exit(0)
        try:
            gpus = jax.devices("gpu")
        except RuntimeError as error:
            gpus = []
            why = str(error)
        else:
            why = "no GPU device"
        if not gpus:
            print(f"SKIP: JAX {jax.__version__} sees no GPU ({why})")
            sys.exit(0)
    gpu, cpu = gpus[0], jax.devices("cpu")[0]
    rng = np.random.default_rng(11)
    checks = []


    def on(device, *arrays):
        return [jax.device_put(jnp.asarray(a), device) for a in arrays]


    def check(name, ours, theirs, *args):
        # ours on the GPU (what it returns stays there) vs theirs on the GPU (to rounding) and
        # ours on the CPU engine (bytes).
        got = ours(*on(gpu, *args))
        for g in jax.tree_util.tree_leaves(got):
            assert g.devices() == {gpu}, (name, g.devices())
        want = theirs(*on(gpu, *args))
        host = ours(*on(cpu, *args))
        for g, w, h in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                           jax.tree_util.tree_leaves(host)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12, err_msg=name)
            assert np.asarray(g).tobytes() == np.asarray(h).tobytes(), name + ": not the CPU engine's bytes"
        checks.append(name)


    # Gathers: duplicates (their cotangents add), negative indices, jit, per-example grads.
    x = rng.standard_normal((6, 5))
    i = rng.integers(-6, 6, size=(4, 7))
    w = rng.standard_normal((4, 7, 5))
    check("forward gather_multiaxis under jit", jax.jit(lambda a, b: multigather.gather_multiaxis(a, b, [0])),
          lambda a, b: jnp.take_along_axis(a, b, axis=0), x, rng.integers(0, 6, size=(4, 5)))
    check("take", lambda a, b, c: jax.grad(lambda a: (multigather.jax.take(a, b, axis=0) * c).sum())(a),
          lambda a, b, c: jax.grad(lambda a: (jnp.take(a, b, axis=0) * c).sum())(a), x, i, w)
    check("take under jit",
          jax.jit(lambda a, b, c: jax.grad(lambda a: (multigather.jax.take(a, b, axis=0) * c).sum())(a)),
          lambda a, b, c: jax.grad(lambda a: (jnp.take(a, b, axis=0) * c).sum())(a), x, i, w)
    x32 = rng.standard_normal((300, 64)).astype(np.float32)
    ids = rng.integers(0, 300, size=20000)
    w32 = rng.standard_normal((20000, 64)).astype(np.float32)
    got = jax.grad(lambda a, b, c: (multigather.jax.take(a, b, axis=0) * c).sum())(*on(gpu, x32, ids, w32))
    host = jax.grad(lambda a, b, c: (multigather.jax.take(a, b, axis=0) * c).sum())(*on(cpu, x32, ids, w32))
    theirs = jax.grad(lambda a, b, c: (jnp.take(a, b, axis=0) * c).sum())(*on(gpu, x32, ids, w32))
    assert np.asarray(got).tobytes() == np.asarray(host).tobytes(), "float32 embedding: not the CPU engine's bytes"
    np.testing.assert_allclose(np.asarray(got), np.asarray(theirs), rtol=1e-4, atol=1e-3)
    checks.append("float32 embedding, 20000 lookups")
    j = rng.integers(0, 5, size=(4, 3))
    w2 = rng.standard_normal((4, 3))
    x2 = rng.standard_normal((5, 3))
    check("take_along_axis",
          lambda a, b, c: jax.grad(lambda a: (multigather.jax.take_along_axis(a, b, axis=0) * c).sum())(a),
          lambda a, b, c: jax.grad(lambda a: (jnp.take_along_axis(a, b, axis=0) * c).sum())(a), x2, j, w2)
    ib = rng.integers(0, 6, size=(3, 4, 2))
    check("per-example grads (vmap of grad)",
          lambda a, b: jax.vmap(jax.grad(lambda a, b: (multigather.jax.take(a, b, axis=0) ** 2).sum()),
                                in_axes=(None, 0))(a, b),
          lambda a, b: jax.vmap(jax.grad(lambda a, b: (jnp.take(a, b, axis=0) ** 2).sum()),
                                in_axes=(None, 0))(a, b), x, ib)

    # Scatters: .at[].add (duplicates add), .at[].set (the last duplicate wins: multigather's
    # rule; JAX's GPU scatter leaves the winner unspecified, so set uses distinct rows against
    # JAX and duplicates against the CPU engine), scatter_multiaxis add, a dropped row.
    xs = rng.standard_normal((5, 3))
    us = rng.standard_normal((5, 3))
    ws = rng.standard_normal((5, 3))
    rows = np.array([1, 4, 1, 0, 7])  # 7: out of range, dropped
    check(".at[].add", lambda a, r, b, c: jax.grad(lambda a, b: (multigather.jax.at(a)[r].add(b) * c).sum(),
                                                   argnums=(0, 1))(a, b),
          lambda a, r, b, c: jax.grad(lambda a, b: (a.at[r].add(b) * c).sum(), argnums=(0, 1))(a, b),
          xs, rows, us, ws)
    distinct = np.array([1, 4, 3, 0, 2])
    check(".at[].set", lambda a, r, b, c: jax.grad(lambda a, b: (multigather.jax.at(a)[r].set(b) * c).sum(),
                                                   argnums=(0, 1))(a, b),
          lambda a, r, b, c: jax.grad(lambda a, b: (a.at[r].set(b) * c).sum(), argnums=(0, 1))(a, b),
          xs, distinct, us, ws)
    set_dup = lambda a, r, b, c: jax.grad(lambda a, b: (multigather.jax.at(a)[r].set(b) * c).sum(),
                                          argnums=(0, 1))(a, b)
    got = set_dup(*on(gpu, xs, rows, us, ws))
    host = set_dup(*on(cpu, xs, rows, us, ws))
    for g, h in zip(got, host):
        assert np.asarray(g).tobytes() == np.asarray(h).tobytes(), ".at[].set with duplicates"
    assert np.asarray(got[1])[0].tolist() == [0.0, 0.0, 0.0], "row 1 is written again by update 2: no gradient"
    checks.append(".at[].set with duplicates")
    idx = np.repeat(np.array([1, 4, 1, 0])[:, None], 3, axis=1)
    check("scatter_multiaxis add",
          lambda a, b, u, c: jax.grad(lambda a, u: (multigather.scatter_multiaxis(a, b, u, [0], reduction="add")
                                                    * c).sum(), argnums=(0, 1))(a, u),
          lambda a, b, u, c: jax.grad(lambda a, u: (a.at[b[:, 0]].add(u) * c).sum(), argnums=(0, 1))(a, u),
          xs, idx, us[:4], ws)
    # vmap of a scatter's gradient (the lifted lowering, batch dimensions leading).
    xb = rng.standard_normal((3, 5, 3))
    ub = rng.standard_normal((3, 4, 3))
    ibx = rng.integers(0, 5, size=(3, 4, 3))
    columns = np.arange(3)[None, :]
    check("vmap of a scatter's gradient",
          lambda a, b, u: jax.vmap(jax.grad(lambda a, b, u: (multigather.scatter_multiaxis(
              a, b, u, [0], reduction="add") ** 2).sum(), argnums=(0, 2)))(a, b, u),
          lambda a, b, u: jax.vmap(jax.grad(lambda a, b, u: (a.at[b, columns].add(u) ** 2).sum(),
                                            argnums=(0, 2)))(a, b, u),
          xb, ibx, ub)

    # Segment ops (their identity filled in on the device): sum's forward and gradient under jit
    # with dropped ids, max / min / prod forwards, against jax.ops.segment_* (max / min exactly).
    xd = rng.standard_normal((50, 4))
    seg = rng.integers(-1, 8, size=50)  # -1 and 7: dropped
    wd = rng.standard_normal((7, 4))
    check("segment_sum and its gradient under jit",
          jax.jit(lambda a, s, c: jax.grad(lambda a: (multigather.jax.segment_sum(a, s, num_segments=7) * c).sum())(a)),
          lambda a, s, c: jax.grad(lambda a: (jax.ops.segment_sum(a, s, num_segments=7) * c).sum())(a), xd, seg, wd)
    check("segment_sum", lambda a, s: multigather.jax.segment_sum(a, s, num_segments=7),
          lambda a, s: jax.ops.segment_sum(a, s, num_segments=7), xd, seg)
    check("segment_sum with num_segments None (the ids' max + 1, read back)",
          lambda a, s: multigather.jax.segment_sum(a, s), lambda a, s: jax.ops.segment_sum(a, s), xd, seg)
    for name in ("segment_max", "segment_min", "segment_prod"):
        check(name, lambda a, s: getattr(multigather.jax, name)(a, s, num_segments=7),
              lambda a, s: getattr(jax.ops, name)(a, s, num_segments=7), xd, seg)
    tied = np.round(xd * 2) / 2  # ties: JAX's rule shares a segment's gradient among them
    for name in ("segment_max", "segment_min"):
        check(name + "'s gradient",
              lambda a, s, c: jax.grad(lambda a: (getattr(multigather.jax, name)(a, s, num_segments=7) * c).sum())(a),
              lambda a, s, c: jax.grad(lambda a: (getattr(jax.ops, name)(a, s, num_segments=7) * c).sum())(a),
              tied, seg, wd)
    print("OK", ", ".join(checks))
""")


def run_script(*args: str) -> subprocess.CompletedProcess:
    require("jax")
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)
    env["PYTHONUNBUFFERED"] = "1"  # a crash keeps what the script printed before it
    # -X faulthandler: a fatal signal prints every thread's Python stack to stderr (a failure
    # shows where the child died, not only its exit status).
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT, *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_gpu_checks_themselves_on_the_cpu():
    # The script with the CPU device in the GPU's place: its calls and oracles hold where no GPU
    # is (each comparison then runs the CPU engine twice).
    require("jax")
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    result = subprocess.run([sys.executable, "-c", SCRIPT, "--on-the-cpu"], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.startswith("OK"), result.stdout + result.stderr[-4000:]


def test_jax_grad_on_a_cuda_device_equals_jax_and_the_cpu_engine():
    result = run_script()
    out = result.stdout.strip()
    if result.returncode == 0 and out.startswith("SKIP: "):
        # A JAX without its CUDA plugin is the machine's image, not a multigather failure: only
        # a missing handler in a GPU run fails.
        if REQUIRE_GPU and "sees no GPU" not in out:
            pytest.fail(f"MULTIGATHER_REQUIRE_GPU=1 but {out[6:]}", pytrace=False)
        pytest.skip(out[6:])
    assert result.returncode == 0 and out.startswith("OK"), result.stdout + result.stderr[-4000:]
