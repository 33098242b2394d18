#!/usr/bin/env python3
"""multigather against its CPU peers on the docs/bench.md cases, from Python.

Times ``multigather.gather_multiaxis`` one-shot (the result allocated by the call) and into a
preallocated ``out=`` against numpy (take, take_along_axis, fancy indexing, and the fastest
formulation a practitioner would write: linearized indices + take), ONNX Runtime (one-node
models, CPU provider) and, when installed, PyTorch and JAX, all in one process per thread count.
One-shot is compared with one-shot (peers that allocate their result: np.take, fancy indexing,
torch ops, ONNX Runtime's session.run, JAX), out= with out= (np.take(out=, mode="clip"), torch's
out= overloads, ONNX Runtime with its output bound to the array through an IOBinding; JAX has
no out= form): two ratio columns, best peer / multigather (>= 1.0 means multigather is at least
as fast). Also printed: the ratio of numpy's best to multigather's best, a memcpy of the
output's size (``np.copyto`` into a preallocated buffer) against multigather's out=, and the
per-call cost of the framework wrappers on tiny inputs (multigather.numpy.take, onnx.
gather_elements, gather_multiaxis, torch.gather) beside the framework's own function.

Method: every callable is warmed up, then timed ``--samples`` times (each sample follows a pause
of at least 5 ms (settle) and 20 ms of untimed calls, and loops the call enough times to last
about 2 ms); the median sample is reported. Every peer's output is
compared with numpy's once (a mismatch is printed and the peer dropped). Data: float32 unless
stated, int64 indices uniformly random in range, seed 1234 (docs/bench.md).

Threads: the script runs itself once per thread count (1 and all cores) in a child process
with OMP_NUM_THREADS, ONNX Runtime's intra_op_num_threads, torch.set_num_threads,
multigather.set_num_threads and XLA's CPU thread flags set before any import, so each table is
one process. The 1-thread child is pinned to one CPU (sched_setaffinity): XLA's CPU runtime
keeps about 1.8 cores busy even with its thread flags off. numpy is single-threaded. JAX runs
in 64-bit mode, so that it gathers with the same int64 indices as every other peer.

The speed goals are checked at the end and printed as PASS / FAIL lines: multigather >= 1.0x
the best peer in both columns on every case at every thread count, and per call; >= 3x numpy's
best on gathernd_batch1 and nhwc_xy at all cores (numpy runs on one thread; the fused C loop of
docs/bench.md's "Reference figures" is about 4x numpy's best on 2 threads, about 2x on 1 thread).
``--check`` makes the exit status 1 when one fails.

Usage:  python3 bench/peers.py [--threads 1,2] [--cases 1,5,6] [--samples 11] [--check]
        (run from a checkout where ``import multigather`` works, e.g. after ``pip install .``)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from typing import Optional

SEED = 1234
GOAL_BEST_PEER = 1.0
GOAL_NUMPY = {"gathernd_batch1": 3.0, "nhwc_xy": 3.0}


# ---- timing -------------------------------------------------------------------------------------


def calibrate(fn, warmup: int = 3, sample_seconds: float = 2e-3) -> int:
    """Warms ``fn`` up; returns how many calls make one sample of about ``sample_seconds``."""
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    single = time.perf_counter() - t0
    return max(1, int(sample_seconds / max(single, 1e-9)))


# Pause before each sample: thread pools that spin after their call (ONNX Runtime's, OpenMP's,
# XLA's) go to sleep before the next callable's sample starts instead of competing with it
# for the cores (on 2 cores that made 2-thread samples of whoever came next up to 2x slower).
# The pause lasts PAUSE_SECONDS, and longer while another thread of the process still runs
# (polls), up to SETTLE_MAX_SECONDS (settle). A fixed pause was not enough: OpenMP's workers
# poll about 4.5 ms after a parallel region, but ONNX Runtime's went on 27-28 ms after
# session.run (one core busy; this project's 2-core VM). A 2-thread OpenMP callable sampled
# after an ONNX Runtime sample ran on one core: embedding took 2.2-2.4 ms (multigather) and
# 2.1-3.1 ms (torch) against 0.8-1.1 and 1.5-1.7 ms after any other callable. With two ONNX
# Runtime callables among twelve, that was about one sample in six.
PAUSE_SECONDS = 5e-3
SETTLE_POLL_SECONDS = 1e-3
SETTLE_MAX_SECONDS = 0.25
# Warm-up after the pause, before the timed calls: untimed calls for at least this long (and at
# least one). A CPU woken from the pause runs the next 1-2 ms slower: on this project's 2-core VM
# the 1st and 2nd calls of a ~0.8 ms gather after a 5 ms sleep took 1.5-1.8 ms, the 3rd and 4th
# 0.8-0.9 ms, for numpy and multigather alike; with one untimed call, a 2 ms sample of a 1 ms
# case timed mostly that ramp. After 4 ms of calls the 1st to 4th calls measured within 5%
# then; on another day the ramp lasted longer: mid_axis_block at 1 thread took 3.2-3.6 ms for
# its 1st and 2nd calls after the pause and reached its steady 1.3-1.4 ms only at the 6th or 7th
# (about 14 ms of calls; multigather, JAX and np.take alike), so 4 ms timed the middle of the
# ramp (the table read 2.0-2.8 ms). 20 ms covers it.
WARMUP_SECONDS = 20e-3


def running_threads() -> int:
    """How many of this process's threads, other than the calling one, are running or runnable
    now (state R in /proc/self/task/*/stat; 0 where there is no /proc)."""
    task = "/proc/self/task"
    if not os.path.isdir(task):
        return 0
    me = threading.get_native_id()
    running = 0
    for tid in os.listdir(task):
        if int(tid) == me:
            continue
        try:
            with open(f"{task}/{tid}/stat") as fh:
                stat = fh.read()
        except OSError:  # the thread has ended
            continue
        running += stat[stat.rindex(")") + 2] == "R"
    return running


def settle() -> None:
    """Sleeps PAUSE_SECONDS, then on, SETTLE_POLL_SECONDS at a time, while another thread of the
    process is running (SETTLE_MAX_SECONDS in all at most)."""
    start = time.perf_counter()
    time.sleep(PAUSE_SECONDS)
    while running_threads() and time.perf_counter() - start < SETTLE_MAX_SECONDS:
        time.sleep(SETTLE_POLL_SECONDS)


def measure_interleaved(fns: dict, samples: int) -> dict:
    """Median and minimum seconds per call of each callable. The callables take turns, one
    sample each per round, in a new random order every round, so that a busy spell of a shared
    machine hits all of them alike; each sample starts after a quiet pause (settle) and
    WARMUP_SECONDS of untimed calls."""
    numbers = {k: calibrate(f) for k, f in fns.items()}
    times = {k: [] for k in fns}
    order = list(fns)
    shuffle = random.Random(SEED).shuffle
    for _ in range(samples):
        shuffle(order)
        for k in order:
            f = fns[k]
            n = numbers[k]
            settle()
            warm_until = time.perf_counter() + WARMUP_SECONDS
            f()
            while time.perf_counter() < warm_until:
                f()
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            times[k].append((time.perf_counter() - t0) / n)
    return {k: (statistics.median(v), min(v)) for k, v in times.items()}


# ---- peers --------------------------------------------------------------------------------------


class Peers:
    """The optional peer libraries, imported once; each case asks them for callables."""

    def __init__(self, threads: int):
        import numpy as np

        self.np = np
        self.threads = threads
        self.notes = []
        try:
            import onnx
            import onnxruntime as ort
            from onnx import TensorProto, helper

            self.onnx, self.ort, self.helper, self.TensorProto = onnx, ort, helper, TensorProto
        except ImportError as e:
            self.ort = None
            self.notes.append(f"onnxruntime skipped ({e})")
        try:
            import torch

            torch.set_num_threads(threads)
            self.torch = torch
        except ImportError:
            self.torch = None
            self.notes.append("torch not installed: skipped")
        try:
            import jax
            import jax.numpy as jnp

            # 64-bit mode: JAX otherwise turns the int64 indices into int32 when they are put
            # on the device (a different, smaller workload than every other peer's).
            jax.config.update("jax_enable_x64", True)
            self.jax, self.jnp = jax, jnp
        except ImportError:
            self.jax = None
            self.notes.append("jax not installed: skipped")
        try:
            import multigather

            # The same explicit thread count as every peer (torch.set_num_threads, ORT's
            # intra_op_num_threads), instead of the automatic choice that avoids busy cores.
            multigather.set_num_threads(threads)
            self.mg = multigather
        except ImportError as e:
            self.mg = None
            self.notes.append(f"multigather not importable ({e}): peers only")

    # ONNX Runtime: one node, inputs "data" and "indices", output "out". With `out` (a numpy
    # array), the session writes into it through an IOBinding (ONNX Runtime's into-variant).
    def ort_session(self, op: str, data, indices, out=None, **attrs):
        h, TP = self.helper, self.TensorProto
        elem = {"float32": TP.FLOAT, "float16": TP.FLOAT16}[str(data.dtype)]
        node = h.make_node(op, ["data", "indices"], ["out"], **attrs)
        graph = h.make_graph(
            [node],
            op,
            [
                h.make_tensor_value_info("data", elem, list(data.shape)),
                h.make_tensor_value_info("indices", TP.INT64, list(indices.shape)),
            ],
            [h.make_tensor_value_info("out", elem, None)],
        )
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
        model.ir_version = 9
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        sess = self.ort.InferenceSession(
            model.SerializeToString(), so, providers=["CPUExecutionProvider"]
        )
        if out is None:
            feeds = {"data": data, "indices": indices}
            return lambda: sess.run(None, feeds)[0]
        binding = sess.io_binding()
        binding.bind_cpu_input("data", data)
        binding.bind_cpu_input("indices", indices)
        binding.bind_output("out", "cpu", 0, out.dtype, list(out.shape), out.ctypes.data)

        def run():
            sess.run_with_iobinding(binding)
            return out

        return run

    def torch_tensor(self, a):
        return self.torch.from_numpy(a)

    def jit(self, f, *args):
        jf = self.jax.jit(f)
        dev = [self.jax.device_put(a) for a in args]
        return lambda: jf(*dev).block_until_ready()


# ---- the cases ----------------------------------------------------------------------------------
#
# Each case returns (input, indices, axes, oneshot, into, out, reference): `oneshot` maps a peer's
# label to a callable that allocates its result (as multigather without out= does), `into` to a
# callable that writes into the preallocated `out` and returns it (as multigather with out=
# does): np.take(out=, mode="clip"), torch's out= overloads, ONNX Runtime with its output bound
# to `out` (IOBinding). JAX has no out= form: one-shot only.


def case_embedding(P, rows, width, n, dtype):
    np = P.np
    rng = np.random.default_rng(SEED)
    table = rng.standard_normal((rows, width)).astype(dtype)
    idx = rng.integers(0, rows, n, dtype=np.int64)
    out = np.empty((n, width), dtype)
    oneshot = {
        "np.take": lambda: np.take(table, idx, axis=0),
        "numpy table[idx]": lambda: table[idx],
    }
    into = {"np.take(out=,clip)": lambda: np.take(table, idx, axis=0, out=out, mode="clip")}
    if P.ort:
        oneshot["ort Gather"] = P.ort_session("Gather", table, idx, axis=0)
        into["ort Gather(bound out)"] = P.ort_session("Gather", table, idx, out=out, axis=0)
    if P.torch:
        t, ti, to = P.torch_tensor(table), P.torch_tensor(idx), P.torch_tensor(out)
        oneshot["torch.index_select"] = lambda: P.torch.index_select(t, 0, ti)
        oneshot["torch F.embedding"] = lambda: P.torch.nn.functional.embedding(ti, t)
        into["torch.index_select(out=)"] = lambda: P.torch.index_select(t, 0, ti, out=to)
    if P.jax:
        oneshot["jax jnp.take"] = P.jit(lambda a, i: P.jnp.take(a, i, axis=0), table, idx)
    return table, idx.reshape(n, 1), [0], oneshot, into, out, lambda: np.take(table, idx, axis=0)


def case_mid_axis(P):
    np = P.np
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((32, 1024, 256)).astype(np.float32)
    idx = rng.integers(0, 1024, 512, dtype=np.int64)
    out = np.empty((32, 512, 256), np.float32)
    oneshot = {
        "np.take(axis=1)": lambda: np.take(x, idx, axis=1),
        "numpy x[:, idx]": lambda: x[:, idx],
    }
    into = {"np.take(out=,clip)": lambda: np.take(x, idx, axis=1, out=out, mode="clip")}
    if P.ort:
        oneshot["ort Gather"] = P.ort_session("Gather", x, idx, axis=1)
        into["ort Gather(bound out)"] = P.ort_session("Gather", x, idx, out=out, axis=1)
    if P.torch:
        t, ti, to = P.torch_tensor(x), P.torch_tensor(idx), P.torch_tensor(out)
        oneshot["torch.index_select(1)"] = lambda: P.torch.index_select(t, 1, ti)
        oneshot["torch x[:, idx]"] = lambda: t[:, ti]
        into["torch.index_select(1,out=)"] = lambda: P.torch.index_select(t, 1, ti, out=to)
    if P.jax:
        oneshot["jax jnp.take"] = P.jit(lambda a, i: P.jnp.take(a, i, axis=1), x, idx)
    return x, idx.reshape(1, 512, 1), [1], oneshot, into, out, lambda: np.take(x, idx, axis=1)


def case_elements(P, shape, idx_shape, axis):
    np = P.np
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[axis], idx_shape, dtype=np.int64)
    out = np.empty(idx_shape, np.float32)
    flat = x.reshape(-1)
    if axis == 1:  # linearized: row * width + idx
        base = (np.arange(idx_shape[0], dtype=np.int64) * shape[1])[:, None]
        linear = lambda: idx + base
    else:  # idx * width + column
        base = np.arange(idx_shape[1], dtype=np.int64)[None, :]
        linear = lambda: idx * shape[1] + base
    oneshot = {
        f"np.take_along_axis({axis})": lambda: np.take_along_axis(x, idx, axis=axis),
        "numpy linearize+take": lambda: np.take(flat, linear()),
    }
    into = {"numpy linearize+take(out=,clip)": lambda: np.take(flat, linear(), out=out, mode="clip")}
    if P.ort:
        oneshot["ort GatherElements"] = P.ort_session("GatherElements", x, idx, axis=axis)
        into["ort GatherElements(bound out)"] = P.ort_session("GatherElements", x, idx, out=out,
                                                              axis=axis)
    if P.torch:
        t, ti, to = P.torch_tensor(x), P.torch_tensor(idx), P.torch_tensor(out)
        oneshot[f"torch.gather({axis})"] = lambda: P.torch.gather(t, axis, ti)
        into[f"torch.gather({axis},out=)"] = lambda: P.torch.gather(t, axis, ti, out=to)
    if P.jax:
        oneshot["jax take_along_axis"] = P.jit(
            lambda a, i: P.jnp.take_along_axis(a, i, axis=axis), x, idx
        )
    return x, idx, [axis], oneshot, into, out, lambda: np.take_along_axis(x, idx, axis=axis)


def case_points(P, shape, points, order):
    """GatherND batch_dims=1 point sampling; ``order`` (0, 1) = (h, w) coordinates, (1, 0) =
    (x, y) coordinates (x addresses W)."""
    np = P.np
    rng = np.random.default_rng(SEED)
    n, h, w, ch = shape
    x = rng.standard_normal(shape).astype(np.float32)
    coords = np.stack(
        [rng.integers(0, [h, w][order[j]], (n, points), dtype=np.int64) for j in range(2)], -1
    )
    hi, wi = coords[..., order.index(0)], coords[..., order.index(1)]
    b = np.arange(n, dtype=np.int64)[:, None]
    rows = x.reshape(-1, ch)
    out = np.empty((n, points, ch), np.float32)
    oneshot = {
        "numpy x[b, h, w]": lambda: x[b, hi, wi],
        "numpy linearize+take": lambda: np.take(rows, (b * h + hi) * w + wi, axis=0),
    }
    into = {
        "numpy linearize+take(out=,clip)": lambda: np.take(rows, (b * h + hi) * w + wi, axis=0,
                                                           out=out, mode="clip"),
    }
    hw = np.ascontiguousarray(np.stack([hi, wi], -1))  # GatherND wants (h, w): given untimed
    if P.ort:
        oneshot["ort GatherND(batch_dims=1)"] = P.ort_session("GatherND", x, hw, batch_dims=1)
        into["ort GatherND(bound out)"] = P.ort_session("GatherND", x, hw, out=out, batch_dims=1)
    if P.torch:
        t, tb, th, tw = (P.torch_tensor(a) for a in (x, b, np.ascontiguousarray(hi), np.ascontiguousarray(wi)))
        to = P.torch_tensor(out).reshape(-1, ch)
        oneshot["torch x[b, h, w]"] = lambda: t[tb, th, tw]
        tr = t.reshape(-1, ch)
        oneshot["torch linearize+index_select"] = lambda: P.torch.index_select(
            tr, 0, ((tb * h + th) * w + tw).reshape(-1)
        )
        into["torch linearize+index_select(out=)"] = lambda: P.torch.index_select(
            tr, 0, ((tb * h + th) * w + tw).reshape(-1), out=to
        )
    if P.jax:
        oneshot["jax x[b, h, w]"] = P.jit(lambda a, bb, hh, ww: a[bb, hh, ww], x, b, hi, wi)
    axes = [1, 2] if order == (0, 1) else [2, 1]
    return x, coords.reshape(n, points, 1, 2), axes, oneshot, into, out, lambda: x[b, hi, wi]


def case_flat_take(P):
    np = P.np
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal(16777216).astype(np.float32)
    idx = rng.integers(0, a.size, 4194304, dtype=np.int64)
    out = np.empty(idx.size, np.float32)
    oneshot = {
        "np.take": lambda: np.take(a, idx),
        "numpy a[idx]": lambda: a[idx],
    }
    into = {"np.take(out=,clip)": lambda: np.take(a, idx, out=out, mode="clip")}
    if P.ort:
        oneshot["ort Gather"] = P.ort_session("Gather", a, idx, axis=0)
        into["ort Gather(bound out)"] = P.ort_session("Gather", a, idx, out=out, axis=0)
    if P.torch:
        t, ti, to = P.torch_tensor(a), P.torch_tensor(idx), P.torch_tensor(out)
        oneshot["torch.take"] = lambda: P.torch.take(t, ti)
        oneshot["torch.index_select"] = lambda: P.torch.index_select(t, 0, ti)
        into["torch.take(out=)"] = lambda: P.torch.take(t, ti, out=to)
        into["torch.index_select(out=)"] = lambda: P.torch.index_select(t, 0, ti, out=to)
    if P.jax:
        oneshot["jax jnp.take"] = P.jit(lambda x, i: P.jnp.take(x, i), a, idx)
    return a, idx, [0], oneshot, into, out, lambda: np.take(a, idx)


def case_tiny(P):
    np = P.np
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    idx = rng.integers(0, 16, 4, dtype=np.int64)
    out = np.empty((4, 16), np.float32)
    oneshot = {"numpy x[idx]": lambda: x[idx], "np.take": lambda: np.take(x, idx, axis=0)}
    into = {"np.take(out=,clip)": lambda: np.take(x, idx, axis=0, out=out, mode="clip")}
    if P.ort:
        oneshot["ort Gather"] = P.ort_session("Gather", x, idx, axis=0)
        into["ort Gather(bound out)"] = P.ort_session("Gather", x, idx, out=out, axis=0)
    if P.torch:
        t, ti, to = P.torch_tensor(x), P.torch_tensor(idx), P.torch_tensor(out)
        oneshot["torch.index_select"] = lambda: P.torch.index_select(t, 0, ti)
        into["torch.index_select(out=)"] = lambda: P.torch.index_select(t, 0, ti, out=to)
    if P.jax:
        oneshot["jax jnp.take"] = P.jit(lambda a, i: P.jnp.take(a, i, axis=0), x, idx)
    return x, idx.reshape(4, 1), [0], oneshot, into, out, lambda: x[idx]


CASES = [
    (1, "embedding", lambda P: case_embedding(P, 50000, 512, 8192, "float32")),
    (2, "mid_axis_block", case_mid_axis),
    (3, "elements_last_axis", lambda P: case_elements(P, (4096, 1024), (4096, 256), 1)),
    (4, "elements_axis0", lambda P: case_elements(P, (1024, 4096), (256, 4096), 0)),
    (5, "gathernd_batch1", lambda P: case_points(P, (4, 512, 512, 32), 65536, (0, 1))),
    (6, "nhwc_xy", lambda P: case_points(P, (8, 256, 256, 16), 4096, (1, 0))),
    (7, "flat_take", case_flat_take),
    (8, "embedding_fp16", lambda P: case_embedding(P, 1000000, 64, 65536, "float16")),
    (9, "tiny", case_tiny),
]


def to_numpy(P, value):
    if P.torch is not None and isinstance(value, P.torch.Tensor):
        return value.numpy()
    return P.np.asarray(value)


# Per-call cost of the framework wrappers on tiny inputs, beside the framework's own function
# (the same inputs, one process): (label, multigather callable, peer label, peer callable).
def percall_rows(P):
    np, mg = P.np, P.mg
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    rows_list = [3, 1, 4, 1]
    idx = np.array(rows_list, dtype=np.int64)
    idx_column = idx.reshape(4, 1)  # gather_multiaxis' indices: made once, as idx is for x[idx]
    elements = rng.integers(0, 16, (16, 4), dtype=np.int64)
    rows = [
        ("mg.numpy.take(x16x16, [3,1,4,1], axis=0)", lambda: mg.numpy.take(x, rows_list, axis=0),
         "np.take", lambda: np.take(x, rows_list, axis=0)),
        ("mg.numpy.take(x16x16, idx[4], axis=0)", lambda: mg.numpy.take(x, idx, axis=0),
         "np.take", lambda: np.take(x, idx, axis=0)),
        ("mg.onnx.gather_elements(x16x16, i16x4, axis=1)",
         lambda: mg.onnx.gather_elements(x, elements, axis=1),
         "np.take_along_axis", lambda: np.take_along_axis(x, elements, axis=1)),
        ("mg.gather_multiaxis(x16x16, idx[4,1], [0])",
         lambda: mg.gather_multiaxis(x, idx_column, [0]),
         "numpy x[idx]", lambda: x[idx]),
    ]
    # The door (multigather.run, any registry op by name): a registry gather; a registry scatter
    # in place against np.add.at (both add into their own copy of x), and one-shot against
    # np.add.at on a copy.
    updates = rng.standard_normal((4, 16)).astype(np.float32)
    mine_at, numpy_at = x.copy(), x.copy()

    def numpy_add_at(target):
        np.add.at(target, idx, updates)
        return target

    if hasattr(mg, "run"):
        rows += [
            ('mg.run("onnx.Gather", x16x16, idx[4], axis=0)',
             lambda: mg.run("onnx.Gather", x, idx, axis=0), "np.take", lambda: np.take(x, idx, axis=0)),
            ('mg.run("numpy.add_at", y16x16, idx[4], updates=u4x16, out=y)',
             lambda: mg.run("numpy.add_at", mine_at, idx, updates=updates, out=mine_at),
             "np.add.at(y, idx, u)", lambda: numpy_add_at(numpy_at)),
            ('mg.run("torch.index_add", x16x16, idx[4], updates=u4x16, dim=0)',
             lambda: mg.run("torch.index_add", x, idx, updates=updates, dim=0),
             "np.add.at(x.copy(), idx, u)", lambda: numpy_add_at(x.copy())),
        ]
    if P.torch:
        torch = P.torch
        t, ti, trows = torch.from_numpy(x), torch.from_numpy(elements), torch.from_numpy(idx)
        rows += [
            ("mg.torch.gather(t16x16, 1, i16x4)", lambda: mg.torch.gather(t, 1, ti),
             "torch.gather", lambda: torch.gather(t, 1, ti)),
            ("mg.torch.index_select(t16x16, 0, i4)", lambda: mg.torch.index_select(t, 0, trows),
             "torch.index_select", lambda: torch.index_select(t, 0, trows)),
            ("mg.torch.take(t16x16, i16x4)", lambda: mg.torch.take(t, ti),
             "torch.take", lambda: torch.take(t, ti)),
            ("mg.torch.take_along_dim(t16x16, i16x4, 1)",
             lambda: mg.torch.take_along_dim(t, ti, 1),
             "torch.take_along_dim", lambda: torch.take_along_dim(t, ti, 1)),
        ]
    return rows


def run_percall(P, samples: int) -> list:
    if P.mg is None:
        return []
    result = []
    for label, mine, peer_label, peer in percall_rows(P):
        same = P.np.array_equal(to_numpy(P, mine()), to_numpy(P, peer()))
        measured = measure_interleaved({"mine": mine, "peer": peer}, samples)
        result.append({"label": label, "peer_label": peer_label, "mine": measured["mine"][0],
                       "peer": measured["peer"][0], "same": bool(same)})
    return result


def run_one_thread_count(threads: int, numbers, samples: int) -> dict:
    """Runs in the child process: every case, every peer, this thread count."""
    P = Peers(threads)
    np = P.np
    rows = []
    for number, name, build in CASES:
        if number not in numbers:
            continue
        inp, indices, axes, oneshot, into, out, reference = build(P)
        expected = reference()
        out_bytes = expected.nbytes
        eff_bytes = 2 * out_bytes + indices.nbytes  # docs/bench.md: output + index + gathered input
        src, dst = np.ones_like(expected), np.empty_like(expected)
        fns = {"memcpy (np.copyto)": lambda: np.copyto(dst, src)}
        mine_oneshot, mine_into = {}, {}
        if P.mg is not None:
            g = P.mg.gather_multiaxis
            mg_out = np.empty_like(g(inp, indices, axes))  # the gather's own output shape
            mine_oneshot["multigather"] = lambda: g(inp, indices, axes)
            mine_into["multigather(out=)"] = lambda: g(inp, indices, axes, out=mg_out)
        mismatched = []
        for group in (mine_oneshot, mine_into, oneshot, into):
            for label, fn in group.items():
                got = to_numpy(P, fn())
                if got.shape != expected.shape and got.size == expected.size:
                    got = got.reshape(expected.shape)
                if np.array_equal(got, expected):
                    fns[label] = fn
                else:
                    mismatched.append(label)
        measured = measure_interleaved(fns, samples)
        times = {k: v[0] for k, v in measured.items()}
        minima = {k: v[1] for k, v in measured.items()}
        rows.append(
            {
                "number": number,
                "name": name,
                "eff_bytes": eff_bytes,
                "times": times,
                "minima": minima,
                "mine_oneshot": [k for k in mine_oneshot if k in times],
                "mine_into": [k for k in mine_into if k in times],
                "oneshot": [k for k in oneshot if k in times],
                "into": [k for k in into if k in times],
                "mismatched": mismatched,
            }
        )
        print(f"  [{threads} thread(s)] {name} done", file=sys.stderr, flush=True)
    percall = run_percall(P, samples)
    return {"threads": threads, "notes": P.notes, "rows": rows, "percall": percall}


# ---- report ------------------------------------------------------------------------------------


def fmt_time(seconds: float, tiny: bool) -> str:
    return f"{seconds * 1e6:.2f} us" if tiny else f"{seconds * 1e3:.3f} ms"


def best_of(times: dict, labels: list):
    """(label, seconds) of the fastest of `labels`, or (None, nan)."""
    if not labels:
        return None, float("nan")
    label = min(labels, key=lambda k: times[k])
    return label, times[label]


def report(results: list, check: bool) -> int:
    failures = []
    max_threads = max(res["threads"] for res in results)
    for res in results:
        t = res["threads"]
        print(f"\n## {t} thread(s)" + ("" if not res["notes"] else "  (" + "; ".join(res["notes"]) + ")"))
        print(
            "\nOne-shot (the result allocated by the call) against one-shot peers, out= (into a "
            "preallocated output) against the peers' out= forms; peer / mg >= 1.0 means "
            "multigather is at least as fast.\n"
        )
        print(
            "| # | case | mg one-shot | best one-shot peer | time | peer / mg "
            "| mg out= | best out= peer | time | peer / mg | GB/s (out=) | numpy best / mg best "
            "| memcpy / mg out= |"
        )
        print("|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
        for row in res["rows"]:
            tm, tiny = row["times"], row["name"] == "tiny"
            f = lambda s: fmt_time(s, tiny)
            mo_label, mo = best_of(tm, row["mine_oneshot"])
            mi_label, mi = best_of(tm, row["mine_into"])
            po_label, po = best_of(tm, row["oneshot"])
            pi_label, pi = best_of(tm, row["into"])
            numpy_labels = [k for k in row["oneshot"] + row["into"] if k.startswith(("np.", "numpy"))]
            nb_label, nb = best_of(tm, numpy_labels)
            best_mg = min(v for v in (mo, mi) if v == v) if (mo_label or mi_label) else float("nan")
            memcpy = tm["memcpy (np.copyto)"]
            print(
                f"| {row['number']} | {row['name']} "
                f"| {f(mo) if mo_label else '-'} | {po_label} | {f(po) if po_label else '-'} "
                f"| {po / mo:.2f}x "
                f"| {f(mi) if mi_label else '-'} | {pi_label} | {f(pi) if pi_label else '-'} "
                f"| {pi / mi:.2f}x "
                f"| {row['eff_bytes'] / mi / 1e9:.1f} | {nb / best_mg:.2f}x ({nb_label}) "
                f"| {memcpy / mi:.2f} |"
            )
            if row["mismatched"]:
                print(f"|   | mismatched outputs (dropped): {', '.join(row['mismatched'])} |")
            if mo_label and po_label and po / mo < GOAL_BEST_PEER:
                failures.append(f"{t}T {row['name']} one-shot: {po / mo:.2f}x the best one-shot "
                                f"peer ({po_label})")
            if mi_label and pi_label and pi / mi < GOAL_BEST_PEER:
                failures.append(f"{t}T {row['name']} out=: {pi / mi:.2f}x the best out= peer "
                                f"({pi_label})")
            goal = GOAL_NUMPY.get(row["name"])
            if goal and t == max_threads and nb_label and nb / best_mg < goal:
                failures.append(f"{t}T {row['name']}: {nb / best_mg:.2f}x numpy's best (goal {goal}x)")
        if res.get("percall"):
            print("\nPer-call cost of the framework wrappers (tiny inputs, us per call, medians):\n")
            print("| multigather call | us | peer | us | peer / mg |")
            print("|---|---:|---|---:|---:|")
            for pc in res["percall"]:
                ratio = pc["peer"] / pc["mine"]
                mark = "" if pc["same"] else " (RESULTS DIFFER)"
                print(f"| {pc['label']} | {pc['mine'] * 1e6:.2f} | {pc['peer_label']} "
                      f"| {pc['peer'] * 1e6:.2f} | {ratio:.2f}x{mark} |")
                if ratio < GOAL_BEST_PEER or not pc["same"]:
                    failures.append(f"{t}T per-call {pc['label']}: {ratio:.2f}x {pc['peer_label']}"
                                    + mark)
        print("\nAll times (median seconds per call):")
        for row in res["rows"]:
            print(f"  {row['name']}: " + ", ".join(f"{k} {v:.3g}" for k, v in sorted(row["times"].items(), key=lambda kv: kv[1])))
    have_mg = any(r["mine_oneshot"] or r["mine_into"] for res in results for r in res["rows"])
    print()
    if not have_mg:
        print("NOT CHECKED: multigather was not importable")
        return 1 if check else 0
    if failures:
        for f in failures:
            print("FAIL", f)
    else:
        print(f"PASS: multigather >= {GOAL_BEST_PEER}x the best peer in both columns (one-shot, "
              f"out=) on every case run at every thread count, and per call; >= 3x numpy's best "
              f"on gathernd_batch1 and nhwc_xy at {max_threads} thread(s) (medians)")
    return 1 if (failures and check) else 0


def peer_modules(threads: int, onnxruntime: bool = False, tensorflow: bool = False) -> dict:
    """The peers of the scatter and segment benchmarks, each at ``threads`` threads where it can
    be told (torch.set_num_threads, TensorFlow's intra-op pool), by name: "np", "threads", and
    whichever of "torch", "jax" (64-bit mode, as Peers: int64 indices stay int64 on the
    device), "tf", "ort" / "helper" / "TensorProto" import."""
    import numpy as np

    P = {"np": np, "threads": threads}
    if onnxruntime:
        try:
            import onnx  # noqa: F401
            import onnxruntime as ort
            from onnx import TensorProto, helper

            P.update(ort=ort, helper=helper, TensorProto=TensorProto)
        except ImportError:
            pass
    try:
        import torch

        torch.set_num_threads(threads)
        P["torch"] = torch
    except ImportError:
        pass
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        P["jax"] = jax
    except ImportError:
        pass
    if tensorflow:
        try:
            import tensorflow as tf

            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
            P["tf"] = tf
        except ImportError:
            pass
    return P


def child_tables(script: str, counts, child_args) -> Optional[dict]:
    """Runs ``script --child T *child_args`` once per thread count T (one process each, OMP's and
    XLA's thread counts set in its environment before anything is imported, the 1-thread child
    pinned to one CPU) and returns {T: the JSON of its last stdout line}; None when a child
    fails (its stderr is printed)."""
    tables = {}
    for t in counts:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), TF_CPP_MIN_LOG_LEVEL="3",
                   XLA_FLAGS=f"--xla_cpu_multi_thread_eigen={'false' if t == 1 else 'true'} "
                             f"intra_op_parallelism_threads={t}")
        cmd = [sys.executable, script, "--child", str(t), *child_args]
        pre = (lambda: os.sched_setaffinity(0, {0})) if t == 1 else None
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, preexec_fn=pre)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return None
        tables[t] = json.loads(out.stdout.strip().splitlines()[-1])
    return tables


def case_table_main(script: str, doc: str, default_cases: str, run_child, print_table) -> int:
    """The command line of the scatter and segment benchmarks (bench/scatter_peers.py,
    bench/segment_peers.py): ``[--threads 1,2] [--cases A,B] [--samples 7]``. Each thread count
    runs in its own child (child_tables), which prints the JSON of run_child(threads, case
    names, samples), a dict per case holding a "bytes" digest of multigather's result; the
    parent prints each thread count's table with print_table(threads, table), then whether
    multigather's results are bit-identical across the thread counts."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default 1,all)")
    ap.add_argument("--cases", default=default_cases)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = args.cases.split(",")
    if args.child is not None:
        print(json.dumps(run_child(args.child, names, args.samples)))
        return 0
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, os.cpu_count() or 1})
    tables = child_tables(script, threads, ["--cases", args.cases, "--samples", str(args.samples)])
    if tables is None:
        return 1
    for t, table in tables.items():
        print(f"\n## {t} thread{'s' if t > 1 else ''} (ms; ratio = best peer / multigather, >= 1.0 is at least as fast)\n")
        print_table(table)
    if len(tables) > 1:
        same = all(len({tables[t][n]["bytes"] for t in tables}) == 1 for n in names)
        print(f"\ndeterminism: multigather's results are {'bit-identical' if same else 'DIFFERENT'} "
              f"at {', '.join(str(t) for t in tables)} threads")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default: 1,all)")
    ap.add_argument("--cases", default="1,2,3,4,5,6,7,8,9", help="docs/bench.md case numbers")
    ap.add_argument("--samples", type=int, default=11, help="timed samples per callable (median)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a speed goal is missed")
    ap.add_argument("--json", default=None, help="also write the raw results to this file")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    numbers = {int(c) for c in args.cases.split(",")}

    if args.child is not None:
        if args.child == 1 and hasattr(os, "sched_setaffinity"):
            # One thread means one core for everybody: some peers start threads of their own
            # whatever they are told (XLA's CPU runtime measured 1.8 cores busy in a
            # "1 thread" run), so the 1-thread child is pinned to one CPU.
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        print(json.dumps(run_one_thread_count(args.child, numbers, args.samples)))
        return 0

    cores = os.cpu_count() or 1
    counts = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, cores})
    results = []
    for t in counts:
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(t)
        if t == 1:  # XLA's CPU backend: no Eigen thread pool
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(t), "--cases", args.cases,
               "--samples", str(args.samples)]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            print(f"child for {t} thread(s) failed with status {proc.returncode}", file=sys.stderr)
            return 2
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"# multigather vs peers (docs/bench.md cases), machine: {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return report(results, args.check)


if __name__ == "__main__":
    sys.exit(main())
