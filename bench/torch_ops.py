"""The PyTorch ops (torch.ops.multigather.*, multigather.torch_ops) against PyTorch's own.

  S6 embedding_train_step: table [50000, 512] float32, indices [8192] int64: forward + backward
     (y = embedding(idx, table); y.backward(g): the dense table gradient) through
     multigather.torch.embedding (torch.ops.multigather.embedding; backward: scatter_multiaxis
     add) vs torch.nn.functional.embedding (backward: embedding_dense_backward).
  per-call: a tiny gather (x [4, 4] float32, index [4, 2]) through torch.ops.multigather.gather,
     multigather.torch.gather (the wrapper that calls it), multigather.run("torch.gather", ...)
     (the registry fast path, no torch op) vs torch.gather; plus gather_multiaxis.

    python3 bench/torch_ops.py [--threads N] [--repeat R]

Prints median and best times and the ratios multigather / torch (below 1: multigather faster).
Times are wall clock on the CPU (torch.set_num_threads and multigather.set_num_threads to N).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import multigather
import multigather.torch as mt
import multigather.torch_ops  # noqa: F401  (registers torch.ops.multigather.*)


def timed(fn, repeat: int, number: int) -> tuple[float, float]:
    """(median, best) seconds per call of fn over `repeat` runs of `number` calls."""
    fn()
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs), min(runs)


def s6(repeat: int) -> None:
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(50000, 512, generator=gen).requires_grad_()
    idx = torch.randint(0, 50000, (8192,), generator=gen)
    g = torch.randn(8192, 512, generator=gen)

    def step(fn):
        def run():
            table.grad = None
            fn(idx, table).backward(g)
        return run

    # Same values and gradients first.
    ours = mt.embedding(idx, table)
    ours.backward(g)
    grad_ours = table.grad.clone()
    table.grad = None
    theirs = F.embedding(idx, table)
    theirs.backward(g)
    assert torch.equal(ours, theirs)
    torch.testing.assert_close(grad_ours, table.grad)

    results = {}
    for name, fn in [("multigather.torch.embedding", mt.embedding), ("F.embedding", F.embedding)]:
        results[name] = timed(step(fn), repeat, 3)
        fwd = timed(lambda: fn(idx, table.detach()), repeat, 10)
        print(f"S6 {name:30s} train step median {results[name][0] * 1e3:8.2f} ms  best "
              f"{results[name][1] * 1e3:8.2f} ms   (forward only: median {fwd[0] * 1e3:7.3f} ms)")
    a, b = results["multigather.torch.embedding"], results["F.embedding"]
    print(f"S6 ratio multigather / torch: median {a[0] / b[0]:.2f}  best {a[1] / b[1]:.2f}")


def per_call(repeat: int) -> None:
    x = torch.randn(4, 4)
    i = torch.tensor([[0, 3], [1, 1], [2, 0], [3, 3]])
    i3 = i[..., None]
    cases = [
        ("torch.gather", lambda: torch.gather(x, 1, i)),
        ("torch.ops.multigather.gather", lambda: torch.ops.multigather.gather(x, 1, i)),
        ("multigather.torch.gather", lambda: mt.gather(x, 1, i)),
        ("multigather.run (fast path, no op)", lambda: multigather.run("torch.gather", x, i, dim=1)),
        ("torch.ops.multigather.gather_multiaxis",
         lambda: torch.ops.multigather.gather_multiaxis(x, i3[:, :, 0], [1])),
    ]
    base = None
    for name, fn in cases:
        med, best = timed(fn, repeat, 2000)
        base = base or med
        print(f"per-call {name:40s} median {med * 1e6:7.2f} us  best {best * 1e6:7.2f} us  "
              f"ratio to torch.gather {med / base:5.2f}")
    xg = x.clone().requires_grad_()
    for name, fn in [("torch.gather + backward", lambda: torch.gather(xg, 1, i).sum().backward()),
                     ("multigather.torch.gather + backward",
                      lambda: mt.gather(xg, 1, i).sum().backward())]:
        med, best = timed(fn, repeat, 500)
        print(f"per-call {name:40s} median {med * 1e6:7.2f} us  best {best * 1e6:7.2f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="threads (0: each library's default)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        multigather.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, torch threads {torch.get_num_threads()}, multigather "
          f"threads {multigather.get_num_threads() or 'auto'}")
    s6(args.repeat)
    per_call(args.repeat)


if __name__ == "__main__":
    main()
