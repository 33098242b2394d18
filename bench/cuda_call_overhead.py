"""Where the host time of one multigather call on torch CUDA tensors goes.

    python3 bench/cuda_call_overhead.py [--device cuda] [--calls 2000]

A tiny gather ([4, 4] float32, 4 row indices) is all per-call cost: the kernel takes ~4 us of
device time. Prints the median host microseconds per call of torch.index_select, of
multigather.gather_multiaxis (one-shot and out=), of multigather.scatter_multiaxis, and of the
pieces the Python surface runs per call (the DLPack export of an operand, the current-stream
query, the result allocation and its typed view); then cProfile's top functions over the
one-shot calls. `--device cpu` runs the same on CPU tensors (a check of the script without a
GPU). Work is enqueued, not waited for: the host time is what a training step's Python thread
pays.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time


def per_call_us(fn, calls: int, sync) -> float:
    for _ in range(50):
        fn()
    sync()
    samples = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(calls // 7):
            fn()
        samples.append((time.perf_counter() - t0) / (calls // 7) * 1e6)
        sync()
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    import torch

    import multigather
    from multigather import _interop

    if args.device == "cuda" and not torch.cuda.is_available():
        print("cuda_call_overhead: no CUDA device; nothing measured")
        return 0
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    x = torch.randn(4, 4, device=dev)
    ids = torch.tensor([3, 0, 2, 1], device=dev)
    ids2 = ids[:, None].contiguous()
    out = torch.empty(4, 4, device=dev)
    updates = torch.randn(4, 4, device=dev)
    expected = torch.index_select(x, 0, ids)
    assert torch.equal(multigather.gather_multiaxis(x, ids2, [0], index_mode="clamp"), expected)

    rows = [
        ("torch.index_select", lambda: torch.index_select(x, 0, ids)),
        ("multigather.gather_multiaxis (clamp)",
         lambda: multigather.gather_multiaxis(x, ids2, [0], index_mode="clamp")),
        ("multigather.gather_multiaxis (error)", lambda: multigather.gather_multiaxis(x, ids2, [0])),
        ("multigather.gather_multiaxis (clamp, out=)",
         lambda: multigather.gather_multiaxis(x, ids2, [0], index_mode="clamp", out=out)),
        ("multigather.scatter_multiaxis (add, clamp)",
         lambda: multigather.scatter_multiaxis(x, ids2, updates, [0], reduction="add",
                                               index_mode="clamp")),
        ("piece: _interop.to_core(input)", lambda: _interop.to_core(x, "input")),
        ("piece: tensor.__dlpack__()", lambda: x.__dlpack__()),
        ("piece: torch.empty(64, uint8)", lambda: torch.empty(64, dtype=torch.uint8, device=dev)),
        ("piece: narrow().view(dtype).view(shape)",
         lambda: out.view(torch.uint8).view(-1).narrow(0, 0, 64).view(torch.float32).view((4, 4))),
    ]
    if dev.type == "cuda":
        rows.append(("piece: torch.cuda.current_stream(0).cuda_stream",
                     lambda: torch.cuda.current_stream(0).cuda_stream))
    print(f"device: {torch.cuda.get_device_name() if dev.type == 'cuda' else 'cpu'}; torch {torch.__version__}; "
          f"median host us per call over {args.calls} calls")
    print(f"| {'call':<52} | {'us':>8} |")
    print(f"|{'-' * 54}|{'-' * 10}|")
    for name, fn in rows:
        print(f"| {name:<52} | {per_call_us(fn, args.calls, sync):8.2f} |")

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.calls):
        multigather.gather_multiaxis(x, ids2, [0], index_mode="clamp")
    profile.disable()
    sync()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(14)
    print(f"\ncProfile, {args.calls} one-shot gathers (clamp), by own time:")
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[-2200:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
