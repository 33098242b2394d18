"""multigather.torch_scatter as a drop-in for torch_scatter 2.1.2, beyond torch_scatter's own
tests (tests/python/upstream/torch_scatter): the return forms, empty inputs, integer means,
out= of the segment functions, gather_coo / gather_csr, torch.jit.script, and min / max with
NaN, infinities and ties with out= against a transcription of torch_scatter's CPU kernels
(csrc/cpu/scatter_cpu.cpp, segment_csr_cpu.cpp and reducer.h at commit
648dda3cf964731ffb4de11eafc445a83133eda4): element loops with its strict update from
numeric_limits lowest() / max(), written independently of the module's code."""

from __future__ import annotations

import math

import pytest

from conftest import require

torch = require("torch")
import multigather.torch_scatter as ts  # noqa: E402

NAN, INF = float("nan"), float("inf")


def _limits(dtype):
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min, info.max


def _bcast(index, src, dim):  # torch_scatter/utils.py broadcast
    if index.dim() == 1:
        for _ in range(dim):
            index = index.unsqueeze(0)
    for _ in range(index.dim(), src.dim()):
        index = index.unsqueeze(-1)
    return index.expand(src.size())


def _beats(reduce, new, cur):
    return new < cur if reduce == "min" else new > cur


def ref_scatter_arg(src, index, dim, out, dim_size, reduce):
    """scatter_cpu for min / max: out (or init) updated strictly in src's order; without out an
    element still at init is 0. Returns (values, arg_out)."""
    dim = dim % src.dim()
    index = _bcast(index, src, dim)
    lowest, highest = _limits(src.dtype)
    init = highest if reduce == "min" else lowest
    if out is None:
        size = list(src.shape)
        size[dim] = dim_size if dim_size is not None else (int(index.max()) + 1 if index.numel() else 0)
        o = torch.full(size, init, dtype=src.dtype)
    else:
        o = out.clone()
    arg = torch.full(o.shape, src.size(dim), dtype=torch.int64)
    for pos in torch.cartesian_prod(*[torch.arange(s) for s in src.shape]).reshape(-1, src.dim()).tolist():
        target = list(pos)
        target[dim] = int(index[tuple(pos)])
        v, cur = src[tuple(pos)].item(), o[tuple(target)].item()
        if _beats(reduce, v, cur):
            o[tuple(target)] = v
            arg[tuple(target)] = pos[dim]
    if out is None:
        o[o == init] = 0
    return o, arg


def ref_segment_csr(src, indptr, reduce):
    """segment_csr_cpu on a 1-D indptr along dim 0 of a 2-D src: (values, arg_out); arg_out
    None where torch_scatter leaves it undefined (a non-empty segment no value beat)."""
    lowest, highest = _limits(src.dtype)
    init = {"min": highest, "max": lowest}.get(reduce, 0)
    segments = indptr.numel() - 1
    out = torch.zeros(segments, src.size(1), dtype=src.dtype)
    arg = [[src.size(0)] * src.size(1) for _ in range(segments)]
    for s in range(segments):
        start, end = int(indptr[s]), int(indptr[s + 1])
        for k in range(src.size(1)):
            val, a = init, None
            for e in range(start, end):
                v = src[e, k].item()
                if reduce in ("sum", "mean"):
                    val = val + v
                elif _beats(reduce, v, val):
                    val, a = v, e
            count = end - start
            if reduce == "mean":
                c = max(count, 1)
                val = val / c if src.dtype.is_floating_point else int(val / c)  # C++ integer division truncates
            if reduce in ("min", "max"):
                if count > 0:
                    arg[s][k] = a
                else:
                    val = 0
            out[s, k] = val
    return out, arg


def _values(g, dtype, shape):
    """Values with many ties, and NaN / infinities / the dtype's extremes (floats) or its
    extremes (integers)."""
    lowest, highest = _limits(dtype)
    pool = [-2, -1, 0, 1, 2, lowest, highest] + ([NAN, -INF, INF] if dtype.is_floating_point else [])
    picks = torch.randint(0, len(pool), shape, generator=g)
    return torch.tensor([pool[i] for i in picks.flatten().tolist()], dtype=torch.float64).to(dtype).reshape(shape)


DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", ["min", "max"])
def test_min_max_equal_torch_scatter_kernel_with_nan_infinities_and_out(seed, dtype, reduce):
    g = torch.Generator().manual_seed(seed)
    src = _values(g, dtype, (6, 3))
    index = torch.randint(0, 4, (6,), generator=g)
    want, want_arg = ref_scatter_arg(src, index, 0, None, 4, reduce)
    got, got_arg = getattr(ts, f"scatter_{reduce}")(src, index, 0, dim_size=4)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    assert torch.equal(got_arg, want_arg)
    torch.testing.assert_close(ts.scatter(src, index, 0, dim_size=4, reduce=reduce), want, equal_nan=True,
                               rtol=0, atol=0)
    # out=: out's values are the start (no masking); arg_out names a src value only where it
    # strictly beat them (a tie with out keeps src.size(dim))
    start = _values(g, dtype, (4, 3))
    want, want_arg = ref_scatter_arg(src, index, 0, start, None, reduce)
    out = start.clone()
    got, got_arg = getattr(ts, f"scatter_{reduce}")(src, index, 0, out)
    assert got is out
    torch.testing.assert_close(out, want, equal_nan=True, rtol=0, atol=0)
    assert torch.equal(got_arg, want_arg)
    # segment_coo on the sorted index: the scatter's values (and arg_out where defined)
    order = index.sort(stable=True)
    s_src, s_index = src[order.indices], order.values
    want, want_arg = ref_scatter_arg(s_src, s_index, 0, None, 4, reduce)
    got, got_arg = getattr(ts, f"segment_{reduce}_coo")(s_src, s_index, None, 4)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(ts.segment_coo(s_src, s_index, dim_size=4, reduce=reduce), want, equal_nan=True,
                               rtol=0, atol=0)
    reached = torch.zeros(4, 3, dtype=torch.bool)
    reached[s_index] = True
    taken = want_arg < 6
    assert torch.equal(got_arg[taken], want_arg[taken])
    assert bool((got_arg[~reached] == 6).all())
    # segment_csr: a non-empty segment no value beat holds lowest() / max() (not masked)
    indptr = torch.searchsorted(s_index, torch.arange(5))
    want, want_arg = ref_segment_csr(s_src, indptr, reduce)
    got, got_arg = getattr(ts, f"segment_{reduce}_csr")(s_src, indptr)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(ts.segment_csr(s_src, indptr, reduce=reduce), want, equal_nan=True, rtol=0, atol=0)
    for s in range(4):
        for k in range(3):
            if want_arg[s][k] is not None:
                assert got_arg[s, k] == want_arg[s][k], (s, k)


def test_nan_and_minus_inf_examples():
    # research/adversarial-2026-11-28.md N10, with torch_scatter's results (from its kernel)
    v, a = ts.scatter_max(torch.tensor([NAN, 1.0]), torch.tensor([0, 0]), 0)
    assert v.tolist() == [1.0] and a.tolist() == [1]
    v, a = ts.scatter_max(torch.tensor([-INF, 2.0]), torch.tensor([0, 1]), 0)
    assert v.tolist() == [0.0, 2.0] and a.tolist() == [2, 1]
    out = torch.tensor([3.0, 0.0])
    v, a = ts.scatter_max(torch.tensor([3.0, 1.0]), torch.tensor([0, 1]), 0, out)
    assert v.tolist() == [3.0, 1.0] and a.tolist() == [2, 1]  # the tie with out keeps src.size(0)


def test_the_plain_forms_return_the_tensor_and_the_arg_forms_the_pair():
    src = torch.tensor([[1.0, 5.0], [3.0, 2.0], [0.0, 4.0]])
    index, indptr = torch.tensor([0, 0, 1]), torch.tensor([0, 2, 3])
    want = torch.tensor([[3.0, 5.0], [0.0, 4.0]])
    for got in (ts.segment_coo(src, index, reduce="max"), ts.segment_csr(src, indptr, reduce="max"),
                ts.scatter(src, index, 0, reduce="max")):
        assert isinstance(got, torch.Tensor)
        torch.testing.assert_close(got, want)
    for got in (ts.segment_max_coo(src, index), ts.segment_max_csr(src, indptr), ts.scatter_max(src, index, 0)):
        assert isinstance(got, tuple) and len(got) == 2
        torch.testing.assert_close(got[0], want)
        assert got[1].tolist() == [[1, 0], [2, 2]]


def test_empty_index_and_indptr_give_empty_results():
    e = torch.zeros(0, dtype=torch.long)
    assert ts.scatter(torch.zeros(0, 4), e, 0).shape == (0, 4)
    assert ts.scatter_max(torch.zeros(0, 4), e, 0)[1].shape == (0, 4)
    assert ts.segment_coo(torch.zeros(0, 4), e).shape == (0, 4)
    assert ts.segment_csr(torch.zeros(0, 4), e).shape == (0, 4)
    assert ts.segment_csr(torch.zeros(3, 4), e, reduce="mean").shape == (0, 4)
    v, a = ts.segment_max_csr(torch.zeros(3, 4), e)
    assert v.shape == a.shape == (0, 4)
    # an indptr of empty segments over an empty src: zeros of the segment count
    assert ts.segment_csr(torch.zeros(0, 4), torch.tensor([0, 0, 0])).tolist() == [[0.0] * 4] * 2


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_means_floor_in_scatter_and_truncate_in_segments(dtype):
    src = torch.tensor([4, 1, 5, -7, -2, 3], dtype=dtype)
    index = torch.tensor([0, 0, 1, 2, 2, 2])
    # scatter_mean: out.div_(count, rounding_mode='floor') (torch_scatter/scatter.py)
    assert ts.scatter_mean(src, index, 0).tolist() == [2, 5, -2]
    assert ts.scatter(src, index, 0, reduce="mean").dtype == dtype
    # segment_*: C++ integer division (reducer.h), -6 / 3 = -2 and (-7 - 2) / 2 = -4
    want, _ = ref_segment_csr(src.view(-1, 1), torch.tensor([0, 2, 3, 6]), "mean")
    assert ts.segment_mean_csr(src, torch.tensor([0, 2, 3, 6])).tolist() == want.view(-1).tolist() == [2, 5, -2]
    src2 = torch.tensor([-7, -2, 1], dtype=dtype)
    want, _ = ref_segment_csr(src2.view(-1, 1), torch.tensor([0, 2, 3]), "mean")
    assert want.view(-1).tolist() == [-4, 1]
    assert ts.segment_csr(src2, torch.tensor([0, 2, 3]), reduce="mean").tolist() == [-4, 1]
    assert ts.segment_coo(src2, torch.tensor([0, 0, 1]), reduce="mean").tolist() == [-4, 1]
    assert ts.scatter_mean(src2, torch.tensor([0, 0, 1]), 0).tolist() == [-5, 1]  # floor


def test_segment_out_takes_part_in_coo_and_is_overwritten_in_csr():
    src = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    index, indptr = torch.tensor([0, 0, 2]), torch.tensor([0, 2, 2, 3])
    for reduce, how in (("sum", "sum"), ("min", "amin"), ("max", "amax")):
        out = torch.full((3, 2), 2.0)
        want = out.scatter_reduce(0, _bcast(index, src, 0), src, how, include_self=True)
        assert ts.segment_coo(src, index, out, reduce=reduce) is out
        torch.testing.assert_close(out, want)
        out = torch.full((3, 2), 2.0)
        assert ts.segment_csr(src, indptr, out, reduce=reduce) is out
        torch.testing.assert_close(out, ts.segment_csr(src, indptr, reduce=reduce))
    out = torch.full((3, 2), 1.0)
    ts.segment_mean_coo(src, index, out)  # (out + sum) / count where reached, out elsewhere
    torch.testing.assert_close(out, torch.tensor([[5 / 2, 7 / 2], [1.0, 1.0], [6.0, 7.0]]))
    with pytest.raises(ValueError, match=r"out.shape = \[2, 2\] must be \[3, 2\]"):
        ts.segment_csr(src, indptr, torch.zeros(2, 2))


def test_gather_coo_and_csr_equal_index_select_with_gradients():
    g = torch.Generator().manual_seed(0)
    src = torch.randn(2, 4, 3, dtype=torch.float64, generator=g, requires_grad=True)
    index = torch.tensor([[0, 0, 1, 3, 3], [1, 2, 2, 2, 3]])
    want = torch.stack([src[b].index_select(0, index[b]) for b in range(2)])
    torch.testing.assert_close(ts.gather_coo(src, index), want)
    indptr = torch.tensor([[0, 2, 3, 3, 5], [0, 0, 1, 4, 5]])  # the same rows as index
    torch.testing.assert_close(ts.gather_csr(src, indptr), want)
    out = torch.full((2, 5, 3), -2.0, dtype=torch.float64)
    assert ts.gather_csr(src.detach(), indptr, out) is out
    torch.testing.assert_close(out, want.detach())
    assert torch.autograd.gradcheck(lambda x: ts.gather_coo(x, index), (src,))
    assert torch.autograd.gradcheck(lambda x: ts.gather_csr(x, indptr), (src,))
    # the gradient is the segment sum of the incoming one (torch_scatter's GatherCOO backward)
    grad = torch.randn(2, 5, 3, dtype=torch.float64, generator=g)
    (gx,) = torch.autograd.grad(ts.gather_coo(src, index), src, grad)
    torch.testing.assert_close(gx, ts.segment_coo(grad, index, dim_size=4))
    with pytest.raises(IndexError):
        ts.gather_coo(src, torch.tensor([[0, 4], [0, 1]]))


def test_torch_jit_script_of_a_caller():
    def pool(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return ts.scatter_max(x, index, 0)[0] + ts.segment_csr(x, torch.tensor([0, 2, 3]), reduce="mean")

    scripted = torch.jit.script(pool)
    x, index = torch.tensor([[1.0, 4.0], [3.0, 2.0], [5.0, 0.0]]), torch.tensor([0, 0, 1])
    torch.testing.assert_close(scripted(x, index), torch.tensor([[3.0 + 2.0, 4.0 + 3.0], [5.0 + 5.0, 0.0]]))
    assert math.isclose(float(torch.jit.script(ts.scatter_mean)(x, index, 0)[0, 0]), 2.0)


def test_an_empty_src_gives_zeros_for_every_reduce():
    # torch_scatter's kernels: `if (src.numel() == 0) out.fill_(0)` (mul and min / max too); with
    # out= it is returned untouched
    src, index = torch.zeros(0, 2), torch.zeros(0, dtype=torch.long)
    for reduce in ("sum", "mul", "mean", "min", "max"):
        assert ts.scatter(src, index, 0, dim_size=3, reduce=reduce).tolist() == [[0.0, 0.0]] * 3
        assert ts.segment_coo(src, index, dim_size=3, reduce=reduce).tolist() == [[0.0, 0.0]] * 3
        out = torch.full((3, 2), 7.0)
        assert ts.scatter(src, index, 0, out, reduce=reduce) is out and out.tolist() == [[7.0, 7.0]] * 3
    v, a = ts.scatter_max(src, index, 0, dim_size=2)
    assert v.tolist() == [[0.0, 0.0]] * 2 and a.tolist() == [[0, 0]] * 2
    # dim_size=None: the broadcast index is empty (size 0), segment_coo reads the last index
    assert ts.scatter(torch.zeros(3, 0), torch.tensor([0, 5, 1]), 0).shape == (0, 0)
    assert ts.segment_coo(torch.zeros(3, 0), torch.tensor([0, 1, 4])).shape == (5, 0)


def test_compile_and_vmap_of_min_max_with_nan_equal_eager():
    from torch.func import vmap

    x = torch.tensor([[NAN, 1.0], [2.0, -INF], [0.0, 3.0]])
    i = torch.tensor([0, 0, 1])
    eager = ts.scatter_max(x, i, 0, dim_size=2)
    assert eager[0].tolist() == [[2.0, 1.0], [0.0, 3.0]] and eager[1].tolist() == [[1, 0], [2, 2]]
    compiled = torch.compile(lambda t: ts.scatter_max(t, i, 0, dim_size=2), fullgraph=True)(x)
    assert torch.equal(compiled[0], eager[0]) and torch.equal(compiled[1], eager[1])
    batched = vmap(lambda t: ts.scatter(t, i, 0, dim_size=2, reduce="max"))(torch.stack([x, x.flip(0)]))
    assert torch.equal(batched[0], eager[0])
    assert torch.equal(batched[1], ts.scatter(x.flip(0), i, 0, dim_size=2, reduce="max"))


@pytest.mark.parametrize("reduce", ["sum", "mul", "mean", "min", "max"])
def test_gradients_with_out(reduce):
    # torch_scatter's autograd with out=: sum / mean / mul as their formulas; min / max only to
    # the arg_out element (ScatterMax marks out dirty: out's former values get none)
    g = torch.Generator().manual_seed(1)
    src = (torch.randn(5, 2, dtype=torch.float64, generator=g) + 3).requires_grad_(True)
    index = torch.tensor([0, 2, 0, 2, 1])
    start = torch.full((4, 2), 2.5, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x: getattr(ts, f"scatter_{reduce}")(x, index, 0, start.clone())
                                    if reduce not in ("min", "max") else
                                    getattr(ts, f"scatter_{reduce}")(x, index, 0, start.clone())[0], (src,))
    if reduce in ("min", "max"):
        grad = torch.randn(4, 2, dtype=torch.float64, generator=g)
        _, arg = ref_scatter_arg(src.detach(), index, 0, start, None, reduce)
        want = torch.zeros(6, 2, dtype=torch.float64).scatter_(0, arg, grad)[:5]
        (got,) = torch.autograd.grad(getattr(ts, f"scatter_{reduce}")(src, index, 0, start.clone())[0], src, grad)
        torch.testing.assert_close(got, want)


def test_out_errors_name_the_argument_and_the_value():
    src = torch.zeros(3, 2)
    with pytest.raises(IndexError, match=r"torch_scatter.scatter: index\[2\] = 7 is out of range for dim 0 of out "
                                         r"\(size 2; valid range \[0, 2\)\)"):
        ts.scatter_mean(src, torch.tensor([0, 1, 7]), 0, out=torch.zeros(2, 2))
    with pytest.raises(IndexError, match=r"index\[0\] = -1 is out of range"):
        ts.scatter_max(src, torch.tensor([-1, 1, 0]), 0, out=torch.zeros(2, 2))
    # torch_scatter's CHECK_INPUT(src.size(i) == out.size(i)) for i != dim
    with pytest.raises(ValueError, match=r"torch_scatter.segment_coo: out.shape = \[2, 3\] must be src.shape = "
                                         r"\[3, 2\] but at dim 0"):
        ts.segment_coo(src, torch.tensor([0, 1, 1]), out=torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"out.shape = \[2\] must be src.shape = \[3, 2\]"):
        ts.scatter(src, torch.tensor([0, 1, 1]), 0, out=torch.zeros(2))
    with pytest.raises(ValueError, match=r"reduce = 'foo' must be one of"):
        ts.scatter(src, torch.tensor([0, 1, 1]), 0, reduce="foo")
    with pytest.raises(ValueError, match=r"gather_csr: indptr.size\(-1\) = 3 must be src.size\(0\) \+ 1 = 4"):
        ts.gather_csr(src, torch.tensor([0, 1, 3]))


def test_index_errors_with_out_match_the_rows():
    src = torch.zeros(3, 2)
    with pytest.raises(TypeError, match=r"torch_scatter.scatter: index dtype int32 is not supported"):
        ts.scatter(src, torch.tensor([0, 1, 0], dtype=torch.int32), 0, out=torch.zeros(3, 2))
    with pytest.raises(TypeError, match=r"torch_scatter.scatter: index dtype int32 is not supported"):
        ts.scatter(src, torch.tensor([0, 1, 0], dtype=torch.int32), 0)  # the row's words
    with pytest.raises(ValueError, match=r"index.shape = \[2\] does not broadcast to src.shape = \[3, 2\]"):
        ts.scatter_max(src, torch.tensor([0, 1]), 0, out=torch.zeros(3, 2))
    for out in (None, torch.zeros(3, 2)):
        with pytest.raises(ValueError, match=r"segment_coo: index.shape = \[2, 3\] does not broadcast to "
                                             r"src.shape\[:2\] = \[3, 2\]"):
            ts.segment_max_coo(src, torch.tensor([[0, 1, 0]] * 2), out)
