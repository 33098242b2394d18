"""float16 / bfloat16 sums as PyTorch computes them (docs/spec.md section 5, "Accumulation"), and
the shape and layout checks of the gradient ops. The oracle is PyTorch 2.15's CPU kernels: its
scatter kernel combines reduced-precision floats in float32 (at::opmath_type) and rounds each
element once (scatter_add, scatter_reduce sum / prod / mean, scatter(reduce=), index_add on rank
>= 2 with alpha 1, and so the gradients of gather, take_along_dim and index_select on rank >= 2),
while index_add on a vector, put / index_put with accumulate and the
gradients of take, x[idx] and F.embedding add in the dtype itself. Every case compares the bytes
with PyTorch's, on random data with many updates per element (so that 16-bit rounding shows),
through the door (plain tensors), the C++ ops (autograd) and routing(). Skipped without torch."""

from __future__ import annotations

import pytest

from conftest import require

torch = require("torch")
import multigather.torch_ops  # noqa: E402,F401  (registers torch.ops.multigather.*)
import multigather.torch as mt  # noqa: E402
import multigather.torch_scatter as ts  # noqa: E402

ops = torch.ops.multigather
DTYPES = [torch.bfloat16, torch.float16]


def data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float32) + 0.5).to(dtype)


def ids(high, shape, seed):
    g = torch.Generator().manual_seed(seed + 100)
    return torch.randint(0, high, shape, generator=g)


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert torch.equal(got.view(torch.int16), want.view(torch.int16)), (got - want).abs().max()


# (name, multigather call, PyTorch call): each on (x: [4, 3] targets, i: [2048] ids in 4, s: [2048, 3])
FORWARD = [
    ("scatter_add", lambda f, x, i, s: f.scatter_add(x, 0, i[:, None].expand(-1, 3), s)),
    ("scatter_add dim 1", lambda f, x, i, s: f.scatter_add(x.t().contiguous(), 1, i[None, :].expand(3, -1),
                                                           s.t().contiguous())),
    ("scatter_reduce sum", lambda f, x, i, s: f.scatter_reduce(x, 0, i[:, None].expand(-1, 3), s, "sum")),
    ("scatter_reduce mean", lambda f, x, i, s: f.scatter_reduce(x, 0, i[:, None].expand(-1, 3), s, "mean")),
    ("scatter_reduce mean excl", lambda f, x, i, s: f.scatter_reduce(x, 0, i[:, None].expand(-1, 3), s, "mean",
                                                                     include_self=False)),
    ("scatter_reduce prod", lambda f, x, i, s: f.scatter_reduce(x, 0, i[:64, None].expand(-1, 3), s[:64] ** 0.1,
                                                                "prod")),
    ("scatter_add partial", lambda f, x, i, s: f.scatter_add(x, 0, i[:, None].expand(-1, 2), s)),
    ("index_add rank 2", lambda f, x, i, s: f.index_add(x, 0, i, s)),
    ("index_add rank 1", lambda f, x, i, s: f.index_add(x[:, 0].contiguous(), 0, i, s[:, 0].contiguous())),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,call", FORWARD, ids=[n for n, _ in FORWARD])
def test_forward_sums_round_as_pytorch(name, call, dtype):
    x, i, s = data((4, 3), dtype, 1), ids(4, (2048,), 2), data((2048, 3), dtype, 3)
    want = call(torch, x, i, s)
    same(call(mt, x, i, s), want)            # the door (plain tensors)
    same(call(ops, x, i, s), want)            # torch.ops.multigather.* (the C++ ops)
    with mt.routing():
        same(call(torch, x, i, s), want)      # routed


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_in_place_methods_under_routing(dtype):
    x, i, s = data((4, 3), dtype, 1), ids(4, (2048,), 2), data((2048, 3), dtype, 3)
    want = x.clone().index_add_(0, i, s)
    with mt.routing():
        got = x.clone().index_add_(0, i, s)
    same(got, want)
    want = x.clone().scatter_add_(0, i[:, None].expand(-1, 3), s)
    with mt.routing():
        got = x.clone().scatter_add_(0, i[:, None].expand(-1, 3), s)
    same(got, want)


def test_the_issue_examples():
    dt, n = torch.bfloat16, 4096
    idx, ones = torch.zeros(n, dtype=torch.long), torch.ones(n, dtype=dt)
    assert ops.scatter_add(torch.zeros(1, dtype=dt), 0, idx, ones).item() == 4096
    assert ops.scatter_reduce(torch.zeros(1, dtype=dt), 0, idx, ones, "mean", include_self=False).item() == 1.0
    assert ts.scatter(ones, idx, 0, reduce="mean").item() == 1.0
    assert ts.scatter(ones, idx, 0, reduce="sum").item() == 4096
    x, msg = torch.zeros(4, 8, dtype=dt), torch.ones(1024, 8, dtype=dt)
    with mt.routing():
        assert x.clone().index_add_(0, torch.zeros(1024, dtype=torch.long), msg)[0, 0].item() == 1024


# (name, multigather call, PyTorch call) on w: [4, 3] requiring grad, i: [1024] ids in 4
GRADIENTS = [
    ("gather", lambda f, w, i: f.gather(w, 0, i[:, None].expand(-1, 3))),
    ("gather dim 1", lambda f, w, i: f.gather(w.t(), 1, i[None, :].expand(3, -1))),
    ("take_along_dim", lambda f, w, i: f.take_along_dim(w, i[:, None].expand(-1, 3), 0)),
    ("take_along_dim flat", lambda f, w, i: f.take_along_dim(w, i)),
    ("index_select rank 2", lambda f, w, i: f.index_select(w, 0, i)),
    ("index_select rank 1", lambda f, w, i: f.index_select(w[:, 0], 0, i)),
    ("take", lambda f, w, i: f.take(w, i)),
    ("embedding", lambda f, w, i: (torch.nn.functional if f is torch else f).embedding(i, w)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,call", GRADIENTS, ids=[n for n, _ in GRADIENTS])
def test_gradient_sums_round_as_pytorch(name, call, dtype):
    i = ids(4, (1024,), 5)
    w0 = data((4, 3), dtype, 4)
    grads = []
    for f in (torch, mt):
        w = w0.clone().requires_grad_()
        out = call(f, w, i)
        out.backward(data(tuple(out.shape), dtype, 6))
        grads.append(w.grad)
    same(grads[1], grads[0])
    w = w0.clone().requires_grad_()
    with mt.routing():
        out = call(torch, w, i)
    out.backward(data(tuple(out.shape), dtype, 6))
    same(w.grad, grads[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_embedding_bag_per_sample_weights_gradient_rounds_once(dtype):
    """The per_sample_weights gradient is a dot product per row, formed in float32 and rounded
    once, as PyTorch's CPU kernel does: over 40 random bags of width 64 it is within one 16-bit
    step of PyTorch's everywhere, and no further from the float64 value than PyTorch's is."""
    F = torch.nn.functional
    worst_ours = worst_torch = 0.0
    for seed in range(40):
        g = torch.Generator().manual_seed(seed)
        weight = torch.randn(10, 64, generator=g).to(dtype)
        input = torch.randint(0, 10, (12,), generator=g)
        offsets = torch.tensor([0, 5, 9])
        psw = torch.randn(12, generator=g).to(dtype)
        grad = torch.randn(3, 64, generator=g).to(dtype)
        results = []
        for f in (F.embedding_bag, mt.embedding_bag):
            p = psw.clone().requires_grad_()
            f(input, weight.clone().requires_grad_(), offsets, mode="sum", per_sample_weights=p).backward(grad)
            results.append(p.grad)
        exact = (grad.double()[torch.searchsorted(offsets, torch.arange(12), right=True) - 1] *
                 weight.double()[input]).sum(1)
        ulp = torch.finfo(dtype).eps * exact.abs().clamp(min=1e-3)
        assert ((results[1].double() - results[0].double()).abs() <= ulp * 2).all(), seed
        worst_torch = max(worst_torch, ((results[0].double() - exact).abs() / ulp).max().item())
        worst_ours = max(worst_ours, ((results[1].double() - exact).abs() / ulp).max().item())
    assert worst_ours <= worst_torch + 1e-9, (worst_ours, worst_torch)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_wide_rows_round_as_pytorch(dtype):
    """Rows of 37 elements (the vector conversions' blocks of 8 and a tail), contiguous and
    transposed targets, a [1024, 37] source: the bytes of PyTorch's index_add and scatter_add."""
    x, i, s = data((5, 37), dtype, 7), ids(5, (1024,), 8), data((1024, 37), dtype, 9)
    same(mt.index_add(x, 0, i, s), torch.index_add(x, 0, i, s))
    same(ops.scatter_add(x, 0, i[:, None].expand(-1, 37), s), torch.scatter_add(x, 0, i[:, None].expand(-1, 37), s))
    xt = data((37, 5), dtype, 10).t()
    same(mt.index_add(xt, 0, i, s), torch.index_add(xt, 0, i, s))
