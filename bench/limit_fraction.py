#!/usr/bin/env python3
"""multigather's random element gathers (docs/bench.md cases 3, 4 and 7, into out=) as a
fraction of the machine's limit for the same access pattern: the fastest of mlp_limit.c's
three plain C loops (plain, software prefetch, AVX-512 gathers; no index check), timed in the
SAME process on the SAME numpy arrays, interleaved with multigather's calls.

    python3 bench/limit_fraction.py [--threads 1,2] [--cases 3,4,7] [--samples 7] [--distance 24]

Each thread count runs in its own child process (OMP_NUM_THREADS set before any import; the
1-thread child pinned to one CPU), and each case twice: on numpy arrays as numpy allocates them
(transparent huge pages asked with madvise for large arrays, as numpy does by default) and on
arrays without huge pages (``np._core.multiarray._set_madvise_hugepage(False)``; the limit
program's ``mlp_limit 24 0``). The method is bench/peers.py's (measure_interleaved: the callables
take turns, medians). fraction = limit / multigather: 1.0 is the limit itself; issue 33 asks
for 0.90 or more. multigather validates every index (a pass of its own before the first write:
a failed call leaves out= unchanged), which the limit loops do not.

Needs gcc (the loops are compiled with -O3 -march=native -fopenmp into a temporary shared
library from bench/mlp_limit_ffi.c, which includes bench/mlp_limit.c).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import SEED, child_tables, measure_interleaved  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
#: docs/bench.md case -> (mlp_limit.c's case number, input shape, indices shape, axis)
CASES = {
    "3": (0, (4096, 1024), (4096, 256), 1),
    "4": (1, (1024, 4096), (256, 4096), 0),
    "7": (2, (16777216,), (4194304,), 0),
}
LOOPS = ("plain", "prefetch", "avx512-gather")


def build_limit_library(directory: str) -> ctypes.CDLL:
    """Compiles bench/mlp_limit_ffi.c into ``directory`` and loads it."""
    lib = os.path.join(directory, "libmlp_limit.so")
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                    os.path.join(HERE, "mlp_limit_ffi.c"), "-o", lib], check=True)
    dll = ctypes.CDLL(lib)
    dll.mlp_limit_run.restype = ctypes.c_int
    dll.mlp_limit_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p, ctypes.c_int64]
    return dll


def run_child(threads: int, names, samples: int, distance: int) -> dict:
    """{"<case>/<huge|small>": {callable: median seconds}} at ``threads`` threads."""
    import numpy as np

    import multigather as mg

    if threads == 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    mg.set_num_threads(threads)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        dll = build_limit_library(tmp)
        for huge in (True, False):
            np._core.multiarray._set_madvise_hugepage(huge)
            for name in names:
                k, shape, idx_shape, axis = CASES[name]
                rng = np.random.default_rng(SEED)
                x = rng.standard_normal(shape).astype(np.float32)
                idx = rng.integers(0, shape[axis], idx_shape, dtype=np.int64)
                out = np.empty(idx_shape, np.float32)
                want = np.take_along_axis(x, idx, axis=axis)
                mg.gather_multiaxis(x, idx, [axis], out=out)
                assert np.array_equal(out, want), f"case {name}: multigather differs from numpy"
                fns = {"multigather out=": lambda: mg.gather_multiaxis(x, idx, [axis], out=out)}
                for loop, label in enumerate(LOOPS):
                    args = (k, loop, x.ctypes.data, idx.ctypes.data, out.ctypes.data, distance)
                    if dll.mlp_limit_run(*args) != 0:
                        continue  # no AVX-512 here
                    out_copy = out.copy()
                    assert np.array_equal(out_copy, want), f"case {name}: the {label} loop differs"
                    fns[label] = lambda args=args: dll.mlp_limit_run(*args)
                times = {k: v[0] for k, v in measure_interleaved(fns, samples).items()}
                results[f"{name}/{'huge' if huge else 'small'}"] = times
    return results


def print_table(results: dict) -> None:
    print("| case | pages | multigather out= (ms) | plain | prefetch | avx512-gather | limit (ms) | fraction |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for key, times in results.items():
        name, pages = key.split("/")
        limit = min(v for k, v in times.items() if k != "multigather out=")
        mine = times["multigather out="]
        loops = " | ".join(f"{times[k] * 1e3:.3f}" if k in times else "-" for k in LOOPS)
        print(f"| {name} {CASE_NAMES[name]} | {'huge (madvise)' if pages == 'huge' else '4 KiB'} | "
              f"{mine * 1e3:.3f} | {loops} | {limit * 1e3:.3f} | {limit / mine:.2f} |")


CASE_NAMES = {"3": "elements_last_axis", "4": "elements_axis0", "7": "flat_take"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default 1,all)")
    ap.add_argument("--cases", default="3,4,7")
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--distance", type=int, default=24, help="the prefetch loop's distance (lookups)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = args.cases.split(",")
    if args.child is not None:
        print(json.dumps(run_child(args.child, names, args.samples, args.distance)))
        return 0
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, os.cpu_count() or 1})
    tables = child_tables(__file__, threads, ["--cases", args.cases, "--samples", str(args.samples),
                                              "--distance", str(args.distance)])
    if tables is None:
        return 1
    for t, table in tables.items():
        print(f"\n## {t} thread{'s' if t > 1 else ''} (medians; fraction = limit / multigather, 1.0 is the limit)\n")
        print_table(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
