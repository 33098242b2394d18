"""Whole models in ONNX Runtime: the original model against the same model rewritten onto the one
operator (multigather.onnx.lower_model), run with its standard-ONNX function bodies and with
multigather's custom-op library, at 1 and 2 intra-op threads, in one run.

The models are the test models of tests/python/onnx_models.py (exported by
torch.onnx.export(dynamo=True)), at their tests' tiny size and at a medium size (BERT / GPT-2
vocabularies, hidden 256, sequences of 128: SIZES there). Each session runs its model with the same feeds; the three
sessions of a row are timed in alternating rounds (--rounds), each round the median of --runs
calls, and the table gives the median of the rounds' medians (us per call) and the ratio to the
original (below 1 is faster).

    python3 bench/onnx_models.py [--models bert,gpt2] [--sizes tiny,medium] [--threads 1,2]
                                 [--rounds 5] [--runs 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import multigather.onnx as mgo  # noqa: E402
import onnx_models  # noqa: E402


def session(model, threads: int, library: str | None = None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    if library:
        so.register_custom_ops_library(library)
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def median_call_us(sess, feeds, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(onnx_models.MODELS))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--sizes", default="tiny,medium", help="model sizes (tests/python/onnx_models.py SIZES)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--export-dir", default=os.path.join(tempfile.gettempdir(), "multigather_onnx_models"))
    a = p.parse_args()
    try:
        library = mgo.custom_ops_library()
    except (AttributeError, FileNotFoundError) as e:
        library = None
        print(f"# no custom-op library ({e}); its column is empty")
    print(f"# onnxruntime {ort.__version__}, onnx {onnx.__version__}; us per call (median of "
          f"{a.rounds} rounds x {a.runs} calls); ratio = rewritten / original")
    print(f"{'model':22} {'size':>6} {'thr':>3} {'nodes g/s':>9} {'original':>10} {'bodies':>10} {'ratio':>6} "
          f"{'library':>10} {'ratio':>6}")
    notes = []
    for size, name in [(z, n) for z in a.sizes.split(",") for n in a.models.split(",")]:
        path, feeds = onnx_models.export(name, a.export_dir, size)
        model = onnx.load(path)
        lowered = mgo.lower_model(model)
        count = sum(onnx_models.gather_scatter_counts(model).values())
        expected = session(model, 1).run(None, feeds)  # the original on one thread
        for threads in (int(t) for t in a.threads.split(",")):
            sessions = {"original": session(model, threads), "bodies": session(lowered, threads)}
            if library:
                sessions["library"] = session(lowered, threads, library)
            for how, s in sessions.items():  # the same outputs, bit for bit, before timing
                for _ in range(3):
                    got = s.run(None, feeds)
                    if not all(np.array_equal(g, e) for g, e in zip(got, expected)):
                        diff = max(float(np.max(np.abs(g.astype(np.float64) - e))) for g, e in zip(got, expected))
                        notes.append(f"{name} {size}, {threads} threads, {how}: differs from the original on "
                                     f"1 thread (max abs difference {diff:.3g})")
                        break
                median_call_us(s, feeds, 20)  # warm-up
            rounds = {k: [] for k in sessions}
            for _ in range(a.rounds):
                for how, s in sessions.items():
                    rounds[how].append(median_call_us(s, feeds, a.runs))
            us = {k: statistics.median(v) for k, v in rounds.items()}
            lib = f"{us['library']:10.1f} {us['library'] / us['original']:6.2f}" if library else f"{'':10} {'':6}"
            print(f"{name:22} {size:>6} {threads:3d} {count:9d} {us['original']:10.1f} {us['bodies']:10.1f} "
                  f"{us['bodies'] / us['original']:6.2f} {lib}", flush=True)
    for n in notes:
        print(f"# {n}")


if __name__ == "__main__":
    main()
