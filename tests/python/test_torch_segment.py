"""torch.segment_reduce and multigather.torch_scatter against PyTorch itself: values and
gradients on hypothesis cases (lengths and offsets, axis, initial, unsafe, empty segments,
broadcast indices), torch_scatter's functions against torch.scatter_reduce and a numpy
formulation of their arg outputs, errors, double backward, determinism at 1, 2, 3 and 8 threads,
and a GraphSAGE-style layer built from torch.nn against the unmodified layer (torch_scatter is a
source-only package here: torch's own scatter_reduce is the oracle)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import multigather.torch as mt  # noqa: E402
import multigather.torch_scatter as ts  # noqa: E402

REDUCES = ("sum", "mean", "max", "min", "prod")


@st.composite
def segment_reduce_cases(draw):
    """(data, lengths, axis): data [B.., N, F..] with lengths [B.., S] summing to N."""
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    axis = draw(st.integers(0, 1))
    batch = [draw(st.integers(1, 3)) for _ in range(axis)]
    segments = draw(st.integers(0, 5))
    lengths = torch.randint(0, 4, batch + [segments], generator=g)
    if axis:  # every row of lengths must sum to the same N
        total = int(lengths.sum(-1).max())
        lengths[..., -1:] += total - lengths.sum(-1, keepdim=True) if segments else 0
    n = int(lengths.sum(-1).reshape(-1)[0]) if segments else 0
    trailing = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    data = torch.randn(batch + [n] + trailing, generator=g, dtype=torch.float64)
    # a few exact ties, so that max / min share their gradient
    data = torch.where(data > 1.0, torch.ones_like(data), data)
    return data, lengths, axis


def _grads(f, data, grad):
    x = data.clone().requires_grad_(True)
    y = f(x)
    (g,) = torch.autograd.grad(y, x, grad)
    return y.detach(), g


@settings(max_examples=60, deadline=None)
@given(case=segment_reduce_cases(), reduce=st.sampled_from(REDUCES), initial=st.sampled_from([None, 0.5]),
       by_offsets=st.booleans())
def test_segment_reduce_equals_torch_with_gradients(case, reduce, initial, by_offsets):
    data, lengths, axis = case
    if data.shape[axis] == 0 and lengths.shape[-1] == 0:
        return  # torch cannot reduce an empty lengths (its min() of nothing raises)
    bounds = dict(lengths=lengths)
    if by_offsets:
        offsets = torch.cat([torch.zeros_like(lengths[..., :1]), lengths.cumsum(-1)], -1)
        bounds = dict(offsets=offsets)
    # The values' oracle is torch.segment_reduce. Its gradients too, except max / min's:
    # PyTorch 2.15's backward misplaces a segment's tie count when data has more than one
    # dimension besides the segmented one or a segment before it is empty (a tie of two then
    # gets the whole gradient twice), so theirs is the rule written in torch's gather and
    # scatter_add: the gradient of a segment shared equally among its values equal to its result.
    want_f = lambda x: torch.segment_reduce(x, reduce, axis=axis, initial=initial, **bounds)  # noqa: E731
    got_f = lambda x: mt.segment_reduce(x, reduce, axis=axis, initial=initial, **bounds)  # noqa: E731
    want = want_f(data)
    got = got_f(data)  # the door (no autograd)
    torch.testing.assert_close(got, want, equal_nan=True)
    grad = torch.randn_like(want)
    y_got, g_got = _grads(got_f, data, grad)  # torch.ops.multigather.segment_reduce
    torch.testing.assert_close(y_got, want, equal_nan=True)
    if reduce in ("max", "min"):
        g_want = _shared_among_ties(data, lengths, axis, want, grad)
    else:
        _, g_want = _grads(want_f, data, grad)
    torch.testing.assert_close(g_got, g_want, equal_nan=True)


def _shared_among_ties(data, lengths, axis, result, grad):
    """grad[b.., s, f..] / (the count of data in segment s equal to result[b.., s, f..]), given to
    each of them (0 to the others)."""
    n, segments = data.shape[axis], lengths.shape[-1]
    ids = torch.stack([torch.repeat_interleave(torch.arange(segments), l, output_size=n)
                       for l in lengths.reshape(-1, segments)]).reshape(data.shape[:axis + 1])
    index = ids.reshape(ids.shape + (1,) * (data.dim() - axis - 1)).expand(data.shape)
    tie = (data == result.gather(axis, index)).to(data.dtype)
    count = torch.zeros_like(result).scatter_add(axis, index, tie)
    return tie * grad.gather(axis, index) / count.gather(axis, index).clamp(min=1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_segment_reduce_dtypes_and_unsafe(dtype):
    data = torch.randn(7, 3).to(dtype)
    lengths = torch.tensor([2, 0, 3], dtype=torch.int32)
    for reduce in REDUCES:
        got = mt.segment_reduce(data, reduce, lengths=lengths, unsafe=True)
        want = torch.segment_reduce(data, reduce, lengths=lengths, unsafe=True)
        # the two rows past the last segment are dropped, as PyTorch's unsafe call does
        torch.testing.assert_close(got, want, equal_nan=True)
        assert got.dtype == dtype


def test_segment_reduce_errors():
    data = torch.randn(4, 2)
    with pytest.raises(ValueError, match=r"lengths\[1\] = -1 is negative"):
        mt.segment_reduce(data, "sum", lengths=torch.tensor([1, -1, 4]))
    with pytest.raises(ValueError, match=r"lengths\[:\] sums to 2, but the data has 4 rows along the axis"):
        mt.segment_reduce(data, "sum", lengths=torch.tensor([1, 1]))
    with pytest.raises(ValueError, match=r"offsets must not decrease \(offsets\[2\] = 2 follows 3\)"):
        mt.segment_reduce(data, "sum", offsets=torch.tensor([0, 3, 2, 4]))
    with pytest.raises(IndexError, match=r"offsets\[1\] = 5 is out of range \[0, 4\]"):
        mt.segment_reduce(data, "sum", offsets=torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="indices based reduction is not supported"):
        mt.segment_reduce(data, "sum", indices=torch.tensor([0, 0, 1, 1]))
    with pytest.raises(TypeError, match="data dtype int32"):
        mt.segment_reduce(data.int(), "sum", lengths=torch.tensor([4]))
    with pytest.raises(ValueError, match="lengths must have rank 1"):
        mt.segment_reduce(data, "sum", lengths=torch.tensor([[4]]))


def test_double_backward_sum_mean_and_refused_max():
    data = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([2, 4])
    count = torch.tensor([[2.0], [4.0]], dtype=torch.float64)
    for reduce, scale in (("sum", count), ("mean", 1 / count)):
        # g = the VJP at v (v at each row's segment, / count for mean); d/dv sum(g^2) by hand
        v = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(mt.segment_reduce(data, reduce, lengths=lengths), data, v, create_graph=True)
        (gv,) = torch.autograd.grad(g.square().sum(), v)
        torch.testing.assert_close(gv, 2 * scale * v.detach())
    v = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(mt.segment_reduce(data, "max", lengths=lengths), data, v, create_graph=True)
    with pytest.raises(NotImplementedError, match="not differentiable again"):
        torch.autograd.grad(g.sum(), v)


# ---- torch_scatter -------------------------------------------------------------------------------

@st.composite
def scatter_cases(draw):
    """(src, index, dim, dim_size): index 1-D along dim, or of src's leading shape (size 1
    broadcasting), values in [0, dim_size)."""
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    shape = [draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 3)))]
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    d = dim % len(shape)
    dim_size = draw(st.integers(1, 4))
    if draw(st.booleans()):
        index = torch.randint(0, dim_size, (shape[d],), generator=g)
    else:
        k = draw(st.integers(d + 1, len(shape)))
        ishape = [s if (j == d or draw(st.booleans())) else 1 for j, s in enumerate(shape[:k])]
        index = torch.randint(0, dim_size, ishape, generator=g)
    src = torch.randint(-3, 4, shape, generator=g).to(torch.float64)  # small ints: many ties
    return src, index, dim, dim_size


def _oracle(src, index, dim, dim_size, reduce):
    """torch_scatter's scatter from torch.scatter_reduce (include_self=False: an element no value
    reaches keeps the start, 0 or 1 for mul)."""
    full = ts._broadcast(index, src, dim % src.dim())
    shape = list(src.shape)
    shape[dim] = dim_size
    how = {"sum": "sum", "mul": "prod", "mean": "mean", "min": "amin", "max": "amax"}[reduce]
    start = torch.ones(shape, dtype=src.dtype) if reduce == "mul" else torch.zeros(shape, dtype=src.dtype)
    return lambda x: start.scatter_reduce(dim, full, x, how, include_self=False)


def _numpy_arg(src, index, dim, result):
    """The first position along dim of each element's result (src.size(dim) where none)."""
    d = dim % src.dim()
    full = ts._broadcast(index, src, d).numpy()
    s, r = src.numpy(), result.numpy()
    arg = np.full(r.shape, s.shape[d], np.int64)
    for pos in np.ndindex(*s.shape):
        target = list(pos)
        target[d] = full[pos]
        target = tuple(target)
        if s[pos] == r[target] and arg[target] == s.shape[d]:
            arg[target] = pos[d]
    return arg


@settings(max_examples=80, deadline=None)
@given(case=scatter_cases(), reduce=st.sampled_from(["sum", "mul", "mean", "min", "max"]))
def test_torch_scatter_scatter_equals_scatter_reduce(case, reduce):
    src, index, dim, dim_size = case
    oracle = _oracle(src, index, dim, dim_size, reduce)
    want = oracle(src)
    got = ts.scatter(src, index, dim, dim_size=dim_size, reduce=reduce)
    torch.testing.assert_close(got, want)
    grad = torch.randn_like(want)
    y, g = _grads(lambda x: ts.scatter(x, index, dim, dim_size=dim_size, reduce=reduce), src, grad)
    torch.testing.assert_close(y, want)
    if reduce in ("sum", "mean", "mul"):
        src_nz = src + (src == 0).to(src.dtype) * 0.5 if reduce == "mul" else src
        _, g_want = _grads(oracle, src_nz, grad)
        _, g = _grads(lambda x: ts.scatter(x, index, dim, dim_size=dim_size, reduce=reduce), src_nz, grad)
        torch.testing.assert_close(g, g_want)
    else:
        result, arg = getattr(ts, f"scatter_{reduce}")(src, index, dim, dim_size=dim_size)
        want_arg = _numpy_arg(src, index, dim, result)
        np.testing.assert_array_equal(arg.numpy(), want_arg)
        # the gradient goes to the arg element only (torch_scatter's rule)
        d = dim % src.dim()
        g_want = torch.zeros(src.shape[:d] + (src.shape[d] + 1,) + src.shape[d + 1:], dtype=src.dtype)
        g_want.scatter_(d, arg, grad)
        torch.testing.assert_close(g, g_want.narrow(d, 0, src.shape[d]))


def test_torch_scatter_mul_gradient_is_exact_with_zeros():
    src = torch.tensor([[0.0, 2.0], [0.0, 3.0], [4.0, 0.0]], dtype=torch.float64)
    index = torch.tensor([0, 0, 0])
    _, g = _grads(lambda x: ts.scatter_mul(x, index, 0), src, torch.ones(1, 2, dtype=torch.float64))
    torch.testing.assert_close(g, torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 6.0]], dtype=torch.float64))


def test_torch_scatter_out_reduces_into_out():
    src = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    index = torch.tensor([0, 1, 0])
    for reduce, how in (("sum", "sum"), ("mul", "prod"), ("min", "amin"), ("max", "amax")):
        out = torch.full((2, 2), 2.0)
        want = out.scatter_reduce(0, ts._broadcast(index, src, 0), src, how, include_self=True)
        got = ts.scatter(src, index, 0, out=out, reduce=reduce)
        assert got is out
        torch.testing.assert_close(out, want)
    out = torch.full((3, 2), 1.0)
    ts.scatter_mean(src, index, 0, out=out)  # (out + sum) / max(count, 1)
    torch.testing.assert_close(out, torch.tensor([[7 / 2, 9 / 2], [4.0, 5.0], [1.0, 1.0]]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), reduce=st.sampled_from(["sum", "mean", "min", "max"]),
       rows=st.integers(0, 8), segments=st.integers(1, 4), batch=st.sampled_from([[], [2]]))
def test_segment_coo_and_csr_equal_their_scatter(seed, reduce, rows, segments, batch):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(-3, 4, batch + [rows, 2], generator=g).to(torch.float64)
    index = torch.randint(0, segments, batch + [rows], generator=g).sort(-1).values
    d = len(batch)
    want = _oracle(src, index, d, segments, reduce)(src)
    coo = ts.segment_coo(src, index, dim_size=segments, reduce=reduce)
    indptr = torch.stack([torch.searchsorted(index[b] if batch else index, torch.arange(segments + 1))
                          for b in range(batch[0])]) if batch else torch.searchsorted(index, torch.arange(segments + 1))
    csr = ts.segment_csr(src, indptr, reduce=reduce)
    if reduce in ("min", "max"):  # segment_coo / segment_csr: the values; segment_max_coo ...: (values, arg_out)
        (coo_v, coo_arg), (csr_v, csr_arg) = (getattr(ts, f"segment_{reduce}_{f}")(src, i, *a)
                                              for f, i, a in (("coo", index, (None, segments)), ("csr", indptr, ())))
        torch.testing.assert_close(coo_v, coo)
        torch.testing.assert_close(csr_v, csr)
        want_arg = _numpy_arg(src, index, d, want)
        np.testing.assert_array_equal(coo_arg.numpy(), want_arg)
        np.testing.assert_array_equal(csr_arg.numpy(), want_arg)
    torch.testing.assert_close(coo, want)
    torch.testing.assert_close(csr, want)


def test_segment_csr_drops_rows_outside_indptr_and_checks_it():
    src = torch.arange(10.0).reshape(5, 2)
    out, arg = ts.segment_max_csr(src, torch.tensor([1, 3, 3]))
    torch.testing.assert_close(out, torch.tensor([[4.0, 5.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(arg.numpy(), [[2, 2], [5, 5]])
    with pytest.raises(ValueError, match=r"indptr must not decrease"):
        ts.segment_csr(src, torch.tensor([0, 3, 2]))
    with pytest.raises(TypeError, match="indptr dtype int32"):
        ts.segment_csr(src, torch.tensor([0, 3], dtype=torch.int32))
    with pytest.raises(IndexError, match=r"index\[1\] = 7 is out of range"):
        ts.scatter(src, torch.tensor([0, 7, 1, 1, 0]), 0, dim_size=3)
    with pytest.raises(ValueError, match="does not broadcast to src.shape"):
        ts.scatter(src, torch.tensor([0, 1]), 0)


@pytest.mark.parametrize("sorted_ids", [True, False])
def test_bit_identical_at_1_2_3_8_threads(sorted_ids):
    g = torch.Generator().manual_seed(0)
    src = torch.randn(20000, 16, generator=g)
    index = torch.randint(0, 500, (20000,), generator=g)
    if sorted_ids:
        index = index.sort().values
    lengths = torch.bincount(index, minlength=500)
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3, 8):
            torch.set_num_threads(threads)
            x = src.clone().requires_grad_(True)
            y = ts.scatter_mean(x, index, 0, dim_size=500)
            z = mt.segment_reduce(x, "sum", lengths=lengths) if sorted_ids else y
            (gx,) = torch.autograd.grad((y * y).sum() + z.sum(), x)
            results.append((y.detach(), z.detach(), gx))
    finally:
        torch.set_num_threads(before)
    for r in results[1:]:
        for a, b in zip(results[0], r):
            assert torch.equal(a, b)


def test_graphsage_mean_layer_equals_the_unmodified_layer():
    """A GraphSAGE(mean) layer as PyTorch Geometric writes it (an index expanded to the feature
    width, scatter_reduce mean) against the same layer on multigather.torch_scatter (no expand),
    forward and backward, through torch.nn.Linear and an SGD step."""
    class Sage(torch.nn.Module):
        def __init__(self, aggregate):
            super().__init__()
            self.lin_self = torch.nn.Linear(8, 16)
            self.lin_neigh = torch.nn.Linear(8, 16)
            self.aggregate = aggregate

        def forward(self, x, edges):
            messages = x[edges[0]]
            return torch.relu(self.lin_self(x) + self.lin_neigh(self.aggregate(messages, edges[1], x.shape[0])))

    def torch_mean(messages, target, nodes):  # the unmodified model's aggregation
        index = target.unsqueeze(-1).expand_as(messages)
        out = torch.zeros(nodes, messages.shape[1], dtype=messages.dtype)
        return out.scatter_reduce(0, index, messages, "mean", include_self=False)

    torch.manual_seed(0)
    x = torch.randn(50, 8)
    edges = torch.randint(0, 50, (2, 300))
    a, b = Sage(torch_mean), Sage(lambda m, t, n: ts.scatter_mean(m, t, 0, dim_size=n))
    b.load_state_dict(a.state_dict())
    for model in (a, b):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            model(x, edges).square().mean().backward()
            opt.step()
    torch.testing.assert_close(a(x, edges), b(x, edges))
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q)


def test_vmap_grad_and_compile_equal_eager():
    """torch.func.vmap (the batching rule: one call per example where the lengths are read),
    vmap(grad), and torch.compile(fullgraph=True) against the eager calls."""
    from torch.func import grad, vmap

    lengths, index = torch.tensor([2, 0, 4]), torch.tensor([0, 1, 0, 2, 1, 1])
    xb = torch.randn(4, 6, 3, dtype=torch.float64)
    xb[:, 1] = xb[:, 0]  # ties in segment 0
    for f in (lambda x: ts.scatter_sum(x, index, 0, dim_size=3), lambda x: mt.segment_reduce(x, "sum", lengths=lengths)):
        torch.testing.assert_close(vmap(f)(xb), torch.stack([f(x) for x in xb]), rtol=0, atol=0)

    def loss(x):
        return mt.segment_reduce(x, "max", lengths=lengths).nan_to_num(0.0, 0.0, 0.0).sum()

    eager = []
    for x in xb:
        x = x.clone().requires_grad_(True)
        eager.append(torch.autograd.grad(loss(x), x)[0])
    eager = torch.stack(eager)
    torch.testing.assert_close(vmap(grad(loss))(xb), eager, rtol=0, atol=0)

    def model(x):
        return ts.scatter_mean(x, index, 0, dim_size=3).square().sum() + loss(x)

    compiled = torch.compile(model, fullgraph=True)
    x1, x2 = xb[0].clone().requires_grad_(True), xb[0].clone().requires_grad_(True)
    y1, y2 = compiled(x1), model(x2)
    y1.backward()
    y2.backward()
    torch.testing.assert_close(y1, y2)
    torch.testing.assert_close(x1.grad, x2.grad)


def test_routing_runs_an_unedited_module_s_segment_reduce():
    """torch.segment_reduce inside multigather.torch.routing(): the module's code is not edited;
    values and gradients equal the module's outside the mode, and the graph is multigather's."""
    class Pool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, lengths):
            return torch.segment_reduce(self.lin(x), "mean", lengths=lengths, unsafe=True)

    torch.manual_seed(0)
    model, x, lengths = Pool(), torch.randn(9, 4), torch.tensor([3, 2, 4])
    want = model(x, lengths)
    (g_want,) = torch.autograd.grad(want.sum(), model.lin.weight)
    with mt.routing():
        got = model(x, lengths)
        assert "multigather" in type(got.grad_fn).__name__ or "multigather" in got.grad_fn.name()
        (g_got,) = torch.autograd.grad(got.sum(), model.lin.weight)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(g_got, g_want)
