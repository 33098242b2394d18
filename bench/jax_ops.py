"""multigather inside jax.jit (the XLA FFI custom call, multigather._jax_ffi) against JAX's own
gathers and scatters under jit, on the cases of docs/bench.md that JAX can express, in one
process:

  1 embedding            jnp.take(table, idx, axis=0)           vs multigather.jax.take
  2 mid_axis_block       jnp.take(x, idx, axis=1)               vs multigather.jax.take
  3 elements_last_axis   jnp.take_along_axis(x, idx, axis=-1)   vs multigather.jax.take_along_axis
  4 elements_axis0       jnp.take_along_axis(x, idx, axis=0)    vs multigather.jax.take_along_axis
  5 gathernd_batch1      x[b, i[..., 0], i[..., 1]]             vs gather_multiaxis(x, i, [1, 2])
  6 nhwc_xy              x[b, i[..., 1], i[..., 0]]             vs gather_multiaxis(x, i, [2, 1])
  7 flat_take            jnp.take(x, idx)                       vs multigather.jax.take
  8 embedding_fp16       as 1, float16 [1000000, 64]
  9 tiny                 jnp.take(x16x16, idx4, axis=0): microseconds per jitted call
  S1 embedding_backward  zeros.at[idx].add(updates)             vs scatter_multiaxis(..., "add")
  S3 scatter_add_axis0   x.at[idx, cols].add(updates)           vs scatter_multiaxis(..., [0], "add")
  S4 scatter_nd_points   x.at[b, y, x].add(rows)                vs scatter_multiaxis(..., [0, 1, 2], "add")
  S5 flat_put_add        x.at[idx].add(updates)                 vs scatter_multiaxis(..., [0], "add")
  S7 tiny_scatter        x16x16.at[idx4].add(u)                 vs multigather.jax.at(x)[idx4].add(u):
                         microseconds per jitted call
  S8 scatter_add_times_two  x.at[idx].add(u * 2.0), 256 x 64 updates (elementwise producer)
                         vs multigather.jax.at(x)[idx].add(u * 2.0): microseconds per call
  S6 embedding_train     forward + backward: jax.grad of (take(table, idx) * g).sum() with
                         jnp.take vs multigather.jax.take (backward: scatter-add via the FFI VJP)

    python3 bench/jax_ops.py [--threads N] [--repeat R] [--quick] [--jit-ops auto|xla|ffi]

--jit-ops: how multigather's gathers and scatters run under jit (multigather.jax.set_jit_ops).
S1-S5 call scatter_multiaxis in index mode "error", which always takes the FFI call; S7 and S8
call the drop-in multigather.jax.at (JAX's drop rule), which auto may send to XLA's scatter.

--threads 1 runs XLA's CPU backend single-threaded (XLA_FLAGS
--xla_cpu_multi_thread_eigen=false, set before jax is imported, and the process pinned to one
core: XLA's CPU client runs large gathers and loop fusions on its intra-op pool even without
Eigen's threads) and multigather on one thread; without it both use every core. Prints median ms per jitted call (block_until_ready) and the
ratio multigather / jax (below 1: multigather faster), the two sides' runs alternated; every
case first checks that both give
the same values (scatter-add sums compared with a float tolerance: XLA's order of additions is
its own; multigather's is row-major and deterministic).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="1: one thread for both")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="smaller shapes (a smoke run)")
    parser.add_argument("--jit-ops", default="auto", choices=["auto", "xla", "ffi"],
                        help="multigather.jax.set_jit_ops: XLA's gather / scatter or the FFI call under jit")
    parser.add_argument("--scatter-sizes", action="store_true",
                        help="only the sweep behind auto's scatter rule: multigather.jax.at(x)[i].add(u) "
                             "under jit as XLA's scatter and as the FFI call, 64 to 4M updated elements")
    parser.add_argument("--gather-sizes", action="store_true",
                        help="only the sweep behind auto's gather rule: element gathers (take_along_axis "
                             "on the last axis, flat take) under jit as XLA's gather and as the FFI call, "
                             "256 to 4M lookups")
    args = parser.parse_args()
    if args.threads == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()
        # XLA's CPU client still runs a large gather or loop fusion on its intra-op pool's
        # threads without Eigen's (perf shows the jitted code on two threads): one core for the
        # whole process, so that both sides get one.
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import numpy as np

    import multigather
    import multigather.jax as mj
    mj.set_jit_ops(args.jit_ops)

    multigather.set_num_threads(args.threads)
    q = 8 if args.quick else 1
    rng = np.random.default_rng(0)
    if args.scatter_sizes:
        scatter_sizes(args, jax, jnp, np, mj, rng)
        return
    if args.gather_sizes:
        gather_sizes(args, jax, jnp, np, mj, rng)
        return

    def timed(fns, *operands, number=1):
        return median_times(jax, fns, operands, args.repeat, number)

    rows = []

    def case(name, theirs, ours, operands, *, exact=True, number=1, unit="ms"):
        operands = [jnp.asarray(a) for a in operands]
        jt, mt = jax.jit(theirs), jax.jit(ours)
        a, b = np.asarray(jt(*operands)), np.asarray(mt(*operands))
        if exact:
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3, err_msg=name)
        t_jax, t_mg = timed([jt, mt], *operands, number=number)
        scale = 1e6 if unit == "us" else 1e3
        rows.append((name, unit, t_jax * scale, t_mg * scale, t_mg / t_jax))
        print(f"{name:24s} {unit:>3s}  jax {t_jax * scale:10.3f}  multigather {t_mg * scale:10.3f}"
              f"  ratio {t_mg / t_jax:5.2f}", flush=True)

    f32 = np.float32
    table = rng.standard_normal((50000 // q, 512)).astype(f32)
    idx = rng.integers(0, table.shape[0], 8192 // q)
    case("1 embedding", lambda t, i: jnp.take(t, i, axis=0),
         lambda t, i: mj.take(t, i, axis=0), (table, idx))
    x2 = rng.standard_normal((32 // q, 1024, 256)).astype(f32)
    i2 = rng.integers(0, 1024, 512)
    case("2 mid_axis_block", lambda x, i: jnp.take(x, i, axis=1),
         lambda x, i: mj.take(x, i, axis=1), (x2, i2))
    x3 = rng.standard_normal((4096 // q, 1024)).astype(f32)
    i3 = rng.integers(0, 1024, (4096 // q, 256))
    case("3 elements_last_axis", lambda x, i: jnp.take_along_axis(x, i, axis=-1),
         lambda x, i: mj.take_along_axis(x, i, axis=-1), (x3, i3))
    x4 = rng.standard_normal((1024, 4096 // q)).astype(f32)
    i4 = rng.integers(0, 1024, (256, 4096 // q))
    case("4 elements_axis0", lambda x, i: jnp.take_along_axis(x, i, axis=0),
         lambda x, i: mj.take_along_axis(x, i, axis=0), (x4, i4))
    x5 = rng.standard_normal((4, 512 // q, 512, 32)).astype(f32)
    i5 = np.stack([rng.integers(0, 512 // q, (4, 65536 // q)), rng.integers(0, 512, (4, 65536 // q))], -1)
    bidx = np.arange(4)[:, None]
    case("5 gathernd_batch1", lambda x, i: x[bidx, i[..., 0], i[..., 1]],
         lambda x, i: multigather.gather_multiaxis(x, i[:, :, None, :], [1, 2])[:, :, 0, :],
         (x5, i5))
    x6 = rng.standard_normal((8, 256 // q, 256, 16)).astype(f32)
    i6 = np.stack([rng.integers(0, 256, (8, 4096)), rng.integers(0, 256 // q, (8, 4096))], -1)
    b6 = np.arange(8)[:, None]
    case("6 nhwc_xy", lambda x, i: x[b6, i[..., 1], i[..., 0]],
         lambda x, i: multigather.gather_multiaxis(x, i[:, :, None, :], [2, 1])[:, :, 0, :],
         (x6, i6))
    x7 = rng.standard_normal(16777216 // q).astype(f32)
    i7 = rng.integers(0, x7.size, 4194304 // q)
    case("7 flat_take", lambda x, i: jnp.take(x, i), lambda x, i: mj.take(x, i), (x7, i7))
    t8 = rng.standard_normal((1000000 // q, 64)).astype(np.float16)
    i8 = rng.integers(0, t8.shape[0], 65536 // q)
    case("8 embedding_fp16", lambda t, i: jnp.take(t, i, axis=0),
         lambda t, i: mj.take(t, i, axis=0), (t8, i8))
    # The gather's consumer elementwise: XLA fuses its own gather into the multiply; the FFI call
    # stays a call whose result the multiply reads again (issue 54's case).
    case("10 embedding_times_two", lambda t, i: jnp.take(t, i, axis=0) * 2.0,
         lambda t, i: mj.take(t, i, axis=0) * 2.0, (table, idx))
    x9 = rng.standard_normal((16, 16)).astype(f32)
    i9 = np.array([3, 1, 4, 1])
    case("9 tiny", lambda x, i: jnp.take(x, i, axis=0), lambda x, i: mj.take(x, i, axis=0),
         (x9, i9), number=200, unit="us")

    zeros = np.zeros_like(table)
    upd = rng.standard_normal((idx.size, 512)).astype(f32)
    case("S1 embedding_backward", lambda z, i, u: z.at[i].add(u),
         lambda z, i, u: multigather.scatter_multiaxis(z, i[:, None], u, [0], reduction="add"),
         (zeros, idx, upd), exact=False)
    xs3 = rng.standard_normal((1024, 4096 // q)).astype(f32)
    is3 = rng.integers(0, 1024, (256, 4096 // q))
    us3 = rng.standard_normal((256, 4096 // q)).astype(f32)
    cols = np.arange(4096 // q)[None, :]
    case("S3 scatter_add_axis0", lambda x, i, u: x.at[i, cols].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"),
         (xs3, is3, us3), exact=False)
    xs4 = np.zeros((4, 512 // q, 512, 32), f32)
    is4 = np.stack([rng.integers(0, 4, 262144 // q), rng.integers(0, 512 // q, 262144 // q),
                    rng.integers(0, 512, 262144 // q)], -1)
    us4 = rng.standard_normal((262144 // q, 32)).astype(f32)
    case("S4 scatter_nd_points", lambda x, i, u: x.at[i[:, 0], i[:, 1], i[:, 2]].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(
             x, i.reshape(1, 1, -1, 3), u.reshape(1, 1, -1, 32), [0, 1, 2], reduction="add"),
         (xs4, is4, us4), exact=False)
    xs5 = np.zeros(16777216 // q, f32)
    is5 = rng.integers(0, xs5.size, 4194304 // q)
    us5 = rng.standard_normal(is5.size).astype(f32)
    case("S5 flat_put_add", lambda x, i, u: x.at[i].add(u),
         lambda x, i, u: multigather.scatter_multiaxis(x, i, u, [0], reduction="add"),
         (xs5, is5, us5), exact=False)
    us7 = rng.standard_normal((4, 16)).astype(f32)
    case("S7 tiny_scatter", lambda x, i, u: x.at[i].add(u),
         lambda x, i, u: mj.at(x)[i].add(u),
         (x9, i9, us7), number=200, unit="us", exact=False)
    # A mid-size scatter whose updates are elementwise (XLA fuses its own scatter with them).
    xs8 = rng.standard_normal((4096, 64)).astype(f32)
    is8 = rng.integers(0, 4096, 256)
    us8 = rng.standard_normal((256, 64)).astype(f32)
    case("S8 scatter_add_times_two", lambda x, i, u: x.at[i].add(u * 2.0),
         lambda x, i, u: mj.at(x)[i].add(u * 2.0),
         (xs8, is8, us8), number=20, unit="us", exact=False)
    g = rng.standard_normal((idx.size, 512)).astype(f32)
    case("S6 embedding_train",
         lambda t, i, w: jax.grad(lambda a: (jnp.take(a, i, axis=0) * w).sum())(t),
         lambda t, i, w: jax.grad(lambda a: (mj.take(a, i, axis=0) * w).sum())(t),
         (table, idx, g), exact=False)

    print(f"\njax {jax.__version__}, threads: {'1' if args.threads == 1 else 'all'} "
          f"({os.cpu_count()} cores); median of {args.repeat}; ratio = multigather / jax")
    print("| case | unit | jax | multigather | ratio |\n|---|---|---|---|---|")
    for name, unit, tj, tm, r in rows:
        print(f"| {name} | {unit} | {tj:.3f} | {tm:.3f} | {r:.2f} |")
    sys.stdout.flush()


def median_times(jax, fns, operands, repeat: int, number: int = 0) -> list:
    """Median seconds per call of each fn(*operands) (block_until_ready) over `repeat` runs of
    `number` calls each (0: as many as take at least 2 ms for every fn), after one warm-up call
    each; the fns' runs alternated (this VM's speed drifts by tens of percent between runs a few
    seconds apart: alternating puts both sides under the same drift)."""
    def run(fn, n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            out = fn(*operands)
        jax.block_until_ready(out)
        return time.perf_counter() - t0

    for fn in fns:
        run(fn, 1)
    if number == 0:
        number = 1
        while min(run(fn, number) for fn in fns) < 2e-3:
            number *= 2
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, times in zip(fns, runs):
            times.append(run(fn, number) / number)
    return [statistics.median(times) for times in runs]


def both_ways(args, jax, mj, call, operands) -> list:
    """`call` jitted as XLA's op and as the FFI call (multigather.jax.set_jit_ops "xla", then
    "ffi"; the mode asked for restored afterwards), each traced and compiled on `operands`."""
    fns = []
    for mode in ("xla", "ffi"):
        mj.set_jit_ops(mode)
        f = jax.jit(lambda *a: call(*a))  # a function of its own: JAX caches traces by function
        f(*operands)
        fns.append(f)
    mj.set_jit_ops(args.jit_ops)
    return fns


def scatter_sizes(args, jax, jnp, np, mj, rng) -> None:
    """The same scatter-add (multigather.jax.at, drop rule) under jit both ways, by size: rows of
    16 or 64 floats into a table 4x the update rows (each row reached about once), and single
    elements into a flat array. Prints us per call and ffi / xla (above 1: XLA's faster), the two
    runs alternated."""
    print("| updates | shape | xla us | ffi us | ffi / xla |\n|---|---|---|---|---|")
    for n, width in [(4, 16), (64, 16), (256, 64), (1024, 64), (4096, 64), (16384, 64), (65536, 64),
                     (4096, 1), (65536, 1), (1048576, 1), (4194304, 1)]:
        rows = 4 * n
        x = jnp.asarray(rng.standard_normal((rows, width) if width > 1 else rows).astype(np.float32))
        i = jnp.asarray(rng.integers(0, rows, n))
        u = jnp.asarray(rng.standard_normal((n, width) if width > 1 else n).astype(np.float32))
        fns = both_ways(args, jax, mj, lambda x, i, u: mj.at(x)[i].add(u), (x, i, u))
        # (XLA's order of additions is its own: a float tolerance)
        np.testing.assert_allclose(np.asarray(fns[0](x, i, u)), np.asarray(fns[1](x, i, u)), rtol=1e-4, atol=1e-3)
        xla, ffi = (t * 1e6 for t in median_times(jax, fns, (x, i, u), args.repeat))
        print(f"| {n * width} | {n} x {width} into {tuple(x.shape)} | {xla:.1f} | {ffi:.1f} | {ffi / xla:.2f} |",
              flush=True)


def gather_sizes(args, jax, jnp, np, mj, rng) -> None:
    """Element gathers (each lookup reads one element) under jit both ways, by size: rows of 256
    lookups along the last axis of [rows, 1024] float32 (take_along_axis: each row's lookups in
    its own 4 KiB), and a flat take from 16M float32 (64 MiB: random lookups). Prints us per
    call and ffi / xla (above 1: XLA's faster), the two runs alternated."""
    print("| lookups | case | xla us | ffi us | ffi / xla |\n|---|---|---|---|---|")
    flat = jnp.asarray(rng.standard_normal(1 << 24).astype(np.float32))
    cases = [(f"take_along_axis [{r}, 1024] -> [{r}, 256]", r * 256,
              jnp.asarray(rng.standard_normal((r, 1024)).astype(np.float32)),
              jnp.asarray(rng.integers(0, 1024, (r, 256))), lambda x, i: mj.take_along_axis(x, i, axis=-1))
             for r in (1, 4, 16, 64, 256, 1024, 4096)]
    cases += [(f"flat take of {n} from [16M]", n, flat, jnp.asarray(rng.integers(0, flat.size, n)),
               lambda x, i: mj.take(x, i)) for n in (4096, 65536, 262144, 1048576, 4194304)]
    for name, lookups, x, i, call in cases:
        fns = both_ways(args, jax, mj, call, (x, i))
        np.testing.assert_array_equal(np.asarray(fns[0](x, i)), np.asarray(fns[1](x, i)))
        xla, ffi = (t * 1e6 for t in median_times(jax, fns, (x, i), args.repeat))
        print(f"| {lookups} | {name} | {xla:.1f} | {ffi:.1f} | {ffi / xla:.2f} |", flush=True)


if __name__ == "__main__":
    main()
