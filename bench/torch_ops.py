"""multigather's PyTorch ops (torch.ops.multigather.*, registered from C++) against PyTorch's own,
in one run, at each thread count asked for:

  per-call    every torch.ops.multigather.* gather and scatter on small tensors (x [64, 64]
              float32) vs the same torch op: the dispatcher, the kernel, the result; and
              ("door") vs torch's op called through the same door, torch.ops.aten.*, whose
              Python call costs any op; the three runs alternated;
  fwd+bwd     forward + backward per call (x [64, 64] requires grad; y.sum().backward()) of
              gather, index_select, embedding, index_add, scatter_add, scatter_reduce(amax):
              multigather.torch.* vs torch.*, their runs alternated; and the forward alone;
  S6          the embedding train step (forward + dense table gradient) at three table sizes:
              1 MB [500, 512], 31 MB [16000, 512], 100 MB [50000, 512] float32, 8192 indices;
  models      a train step (forward, backward, SGD) of three small torch.nn models, each built
              once on multigather.torch and once on torch with the same weights (equal outputs
              and gradients are asserted first): an embedding + attention block, a mixture of
              experts routed with index_add / scatter_add, a message-passing layer (index_select,
              scatter_add, scatter_reduce amax); eager, the torch model under
              multigather.torch.routing() (its gathers and scatters sent to multigather), and
              torch.compile of both builds: "compiled" with multigather's default scatters
              (deterministic: float scatters and scatter-add gradients stay the C++ op), "fused"
              with set_compiled_scatters("fused") (Inductor's own scatter loops, atomic adds as
              torch's compiled code has), each for the multigather build and for the torch
              model compiled inside routing(); the message-passing layer at two graph sizes;
              every row's runs alternated with its torch twin's (eager, or compiled the
              same way).

    python3 bench/torch_ops.py [--threads 1,2] [--repeat R] [--skip-compile]

Prints median times and the ratio multigather / torch (below 1: multigather faster). Times are
wall clock on the CPU; torch.set_num_threads(N) sets both libraries' threads (the ops run on
torch's intra-op thread count).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import multigather.torch as mt
import multigather.torch_ops as mto

OPS = torch.ops.multigather


def alternated(fns, repeat: int, number: int) -> list[float]:
    """Median seconds per call of each fn, their runs alternated (this VM's speed drifts by tens
    of percent between runs a few seconds apart: alternating puts all of them under the same
    drift). Two untimed calls each first (a compiled model may compile again on its second
    call)."""
    for _ in range(2):
        for fn in fns:
            fn()
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, r in zip(fns, runs):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            r.append((time.perf_counter() - t0) / number)
    return [statistics.median(r) for r in runs]


def row(section: str, name: str, ours: float, theirs: float, unit: str = "us") -> None:
    scale = 1e6 if unit == "us" else 1e3
    print(f"{section:8s} {name:44s} multigather {ours * scale:9.2f} {unit}  torch {theirs * scale:9.2f} {unit}  "
          f"ratio {ours / theirs:5.2f}")


def paired(ours, theirs, repeat: int, number: int) -> tuple[float, float]:
    """Median seconds per call of each, their runs alternated (`alternated`)."""
    a, b = alternated((ours, theirs), repeat, number)
    return a, b


def per_call(repeat: int) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 64, generator=g)
    i = torch.randint(0, 64, (64, 16), generator=g)
    rows = torch.randint(0, 64, (16,), generator=g)
    src = torch.randn(64, 16, generator=g)
    rsrc = torch.randn(16, 64, generator=g)
    flat = torch.randint(0, 64 * 64, (256,), generator=g)
    value = torch.tensor(1.5)
    unique = rows.unique()
    aten = torch.ops.aten
    # (name, multigather's op, torch's function, torch's op through the same torch.ops door)
    cases = [
        ("gather", lambda: OPS.gather(x, 1, i), lambda: torch.gather(x, 1, i), lambda: aten.gather.default(x, 1, i)),
        ("take", lambda: OPS.take(x, flat), lambda: torch.take(x, flat), lambda: aten.take.default(x, flat)),
        ("take_along_dim", lambda: OPS.take_along_dim(x, i, 1), lambda: torch.take_along_dim(x, i, 1),
         lambda: aten.take_along_dim.default(x, i, 1)),
        ("index_select", lambda: OPS.index_select(x, 0, rows), lambda: torch.index_select(x, 0, rows),
         lambda: aten.index_select.default(x, 0, rows)),
        ("embedding", lambda: OPS.embedding(i, x), lambda: F.embedding(i, x), lambda: aten.embedding.default(x, i)),
        ("scatter", lambda: OPS.scatter(x, 1, i, src), lambda: torch.scatter(x, 1, i, src),
         lambda: aten.scatter.src(x, 1, i, src)),
        ("scatter_add", lambda: OPS.scatter_add(x, 1, i, src), lambda: torch.scatter_add(x, 1, i, src),
         lambda: aten.scatter_add.default(x, 1, i, src)),
        ("scatter_reduce(amax)", lambda: OPS.scatter_reduce(x, 1, i, src, "amax"),
         lambda: torch.scatter_reduce(x, 1, i, src, "amax"), lambda: aten.scatter_reduce.two(x, 1, i, src, "amax")),
        ("index_add", lambda: OPS.index_add(x, 0, rows, rsrc), lambda: torch.index_add(x, 0, rows, rsrc),
         lambda: aten.index_add.default(x, 0, rows, rsrc)),
        ("index_copy", lambda: OPS.index_copy(x, 0, unique, rsrc[:unique.numel()]),
         lambda: torch.index_copy(x, 0, unique, rsrc[:unique.numel()]),
         lambda: aten.index_copy.default(x, 0, unique, rsrc[:unique.numel()])),
        ("index_fill", lambda: OPS.index_fill(x, 0, rows, value), lambda: torch.index_fill(x, 0, rows, 1.5),
         lambda: aten.index_fill.int_Scalar(x, 0, rows, 1.5)),
        ("put", lambda: OPS.put(x, flat, src.reshape(-1)[:256], True),
         lambda: torch.put(x, flat, src.reshape(-1)[:256], True),
         lambda: aten.put.default(x, flat, src.reshape(-1)[:256], True)),
    ]
    for name, ours, theirs, door in cases:
        torch.testing.assert_close(ours(), theirs())
        torch.testing.assert_close(door(), theirs())
        # The three alternated; "door": torch's op through the same door, torch.ops' Python
        # call, which costs any op, aten's included.
        mine, function, same_door = alternated((ours, theirs, door), 2 * repeat, 300)
        row("per-call", f"torch.ops.multigather.{name}", mine, function)
        row("door", f"  vs torch.ops.aten.{name}", mine, same_door)
    # Advanced indexing, multigather.torch.index against torch's x[...]: one index tensor on the
    # first dimension (the direct form) and two.
    cols = torch.randint(0, 64, (16,), generator=g)
    for name, ours, theirs in (("index, x[i]", lambda: mt.index(x, (rows,)), lambda: x[rows]),
                               ("index, x[i, j]", lambda: mt.index(x, (rows, cols)), lambda: x[rows, cols])):
        torch.testing.assert_close(ours(), theirs())
        row("per-call", f"multigather.torch.{name}", *paired(ours, theirs, 2 * repeat, 300))


def forward_backward(repeat: int) -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 64, generator=g).requires_grad_()
    i = torch.randint(0, 64, (64, 16), generator=g)
    rows = torch.randint(0, 64, (16,), generator=g)
    src = torch.randn(64, 16, generator=g).requires_grad_()
    rsrc = torch.randn(16, 64, generator=g).requires_grad_()
    cases = [
        ("gather", lambda f: f.gather(x, 1, i)),
        ("index_select", lambda f: f.index_select(x, 0, rows)),
        ("embedding", lambda f: (F if f is torch else f).embedding(i, x)),
        ("index_add", lambda f: f.index_add(x, 0, rows, rsrc)),
        ("scatter_add", lambda f: f.scatter_add(x, 1, i, src)),
        ("scatter_reduce(amax)", lambda f: f.scatter_reduce(x, 1, i, src, "amax")),
    ]
    for name, call in cases:
        def step(f, call=call):
            return lambda: call(f).sum().backward()
        row("fwd+bwd", name, *paired(step(mt), step(torch), 2 * repeat, 200))
        # The forward alone, operands requiring grad (the call that builds the autograd node).
        row("fwd", f"  {name} (requires grad)", *paired(lambda call=call: call(mt), lambda call=call: call(torch),
                                                         2 * repeat, 500))


def s6(repeat: int) -> None:
    for label, rows_ in (("1 MB", 500), ("31 MB", 16000), ("100 MB", 50000)):
        gen = torch.Generator().manual_seed(0)
        table = torch.randn(rows_, 512, generator=gen).requires_grad_()
        idx = torch.randint(0, rows_, (8192,), generator=gen)
        grad = torch.randn(8192, 512, generator=gen)

        def step(fn):
            def run():
                table.grad = None
                fn(idx, table).backward(grad)
            return run

        ours = mt.embedding(idx, table)
        ours.backward(grad)
        want = table.grad.clone()
        table.grad = None
        theirs = F.embedding(idx, table)
        theirs.backward(grad)
        assert torch.equal(ours, theirs)
        torch.testing.assert_close(want, table.grad)
        row("S6", f"embedding train step, table {label}", *paired(step(mt.embedding), step(F.embedding), repeat, 2),
            unit="ms")


# ---- models -------------------------------------------------------------------------------------

class EmbeddingAttention(torch.nn.Module):
    """Token + position embeddings, one attention block, a tied output projection; the gathers:
    embedding lookups and the gather of the target logits."""

    def __init__(self, f, vocab=2000, dim=64, heads=4):
        super().__init__()
        self.f = f
        self.tokens = torch.nn.Parameter(torch.randn(vocab, dim) * 0.02)
        self.positions = torch.nn.Parameter(torch.randn(128, dim) * 0.02)
        self.attn = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, ids, targets):
        emb = F.embedding if self.f is torch else self.f.embedding
        h = emb(ids, self.tokens) + emb(torch.arange(ids.shape[1]), self.positions)
        h = self.norm(h + self.attn(h, h, h, need_weights=False)[0])
        logits = (h @ self.tokens.t()).log_softmax(-1)
        return -self.f.gather(logits, 2, targets[..., None]).mean()


class MixtureOfExperts(torch.nn.Module):
    """Top-1 routing as Mixtral-style code writes it: tokens gathered per expert with
    index_select, each expert's output added back with index_add, a load statistic with
    scatter_add."""

    def __init__(self, f, dim=64, experts=4):
        super().__init__()
        self.f = f
        self.router = torch.nn.Linear(dim, experts)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, x):
        scores = self.router(x).softmax(-1)
        weight, choice = scores.max(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = (choice == e).nonzero().squeeze(1)
            y = expert(self.f.index_select(x, 0, rows)) * weight[rows, None]
            out = self.f.index_add(out, 0, rows, y)
        load = self.f.scatter_add(torch.zeros(len(self.experts)), 0, choice, weight)
        return out.square().mean() + load.var()


class MessagePassing(torch.nn.Module):
    """A graph layer: features gathered at edge sources, aggregated per target with
    scatter_add and scatter_reduce(amax)."""

    def __init__(self, f, dim=64):
        super().__init__()
        self.f = f
        self.lin = torch.nn.Linear(dim, dim)

    def forward(self, x, src, dst):
        h = self.f.index_select(self.lin(x), 0, src)
        target = dst[:, None].expand(-1, x.shape[1])
        total = self.f.scatter_add(torch.zeros_like(x), 0, target, h)
        peak = self.f.scatter_reduce(torch.zeros_like(x), 0, target, h, "amax", include_self=False)
        return (total + peak).square().mean()


def models(repeat: int, compile_too: bool) -> None:
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 2000, (8, 64), generator=g)
    targets = torch.randint(0, 2000, (8, 64), generator=g)
    tokens = torch.randn(4096, 64, generator=g)
    graphs = []
    for n, e in ((2000, 20000), (20000, 200000)):
        graphs.append((torch.randn(n, 64, generator=g), torch.randint(0, n, (e,), generator=g),
                       torch.randint(0, n, (e,), generator=g)))
    cases = [("embedding+attention", EmbeddingAttention, (ids, targets)),
             ("mixture of experts", MixtureOfExperts, (tokens,)),
             ("message passing 2k nodes 20k edges", MessagePassing, graphs[0]),
             ("message passing 20k nodes 200k edges", MessagePassing, graphs[1])]
    for name, cls, inputs in cases:
        torch.manual_seed(0)
        ours = cls(mt)
        theirs = cls(torch)
        theirs.load_state_dict(ours.state_dict())
        a, b = ours(*inputs), theirs(*inputs)
        torch.testing.assert_close(a, b)
        for p, q in zip(torch.autograd.grad(a, list(ours.parameters())),
                        torch.autograd.grad(b, list(theirs.parameters()))):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)

        def step(model):
            opt = torch.optim.SGD(model.parameters(), lr=1e-3)

            def run():
                opt.zero_grad(set_to_none=True)
                model(*inputs).backward()
                opt.step()
            return run

        row("model", f"{name} train step", *paired(step(ours), step(theirs), repeat, 5), unit="ms")

        def routed(run):
            def call():
                with mt.routing():
                    run()
            return call

        row("routed", f"{name} train step (torch model, routing())",
            *paired(routed(step(theirs)), step(theirs), repeat, 5), unit="ms")
        if compile_too:
            # Each row against torch's model compiled the same way, their runs alternated (after
            # a reset both compile again, in the first, untimed, call).
            for mode, label in (("deterministic", "compiled"), ("fused", "fused")):
                mto.set_compiled_scatters(mode)
                torch._dynamo.reset()
                row(label, f"{name} train step",
                    *paired(step(torch.compile(ours)), step(torch.compile(theirs)), repeat, 5), unit="ms")
                # the torch model compiled inside routing(): its graph holds multigather's ops
                torch._dynamo.reset()
                row(label, f"{name} train step (torch model, routing())",
                    *paired(routed(step(torch.compile(theirs))), step(torch.compile(theirs)), repeat, 5), unit="ms")
            mto.set_compiled_scatters("deterministic")
            torch._dynamo.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-compile", action="store_true", help="no torch.compile rows")
    args = parser.parse_args()
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        print(f"== torch {torch.__version__}, {threads} thread(s)")
        per_call(args.repeat)
        forward_backward(args.repeat)
        s6(args.repeat)
        models(args.repeat, not args.skip_compile)


if __name__ == "__main__":
    main()
