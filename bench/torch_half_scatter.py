"""float16 / bfloat16 scatter-adds as PyTorch computes them (float32 accumulation, one rounding
per element: docs/spec.md section 5, "Accumulation"), multigather against torch, in one run:
index_add and scatter_add of 2^20 rows of 64 into a [65536, 64] table (random ids), at each
thread count asked for. The results are asserted equal to torch's, byte for byte, first.

    python3 bench/torch_half_scatter.py [--threads 1,2] [--repeat 20]

Prints median wall-clock times and the ratio multigather / torch (below 1: multigather faster).
"""

from __future__ import annotations

import argparse
import time

import torch

import multigather.torch as mt


def median_ms(f, repeat: int) -> float:
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    g = torch.Generator().manual_seed(0)
    print(f"{'threads':>7} {'dtype':>9} {'op':>11} {'torch ms':>9} {'mg ms':>8} {'ratio':>6}")
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for dtype in (torch.bfloat16, torch.float16):
            x = torch.zeros(65536, 64, dtype=dtype)
            i = torch.randint(0, 65536, (1 << 20,), generator=g)
            s = torch.randn(1 << 20, 64, generator=g).to(dtype)
            expanded = i[:, None].expand(-1, 64)
            cases = {
                "index_add": (lambda: torch.index_add(x, 0, i, s), lambda: mt.index_add(x, 0, i, s)),
                "scatter_add": (lambda: torch.scatter_add(x, 0, expanded, s),
                                lambda: mt.scatter_add(x, 0, expanded, s)),
            }
            for name, (theirs, ours) in cases.items():
                assert torch.equal(theirs().view(torch.int16), ours().view(torch.int16)), name
                t, m = median_ms(theirs, args.repeat), median_ms(ours, args.repeat)
                print(f"{threads:>7} {str(dtype).replace('torch.', ''):>9} {name:>11} {t:9.1f} {m:8.1f} {m / t:6.2f}")


if __name__ == "__main__":
    main()
