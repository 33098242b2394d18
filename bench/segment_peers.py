#!/usr/bin/env python3
"""multigather's segment reductions against their CPU peers (docs/bench.md, "Segment
reductions": G1 to G5), from Python, at 1 thread and all cores.

Each case is called the way a practitioner calls it: multigather through its framework wrappers
on numpy arrays (the result a new array); jax.ops.segment_* under jax.jit (indices_are_sorted
where the ids are sorted); tf.math.(unsorted_)segment_* eagerly; torch.segment_reduce (lengths)
and torch's index_add / scatter_reduce on zeros; numpy's ufunc.reduceat / ufunc.at. The ratio is
best peer / multigather (>= 1.0: multigather is at least as fast). Every result is compared with
a numpy oracle once (a mismatch drops the peer), and multigather's results are checked to be
bit-identical at every thread count measured (the peers do not promise it).

Cases:
  G1 sorted segment_sum      data [500000, 32] f32, 50000 sorted segments
  G2 unsorted segment_sum    the same data, the ids shuffled
  G3 embedding_bag sum       table [200000, 64] f32, 16384 bags of 20 ids, offsets:
                             multigather.torch.embedding_bag on numpy arrays against
                             F.embedding_bag, jnp.take + segment_sum under jit, tf.gather +
                             segment_sum, np.add.reduceat over table[ids]
  G3w                        the same with per_sample_weights
  G4 segment_max             data [500000, 32] f32, 50000 sorted segments
  G5 GNN aggregation         100k nodes, 1M edges, 64 features: gather by source, mean into targets
  T1 G1 from torch           torch tensors: multigather.torch.segment_reduce(lengths) against
                             torch.segment_reduce and index_add
  T3 G3 training step        torch tensors, forward + backward of embedding_bag(sum) for the
                             table's gradient: multigather.torch.embedding_bag against
                             F.embedding_bag
  T5 G5 training step        torch tensors, forward + backward of a PyG-style mean aggregation:
                             multigather.torch.index_select + torch_scatter.scatter_mean (no
                             expand) against x[src] and torch's scatter_reduce(mean) over the
                             index expanded to the feature width

Method: the timing of bench/peers.py (interleaved medians of ~2 ms samples, one process per
thread count, thread counts set before any import).

Usage:  python3 bench/segment_peers.py [--threads 1,2] [--cases G1,G2] [--samples 7]
"""

from __future__ import annotations

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import SEED, case_table_main, measure_interleaved, peer_modules  # noqa: E402

WHAT = {"G1": "sorted segment_sum", "G2": "unsorted segment_sum", "G3": "embedding_bag sum (offsets)",
        "G3w": "embedding_bag sum with per_sample_weights", "G4": "segment_max (sorted)",
        "T3": "G3 in torch, forward + backward (table gradient)",
        "G5": "GNN aggregation (gather + segment mean)", "T1": "G1 on torch tensors (segment_reduce)",
        "T5": "G5 in torch, forward + backward (torch_scatter)"}


def make_cases(np, rng):
    rows, segments, width = 500000, 50000, 32
    data = rng.standard_normal((rows, width)).astype(np.float32)
    sorted_ids = np.sort(rng.integers(0, segments, rows))
    nodes, edges, features = 100000, 1000000, 64
    cases = {
        "G1": (data, sorted_ids, segments),
        "G2": (data, rng.permutation(sorted_ids), segments),
        "G4": (data, sorted_ids, segments),
        "G5": (rng.standard_normal((nodes, features)).astype(np.float32),
               (rng.integers(0, nodes, edges), rng.integers(0, nodes, edges)), nodes),
    }
    vocabulary, dim, bags, bag_size = 200000, 64, 16384, 20
    table = rng.standard_normal((vocabulary, dim)).astype(np.float32)
    bag_ids = rng.integers(0, vocabulary, bags * bag_size)
    offsets = np.arange(0, bags * bag_size, bag_size)
    cases["G3"] = (table, (bag_ids, offsets, None), bags)
    cases["G3w"] = (table, (bag_ids, offsets, rng.random(bags * bag_size).astype(np.float32)), bags)
    cases["T1"], cases["T3"], cases["T5"] = cases["G1"], cases["G3"], cases["G5"]
    return cases


def oracle(np, name, data, ids, segments):
    if name == "T3":  # the table's gradient of sum(embedding_bag(sum))
        g = np.zeros_like(data)
        np.add.at(g, ids[0], np.ones((len(ids[0]), data.shape[1]), np.float32))
        return g
    if name in ("G3", "G3w"):
        rows, offsets, weights = ids
        gathered = data[rows] if weights is None else data[rows] * weights[:, None]
        return np.add.reduceat(gathered, offsets, axis=0)
    if name == "T5":  # the gradient of sum(mean aggregation) with respect to x
        x, (src, dst) = data, ids
        count = np.bincount(dst, minlength=segments).astype(np.float32)
        g = np.zeros_like(x)
        np.add.at(g, src, np.broadcast_to((1 / count[dst])[:, None], (len(dst), x.shape[1])))
        return g
    if name in ("G5", "T5"):
        x, (src, dst) = data, ids
        total = np.zeros((segments, x.shape[1]), np.float32)
        np.add.at(total, dst, x[src])
        count = np.bincount(dst, minlength=segments).astype(np.float32)
        return total / np.maximum(count, 1)[:, None]
    if name == "G4":
        out = np.full((segments, data.shape[1]), -np.inf, np.float32)
        np.maximum.at(out, ids, data)
        return out
    out = np.zeros((segments, data.shape[1]), np.float32)
    np.add.at(out, ids, data)
    return out


def multigather_for(mg, name, data, ids, segments):
    if name in ("G3", "G3w"):
        rows, offsets, weights = ids
        return lambda: mg.torch.embedding_bag(rows, data, offsets, mode="sum", per_sample_weights=weights)
    if name == "T3":
        import torch

        table, rows, offsets = torch.from_numpy(data).requires_grad_(True), *[torch.from_numpy(a) for a in ids[:2]]

        def step():
            table.grad = None
            mg.torch.embedding_bag(rows, table, offsets, mode="sum").sum().backward()
            return table.grad.numpy()
        return step
    if name == "T1":
        import torch

        tdata = torch.from_numpy(data)
        lengths = torch.bincount(torch.from_numpy(ids), minlength=segments)
        return lambda: mg.torch.segment_reduce(tdata, "sum", lengths=lengths).numpy()
    if name == "T5":
        import torch

        x, (src, dst) = torch.from_numpy(data).requires_grad_(True), [torch.from_numpy(a) for a in ids]

        def step():
            x.grad = None
            messages = mg.torch.index_select(x, 0, src)  # x[src], with multigather's gradient
            mg.torch_scatter.scatter_mean(messages, dst, 0, dim_size=segments).sum().backward()
            return x.grad.numpy()
        return step
    if name == "G5":
        x, (src, dst) = data, ids
        return lambda: mg.tf.unsorted_segment_mean(mg.numpy.take(x, src, axis=0), dst, segments)
    if name == "G4":
        return lambda: mg.jax.segment_max(data, ids, segments, indices_are_sorted=True)
    return lambda: mg.jax.segment_sum(data, ids, segments, indices_are_sorted=name == "G1")


def peers_for(P, name, data, ids, segments):
    """label -> callable returning the result."""
    np = P["np"]
    peers = {}
    width = data.shape[1]
    if name in ("G3", "G3w", "T3"):
        return embedding_bag_peers(P, name, data, ids)
    if name in ("G1", "G4"):
        # numpy: reduceat over the starts of the non-empty segments.
        present, starts = np.unique(ids, return_index=True)
        ufunc = np.add if name == "G1" else np.maximum
        fill = 0.0 if name == "G1" else -np.inf

        def reduceat():
            out = np.full((segments, width), fill, np.float32)
            out[present] = ufunc.reduceat(data, starts, axis=0)
            return out
        peers[f"np.{ufunc.__name__}.reduceat"] = reduceat
    elif name == "G2":
        def add_at():
            out = np.zeros((segments, width), np.float32)
            np.add.at(out, ids, data)
            return out
        peers["np.add.at"] = add_at
    torch = P.get("torch")
    if torch is not None and name == "T5":
        tx, (tsrc, tdst) = torch.from_numpy(data).requires_grad_(True), [torch.from_numpy(a) for a in ids]
        tindex = tdst[:, None].expand(-1, width)

        def torch_step():  # PyTorch Geometric's aggregation: the index expanded to the width
            tx.grad = None
            torch.zeros(segments, width).scatter_reduce(0, tindex, tx[tsrc], "mean", include_self=False).sum().backward()
            return tx.grad
        peers["torch scatter_reduce(mean) + backward"] = torch_step
    elif torch is not None:
        if name == "G5":
            tx, (tsrc, tdst) = torch.from_numpy(data), [torch.from_numpy(a) for a in ids]
            tindex = tdst[:, None].expand(-1, width)

            def torch_mean():
                return torch.zeros(segments, width).scatter_reduce_(0, tindex, tx[tsrc], "mean", include_self=False)
            peers["torch.scatter_reduce(mean)"] = torch_mean
        else:
            tdata, tids = torch.from_numpy(data), torch.from_numpy(ids)
            if name in ("G1", "G4", "T1"):
                lengths = torch.from_numpy(np.bincount(ids, minlength=segments))
                reduce = "max" if name == "G4" else "sum"
                # torch.segment_reduce gives -inf (max) / 0 (sum) for an empty segment, as jax does
                peers[f"torch.segment_reduce({reduce})"] = lambda: torch.segment_reduce(tdata, reduce, lengths=lengths)
            if name in ("G1", "G2", "T1"):
                peers["torch.index_add"] = lambda: torch.zeros(segments, width).index_add_(0, tids, tdata)
            else:
                tindex = tids[:, None].expand(-1, width)
                peers["torch.scatter_reduce(amax)"] = lambda: torch.full((segments, width), -float("inf")).scatter_reduce_(
                    0, tindex, tdata, "amax")
    if name.startswith("T"):
        return peers  # the torch cases have torch peers only
    jax = P.get("jax")
    if jax is not None:
        jnp = jax.numpy
        if name == "G5":
            jx, (jsrc, jdst) = jax.device_put(data), [jax.device_put(a) for a in ids]

            @jax.jit
            def jax_mean(x, src, dst):
                total = jax.ops.segment_sum(x[src], dst, segments)
                count = jax.ops.segment_sum(jnp.ones(dst.shape, x.dtype), dst, segments)
                return total / jnp.maximum(count, 1)[:, None]
            peers["jax segment_sum / count"] = lambda: jax_mean(jx, jsrc, jdst).block_until_ready()
        else:
            fn = jax.ops.segment_max if name == "G4" else jax.ops.segment_sum
            f = jax.jit(lambda d, i: fn(d, i, segments, indices_are_sorted=name != "G2"))
            jd, ji = jax.device_put(data), jax.device_put(ids)
            peers[f"jax.ops.{fn.__name__}"] = lambda: f(jd, ji).block_until_ready()
    tf = P.get("tf")
    if tf is not None:
        if name == "G5":
            tfx, (tfsrc, tfdst) = tf.constant(data), [tf.constant(a) for a in ids]
            peers["tf.math.unsorted_segment_mean"] = lambda: tf.math.unsorted_segment_mean(
                tf.gather(tfx, tfsrc), tfdst, segments)
        else:
            td, ti = tf.constant(data), tf.constant(ids)
            if name == "G1":
                peers["tf.math.segment_sum"] = lambda: tf.math.segment_sum(td, ti)
            if name == "G4":
                peers["tf.math.segment_max"] = lambda: tf.math.segment_max(td, ti)
            if name in ("G1", "G2"):
                peers["tf.math.unsorted_segment_sum"] = lambda: tf.math.unsorted_segment_sum(td, ti, segments)
    return peers


def embedding_bag_peers(P, name, table, ids):
    """G3 / G3w / T3: label -> callable."""
    np, torch, jax, tf = P["np"], P.get("torch"), P.get("jax"), P.get("tf")
    rows, offsets, weights = ids
    peers = {}
    if torch is not None:
        F = torch.nn.functional
        trows, toffsets = torch.from_numpy(rows), torch.from_numpy(offsets)
        if name == "T3":
            ttable = torch.from_numpy(table).requires_grad_(True)

            def torch_step():
                ttable.grad = None
                F.embedding_bag(trows, ttable, toffsets, mode="sum").sum().backward()
                return ttable.grad
            peers["F.embedding_bag + backward"] = torch_step
            return peers
        ttable = torch.from_numpy(table)
        tweights = None if weights is None else torch.from_numpy(weights)
        peers["F.embedding_bag"] = lambda: F.embedding_bag(trows, ttable, toffsets, mode="sum",
                                                           per_sample_weights=tweights)
    if name == "T3":
        return peers
    bag_of_row = np.repeat(np.arange(len(offsets)), np.diff(np.append(offsets, len(rows))))

    def reduceat():
        gathered = table[rows] if weights is None else table[rows] * weights[:, None]
        return np.add.reduceat(gathered, offsets, axis=0)
    peers["np.add.reduceat(table[ids])"] = reduceat
    if jax is not None:
        jnp = jax.numpy
        bags = len(offsets)

        @jax.jit
        def jax_bag(t, r, b, w):
            gathered = jnp.take(t, r, axis=0)
            if w is not None:
                gathered = gathered * w[:, None]
            return jax.ops.segment_sum(gathered, b, bags, indices_are_sorted=True)
        jt, jr, jb = jax.device_put(table), jax.device_put(rows), jax.device_put(bag_of_row)
        jw = None if weights is None else jax.device_put(weights)
        peers["jnp.take + segment_sum"] = lambda: jax_bag(jt, jr, jb, jw).block_until_ready()
    if tf is not None:
        tft, tfr, tfb = tf.constant(table), tf.constant(rows), tf.constant(bag_of_row)
        tfw = None if weights is None else tf.constant(weights)
        peers["tf.gather + segment_sum"] = lambda: tf.math.segment_sum(
            tf.gather(tft, tfr) if tfw is None else tf.gather(tft, tfr) * tfw[:, None], tfb)
    return peers


def as_numpy(np, r):
    if hasattr(r, "numpy"):
        r = r.numpy()
    return np.asarray(r)


def run_child(threads: int, names, samples: int) -> dict:
    P = peer_modules(threads, tensorflow=True)
    np = P["np"]
    import multigather as mg
    import multigather.jax  # noqa: F401
    import multigather.numpy  # noqa: F401
    import multigather.tf  # noqa: F401
    import multigather.torch  # noqa: F401
    import multigather.torch_scatter  # noqa: F401

    mg.set_num_threads(threads)
    rng = np.random.default_rng(SEED)
    cases = make_cases(np, rng)
    results = {}
    for name in names:
        data, ids, segments = cases[name]
        want = oracle(np, name, data, ids, segments)
        mine = multigather_for(mg, name, data, ids, segments)
        got = mine()
        mismatches = [] if np.allclose(got, want, rtol=1e-4, atol=1e-4) else ["multigather"]
        fns = {"multigather": mine}
        for label, f in peers_for(P, name, data, ids, segments).items():
            if np.allclose(as_numpy(np, f()), want, rtol=1e-4, atol=1e-4):
                fns[label] = f
            else:
                mismatches.append(label)
        times = measure_interleaved(fns, samples)
        results[name] = {"times": {k: v[0] for k, v in times.items()}, "mismatches": mismatches,
                         "bytes": hashlib.sha256(got.tobytes()).hexdigest()}
    return results


def print_table(table: dict) -> None:
    """One thread count's table (markdown), a row per case."""
    print("| case | multigather | best peer | ratio | every peer |")
    print("|---|---:|---:|---:|---|")
    for name, r in table.items():
        times = r["times"]
        mine = times["multigather"]
        peers = {k: v for k, v in times.items() if k != "multigather"}
        best = min(peers, key=peers.get) if peers else None
        every = ", ".join(f"{k} {v * 1e3:.2f}" for k, v in sorted(peers.items(), key=lambda kv: kv[1]))
        print(f"| {name} {WHAT[name]} | {mine * 1e3:.2f} | "
              + (f"{peers[best] * 1e3:.2f} ({best}) | {peers[best] / mine:.2f}" if best else "- | -")
              + f" | {every} |")
        if r["mismatches"]:
            print(f"\nmismatches on {name}: {r['mismatches']}")


def main() -> int:
    return case_table_main(__file__, __doc__, "G1,G2,G3,G3w,G4,G5,T1,T3,T5", run_child, print_table)


if __name__ == "__main__":
    sys.exit(main())
