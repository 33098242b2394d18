"""Segment ops under torch.compile(dynamic=True) and torch.export with Dims: their output is
[segments, ...], whose size comes from the ids (lengths, offsets, dim_size), so their fake
kernels specialize the sizes (one graph per size) instead of claiming input's symbolic shape.
Each compiled result equals PyTorch's own op (torch.segment_reduce) or the eager multigather
call, across several sizes. Skipped without torch."""

from __future__ import annotations

import pytest

from conftest import require

torch = require("torch")
import multigather.torch as mt  # noqa: E402
import multigather.torch_scatter as ts  # noqa: E402

SIZES = [(6, [2, 4]), (9, [3, 0, 6]), (5, [5])]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_segment_reduce_compiled_dynamic(reduce):
    torch._dynamo.reset()
    f = torch.compile(lambda x, l: mt.segment_reduce(x, reduce, lengths=l), fullgraph=True, dynamic=True)
    for n, lengths in SIZES:
        x = torch.randn(n, 4)
        lengths = torch.tensor(lengths)
        got = f(x, lengths)
        want = torch.segment_reduce(x, reduce, lengths=lengths)
        assert torch.allclose(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("call", [
    lambda x, i: ts.scatter(x, i, 0, dim_size=3),
    lambda x, i: ts.scatter(x, i, 0, dim_size=3, reduce="mean"),
    lambda x, i: ts.segment_coo(x, i, dim_size=3),
], ids=["scatter", "scatter_mean", "segment_coo"])
def test_torch_scatter_compiled_dynamic(call):
    torch._dynamo.reset()
    f = torch.compile(call, fullgraph=True, dynamic=True)
    for n in (6, 9, 4):
        x = torch.randn(n, 4)
        i = torch.sort(torch.randint(0, 3, (n,))).values
        assert torch.allclose(f(x, i), call(x, i))


def test_segment_reduce_export_with_dims():
    class M(torch.nn.Module):
        def forward(self, x, lengths):
            return mt.segment_reduce(x, "sum", lengths=lengths)

    x, lengths = torch.randn(6, 4), torch.tensor([2, 4])
    ep = torch.export.export(M(), (x, lengths), dynamic_shapes={"x": {1: torch.export.Dim("d")},
                                                               "lengths": None})
    for d in (4, 7):
        x = torch.randn(6, d)
        assert torch.allclose(ep.module()(x, lengths), torch.segment_reduce(x, "sum", lengths=lengths))
