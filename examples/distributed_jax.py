"""multigather under plain jax.jit with sharded operands, on 8 host devices (docs/distributed.md).

    python3 examples/distributed_jax.py [--repeats 20]

Two training-style steps, forward and gradient, each written three ways under the SAME input
shardings:
  - multigather (partitioned: its sharding rule and partition callback),
  - multigather with MULTIGATHER_JAX_SHARDING=0 (what a custom call got before: replicated),
  - XLA's own gather (jnp.take / advanced indexing), partitioned by XLA itself.

  1. embedding bag: a [65536, 64] float32 table split by rows over 8 devices (vocabulary
     parallelism), bags of 20 ids, summed per bag; the gradient flows to the table.
  2. point sampler: an [8, 128, 128, 16] image batch and [8, 4096] (y, x) points, both split by
     batch; the gradient flows to the image.

For each it prints the per-device memory of the compiled step (compiled.memory_analysis():
arguments, outputs and temporaries, bytes per device), the collectives in the compiled HLO,
and the median time of one step. The 8 devices share this machine's cores, so the times
compare the three forms with each other, not with one device.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import multigather  # noqa: E402
import multigather.jax as mj  # noqa: E402

COLLECTIVES = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")


def collectives(text: str) -> str:
    counts = {c: len(re.findall(re.escape(c) + r"(-start)?\(", text)) for c in COLLECTIVES}
    return ", ".join(f"{c} {n}" for c, n in counts.items() if n) or "none"


def memory(compiled) -> str:
    m = compiled.memory_analysis()
    if m is None:
        return "n/a"
    mib = 1 << 20
    return (f"args {m.argument_size_in_bytes / mib:6.2f} MiB, out {m.output_size_in_bytes / mib:6.2f} MiB, "
            f"temp {m.temp_size_in_bytes / mib:6.2f} MiB")


def median_ms(fn, args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def compare(title: str, forms: dict, args: tuple, repeats: int) -> dict:
    """forms: name -> (function, replicate?). Returns name -> (result, ms)."""
    print(f"\n{title}")
    print(f"  {'form':<28} {'per-device memory (memory_analysis)':<52} {'collectives':<34} {'ms':>8}")
    out = {}
    for name, (fn, replicate) in forms.items():
        os.environ["MULTIGATHER_JAX_SHARDING"] = "0" if replicate else "1"
        jitted = jax.jit(fn)
        compiled = jitted.lower(*args).compile()
        ms = median_ms(jitted, args, repeats)
        out[name] = (jitted(*args), ms)
        print(f"  {name:<28} {memory(compiled):<52} {collectives(compiled.as_text()):<34} {ms:8.2f}")
    os.environ["MULTIGATHER_JAX_SHARDING"] = "1"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    mesh = Mesh(np.array(jax.devices()).reshape(8), ("x",))
    rng = np.random.default_rng(0)
    print(f"jax {jax.__version__}, {len(jax.devices())} host devices, multigather {multigather.__version__}")

    # 1. embedding bag, vocabulary-parallel table
    table = jax.device_put(rng.standard_normal((65536, 64)).astype(np.float32), NamedSharding(mesh, P("x", None)))
    ids = jax.device_put(rng.integers(0, 65536, size=(512, 20)).astype(np.int32), NamedSharding(mesh, P()))
    weights = jnp.linspace(-1.0, 1.0, 64)

    def bag_loss(take):
        return lambda t, i: ((take(t, i).sum(axis=1) * weights) ** 2).sum()

    mg_take = lambda t, i: mj.take(t, i, axis=0)
    xla_take = lambda t, i: jnp.take(t, i, axis=0)
    forms = {
        "multigather (partitioned)": (jax.value_and_grad(bag_loss(mg_take)), False),
        "multigather (replicated)": (jax.value_and_grad(bag_loss(mg_take)), True),
        "XLA gather": (jax.value_and_grad(bag_loss(xla_take)), False),
    }
    r = compare("1. embedding bag: table [65536, 64] f32 P('x', None), ids [512, 20] replicated; "
                "loss and grad", forms, (table, ids), args.repeats)
    (loss_mg, grad_mg), _ = r["multigather (partitioned)"]
    (loss_x, grad_x), _ = r["XLA gather"]
    np.testing.assert_allclose(np.asarray(grad_mg), np.asarray(grad_x), rtol=2e-4, atol=1e-3)
    print(f"  gradient sharding: {grad_mg.sharding.spec}; equal to XLA's to float rounding: yes")

    # 2. point sampler, batch-parallel
    image = jax.device_put(rng.standard_normal((8, 128, 128, 16)).astype(np.float32), NamedSharding(mesh, P("x")))
    points = jax.device_put(rng.integers(0, 128, size=(8, 4096, 1, 2)).astype(np.int32), NamedSharding(mesh, P("x")))

    def sample_loss(sample):
        return lambda im, p: (sample(im, p) ** 2).sum()

    mg_sample = lambda im, p: multigather.gather_multiaxis(im, p, [1, 2])
    xla_sample = lambda im, p: im[jnp.arange(8)[:, None, None], p[..., 0], p[..., 1]]
    forms = {
        "multigather (partitioned)": (jax.value_and_grad(sample_loss(mg_sample)), False),
        "multigather (replicated)": (jax.value_and_grad(sample_loss(mg_sample)), True),
        "XLA gather": (jax.value_and_grad(sample_loss(xla_sample)), False),
    }
    r = compare("2. point sampler: image [8, 128, 128, 16] f32 P('x'), points [8, 4096, 1, 2] P('x'); "
                "loss and grad", forms, (image, points), args.repeats)
    (_, g_mg), _ = r["multigather (partitioned)"]
    (_, g_x), _ = r["XLA gather"]
    np.testing.assert_allclose(np.asarray(g_mg), np.asarray(g_x), rtol=1e-5, atol=1e-5)
    print(f"  gradient sharding: {g_mg.sharding.spec}; equal to XLA's: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
