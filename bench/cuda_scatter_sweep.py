"""GPU scatters: where a deterministic scatter's time goes, and how it compares with PyTorch's
atomic kernels from few targets (high contention) to many.

Two parts, one process, on a CUDA device:
1. Per-kernel device time (torch.profiler, CUPTI) of docs/bench.md's S1, S3 and S5 through
   multigather's Python package (deterministic, clamp mode) and through PyTorch's one-shot op.
2. A contention sweep, in place (out= the input, so no copy of the input is timed):
   - rows: 8192 float32 rows of 128 into T rows (torch.Tensor.index_add_ vs
     multigather.scatter_multiaxis(..., reduction="add", out=x));
   - elements: 4194304 float32 elements into T (torch.Tensor.index_add_ on a flat tensor vs the
     same multigather call).
   ratio = torch us / multigather us (above 1: multigather faster). multigather's results are
   checked against PyTorch's (allclose: another summation order) and its own bytes are checked
   equal across two calls (deterministic); PyTorch's atomics are not.

Usage (GPU machine; bench/cuda_check.sh's package in PYTHONPATH):
    python3 bench/cuda_scatter_sweep.py [--profile-only | --sweep-only | --stall-only | --sort-only] [--reps 15]

Timing: cuda_peers.py's time_us (median over reps of batches between CUDA events).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import multigather  # noqa: E402
from cuda_peers import SCATTER_CASES, host_us_per_call, scatter_peers, time_us  # noqa: E402


def kernel_us(fn, calls=5):
    """Device us per call of each kernel (and memset / copy) `fn` launches (torch.profiler),
    after 3 warm-up calls; {} where this torch's events lack the fields."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    rows = {}
    for e in prof.events():
        t = getattr(e, "device_time", None)
        if t is None:
            t = getattr(e, "cuda_time", 0)
        if t and getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type):
            rows[e.name[:90]] = rows.get(e.name[:90], 0.0) + t / calls
    return rows


def sort_threshold(device):
    """The deterministic sort on both sides of the one-block sort's threshold (8192 rows with
    32-bit offsets): float32 rows of 512 into [50000, 512] in place, device us per call of the
    sort kernels (one block's cub::BlockRadixSort, or cub::DeviceRadixSort's histogram, scan,
    onesweep passes and memsets) and of everything."""
    gen = torch.Generator().manual_seed(3)
    x = torch.zeros(50000, 512, device=device)
    print("\n| rows | sort kernels us | all kernels us | sort |")
    print("|---:|---:|---:|---|")
    for n in (1024, 2048, 4096, 8192, 8193, 16384):
        ix = torch.randint(0, 50000, (n, 1), generator=gen).to(device)
        u = torch.randn(n, 512, generator=gen).to(device)
        rows = kernel_us(lambda: multigather.scatter_multiaxis(x, ix, u, (0,), reduction="add",
                                                               index_mode="clamp", out=x))
        sort = {k: v for k, v in rows.items() if "sort" in k.lower() or "Memset" in k}
        kind = "one block" if any("small_sort" in k for k in sort) else "cub::DeviceRadixSort"
        print(f"| {n} | {sum(sort.values()):.1f} | {sum(rows.values()):.1f} | {kind} |")
    sys.stdout.flush()


def profile_cases(device):
    gen = torch.Generator().manual_seed(1234)
    for name, in_shape, ix_shape, up_shape in SCATTER_CASES:
        x = torch.zeros(in_shape, device=device)
        idx = torch.randint(0, in_shape[0], ix_shape, generator=gen, dtype=torch.int64).to(device)
        u = torch.randn(up_shape, generator=gen).to(device)
        for impl, fn in scatter_peers(name, x, idx, u).items():
            rows = kernel_us(fn)
            if not rows:
                print(f"\n{name} / {impl}: this torch's profiler events have no device time")
                continue
            print(f"\n{name} / {impl}: device us per call, by kernel (total {sum(rows.values()):.1f})")
            for key, t in sorted(rows.items(), key=lambda kv: -kv[1])[:10]:
                print(f"  {t:9.2f}  {key}")
        del x, idx, u
        torch.cuda.empty_cache()


def sweep(device, reps):
    gen = torch.Generator().manual_seed(7)
    print(f"\n| kind | targets T | torch.index_add_ us | multigather us | ratio | mg deterministic |")
    print("|---|---:|---:|---:|---:|---|")
    for kind, lookups, row, targets in (
            ("rows 8192x128", 8192, 128, (16, 256, 4096, 65536, 524288)),
            ("elements 4M", 4194304, None, (1024, 65536, 1048576, 16777216))):
        for T in targets:
            shape = (T, row) if row else (T,)
            x = torch.randn(shape, generator=gen).to(device)
            idx = torch.randint(0, T, (lookups,), generator=gen, dtype=torch.int64).to(device)
            u = torch.randn((lookups, row) if row else (lookups,), generator=gen).to(device)
            ix = idx[:, None].contiguous() if row else idx
            ref = x.clone().index_add_(0, idx, u)
            a, b = x.clone(), x.clone()
            multigather.scatter_multiaxis(a, ix, u, (0,), reduction="add", index_mode="clamp", out=a)
            multigather.scatter_multiaxis(b, ix, u, (0,), reduction="add", index_mode="clamp", out=b)
            close = torch.allclose(a, ref, rtol=1e-4, atol=1e-3)
            same = bool(torch.equal(a, b))
            t_torch = time_us(lambda: x.index_add_(0, idx, u), 5, reps, 10)
            t_mg = time_us(lambda: multigather.scatter_multiaxis(x, ix, u, (0,), reduction="add",
                                                                 index_mode="clamp", out=x), 5, reps, 10)
            status = ("yes" if same else "NO") + ("" if close else ", WRONG vs torch")
            print(f"| {kind} | {T} | {t_torch:.1f} | {t_mg:.1f} | {t_torch / t_mg:.2f} | {status} |")
            sys.stdout.flush()
            del x, idx, u, a, b, ref
            torch.cuda.empty_cache()


def host_cost(device):
    """Host us per call (cuda_peers.host_us_per_call) of a small in-place row scatter, where the
    device work is a few us: torch.Tensor.index_add_ vs multigather, then where multigather's
    host time goes (cProfile, Python frames; the C++ call is one line)."""
    import cProfile
    import pstats

    x = torch.randn(4096, 128, device=device)
    idx = torch.randint(0, 4096, (256,), device=device)
    u = torch.randn(256, 128, device=device)
    ix = idx[:, None].contiguous()
    mg = lambda: multigather.scatter_multiaxis(x, ix, u, (0,), reduction="add", index_mode="clamp", out=x)  # noqa: E731
    print(f"\nhost us per call, [256, 128] rows into [4096, 128] in place: torch.index_add_ "
          f"{host_us_per_call(lambda: x.index_add_(0, idx, u), 500):.1f}, multigather {host_us_per_call(mg, 500):.1f}")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(300):
        mg()
    torch.cuda.synchronize()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(8)


def stall(device):
    """Why a small in-place row scatter takes 118-147 us per call when its kernels need a few:
    8192 float32 rows of 128 into [4096, 128], in place. Per variant: CUDA-event time per call
    in batches of 1, 10 and 100 calls (host-bound when it grows with the host cost), host us per
    call, then the CUDA runtime calls one multigather call makes (torch.profiler, CPU side: a
    cudaStreamSynchronize or a slow cudaMallocAsync shows here), then the same timing with the
    default memory pool keeping its memory (release threshold raised: the stream-ordered
    scratch allocations stop mapping memory again after every synchronization)."""
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(4096, 128, generator=gen).to(device)
    idx = torch.randint(0, 4096, (8192,), generator=gen).to(device)
    u = torch.randn(8192, 128, generator=gen).to(device)
    ix = idx[:, None].contiguous()
    xi = torch.randint(-1000, 1000, (1 << 24,), generator=gen, dtype=torch.int32).to(device)
    idx_i = torch.randint(0, 1 << 24, (1 << 22,), generator=gen).to(device)
    u_i = torch.randint(-1000, 1000, (1 << 22,), generator=gen, dtype=torch.int32).to(device)
    import multigather.torch_ops as ops  # loads torch.ops.multigather
    variants = {
        "torch.Tensor.index_add_": lambda: x.index_add_(0, idx, u),
        "mg.scatter_multiaxis(out=x, clamp)": lambda: multigather.scatter_multiaxis(
            x, ix, u, (0,), reduction="add", index_mode="clamp", out=x),
        "mg.scatter_multiaxis(out=x, error)": lambda: multigather.scatter_multiaxis(
            x, ix, u, (0,), reduction="add", out=x),
        "torch.index_add (one-shot)": lambda: torch.index_add(x, 0, idx, u),
        "torch.ops.multigather.index_add (one-shot)": lambda: ops.index_add(x, 0, idx, u),
        "int32 4M into 16M: torch.Tensor.index_add_": lambda: xi.index_add_(0, idx_i, u_i),
        "int32 4M into 16M: mg out= (order-free: atomics)": lambda: multigather.scatter_multiaxis(
            xi, idx_i, u_i, (0,), reduction="add", index_mode="clamp", out=xi),
    }

    def table(title):
        print(f"\n{title}\n| variant | batch 1 us | batch 10 us | batch 100 us | host us |")
        print("|---|---:|---:|---:|---:|")
        for name, fn in variants.items():
            try:
                cells = [time_us(fn, 5, 9, b) for b in (1, 10, 100)] + [host_us_per_call(fn, 300)]
                print(f"| {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
            except Exception as error:  # noqa: BLE001 (a diagnostic: print and go on)
                print(f"| {name} | {type(error).__name__}: {str(error)[:120]} |")
            sys.stdout.flush()

    table("stall: time per call, [8192, 128] rows into [4096, 128] in place")
    from torch.profiler import ProfilerActivity, profile
    for name in ("mg.scatter_multiaxis(out=x, clamp)", "mg.scatter_multiaxis(out=x, error)"):
        fn = variants[name]
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
        print(f"\n{name}: 20 calls, by CPU-side total")
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=22, max_name_column_width=60))
    try:
        import cupy
        rt = cupy.cuda.runtime
        pool = rt.deviceGetDefaultMemPool(torch.cuda.current_device())
        rt.memPoolSetAttribute(pool, rt.cudaMemPoolAttrReleaseThreshold, 1 << 40)
    except Exception as error:  # noqa: BLE001
        print(f"\ncould not raise the default pool's release threshold: {type(error).__name__}: {error}")
        return
    table("stall, the default memory pool's release threshold raised to 1 TiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile-only", action="store_true")
    parser.add_argument("--sweep-only", action="store_true")
    parser.add_argument("--stall-only", action="store_true", help="only the small in-place row scatter's diagnosis")
    parser.add_argument("--sort-only", action="store_true", help="only the sort around the one-block threshold")
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cuda_scatter_sweep.py: no CUDA device")
        return 1 if os.environ.get("MULTIGATHER_REQUIRE_GPU") == "1" else 0
    device = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    if args.stall_only:
        stall(device)
        return 0
    if args.sort_only:
        sort_threshold(device)
        return 0
    if not args.sweep_only:
        profile_cases(device)
        sort_threshold(device)
    if not args.profile_only:
        sweep(device, args.reps)
    if not (args.profile_only or args.sweep_only):
        host_cost(device)
        stall(device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
