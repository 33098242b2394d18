"""Per-call cost of two builds of the Python package, alternated in one run: the calls that
peers.py, torch_ops.py and jax_ops.py time per call (the door from numpy, multigather.torch and
torch.ops.multigather, a jitted multigather.jax call), each build in its own process, pinned to
one core, alternating the builds --rounds times; each call timed by timeit, the fastest of 40 runs.

    python3 bench/per_call_builds.py --before /tmp/old-site --after ''   # '' = the installed build

A build is a directory put first on sys.path (`pip install --no-deps --target DIR .` of a
checkout), or '' for the package installed in the environment. Prints a table: us per call of
each build in every round, and after / before of the fastest rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def child() -> None:
    import timeit

    import numpy as np

    import multigather
    import multigather.jax as mj
    import multigather.torch as mt
    import multigather.torch_ops  # noqa: F401  (torch.ops.multigather.*)
    import jax
    import jax.numpy as jnp
    import torch

    torch.set_num_threads(1)
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    idx = np.array([3, 1, 4, 1])
    y = np.zeros((16, 16), np.float32)
    u = np.ones((4, 16), np.float32)
    tx, ti, tu = torch.from_numpy(x.copy()), torch.from_numpy(idx), torch.from_numpy(u)
    tg = torch.tensor([[3, 1], [0, 2]] * 8)
    jx, ji, ju = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u)
    take = jax.jit(lambda a, i: mj.take(a, i, axis=0))
    subtract = jax.jit(lambda a, i, v: mj.at(a)[i].subtract(v))
    calls = {
        "gather_multiaxis(x, idx, [0])": lambda: multigather.gather_multiaxis(x, idx.reshape(4, 1), [0]),
        "run('onnx.Gather')": lambda: multigather.run("onnx.Gather", x, idx, axis=0),
        "multigather.numpy.take": lambda: multigather.numpy.take(x, idx, axis=0),
        "run('numpy.add_at', out=y)": lambda: multigather.run("numpy.add_at", y, idx, updates=u, out=y),
        "multigather.torch.gather": lambda: mt.gather(tx, 1, tg),
        "multigather.torch.index_add": lambda: mt.index_add(tx, 0, ti, tu),
        "multigather.torch.index_add(alpha=2)": lambda: mt.index_add(tx, 0, ti, tu, alpha=2),
        "torch.ops.multigather.gather": lambda: torch.ops.multigather.gather(tx, 1, tg),
        "jax.jit(multigather.jax.take)": lambda: take(jx, ji).block_until_ready(),
        "jax.jit(multigather.jax.at[].subtract)": lambda: subtract(jx, ji, ju).block_until_ready(),
    }
    out = {}
    for name, f in calls.items():
        f()
        n = 500 if name.startswith("jax") else 3000
        out[name] = min(timeit.repeat(f, number=n, repeat=40)) / n * 1e6
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="site directory of the build before ('' = installed)")
    ap.add_argument("--after", required=True, help="site directory of the build after ('' = installed)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cpu", default="1", help="the core each process is pinned to (taskset -c)")
    args = ap.parse_args()
    results: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):
        for tag, site in (("before", args.before), ("after", args.after)):
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH", "")) if p)
            run = subprocess.run(["taskset", "-c", args.cpu, sys.executable, __file__, "--child"], env=env,
                                 capture_output=True, text=True, check=True, cwd="/")
            for name, us in json.loads(run.stdout.strip().splitlines()[-1]).items():
                results.setdefault(name, {"before": [], "after": []})[tag].append(us)
    print("| call | before, us per call | after, us per call | after / before (fastest) |")
    print("|---|---|---|---|")
    for name, r in results.items():
        b, a = sorted(r["before"]), sorted(r["after"])
        print(f"| `{name}` | {' '.join(f'{v:.2f}' for v in b)} | {' '.join(f'{v:.2f}' for v in a)} | "
              f"{a[0] / b[0]:.2f} |")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
