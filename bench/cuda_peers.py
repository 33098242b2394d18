"""GPU peers on the cases of docs/bench.md: PyTorch CUDA (index_select, gather, take,
take_along_dim, fancy indexing, linearized index_select) and CuPy (take, take_along_axis, fancy
indexing), beside a device-to-device copy of the output's size (the limit), and multigather when
its Python package can take CUDA arrays (DLPack) -- all in one process. Then the scatter cases
S1, S3, S5: PyTorch's one-shot index_add / scatter_add / put(accumulate) against multigather's
deterministic scatter ("vs torch" = best torch time / time).

Usage (on a GPU machine):
    pip install torch==2.15.0 cupy-cuda13x==14.2.0   # or cupy-cuda12x matching the driver
    python bench/cuda_peers.py [--reps 21] [--batch 10] [--warmup 10] [case ...]

Method: random in-range int64 indices from a fixed seed, non-zero data, warm-up calls, then
batches of back-to-back calls timed with CUDA events (torch.cuda.Event; CuPy runs on torch's
current stream), the median per-call time reported; operand sets rotate so that a call does not find its input in L2 from the previous one.
Columns: time in us, effective GB/s = (output + index + gathered input bytes) / time as in
docs/bench.md, and "vs copy" = copy time / time. The C++ benchmark multigather_cuda_bench prints
multigather's own numbers against the same copy limit without Python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

try:
    import torch
except ImportError:  # pragma: no cover - needs the GPU machine
    sys.exit("cuda_peers.py needs PyTorch with CUDA (pip install torch)")
try:
    import cupy
except ImportError:
    cupy = None
try:
    import multigather
except ImportError:
    multigather = None

# (name, input shape, dtype, indices shape as docs/bench.md writes it)
CASES = [
    ("embedding", (50000, 512), torch.float32, (8192,)),
    ("mid_axis_block", (32, 1024, 256), torch.float32, (512,)),
    ("elements_last_axis", (4096, 1024), torch.float32, (4096, 256)),
    ("elements_axis0", (1024, 4096), torch.float32, (256, 4096)),
    ("gathernd_batch1", (4, 512, 512, 32), torch.float32, (4, 65536, 2)),
    ("nhwc_xy", (8, 256, 256, 16), torch.float32, (8, 4096, 2)),
    ("flat_take", (16777216,), torch.float32, (4194304,)),
    ("embedding_fp16", (1000000, 64), torch.float16, (65536,)),
    ("tiny", (16, 16), torch.float32, (4,)),
]


def make_indices(name, shape, gen):
    """Uniform in-range indices for the case (last dim = coordinates for ND cases)."""
    def rand(high, size):
        return torch.randint(0, high, size, generator=gen, dtype=torch.int64)

    if name in ("embedding", "embedding_fp16", "tiny", "mid_axis_block"):
        high = {"embedding": 50000, "embedding_fp16": 1000000, "tiny": 16, "mid_axis_block": 1024}
        return rand(high[name], (shape[0],))
    if name == "elements_last_axis":
        return rand(1024, (4096, 256))
    if name == "elements_axis0":
        return rand(1024, (256, 4096))
    if name == "gathernd_batch1":
        return rand(512, (4, 65536, 2))
    if name == "nhwc_xy":
        return rand(256, (8, 4096, 2))  # (x, y): x indexes W, y indexes H
    if name == "flat_take":
        return rand(16777216, (4194304,))
    raise ValueError(name)


def torch_peers(name, x, idx):
    """name -> callable() for every PyTorch formulation of the case."""
    if name in ("embedding", "embedding_fp16", "tiny"):
        return {"torch.index_select": lambda: torch.index_select(x, 0, idx),
                "torch x[idx]": lambda: x[idx],
                "torch.nn.functional.embedding": lambda: torch.nn.functional.embedding(idx, x)}
    if name == "mid_axis_block":
        return {"torch.index_select(dim=1)": lambda: torch.index_select(x, 1, idx),
                "torch x[:, idx]": lambda: x[:, idx]}
    if name == "elements_last_axis":
        return {"torch.gather(dim=1)": lambda: torch.gather(x, 1, idx),
                "torch.take_along_dim": lambda: torch.take_along_dim(x, idx, 1)}
    if name == "elements_axis0":
        return {"torch.gather(dim=0)": lambda: torch.gather(x, 0, idx),
                "torch.take_along_dim": lambda: torch.take_along_dim(x, idx, 0)}
    if name == "gathernd_batch1":
        b = torch.arange(4, device=x.device)[:, None]
        rows = x.view(-1, 32)
        return {"torch fancy x[b, i, j]": lambda: x[b, idx[..., 0], idx[..., 1]],
                "torch linearize+index_select": lambda: rows.index_select(
                    0, ((b * 512 + idx[..., 0]) * 512 + idx[..., 1]).reshape(-1))}
    if name == "nhwc_xy":
        n = torch.arange(8, device=x.device)[:, None]
        pixels = x.view(-1, 16)
        return {"torch fancy x[n, y, x]": lambda: x[n, idx[..., 1], idx[..., 0]],
                "torch linearize+index_select": lambda: pixels.index_select(
                    0, ((n * 256 + idx[..., 1]) * 256 + idx[..., 0]).reshape(-1))}
    if name == "flat_take":
        return {"torch.take": lambda: torch.take(x, idx), "torch x[idx]": lambda: x[idx]}
    raise ValueError(name)


def cupy_peers(name, x, idx):
    if cupy is None:
        return {}
    cx, ci = cupy.from_dlpack(x), cupy.from_dlpack(idx)
    if name in ("embedding", "embedding_fp16", "tiny"):
        return {"cupy.take(axis=0)": lambda: cupy.take(cx, ci, axis=0)}
    if name == "mid_axis_block":
        return {"cupy.take(axis=1)": lambda: cupy.take(cx, ci, axis=1)}
    if name == "elements_last_axis":
        return {"cupy.take_along_axis(1)": lambda: cupy.take_along_axis(cx, ci, 1)}
    if name == "elements_axis0":
        return {"cupy.take_along_axis(0)": lambda: cupy.take_along_axis(cx, ci, 0)}
    if name == "gathernd_batch1":
        b = cupy.arange(4)[:, None]
        return {"cupy fancy x[b, i, j]": lambda: cx[b, ci[..., 0], ci[..., 1]]}
    if name == "nhwc_xy":
        n = cupy.arange(8)[:, None]
        return {"cupy fancy x[n, y, x]": lambda: cx[n, ci[..., 1], ci[..., 0]]}
    if name == "flat_take":
        return {"cupy.take": lambda: cupy.take(cx, ci)}
    raise ValueError(name)


def multigather_peer(name, x, idx):
    """multigather through its Python package on CUDA tensors (DLPack), when the package
    dispatches CUDA arrays to the CUDA backend. The lowering follows docs/bench.md's 'what' column."""
    if multigather is None or not hasattr(multigather, "gather_multiaxis"):
        return {}
    if name in ("embedding", "embedding_fp16", "tiny"):
        ix, axes = idx[:, None], (0,)
    elif name == "mid_axis_block":
        ix, axes = idx[None, :, None], (1,)
    elif name in ("elements_last_axis",):
        ix, axes = idx, (1,)
    elif name == "elements_axis0":
        ix, axes = idx, (0,)
    elif name == "gathernd_batch1":
        ix, axes = idx[:, :, None, :], (1, 2)
    elif name == "nhwc_xy":
        ix, axes = idx[:, :, None, :], (2, 1)  # coordinate 0 = x (axis 2), 1 = y (axis 1)
    elif name == "flat_take":
        ix, axes = idx, (0,)
    else:
        raise ValueError(name)
    ix = ix.contiguous()
    try:
        multigather.gather_multiaxis(x, ix, axes)
    except Exception as error:  # the package may not take CUDA arrays yet
        print(f"  (multigather on CUDA arrays unavailable: {error})")
        return {}
    # "error" waits for the stream to report an IndexError at once; "clamp" only enqueues (as
    # PyTorch does, whose bounds checks are device-side asserts).
    return {"multigather (error: syncs)": lambda: multigather.gather_multiaxis(x, ix, axes),
            "multigather (clamp)": lambda: multigather.gather_multiaxis(
                x, ix, axes, index_mode="clamp")}


# Scatter cases of docs/bench.md (S1, S3, S5): (name, input shape, indices shape, updates shape).
SCATTER_CASES = [
    ("S1_embedding_backward", (50000, 512), (8192,), (8192, 512)),
    ("S3_scatter_add_axis0", (1024, 4096), (256, 4096), (256, 4096)),
    ("S5_flat_put_add", (16777216,), (4194304,), (4194304,)),
]


def scatter_peers(name, x, idx, u):
    """name -> callable() for PyTorch's one-shot formulations and multigather's (deterministic
    by default: bit-identical to its CPU engine; clamp mode so that nothing synchronizes)."""
    peers = {}
    if name.startswith("S1"):
        peers["torch.index_add"] = lambda: x.index_add(0, idx, u)
        mg = (idx[:, None].contiguous(), u, (0,))
    elif name.startswith("S3"):
        peers["torch.scatter_add"] = lambda: x.scatter_add(0, idx, u)
        mg = (idx, u, (0,))
    else:
        peers["torch.index_add"] = lambda: x.index_add(0, idx, u)
        peers["torch.put(accumulate)"] = lambda: x.put(idx, u, accumulate=True)
        mg = (idx, u, (0,))
    if multigather is not None and hasattr(multigather, "scatter_multiaxis"):
        ix, up, axes = mg
        try:
            multigather.scatter_multiaxis(x, ix, up, axes, reduction="add", index_mode="clamp")
            peers["multigather (deterministic)"] = lambda: multigather.scatter_multiaxis(
                x, ix, up, axes, reduction="add", index_mode="clamp")
        except Exception as error:  # a build without the CUDA scatter
            print(f"  (multigather scatter on CUDA arrays unavailable: {error})")
    return peers


def run_scatter_cases(args, device):
    """The scatter table: every peer against PyTorch's first formulation's result (allclose:
    float sums in another order), time per call as for the gathers."""
    print(f"\n| {'scatter case':<22} | {'implementation':<30} | {'us':>9} | {'vs torch':>8} |")
    print(f"|{'-' * 24}|{'-' * 32}|{'-' * 11}|{'-' * 10}|")
    gen = torch.Generator().manual_seed(1234)
    for name, in_shape, ix_shape, up_shape in SCATTER_CASES:
        if args.cases and name not in args.cases and name.split("_")[0] not in args.cases:
            continue
        high = in_shape[0]
        x = torch.zeros(in_shape, device=device)
        idx = torch.randint(0, high, ix_shape, generator=gen, dtype=torch.int64).to(device)
        u = torch.randn(up_shape, generator=gen).to(device)
        peers = scatter_peers(name, x, idx, u)
        reference = next(iter(peers.values()))().cpu()
        torch_us = None
        for impl, fn in peers.items():
            got = fn()
            got = torch.from_dlpack(got) if not isinstance(got, torch.Tensor) else got
            if not torch.allclose(got.reshape(reference.shape).cpu(), reference, rtol=1e-4, atol=1e-3):
                print(f"| {name:<22} | {impl:<30} | wrong result, not timed |")
                continue
            us = time_us(fn, args.warmup, args.reps, args.batch)
            if impl.startswith("torch") and (torch_us is None or us < torch_us):
                torch_us = us
            ratio = f"{torch_us / us:8.2f}" if torch_us else f"{'':>8}"
            print(f"| {name:<22} | {impl:<30} | {us:9.2f} | {ratio} |")
        sys.stdout.flush()
        del x, idx, u, peers
        torch.cuda.empty_cache()


def time_us(fn, warmup, reps, batch):
    """Median over reps of the per-call time of `batch` back-to-back calls between two CUDA
    events, in microseconds (the kernel's time while the host keeps ahead of the GPU, the host's
    cost per call otherwise) -- the same method as multigather_cuda_bench."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / batch)
    return statistics.median(times)


def host_us_per_call(fn, calls=2000):
    """Median over 7 rounds of host wall time per call, the stream drained after each round."""
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) * 1e6 / calls)
    return statistics.median(rounds)


def rotating(sets, make):
    """A callable that runs make(set)() for set 0, 1, ..., sets-1, 0, ... on successive calls."""
    calls = [make(s) for s in range(sets)]
    state = {"i": 0}

    def run():
        calls[state["i"] % sets]()
        state["i"] += 1
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cuda_peers.py: no CUDA device available to torch "
              f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}); nothing to measure")
        # bench/cuda_check.sh sets this where nvidia-smi lists a GPU: not measuring is a failure.
        return 1 if os.environ.get("MULTIGATHER_REQUIRE_GPU") == "1" else 0
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    print(f"device: {props.name}; torch {torch.__version__}; cupy "
          f"{cupy.__version__ if cupy else 'not installed'}; multigather "
          f"{'found' if multigather else 'not installed'}; warm-up {args.warmup}, median of {args.reps} batches of {args.batch} calls\n")
    print(f"| {'case':<18} | {'implementation':<30} | {'us':>9} | {'GB/s':>8} | {'vs copy':>7} |")
    print(f"|{'-' * 20}|{'-' * 32}|{'-' * 11}|{'-' * 10}|{'-' * 9}|")
    if cupy is not None:  # CuPy launches on torch's current stream, inside the same events
        cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream).use()
    gen = torch.Generator().manual_seed(1234)
    for name, shape, dtype, _ in CASES:
        if args.cases and name not in args.cases:
            continue
        idx_host = make_indices(name, shape, gen)
        x0 = (torch.rand(shape, generator=gen) + 0.5).to(dtype)
        out = next(iter(torch_peers(name, x0.to(device), idx_host.to(device)).values()))()
        out_bytes = out.numel() * out.element_size()
        per_set = x0.numel() * x0.element_size() + out_bytes + idx_host.numel() * 8
        sets = max(1, min(8, -(-4 * l2 // per_set)))
        xs = [x0.to(device) for _ in range(sets)]
        idxs = [idx_host.to(device) for _ in range(sets)]
        src = torch.empty(out_bytes * sets, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        reference = out.cpu()

        def copy_of(s):
            return lambda: dst[s * out_bytes:(s + 1) * out_bytes].copy_(src[s * out_bytes:(s + 1) * out_bytes])
        copy_us = time_us(rotating(sets, copy_of), args.warmup, args.reps, args.batch)
        moved = 2 * out_bytes + idx_host.numel() * 8
        print(f"| {name:<18} | {'D2D copy of the output':<30} | {copy_us:9.2f} | "
              f"{2 * out_bytes / copy_us / 1e3:8.1f} | {1.0:7.2f} |")
        makers = {}
        for family in (torch_peers, cupy_peers, multigather_peer):
            for s in range(sets):
                for impl, fn in family(name, xs[s], idxs[s]).items():
                    makers.setdefault(impl, []).append(fn)
        for impl, fns in makers.items():
            result = fns[0]()
            got = torch.from_dlpack(result) if not isinstance(result, torch.Tensor) else result
            if not torch.equal(got.reshape(reference.shape).cpu(), reference):
                print(f"| {name:<18} | {impl:<30} | wrong result, not timed |")
                continue
            us = time_us(rotating(len(fns), lambda s, fns=fns: fns[s]), args.warmup, args.reps,
                         args.batch)
            line = (f"| {name:<18} | {impl:<30} | {us:9.2f} | {moved / us / 1e3:8.1f} | "
                    f"{copy_us / us:7.2f} |")
            if name == "tiny":  # per-call overhead: host wall time of back-to-back calls
                line += f" host {host_us_per_call(fns[0]):.2f} us/call"
            print(line)
        sys.stdout.flush()
        del xs, idxs, src, dst, makers
        torch.cuda.empty_cache()
    run_scatter_cases(args, device)


if __name__ == "__main__":
    sys.exit(main())
