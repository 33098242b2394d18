"""multigather's torch ops on DTensors (multigather._dtensor): a 2-process gloo mesh on loopback.

One launch of two worker processes (this file run as a script: rank, world size, port) runs
every case; each case compares the DTensor result (full_tensor) with torch's own op on the full
tensors, the gradients with torch's full-tensor gradients, and reads the collectives from
CommDebugMode. The tests below check the workers' per-case reports. Skips when torch,
torch.distributed or gloo is missing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import traceback

import pytest

WORLD = 2
TIMEOUT_S = 150


# ---- the worker (runs in each rank's process) ----------------------------------------------------

def _counts(comm) -> dict:
    return {str(k).split("'")[1] if "'" in str(k) else str(k): v for k, v in comm.get_comm_counts().items()}


def _all_gathers(counts: dict) -> int:
    return sum(v for k, v in counts.items() if "all_gather" in k)


def _case(name, results, fn):
    try:
        results[name] = fn()
    except Exception:  # reported to the test, which fails with the traceback
        results[name] = {"error": traceback.format_exc()}


def _run_cases(rank: int) -> dict:
    import torch
    import torch.nn.functional as F
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode

    import multigather.torch as mt

    mesh = init_device_mesh("cpu", (WORLD,))
    g = torch.Generator().manual_seed(0)
    results: dict = {}

    def placement(text):  # "Shard(1)" / "Replicate()"
        return Shard(int(text[6:-1])) if text.startswith("Shard") else Replicate()

    def dt(t, placements, grad=False):
        d = distribute_tensor(t, mesh, placements)
        return d.requires_grad_() if grad else d

    def check(ours_fn, theirs_fn, x_full, x_pl, i_full, i_pl, u_full=None, u_pl=None):
        """Forward placements, collectives, values and gradients of ours_fn on DTensors
        against theirs_fn (torch's op) on the full tensors."""
        x = dt(x_full, x_pl, grad=True)
        i = dt(i_full, i_pl)
        u = None if u_full is None else dt(u_full, u_pl, grad=True)
        with CommDebugMode() as fwd:
            y = ours_fn(x, i) if u is None else ours_fn(x, i, u)
        fwd_counts = _counts(fwd)
        placements = [repr(p) for p in y.placements]
        z = y.full_tensor()
        xr = x_full.clone().requires_grad_()
        ur = None if u_full is None else u_full.clone().requires_grad_()
        ref = theirs_fn(xr, i_full) if ur is None else theirs_fn(xr, i_full, ur)
        out = {"placements": placements, "forward_comms": fwd_counts,
               "equal": bool(torch.allclose(z, ref, rtol=1e-6, atol=1e-6)),
               "forward_all_gathers": _all_gathers(fwd_counts)}
        cot = torch.randn(ref.shape, generator=g)
        with CommDebugMode() as bwd:
            (z * cot).sum().backward()
        (ref * cot).sum().backward()
        out["grad_placements"] = [repr(p) for p in x.grad.placements]
        out["grad_equal"] = bool(torch.allclose(x.grad.full_tensor(), xr.grad, rtol=1e-6, atol=1e-6))
        if u is not None:
            out["updates_grad_equal"] = bool(torch.allclose(u.grad.full_tensor(), ur.grad, rtol=1e-6, atol=1e-6))
        out["backward_comms"] = _counts(bwd)
        return out

    W = torch.randn(16, 6, generator=g)
    ids = torch.randint(0, 16, (4, 5), generator=g)
    for pl, ipl in (("Shard(0)", "Replicate()"), ("Shard(1)", "Replicate()"), ("Replicate()", "Replicate()"),
                    ("Replicate()", "Shard(0)")):
        _case(f"embedding weight={pl} ids={ipl}", results,
              lambda pl=pl, ipl=ipl: check(lambda w, i: mt.embedding(i, w), lambda w, i: F.embedding(i, w),
                                           W, [placement(pl)], ids, [placement(ipl)]))

    # An embedding bag: the lookups summed over the bag dimension before the loss (the sum's
    # gradient is expanded: a reshape of it on a DTensor sharded by columns used to fail)
    for pl in ("Shard(0)", "Shard(1)"):
        _case(f"embedding bag weight={pl}", results,
              lambda pl=pl: check(lambda w, i: mt.embedding(i, w).sum(1), lambda w, i: F.embedding(i, w).sum(1),
                                  W, [placement(pl)], ids, [Replicate()]))

    X = torch.randn(8, 6, generator=g)
    idx = torch.randint(0, 8, (5, 6), generator=g)
    for pl, ipl in (("Shard(0)", "Replicate()"), ("Shard(1)", "Replicate()"), ("Replicate()", "Replicate()"),
                    ("Replicate()", "Shard(0)"), ("Shard(1)", "Shard(1)")):
        _case(f"gather dim=0 input={pl} index={ipl}", results,
              lambda pl=pl, ipl=ipl: check(lambda x, i: mt.gather(x, 0, i), lambda x, i: torch.gather(x, 0, i),
                                           X, [placement(pl)], idx, [placement(ipl)]))

    sel = torch.randint(0, 6, (4,), generator=g)
    for pl in ("Shard(1)", "Shard(0)", "Replicate()"):
        _case(f"index_select dim=1 input={pl}", results,
              lambda pl=pl: check(lambda x, i: mt.index_select(x, 1, i), lambda x, i: torch.index_select(x, 1, i),
                                  X, [placement(pl)], sel, [Replicate()]))

    src = torch.randn(5, 6, generator=g)
    for pl, ipl in (("Shard(1)", "Shard(1)"), ("Replicate()", "Shard(0)"), ("Shard(0)", "Replicate()"),
                    ("Replicate()", "Replicate()")):
        _case(f"scatter_add dim=0 input={pl} index,src={ipl}", results,
              lambda pl=pl, ipl=ipl: check(lambda x, i, u: mt.scatter_add(x, 0, i, u),
                                           lambda x, i, u: torch.scatter_add(x, 0, i, u),
                                           X, [placement(pl)], idx, [placement(ipl)], src, [placement(ipl)]))

    # index_add into a row-sharded table (an embedding gradient written by hand): each rank
    # adds the rows it holds, with duplicates and negative-free ids
    rows = torch.randint(0, 16, (12,), generator=g)
    rows[3] = rows[7]
    grads = torch.randn(12, 6, generator=g)
    _case("index_add input=Shard(0)", results,
          lambda: check(lambda w, i, u: mt.index_add(w, 0, i, u), lambda w, i, u: torch.index_add(w, 0, i, u),
                        W, [Shard(0)], rows, [Replicate()], grads, [Replicate()]))

    def two_live_outputs():
        # DTensor's own row-sharded embedding keeps one mask per strategy and raises
        # "MaskBuffer has been materialized with conflicting data" here.
        w = dt(W, [Shard(0)])
        i1, i2 = dt(ids, [Replicate()]), dt(ids.flip(0), [Replicate()])
        y1, y2 = mt.embedding(i1, w), mt.embedding(i2, w)
        return {"equal": bool(torch.equal(y2.full_tensor(), F.embedding(ids.flip(0), W)) and
                              torch.equal(y1.full_tensor(), F.embedding(ids, W)))}

    _case("embedding two live outputs", results, two_live_outputs)

    def index_error():
        w = dt(W, [Shard(0)])
        try:
            mt.embedding(dt(torch.tensor([3, 16]), [Replicate()]), w)
        except IndexError as e:
            return {"raised": True, "message": str(e)}
        return {"raised": False}

    _case("embedding index out of range", results, index_error)

    def index_error_replicated():
        # every placement but the row-sharded table: the IndexError (not a RuntimeError naming
        # aten.nonzero, which DTensor has no strategy for)
        out = {}
        for name, placements in (("replicated", [Replicate()]), ("column-sharded", [Shard(1)])):
            try:
                mt.embedding(dt(torch.tensor([0, 16]), [Replicate()]), dt(W, placements))
            except IndexError as e:
                out[name] = str(e)
            except Exception as e:  # noqa: BLE001  (the report names it)
                out[name] = f"not an IndexError: {type(e).__name__}: {e}"
            else:
                out[name] = "no error"
        return out

    _case("embedding index out of range, other placements", results, index_error_replicated)

    def take_along_dim_wrap():
        # take_along_dim wraps (indices % size), negatives included: resolved on the whole axis
        i = torch.tensor([[-1, 9, 2, 0, 7, -8]])
        y = mt.take_along_dim(dt(X, [Shard(0)]), dt(i, [Replicate()]), 0)
        return {"placements": [repr(p) for p in y.placements],
                "equal": bool(torch.equal(y.full_tensor(), torch.gather(X, 0, i % 8)))}

    _case("take_along_dim wrap input=Shard(0)", results, take_along_dim_wrap)

    # Segment ops (a GNN's aggregation): the edges' rows split with their ids give partial sums;
    # the features split pass through. torch's own index_add / segment_reduce are the oracles.
    import multigather.torch_scatter as ts

    msg = torch.randn(8, 6, generator=g)
    dst = torch.tensor([0, 1, 0, 2, 1, 3, 3, 0])
    for pl, ipl in (("Shard(0)", "Shard(0)"), ("Shard(0)", "Replicate()"), ("Shard(1)", "Replicate()"),
                    ("Replicate()", "Replicate()"), ("Replicate()", "Shard(0)")):
        _case(f"scatter_sum src={pl} index={ipl}", results,
              lambda pl=pl, ipl=ipl: check(lambda x, i: ts.scatter_sum(x, i, 0, dim_size=4),
                                           lambda x, i: torch.zeros(4, 6).index_add(0, i, x),
                                           msg, [placement(pl)], dst, [placement(ipl)]))
    lengths = torch.tensor([3, 0, 4, 1])
    _case("segment_reduce sum data=Shard(1)", results,
          lambda: check(lambda x, n: mt.segment_reduce(x, "sum", lengths=n),
                        lambda x, n: torch.segment_reduce(x, "sum", lengths=n),
                        msg, [Shard(1)], lengths, [Replicate()]))

    def gnn_layer():
        # A message-passing layer built from torch.nn, its edges split over the ranks (src, dst
        # Shard(0)), node features and weights replicated: x W gathered by source, summed into
        # targets (multigather), a second Linear; loss and every gradient against the same
        # model on plain tensors with torch's index_select / index_add.
        torch.manual_seed(3)
        lin, out_lin = torch.nn.Linear(5, 6), torch.nn.Linear(6, 2)
        nodes = torch.randn(7, 5, generator=g)
        src_e, dst_e = torch.randint(0, 7, (12,), generator=g), torch.randint(0, 7, (12,), generator=g)

        def model(x, s, d, gather, aggregate):
            return out_lin(aggregate(gather(lin(x), s), d)).square().sum()

        from torch.distributed.tensor import distribute_module

        ref = model(nodes, src_e, dst_e, lambda h, s: torch.index_select(h, 0, s),
                    lambda m, d: torch.zeros(7, 6).index_add(0, d, m))
        ref.backward()
        want = {n: p.grad.clone() for n, p in (("lin.weight", lin.weight), ("lin.bias", lin.bias),
                                               ("out.weight", out_lin.weight))}
        for p in (*lin.parameters(), *out_lin.parameters()):
            p.grad = None
        distribute_module(lin, mesh)
        distribute_module(out_lin, mesh)
        with CommDebugMode() as comm:
            loss = model(dt(nodes, [Replicate()]), dt(src_e, [Shard(0)]), dt(dst_e, [Shard(0)]),
                         lambda h, s: mt.index_select(h, 0, s),
                         lambda m, d: ts.scatter_sum(m, d, 0, dim_size=7))
            loss.backward()
        got = {"lin.weight": lin.weight.grad, "lin.bias": lin.bias.grad, "out.weight": out_lin.weight.grad}
        return {"equal": bool(torch.allclose(loss.full_tensor(), ref, rtol=1e-5)) and
                all(bool(torch.allclose(got[n].full_tensor(), want[n], rtol=1e-4, atol=1e-5)) for n in want),
                "all_gathers": _all_gathers(_counts(comm))}

    _case("gnn layer edges=Shard(0)", results, gnn_layer)

    def segment_max_replicates():
        # a maximum needs all of a segment's rows: rows split replicate, and say so; the arg
        # output (positions of the maxima) is made of DTensors too
        import warnings

        from multigather._jax_sharding import ReplicationWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with CommDebugMode() as fwd:
                y, arg = ts.scatter_max(dt(msg, [Shard(0)]), dt(dst, [Replicate()]), 0, dim_size=4)
        want, want_arg = ts.scatter_max(msg, dst, 0, dim_size=4)
        return {"equal": bool(torch.equal(y.full_tensor(), want) and torch.equal(arg.full_tensor(), want_arg)),
                "forward_all_gathers": _all_gathers(_counts(fwd)),
                "warnings": [str(w.message) for w in caught if issubclass(w.category, ReplicationWarning)]}

    _case("torch_scatter scatter_max src=Shard(0)", results, segment_max_replicates)

    def embedding_bag_replicates():
        # a row-sharded table under embedding_bag: replicated, and said so
        import warnings

        from multigather._jax_sharding import ReplicationWarning

        table, ids, offsets = torch.randn(8, 3, generator=g), torch.tensor([0, 7, 3, 3, 5]), torch.tensor([0, 2])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            w = dt(table, [Shard(0)]).requires_grad_(True)
            y = mt.embedding_bag(dt(ids, [Replicate()]), w, dt(offsets, [Replicate()]), mode="sum")
            y.sum().backward()
        want_w = table.clone().requires_grad_(True)
        want = torch.nn.functional.embedding_bag(ids, want_w, offsets, mode="sum")
        want.sum().backward()
        return {"equal": bool(torch.equal(y.full_tensor(), want)) and
                bool(torch.equal(w.grad.full_tensor(), want_w.grad)),
                "warnings": [str(w.message) for w in caught if issubclass(w.category, ReplicationWarning)]}

    _case("embedding_bag weight=Shard(0)", results, embedding_bag_replicates)
    return results


def _worker(rank: int, port: int, out_path: str) -> None:
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        results = _run_cases(rank)
    finally:
        dist.destroy_process_group()
    with open(out_path, "w") as f:
        json.dump(results, f)


# ---- the tests ----------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    torch = pytest.importorskip("torch")
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    pytest.importorskip("torch.distributed.tensor")
    del torch
    tmp = tmp_path_factory.mktemp("dtensor")
    port = _free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, __file__, str(r), str(port), str(tmp / f"rank{r}.json")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(WORLD)]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT_S)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for r, p in enumerate(procs):
        assert p.returncode == 0, f"rank {r} failed:\n{outputs[r][-4000:]}"
    return [json.loads((tmp / f"rank{r}.json").read_text()) for r in range(WORLD)]


def _report(reports, name):
    for rank, report in enumerate(reports):
        assert "error" not in report[name], f"rank {rank}: {report[name]['error']}"
    return reports[0][name]


def _values(r):
    assert r["equal"], r
    assert r["grad_equal"], r
    assert r.get("updates_grad_equal", True), r


@pytest.mark.parametrize("weight, ids, placement", [
    ("Shard(0)", "Replicate()", "Partial(sum)"),   # vocabulary-parallel: masked, all-reduced
    ("Shard(1)", "Replicate()", "Shard(dim=2)"),   # operand pass-through (embedding_dim)
    ("Replicate()", "Replicate()", "Replicate()"),
    ("Replicate()", "Shard(0)", "Shard(dim=0)"),   # lookup pass-through
])
def test_embedding(reports, weight, ids, placement):
    r = _report(reports, f"embedding weight={weight} ids={ids}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == 0 and not r["forward_comms"], r  # no collective at all
    if weight == "Shard(0)":  # as aten.embedding's: computed whole on each rank, no collective
        assert r["grad_placements"] == ["Replicate()"], r
        assert _all_gathers(r["backward_comms"]) == 0, r
    if weight == "Shard(1)":
        assert r["grad_placements"] == ["Shard(dim=1)"], r


@pytest.mark.parametrize("weight, placement, grad", [
    ("Shard(0)", "Partial(sum)", "Replicate()"),
    ("Shard(1)", "Shard(dim=1)", "Shard(dim=1)"),
])
def test_embedding_bag(reports, weight, placement, grad):
    r = _report(reports, f"embedding bag weight={weight}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == 0, r
    assert r["grad_placements"] == [grad], r


@pytest.mark.parametrize("input, index, placement", [
    ("Shard(0)", "Replicate()", "Partial(sum)"),   # the gathered dim: masked partial
    ("Shard(1)", "Replicate()", "Shard(dim=1)"),   # batch: index sharded alike, locally
    ("Replicate()", "Replicate()", "Replicate()"),
    ("Replicate()", "Shard(0)", "Shard(dim=0)"),   # lookup
    ("Shard(1)", "Shard(1)", "Shard(dim=1)"),
])
def test_gather(reports, input, index, placement):
    r = _report(reports, f"gather dim=0 input={input} index={index}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == 0, r


@pytest.mark.parametrize("input, placement", [
    ("Shard(1)", "Partial(sum)"),   # sharded along the selected dim: mask laid on output dim 1
    ("Shard(0)", "Shard(dim=0)"),   # operand
    ("Replicate()", "Replicate()"),
])
def test_index_select(reports, input, placement):
    r = _report(reports, f"index_select dim=1 input={input}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == 0, r


@pytest.mark.parametrize("input, index, placement, gathers", [
    ("Shard(1)", "Shard(1)", "Shard(dim=1)", 0),        # batch pass-through
    ("Replicate()", "Shard(0)", "Partial(sum)", 0),     # updates split: partial sums (add)
    ("Shard(0)", "Replicate()", "Shard(dim=0)", 0),     # the scattered dim: each rank's rows
    ("Replicate()", "Replicate()", "Replicate()", 0),
])
def test_scatter_add(reports, input, index, placement, gathers):
    r = _report(reports, f"scatter_add dim=0 input={input} index,src={index}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == gathers, r


def test_index_add_into_a_row_sharded_table(reports):
    r = _report(reports, "index_add input=Shard(0)")
    _values(r)
    assert r["placements"] == ["Shard(dim=0)"], r
    assert r["forward_all_gathers"] == 0 and not r["forward_comms"], r


def test_two_live_outputs(reports):
    assert _report(reports, "embedding two live outputs")["equal"]


def test_index_error(reports):
    r = _report(reports, "embedding index out of range")
    assert r["raised"], r
    assert "16" in r["message"], r


def test_index_error_on_other_placements_is_an_index_error(reports):
    r = _report(reports, "embedding index out of range, other placements")
    for name in ("replicated", "column-sharded"):
        assert "16" in r[name] and "out of range" in r[name] and "not an IndexError" not in r[name], r


def test_take_along_dim_wrap(reports):
    r = _report(reports, "take_along_dim wrap input=Shard(0)")
    assert r["equal"], r
    assert r["placements"] == ["Partial(sum)"], r


if __name__ == "__main__":
    _worker(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])


@pytest.mark.parametrize("src, index, placement, grad", [
    ("Shard(0)", "Shard(0)", "Partial(sum)", "Shard(dim=0)"),     # edges split: partial sums
    ("Shard(0)", "Replicate()", "Partial(sum)", "Shard(dim=0)"),  # the ids sliced locally
    ("Shard(1)", "Replicate()", "Shard(dim=1)", "Shard(dim=1)"),  # features pass through
    ("Replicate()", "Replicate()", "Replicate()", "Replicate()"),
    ("Replicate()", "Shard(0)", "Partial(sum)", "Shard(dim=0)"),  # the data sliced locally
])
def test_segment_sum(reports, src, index, placement, grad):
    r = _report(reports, f"scatter_sum src={src} index={index}")
    _values(r)
    assert r["placements"] == [placement], r
    assert r["forward_all_gathers"] == 0 and not r["forward_comms"], r  # no collective at all
    assert r["grad_placements"] == [grad], r
    assert _all_gathers(r["backward_comms"]) == 0, r


def test_gnn_layer_with_split_edges_equals_the_unmodified_model(reports):
    r = _report(reports, "gnn layer edges=Shard(0)")
    assert r["equal"], r
    assert r["all_gathers"] == 0, r


def test_segment_reduce_features(reports):
    r = _report(reports, "segment_reduce sum data=Shard(1)")
    _values(r)
    assert r["placements"] == ["Shard(dim=1)"] and r["grad_placements"] == ["Shard(dim=1)"], r
    assert r["forward_all_gathers"] == 0 and not r["forward_comms"], r


def test_segment_max_replicates_split_rows_with_a_warning(reports):
    r = _report(reports, "torch_scatter scatter_max src=Shard(0)")
    assert r["equal"], r
    assert r["forward_all_gathers"] >= 1, r
    assert any(m.startswith("torch_scatter.scatter: src arrives as (Shard(dim=0),) and is replicated")
               for m in r["warnings"]), r


def test_embedding_bag_replicates_a_sharded_table_with_a_warning(reports):
    r = _report(reports, "embedding_bag weight=Shard(0)")
    assert r["equal"], r
    assert any(m.startswith("torch.nn.functional.embedding_bag: weight arrives as (Shard(dim=0),) and is replicated")
               for m in r["warnings"]), r
