#!/usr/bin/env python3
"""multigather.scatter_multiaxis against its CPU peers on the scatter cases of docs/bench.md
(S1-S5, S7), from Python, at 1 thread and all cores.

Two columns, as for the gathers (bench/peers.py): one-shot (the call returns a new array:
multigather without out=, torch's out-of-place ops, ONNX Runtime's session.run, JAX's
.at[].add under jit) and into (the result written into existing memory: multigather with
out=input, in place; torch's in-place ops (index_add_, scatter_add_, put_, scatter_); numpy's
in-place np.add.at, np.put_along_axis and np.bincount's formulation where it applies; ONNX
Runtime with its output bound through an IOBinding). The ratio is best peer / multigather
(>= 1.0: multigather is at least as fast). Every peer's result is compared with numpy's once
(a mismatch drops the peer), and multigather's result is checked to be bit-identical at 1
thread and at all cores (the determinism the peers do not promise).

Method: the timing of bench/peers.py (interleaved medians of ~2 ms samples, one process per
thread count, thread counts set before any import). In-place calls are repeated on the same
buffer: their values drift, their cost does not.

Usage:  python3 bench/scatter_peers.py [--threads 1,2] [--cases S1,S5] [--samples 7]
"""

from __future__ import annotations

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import SEED, case_table_main, measure_interleaved, peer_modules  # noqa: E402


def make_cases(np, rng):
    """name -> (what, input, indices for multigather, updates, axes, reduction)."""
    cases = {}
    idx = rng.integers(0, 50000, 8192)
    cases["S1"] = ("embedding_backward", np.zeros((50000, 512), np.float32), idx,
                   rng.standard_normal((8192, 512)).astype(np.float32), "add")
    perm = np.argsort(rng.random((4096, 1024)), axis=1)[:, :256]
    cases["S2"] = ("scatter_elements_last_axis", rng.standard_normal((4096, 1024)).astype(np.float32),
                   perm, rng.standard_normal((4096, 256)).astype(np.float32), "none")
    cases["S3"] = ("scatter_add_axis0", np.zeros((1024, 4096), np.float32),
                   rng.integers(0, 1024, (256, 4096)),
                   rng.standard_normal((256, 4096)).astype(np.float32), "add")
    pts = np.stack([rng.integers(0, 4, 262144), rng.integers(0, 512, 262144),
                    rng.integers(0, 512, 262144)], axis=1)
    cases["S4"] = ("scatter_nd_points_add", np.zeros((4, 512, 512, 32), np.float32), pts,
                   rng.standard_normal((262144, 32)).astype(np.float32), "add")
    cases["S5"] = ("flat_put_add", np.zeros(16777216, np.float32), rng.integers(0, 16777216, 4194304),
                   rng.standard_normal(4194304).astype(np.float32), "add")
    cases["S7"] = ("tiny_scatter", np.zeros((16, 16), np.float32), np.array([3, 1, 4, 1]),
                   rng.standard_normal((4, 16)).astype(np.float32), "add")
    return cases


def multigather_call(mg, name, x, idx, u, reduction):
    """(indices, updates, axes) of the scatter_multiaxis call for case `name`."""
    if name in ("S1", "S7"):
        return idx[:, None], u, [0]
    if name == "S2":
        return idx, u, [1]
    if name == "S3":
        return idx, u, [0]
    if name == "S4":
        # points (b, y, x) -> G [262144, 1, 1, 32]: indices [262144, 1, 1, 3], axes 0, 1, 2
        return idx.reshape(262144, 1, 1, 3), u.reshape(262144, 1, 1, 32), [0, 1, 2]
    return idx, u, [0]  # S5


def numpy_reference(np, name, x, idx, u):
    out = x.copy()
    if name == "S2":
        np.put_along_axis(out, idx, u, 1)
    elif name == "S3":
        np.add.at(out, (idx, np.arange(4096)[None, :]), u)
    elif name == "S4":
        np.add.at(out, (idx[:, 0], idx[:, 1], idx[:, 2]), u)
    else:
        np.add.at(out, idx, u)
    return out


def peers_for(P, name, x, idx, u):
    """(oneshot, into): label -> callable returning the result (into: in place on a copy)."""
    np = P["np"]
    oneshot, into = {}, {}
    buf = x.copy()
    # numpy (one thread): the formulation a practitioner would write.
    if name == "S2":
        into["np.put_along_axis"] = lambda: (np.put_along_axis(buf, idx, u, 1), buf)[1]
    elif name == "S3":
        cols = np.arange(4096)[None, :]
        into["np.add.at"] = lambda: (np.add.at(buf, (idx, cols), u), buf)[1]
    elif name == "S4":
        t = (idx[:, 0], idx[:, 1], idx[:, 2])
        into["np.add.at"] = lambda: (np.add.at(buf, t, u), buf)[1]
    else:
        into["np.add.at"] = lambda: (np.add.at(buf, idx, u), buf)[1]
    if name == "S5":
        oneshot["np.bincount"] = lambda: x + np.bincount(idx, u, minlength=x.size).astype(np.float32)
    torch = P.get("torch")
    if torch is not None:
        xt = torch.from_numpy(x.copy())
        it = torch.from_numpy(idx)
        ut = torch.from_numpy(u)
        if name in ("S1", "S7"):
            oneshot["torch.index_add"] = lambda: xt.index_add(0, it, ut)
            into["torch.index_add_"] = lambda: xt.index_add_(0, it, ut)
        elif name == "S2":
            oneshot["torch.scatter"] = lambda: xt.scatter(1, it, ut)
            into["torch.scatter_"] = lambda: xt.scatter_(1, it, ut)
        elif name == "S3":
            oneshot["torch.scatter_add"] = lambda: xt.scatter_add(0, it, ut)
            into["torch.scatter_add_"] = lambda: xt.scatter_add_(0, it, ut)
        elif name == "S4":
            t = (it[:, 0], it[:, 1], it[:, 2])
            oneshot["torch.index_put"] = lambda: xt.index_put(t, ut, accumulate=True)
            into["torch.index_put_"] = lambda: xt.index_put_(t, ut, accumulate=True)
        else:
            oneshot["torch.index_add"] = lambda: xt.index_add(0, it, ut)
            into["torch.index_add_"] = lambda: xt.index_add_(0, it, ut)
            into["torch.put_"] = lambda: xt.put_(it, ut, accumulate=True)
    ort = P.get("ort")
    if ort is not None:
        h, TP = P["helper"], P["TensorProto"]
        if name == "S2":
            op, attrs, oidx, oupd = "ScatterElements", {"axis": 1}, idx, u
        elif name == "S3":
            op, attrs, oidx, oupd = "ScatterElements", {"axis": 0, "reduction": "add"}, idx, u
        elif name == "S4":
            op, attrs, oidx, oupd = "ScatterND", {"reduction": "add"}, idx, u
        else:
            op, attrs, oidx, oupd = "ScatterND", {"reduction": "add"}, idx[:, None], u
        node = h.make_node(op, ["data", "indices", "updates"], ["out"], **attrs)
        graph = h.make_graph([node], op, [
            h.make_tensor_value_info("data", TP.FLOAT, list(x.shape)),
            h.make_tensor_value_info("indices", TP.INT64, list(oidx.shape)),
            h.make_tensor_value_info("updates", TP.FLOAT, list(oupd.shape))],
            [h.make_tensor_value_info("out", TP.FLOAT, list(x.shape))])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
        model.ir_version = 9
        so = ort.SessionOptions()
        so.intra_op_num_threads = P["threads"]
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feeds = {"data": x, "indices": oidx, "updates": oupd}
        oneshot[f"ort.{op}"] = lambda: sess.run(None, feeds)[0]
        out = np.empty_like(x)
        binding = sess.io_binding()
        for k, v in feeds.items():
            binding.bind_cpu_input(k, v)
        binding.bind_output("out", "cpu", 0, out.dtype, list(out.shape), out.ctypes.data)
        into[f"ort.{op} (IOBinding)"] = lambda: (sess.run_with_iobinding(binding), out)[1]
    jax = P.get("jax")
    if jax is not None and name != "S2":
        jnp = jax.numpy
        if name == "S3":
            f = jax.jit(lambda a, i, v: a.at[i, jnp.arange(4096)[None, :]].add(v))
        elif name == "S4":
            f = jax.jit(lambda a, i, v: a.at[i[:, 0], i[:, 1], i[:, 2]].add(v))
        else:
            f = jax.jit(lambda a, i, v: a.at[i].add(v))
        args = [jax.device_put(a) for a in (x, idx, u)]
        oneshot["jax .at[].add"] = lambda: f(*args).block_until_ready()
    elif jax is not None:
        f = jax.jit(lambda a, i, v: a.at[jnp_rows(jax, a, i), i].set(v))
        args = [jax.device_put(a) for a in (x, idx, u)]
        oneshot["jax .at[].set"] = lambda: f(*args).block_until_ready()
    return oneshot, into


def jnp_rows(jax, a, i):
    return jax.numpy.arange(a.shape[0])[:, None]


def run_child(threads: int, names, samples: int) -> dict:
    P = peer_modules(threads, onnxruntime=True)
    np = P["np"]
    import multigather as mg

    mg.set_num_threads(threads)
    rng = np.random.default_rng(SEED)
    cases = make_cases(np, rng)
    results = {}
    for name in names:
        what, x, idx, u, reduction = cases[name]
        want = numpy_reference(np, name, x, idx, u)
        mi, mu, axes = multigather_call(mg, name, x, idx, u, reduction)
        got = mg.scatter_multiaxis(x, mi, mu, axes, reduction=reduction)
        mismatches = []
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            mismatches.append("multigather")
        buf = x.copy()
        oneshot = {"multigather": lambda: mg.scatter_multiaxis(x, mi, mu, axes, reduction=reduction)}
        into = {"multigather": lambda: mg.scatter_multiaxis(buf, mi, mu, axes, reduction=reduction, out=buf)}
        po, pi = peers_for(P, name, x, idx, u)
        for label, f in list(po.items()):
            r = f()
            r = r.numpy() if hasattr(r, "numpy") else np.asarray(r)
            if not np.allclose(r, want, rtol=1e-4, atol=1e-4):
                mismatches.append(label)
                del po[label]
        oneshot.update(po)
        into.update(pi)
        t1 = measure_interleaved(oneshot, samples)
        t2 = measure_interleaved(into, samples)
        results[name] = {"what": what, "oneshot": {k: v[0] for k, v in t1.items()},
                         "into": {k: v[0] for k, v in t2.items()}, "mismatches": mismatches,
                         "bytes": hashlib.sha256(got.tobytes()).hexdigest()}
    return results


def print_table(table: dict) -> None:
    """One thread count's table (markdown), a row per case."""
    print("| case | multigather one-shot | best peer one-shot | ratio | multigather into | best peer into | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in table.items():
        row = [f"{name} {r['what']}"]
        for col in ("oneshot", "into"):
            times = r[col]
            mine = times["multigather"]
            peers = {k: v for k, v in times.items() if k != "multigather"}
            best = min(peers, key=peers.get) if peers else None
            row.append(f"{mine * 1e3:.3f}")
            row.append(f"{peers[best] * 1e3:.3f} ({best})" if best else "-")
            row.append(f"{peers[best] / mine:.2f}" if best else "-")
        print("| " + " | ".join(row) + " |")
        if r["mismatches"]:
            print(f"\nmismatches on {name}: {r['mismatches']}")


def main() -> int:
    return case_table_main(__file__, __doc__, "S1,S2,S3,S4,S5,S7", run_child, print_table)


if __name__ == "__main__":
    sys.exit(main())
