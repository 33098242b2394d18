"""The C++ PyTorch ops (libmultigather_torch, issue 29) as a PyTorch user meets them, against
PyTorch's own ops as the oracle:

- every op registered from C++ passes torch.library.opcheck (schema, fake tensors, autograd
  registration, AOT dispatch), its ``_backward`` op too;
- gradients of every torch-family scatter equal PyTorch's: scatter (duplicates: every duplicate
  gets the gradient, as PyTorch's), scatter_add, scatter_reduce with every reduction and both
  include_self, index_add with alpha, index_copy, index_fill, index_put and put with both
  accumulate values; gradcheck and gradgradcheck in float64;
- torch.func: vmap (a batching rule: no fallback warning), grad, jacrev, vmap of grad and grad
  of vmap equal PyTorch's;
- torch.compile(fullgraph=True, dynamic=True) with backward, torch.export with a dynamic
  dimension, an AOTInductor package run in a fresh process that only loads the library (no
  multigather package), torch.use_deterministic_algorithms(True).

Skipped when torch is missing."""

from __future__ import annotations

import contextlib

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from conftest import require

torch = require("torch")
import multigather.torch as mt  # noqa: E402
import multigather.torch_ops as mto  # noqa: E402

ops = torch.ops.multigather


def rand(*shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(list(shape), generator=g, dtype=dtype)


def ints(low, high, shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g)


# (name, multigather.torch function, torch's function, operands factory): the scatter family,
# indices with duplicates. The factory returns (differentiable operands, call(fn, *operands)).
IDX = ints(0, 4, (6, 5), seed=3)  # 6 updates into 4 rows: duplicates
ROWS = torch.tensor([0, 2, 0, 3, 2, 2])


def _scatter_cases():
    cases = [
        ("scatter", lambda f, x, s: f(x, 0, IDX, s)),
        ("scatter_add", lambda f, x, s: f(x, 0, IDX, s)),
        ("index_add", lambda f, x, s: f(x, 0, ROWS, s, alpha=-2.5)),
        ("index_copy", lambda f, x, s: f(x, 0, ROWS, s)),
        ("index_put", lambda f, x, s: f(x, (ROWS, IDX[:, 0]), s[:, 0], False)),
        ("index_put_accumulate", lambda f, x, s: f(x, (ROWS, IDX[:, 0]), s[:, 0], True)),
        ("put", lambda f, x, s: f(x, IDX[:, :3].reshape(-1) * 5 + 1, s[:, :3].reshape(-1), False)),
        ("put_accumulate", lambda f, x, s: f(x, IDX[:, :3].reshape(-1) * 5 + 1, s[:, :3].reshape(-1), True)),
    ]
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            cases.append((f"scatter_reduce-{reduce}-{include_self}",
                          lambda f, x, s, r=reduce, i=include_self: f(x, 0, IDX, s, r, include_self=i)))
    return cases


SCATTER_CASES = _scatter_cases()


def _fn(name: str, module):
    base = name.split("-")[0].replace("_accumulate", "")
    return getattr(module, base)


def _same_grads(ours, theirs, operands):
    a = [t.clone().requires_grad_() for t in operands]
    b = [t.clone().requires_grad_() for t in operands]
    y1, y2 = ours(*a), theirs(*b)
    assert y1.grad_fn is not None
    torch.testing.assert_close(y1, y2)
    g = rand(*y2.shape, seed=9).to(y2.device)
    g1 = torch.autograd.grad(y1, a, g)
    g2 = torch.autograd.grad(y2, b, g)
    for p, q in zip(g1, g2):
        torch.testing.assert_close(p, q)


@pytest.mark.parametrize("name,call", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
def test_scatter_grads_equal_pytorch(name, call):
    x, s = rand(4, 5), rand(6, 5, seed=2)
    _same_grads(lambda x, s: call(_fn(name, mt), x, s), lambda x, s: call(_fn(name, torch), x, s), (x, s))


@pytest.mark.parametrize("name,call", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
def test_scatter_grads_with_zeros_and_ties_equal_pytorch(name, call):
    # prod's zeros (one zero, two zeros in a segment), amax / amin ties between src values.
    x, s = rand(4, 5), rand(6, 5, seed=2)
    x[0, 0] = 0.0
    s[1, 1] = s[2, 1] = 0.0
    s[3, 2] = s[4, 2] = 7.0
    _same_grads(lambda x, s: call(_fn(name, mt), x, s), lambda x, s: call(_fn(name, torch), x, s), (x, s))


# The writes with unique targets: with duplicates PyTorch's gradient (every duplicate gets it)
# is not the derivative of what the forward computes, so gradcheck would fail on torch's own.
PERM = torch.stack([torch.randperm(4, generator=torch.Generator().manual_seed(k)) for k in range(5)], 1)
UNIQUE_WRITES = {
    "scatter": lambda f, x, s: f(x, 0, PERM, s),
    "index_copy": lambda f, x, s: f(x, 0, torch.tensor([3, 1, 0, 2]), s[:4]),
    "index_put": lambda f, x, s: f(x, (torch.tensor([0, 1, 2, 3]), torch.tensor([4, 0, 2, 2])), s[:4, 0], False),
    "put": lambda f, x, s: f(x, torch.tensor([19, 0, 3, 7]), s[0, :4], False),
}


@pytest.mark.parametrize("name,call", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
def test_scatter_gradcheck_and_gradgradcheck(name, call):
    call = UNIQUE_WRITES.get(name, call)
    x, s = rand(4, 5).requires_grad_(), rand(6, 5, seed=2).requires_grad_()
    fn = lambda x, s: call(_fn(name, mt), x, s)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, s))
    if "prod" not in name and "amax" not in name and "amin" not in name:
        assert torch.autograd.gradgradcheck(fn, (x, s))


def test_index_fill_value_gradient_counts_each_filled_element_once():
    # PyTorch: value's gradient is grad.index_select(dim, unique(index)).sum().
    x = rand(4, 5)
    _same_grads(lambda x, v: mt.index_fill(x, 1, torch.tensor([3, 1, 3]), v),
                lambda x, v: torch.index_fill(x, 1, torch.tensor([3, 1, 3]), v),
                (x, torch.tensor(2.5, dtype=torch.float64)))


def test_scatter_reduce_amax_include_self_false_counts_only_the_reduced_values():
    # With include_self=False an element of self that updates reached takes no part: src alone
    # is the maximum and gets the whole gradient (PyTorch divides it by 2 here, counting self).
    s = torch.tensor([3.0, 5.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([3.0, 0.0], dtype=torch.float64, requires_grad=True)
    y = mt.scatter_reduce(x, 0, torch.tensor([0, 1]), s, "amax", include_self=False)
    y.backward(torch.ones(2, dtype=torch.float64))
    assert s.grad.tolist() == [1.0, 1.0] and x.grad.tolist() == [0.0, 0.0]


def test_scatter_multiaxis_mul_min_max_raise_not_implemented():
    x = rand(4).requires_grad_()
    y = ops.scatter_multiaxis(x, torch.tensor([1, 2]), rand(2, seed=5), [0], "max")
    with pytest.raises(NotImplementedError, match="reduction max is not implemented"):
        y.sum().backward()


# ---- opcheck --------------------------------------------------------------------------------------

OPCHECK = [
    ("scatter", lambda: (rand(4, 5).requires_grad_(), 0, IDX, rand(6, 5).requires_grad_()), {}),
    ("scatter", lambda: (rand(4, 5).requires_grad_(), 0, IDX, rand(6, 5)), {"reduce": "add"}),
    ("scatter_add", lambda: (rand(4, 5).requires_grad_(), 1, ints(0, 5, (4, 2)), rand(4, 2).requires_grad_()), {}),
    ("scatter_reduce", lambda: (rand(4, 5).requires_grad_(), 0, IDX, rand(6, 5).requires_grad_(), "amax"),
     {"include_self": False}),
    ("scatter_reduce", lambda: (rand(4, 5).requires_grad_(), 0, IDX, rand(6, 5).requires_grad_(), "mean"), {}),
    ("scatter_reduce", lambda: (rand(4, 5).requires_grad_(), 0, IDX, rand(6, 5).requires_grad_(), "prod"), {}),
    ("index_add", lambda: (rand(4, 5).requires_grad_(), 0, ROWS, rand(6, 5).requires_grad_()), {"alpha": 2}),
    ("index_copy", lambda: (rand(4, 5).requires_grad_(), 1, torch.tensor([4, 0]), rand(4, 2).requires_grad_()), {}),
    ("index_fill", lambda: (rand(4, 5).requires_grad_(), 1, torch.tensor([4, 0]),
                            torch.tensor(1.5, dtype=torch.float64)), {}),
    ("index_put", lambda: (rand(4, 5).requires_grad_(), torch.stack([ROWS, IDX[:, 0]], -1),
                           rand(6).requires_grad_(), True), {"index_dims": [0, 1]}),
    ("put", lambda: (rand(4, 5).requires_grad_(), torch.tensor([19, 0, 3]), rand(3).requires_grad_()),
     {"accumulate": True}),
    ("gather", lambda: (rand(4, 5).requires_grad_(), 1, ints(0, 5, (4, 3))), {"batch_rank": 0}),
    ("gather_backward", lambda: (rand(4, 3).requires_grad_(), [4, 5], 1, ints(0, 5, (4, 3))), {}),
    ("scatter_add_backward", lambda: (rand(4, 5).requires_grad_(), [4, 5], 1, ints(0, 5, (4, 2)), [4, 2]), {}),
    ("index_select", lambda: (rand(2, 4, 5).requires_grad_(), 1, ints(0, 4, (2, 3))), {"batch_rank": 1}),
    ("scatter_reduce_values_backward", lambda: (rand(4, 5), rand(4, 5), 0, IDX, rand(6, 5),
                                                torch.scatter_reduce(rand(4, 5), 0, IDX, rand(6, 5), "amax"),
                                                "amax", True), {}),
]


@pytest.mark.parametrize("name,make,kwargs", OPCHECK, ids=[f"{o[0]}-{i}" for i, o in enumerate(OPCHECK)])
def test_opcheck(name, make, kwargs):
    torch.library.opcheck(getattr(ops, name).default, make(), kwargs)


def test_every_row_has_an_op_and_a_backward():
    import multigather

    rows = [r for r in multigather.ops()
            if r.startswith(("torch.", "torch_scatter.")) or r in ("gather_multiaxis", "scatter_multiaxis")]
    assert len(rows) == 19
    # F.embedding_bag's op is a torch.library.custom_op (its tensor attributes are outside the
    # generated rows' operand model), with its autograd registered in Python: no _backward op.
    rows.remove("torch.nn.functional.embedding_bag")
    assert "Tensor? offsets=None" in str(ops.embedding_bag.default._schema)
    for row in rows:
        name = row[len("torch."):] if row.startswith("torch.") else row.replace(".", "_")
        schema = str(getattr(ops, name).default._schema)
        assert "int batch_rank=0" in schema
        assert getattr(ops, name + "_backward").default is not None


# ---- torch.func ---------------------------------------------------------------------------------

I43, I42 = ints(0, 5, (4, 3)), ints(0, 5, (4, 2))
FUNC_CASES = [
    ("gather", lambda f, x: f(x, 1, I43)),
    ("index_select", lambda f, x: f(x, 0, torch.tensor([3, 0, 3]))),
    ("take_along_dim", lambda f, x: f(x, I42, 1)),
    ("scatter_add", lambda f, x: f(x, 0, IDX[:2], x[:2] * 2)),
    ("scatter_reduce", lambda f, x: f(x, 0, IDX[:2], x[1:3] ** 2, "amax")),
    ("index_add", lambda f, x: f(x, 0, ROWS[:3], x[:3].sin(), alpha=3)),
]


@pytest.mark.parametrize("name,call", FUNC_CASES, ids=[c[0] for c in FUNC_CASES])
def test_vmap_grad_jacrev_equal_pytorch(name, call):
    mine, theirs = (lambda x: call(getattr(mt, name), x)), (lambda x: call(getattr(torch, name), x))
    xs = rand(3, 4, 5)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule.*multigather.*")
        torch.testing.assert_close(torch.func.vmap(mine)(xs), torch.func.vmap(theirs)(xs))
        torch.testing.assert_close(torch.func.vmap(mine, in_dims=1)(xs.transpose(0, 1).contiguous()),
                                   torch.func.vmap(theirs, in_dims=1)(xs.transpose(0, 1).contiguous()))
        loss = lambda f: (lambda x: f(x).sin().sum())  # noqa: E731
        torch.testing.assert_close(torch.func.grad(loss(mine))(xs[0]), torch.func.grad(loss(theirs))(xs[0]))
        torch.testing.assert_close(torch.func.jacrev(mine)(xs[0]), torch.func.jacrev(theirs)(xs[0]))
        # per-example gradients, and the gradient of a batched function
        torch.testing.assert_close(torch.func.vmap(torch.func.grad(loss(mine)))(xs),
                                   torch.func.vmap(torch.func.grad(loss(theirs)))(xs))
        w = rand(4, 5, seed=4)
        torch.testing.assert_close(
            torch.func.grad(lambda w: torch.func.vmap(lambda x: mine(w * x))(xs).sin().sum())(w),
            torch.func.grad(lambda w: torch.func.vmap(lambda x: theirs(w * x))(xs).sin().sum())(w))


def test_vmap_with_unbatched_input_and_batched_indices():
    x = rand(4, 5)
    idx = ints(0, 4, (7, 3, 5))
    torch.testing.assert_close(torch.func.vmap(lambda i: mt.gather(x, 0, i))(idx),
                               torch.func.vmap(lambda i: torch.gather(x, 0, i))(idx))


# ---- torch.compile, export, AOTInductor, determinism -------------------------------------------

class MessagePassing(torch.nn.Module):
    """A graph layer: gather source features, weight them, aggregate per target with
    scatter_add and scatter_reduce(amax)."""

    def __init__(self, f=mt):
        super().__init__()
        self.f = f
        self.lin = torch.nn.Linear(4, 4, dtype=torch.float64)

    def forward(self, x, src, dst):
        h = self.f.index_select(self.lin(x), 0, src)
        target = dst[:, None].expand(-1, 4)
        total = self.f.scatter_add(torch.zeros_like(x), 0, target, h)
        peak = self.f.scatter_reduce(torch.zeros_like(x), 0, target, h, "amax", include_self=False)
        return total + peak


def _graph(nodes=6, edges=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(nodes, 4, generator=g, dtype=torch.float64),
            torch.randint(0, nodes, (edges,), generator=g), torch.randint(0, nodes, (edges,), generator=g))


def test_compile_fullgraph_dynamic_forward_and_backward_equal_eager():
    torch._dynamo.reset()
    model = MessagePassing()
    compiled = torch.compile(model, fullgraph=True, dynamic=True)
    for edges in (10, 17):
        x, src, dst = _graph(edges=edges)
        want = model(x, src, dst)
        grads_want = torch.autograd.grad(want.sum(), list(model.parameters()))
        got = compiled(x, src, dst)
        grads_got = torch.autograd.grad(got.sum(), list(model.parameters()))
        torch.testing.assert_close(got, want)
        for a, b in zip(grads_got, grads_want):
            torch.testing.assert_close(a, b)


def test_model_gradients_equal_the_pytorch_model():
    torch.manual_seed(0)
    ours = MessagePassing(mt)
    theirs = MessagePassing(torch)
    theirs.load_state_dict(ours.state_dict())
    x, src, dst = _graph()
    a, b = ours(x, src, dst), theirs(x, src, dst)
    torch.testing.assert_close(a, b)
    for p, q in zip(torch.autograd.grad(a.sum(), list(ours.parameters())),
                    torch.autograd.grad(b.sum(), list(theirs.parameters()))):
        torch.testing.assert_close(p, q)


def test_deterministic_algorithms_mode_runs_every_op():
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        x, src, dst = _graph()
        model = MessagePassing()
        y = model(x, src, dst)
        y.sum().backward()
        assert torch.equal(y, model(x, src, dst))
    finally:
        torch.use_deterministic_algorithms(was)


def _run_without_the_package(script: str, cwd) -> None:
    """Runs `script` in a fresh interpreter whose path has no multigather package; it prints
    "ok" last."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         cwd=cwd, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr[-3000:]


def test_library_loads_without_the_python_package(tmp_path):
    # A process that never imports multigather: torch.ops.load_library(library_path()) alone
    # gives the ops, their gradients and their batching rule.
    script = textwrap.dedent(f"""
        import sys, torch
        torch.ops.load_library({mto.library_path()!r})
        x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
        i = torch.tensor([[0, 3, 1], [2, 2, 0]])
        y = torch.ops.multigather.gather(x, 1, torch.tensor([[0, 4], [1, 1], [2, 0], [3, 3]]))
        y.sum().backward()
        z = torch.ops.multigather.index_add(torch.zeros(3, 5), 0, torch.tensor([0, 2, 0]), torch.ones(3, 5))
        assert torch.equal(z[0], torch.full((5,), 2.0)) and x.grad.sum() == 8
        try:
            torch.ops.multigather.gather(x, 1, torch.tensor([[9, 0], [0, 0], [0, 0], [0, 0]]))
        except IndexError as e:
            assert "index[0,0] = 9 is out of range for dim 1 of size 5" in str(e), e
        assert not [m for m in sys.modules if m.startswith("multigather")]
        print("ok")
    """)
    assert mt.library_path() == mto.library_path()
    _run_without_the_package(script, tmp_path)


def test_aot_inductor_package_runs_without_the_python_package(tmp_path):
    class Lookup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(10, 4))

        def forward(self, idx, src):
            e = mt.embedding(idx, self.weight)
            out = mt.scatter_add(torch.zeros(10, 4), 0, idx[:, None].expand(-1, 4), e * src)
            return mt.gather(out, 0, idx[:, None].expand(-1, 4))

    model = Lookup().eval()
    idx, src = torch.randint(0, 10, (6,)), torch.randn(6, 4)
    n = torch.export.Dim("n", min=2, max=1024)
    ep = torch.export.export(model, (idx, src), dynamic_shapes={"idx": {0: n}, "src": {0: n}})
    assert any("multigather" in str(node.target) for node in ep.graph.nodes)
    package = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "lookup.pt2"))
    idx2, src2 = torch.randint(0, 10, (37,)), torch.randn(37, 4)
    with torch.no_grad():
        torch.save({"idx": idx2, "src": src2, "want": model(idx2, src2)}, tmp_path / "io.pt")
    script = textwrap.dedent(f"""
        import sys, torch
        torch.ops.load_library({mto.library_path()!r})
        runner = torch._inductor.aoti_load_package({package!r})
        io = torch.load({str(tmp_path / "io.pt")!r})
        got = runner(io["idx"], io["src"])
        assert torch.equal(got, io["want"]), (got, io["want"])
        assert not [m for m in sys.modules if m.startswith("multigather")]
        print("ok")
    """)
    _run_without_the_package(script, tmp_path)


# ---- routing(): unedited models ------------------------------------------------------------------

class AttentionBlock(torch.nn.Module):
    """Embedding + attention in plain torch (nn.Embedding, a tied projection, torch.gather of the
    target log-probabilities)."""

    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim, padding_idx=0, dtype=torch.float64)
        self.attn = torch.nn.MultiheadAttention(dim, 2, batch_first=True, dtype=torch.float64)

    def forward(self, ids, targets):
        h = self.embed(ids)
        h = h + self.attn(h, h, h, need_weights=False)[0]
        logp = (h @ self.embed.weight.t()).log_softmax(-1)
        picked = torch.gather(logp, 2, targets[..., None]).squeeze(-1)
        return -picked[:, 1:].mean() + h[:, torch.tensor([0, 2])].square().mean()


class MoE(torch.nn.Module):
    """Top-1 mixture of experts as Mixtral-style code writes it: index_select, in-place
    index_add_ and scatter_add_."""

    def __init__(self, dim=8, experts=3):
        super().__init__()
        self.router = torch.nn.Linear(dim, experts, dtype=torch.float64)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(dim, dim, dtype=torch.float64) for _ in range(experts))

    def forward(self, x):
        weight, choice = self.router(x).softmax(-1).max(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = (choice == e).nonzero().squeeze(1)
            out.index_add_(0, rows, expert(x.index_select(0, rows)) * weight[rows, None])
        load = torch.zeros(len(self.experts), dtype=x.dtype).scatter_add_(0, choice, weight)
        return out.square().sum() + load.square().sum()


class GraphLayer(torch.nn.Module):
    """Message passing as PyTorch Geometric writes it: index_select, scatter_add_ and
    scatter_reduce_(amax) over an expanded index."""

    def __init__(self, dim=4):
        super().__init__()
        self.lin = torch.nn.Linear(dim, dim, dtype=torch.float64)

    def forward(self, x, src, dst):
        h = self.lin(x).index_select(0, src)
        target = dst[:, None].expand(-1, x.shape[1])
        total = torch.zeros_like(x).scatter_add_(0, target, h)
        peak = torch.zeros_like(x).scatter_reduce_(0, target, h, "amax", include_self=False)
        return (total + peak).square().sum()


def _routed_equals_unrouted(model, inputs):
    want = model(*inputs)
    grads_want = torch.autograd.grad(want, list(model.parameters()))
    with mt.routing():
        got = model(*inputs)
        nodes, stack = set(), [got.grad_fn]
        while stack:  # the graph holds multigather's nodes: the calls were routed
            node = stack.pop()
            if node is not None and node not in nodes:
                nodes.add(node)
                stack.extend(n for n, _ in node.next_functions)
        grads_got = torch.autograd.grad(got, list(model.parameters()))
    assert any(n.name().startswith("multigather::") for n in nodes), sorted({n.name() for n in nodes})
    torch.testing.assert_close(got, want)
    for a, b in zip(grads_got, grads_want):
        torch.testing.assert_close(a, b)


def test_routing_embedding_attention_block():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    _routed_equals_unrouted(AttentionBlock(), (torch.randint(0, 50, (3, 7), generator=g),
                                               torch.randint(0, 50, (3, 7), generator=g)))


def test_routing_mixture_of_experts():
    torch.manual_seed(0)
    _routed_equals_unrouted(MoE(), (rand(20, 8, seed=4),))


def test_routing_message_passing():
    torch.manual_seed(0)
    x, src, dst = _graph(nodes=7, edges=15)
    _routed_equals_unrouted(GraphLayer(), (x, src, dst))


def test_routing_indexing_forms_equal_pytorch():
    x = rand(5, 6, 7)
    i, j = torch.tensor([[0, 4], [3, -1]]), torch.tensor([1, 5])
    mask = x[:, 0, 0] > 0
    keys = [i, (slice(None), j), (i, slice(None), j), (slice(None), i, j), mask, (mask, slice(None), j[:1]),
            (Ellipsis, j), (i, j)]
    for key in keys:
        with mt.routing():
            got = x[key]
        torch.testing.assert_close(got, x[key], rtol=0, atol=0)
    with mt.routing():  # not routed: PyTorch's own result
        assert torch.equal(x[1, i], x[1][i]) and torch.equal(x[None, :, j], x[None][:, :, j])


def test_routing_in_place_without_autograd_writes_in_place():
    x = torch.zeros(4, 3)
    with mt.routing():
        y = x.index_add_(0, torch.tensor([1, 1, 3]), torch.ones(3, 3))
        x.scatter_(1, torch.tensor([[2], [0], [1], [0]]), 5.0)
    assert y is x
    want = torch.zeros(4, 3).index_add_(0, torch.tensor([1, 1, 3]), torch.ones(3, 3))
    want.scatter_(1, torch.tensor([[2], [0], [1], [0]]), 5.0)
    assert torch.equal(x, want)


def test_routing_errors_are_multigathers():
    x = rand(4, 5)
    with mt.routing(), pytest.raises(IndexError, match="out of range"):
        torch.gather(x, 1, torch.tensor([[7]]))
    with mt.routing(), pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([9])]


def test_embedding_out_of_range_names_the_id_and_its_position():
    # F.embedding's terms: the first bad id (C order) at its position in input, weight's rows;
    # the oracle for the values is torch's own F.embedding, which rejects the same ids
    w = rand(4, 3).requires_grad_()
    for ids, position, value in ((torch.tensor([[1, 2], [9, -1]]), "1,0", 9),
                                 (torch.tensor([[1, -1, 0]]), "0,1", -1), (torch.tensor([5]), "0", 5)):
        with pytest.raises(IndexError):
            torch.nn.functional.embedding(ids, w)
        with pytest.raises(IndexError) as error:
            mt.embedding(ids, w)
        assert str(error.value).splitlines()[0] == (
            f"embedding: input[{position}] = {value} is out of range for the 4 rows of weight (valid range "
            f"[0, 4)); F.embedding rejects negative indices")


def test_libtorch_program_loads_the_library(tmp_path):
    # A C++ program against libtorch (the wheel's headers and libraries), no Python inside:
    # dlopen(libmultigather_torch.so), then the op through the dispatcher, with autograd.
    import shutil

    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    root = os.path.dirname(torch.__file__)
    source = os.path.join(os.path.dirname(__file__), "libtorch_program.cpp")
    program = tmp_path / "program"
    build = subprocess.run(
        [compiler, "-std=c++20", "-O1", source, f"-I{root}/include", f"-I{root}/include/torch/csrc/api/include",
         f"-L{root}/lib", "-ltorch", "-ltorch_cpu", "-lc10", "-ldl", f"-Wl,-rpath,{root}/lib",
         f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}", "-o", str(program)],
        capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(program), mto.library_path()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "ok", run.stdout + run.stderr
    assert "torch.gather: index[0,0] = 9 is out of range for dim 1 of size 4" in run.stdout


def test_a_package_built_without_torch_still_runs_plain_tensors(tmp_path):
    # pip's isolated build has no torch: no libmultigather_torch. import multigather (torch
    # imported first) works, plain tensors run through the door, and a call that needs the
    # torch op raises the ImportError that says how to build it.
    import shutil

    import multigather

    package = os.path.dirname(multigather.__file__)
    shutil.copytree(package, tmp_path / "multigather", ignore=shutil.ignore_patterns("libmultigather_torch.so"))
    script = textwrap.dedent("""
        import torch, multigather, multigather.torch as mt
        x = torch.arange(12.0).reshape(3, 4)
        i = torch.tensor([[1, 0], [3, 3], [0, 2]])
        assert torch.equal(mt.gather(x, 1, i), torch.gather(x, 1, i))
        try:
            mt.gather(x.requires_grad_(), 1, i)
        except ImportError as e:
            assert "install torch, then reinstall the package" in str(e), e
            print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr[-3000:]


def _cuda_engine() -> bool:
    from multigather import _multigather

    return torch.cuda.is_available() and bool(getattr(_multigather, "has_cuda", False))


# The scatter cases the CUDA engine runs (prod and mean stay on the CPU).
CUDA_SCATTER_CASES = [c for c in SCATTER_CASES if "prod" not in c[0] and "mean" not in c[0]]


@contextlib.contextmanager
def _indices_on(device):
    """The cases' shared IDX / ROWS moved to `device` for the block."""
    global IDX, ROWS
    saved = IDX, ROWS
    IDX, ROWS = IDX.to(device), ROWS.to(device)
    try:
        yield
    finally:
        IDX, ROWS = saved


def _torch_on_the_cpu(name, call):
    """PyTorch's op on CPU copies of the operands (the shared indices on the CPU too), its
    result moved to the GPU: the oracle of the CUDA scatter tests. The cases have duplicate
    indices, and under reduction none PyTorch's CUDA kernels let any duplicate win (its docs:
    nondeterministic), while its CPU kernels and multigather's deterministic CUDA scatter keep
    the last one in row-major order. Autograd flows through the copies."""
    def run(*operands):
        with _indices_on("cpu"):
            return call(_fn(name, torch), *[t.cpu() for t in operands]).cuda()
    return run


@pytest.mark.skipif(not _cuda_engine(), reason="needs a CUDA device and a build with the CUDA engine")
@pytest.mark.parametrize("name,call", CUDA_SCATTER_CASES, ids=[c[0] for c in CUDA_SCATTER_CASES])
def test_cuda_scatters_equal_pytorch(name, call):
    # Forward on the device (the deterministic CUDA scatter); gradients: test_cuda_backward_*.
    x, s = rand(4, 5).cuda(), rand(6, 5, seed=2).cuda()
    with _indices_on("cuda"):
        got = call(_fn(name, mt), x, s)
        assert got.is_cuda
        torch.testing.assert_close(got, _torch_on_the_cpu(name, call)(x, s))


# Gradients on CUDA tensors: execute_vjp on the CUDA engine, on the current stream.
CUDA_GATHER_CASES = [
    ("gather", lambda f, x: f(x, 1, IDX[:4, :3].cuda())),
    ("index_select", lambda f, x: f(x, 0, ROWS.cuda())),
    ("take", lambda f, x: f(x, (IDX[:, :3].reshape(-1) * 5 + 1).cuda())),
]


@pytest.mark.skipif(not _cuda_engine(), reason="needs a CUDA device and a build with the CUDA engine")
@pytest.mark.parametrize("name,call", CUDA_GATHER_CASES, ids=[c[0] for c in CUDA_GATHER_CASES])
def test_cuda_backward_of_gathers_equals_pytorch(name, call):
    # duplicates: their gradients add (float64: PyTorch's atomics and the deterministic
    # scatter-add agree to rounding)
    x = rand(4, 5).cuda()
    _same_grads(lambda x: call(getattr(mt, name), x), lambda x: call(getattr(torch, name), x), (x,))


@pytest.mark.skipif(not _cuda_engine(), reason="needs a CUDA device and a build with the CUDA engine")
@pytest.mark.parametrize("name,call", CUDA_SCATTER_CASES, ids=[c[0] for c in CUDA_SCATTER_CASES])
def test_cuda_backward_of_scatters_equals_pytorch(name, call):
    # execute_vjp on the device (none / add); amax / amin: their value-reading gradients, made
    # of the forward ops on the device.
    x, s = rand(4, 5).cuda(), rand(6, 5, seed=2).cuda()
    with _indices_on("cuda"):
        _same_grads(lambda x, s: call(_fn(name, mt), x, s), _torch_on_the_cpu(name, call), (x, s))
