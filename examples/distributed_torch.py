"""multigather under PyTorch DTensor: an embedding-bag lookup (embedding + sum over the bag) and
a gather on a 2-4 process gloo mesh (CPU, loopback), forward + backward, against torch's own
aten.embedding / aten.gather under the same placements.

    PYTHONPATH=build/python/package python3 examples/distributed_torch.py [--world 2] [--iters 20]

Prints, per case and per implementation, the result placement, the collectives of forward and
backward (CommDebugMode counts) and the mean time of one forward + backward; each result is
checked against torch's op on the full tensors. docs/distributed_torch.md explains the
placements.
"""

from __future__ import annotations

import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
from torch.distributed.tensor.debug import CommDebugMode


def _counts(comm) -> str:
    items = sorted((str(k).split("'")[1] if "'" in str(k) else str(k), v)
                   for k, v in comm.get_comm_counts().items())
    return ", ".join(f"{k.split('.')[-1]}={v}" for k, v in items) or "none"


def _case(rank, mesh, name, fn, x_full, x_pl, i_full, iters):
    x = distribute_tensor(x_full, mesh, x_pl).requires_grad_()
    i = distribute_tensor(i_full, mesh, [Replicate()])
    with CommDebugMode() as fwd:
        y = fn(x, i)
    with CommDebugMode() as bwd:
        y.full_tensor().sum().backward()
    grad = x.grad.full_tensor()
    start = time.perf_counter()
    for _ in range(iters):
        x.grad = None
        fn(x, i).full_tensor().sum().backward()
    elapsed = (time.perf_counter() - start) / iters
    return {"name": name, "placement": repr(y.placements[0]), "forward": _counts(fwd),
            "backward": _counts(bwd), "ms": elapsed * 1e3, "value": y.full_tensor(), "grad": grad}


def worker(rank: int, world: int, port: int, iters: int) -> None:
    import multigather.torch as mt

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    mesh = init_device_mesh("cpu", (world,))
    g = torch.Generator().manual_seed(0)
    vocab, dim, batch, bag = 4096, 64, 256, 8
    table = torch.randn(vocab, dim, generator=g)
    ids = torch.randint(0, vocab, (batch, bag), generator=g)
    x = torch.randn(1024, 64, generator=g)
    rows = torch.randint(0, 1024, (512, 64), generator=g)

    bag_mg = lambda w, i: mt.embedding(i, w).sum(1)          # noqa: E731
    bag_torch = lambda w, i: F.embedding(i, w).sum(1)        # noqa: E731
    gather_mg = lambda t, i: mt.gather(t, 0, i)              # noqa: E731
    gather_torch = lambda t, i: torch.gather(t, 0, i)        # noqa: E731
    ref_bag = F.embedding(ids, table)
    ref_gather = torch.gather(x, 0, rows)
    results = []
    for pl in ([Shard(0)], [Shard(1)]):
        for impl, fn in (("multigather", bag_mg), ("aten", bag_torch)):
            name = f"embedding-bag table={pl[0]!r} {impl}"
            try:
                r = _case(rank, mesh, name, fn, table, pl, ids, iters)
            except Exception as e:  # DTensor's own row-sharded embedding, called repeatedly
                results.append({"name": name, "placement": f"FAILED: {type(e).__name__} {str(e)[:40]}",
                                "forward": "", "backward": "", "ms": float("nan")})
                continue
            assert torch.allclose(r["value"], ref_bag.sum(1), atol=1e-5), r["name"]
            results.append(r)
        for impl, fn in (("multigather", gather_mg), ("aten", gather_torch)):
            r = _case(rank, mesh, f"gather dim=0 input={pl[0]!r} {impl}", fn, x, pl, rows, iters)
            assert torch.allclose(r["value"], ref_gather), r["name"]
            results.append(r)
    if rank == 0:
        print(f"world {world}, gloo on CPU, {iters} iterations of forward + backward "
              f"(values checked against the full-tensor ops)")
        print(f"{'case':52} {'output':34} {'forward comms':28} {'backward comms':28} {'ms/iter':>8}")
        for r in results:
            print(f"{r['name']:52} {r['placement']:34} {r['forward']:28} {r['backward']:28} {r['ms']:8.2f}")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(args.world, port, args.iters), nprocs=args.world)


if __name__ == "__main__":
    main()
