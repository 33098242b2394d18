"""torch ops at their edges, against PyTorch: empty tensors (whose data_ptr is null) are data with
no elements, never "shapes alone"; grad_output's shape is checked by every
backward op before anything is read (a public op such as torch.ops.multigather.gather_backward
can be called with any tensor); PyTorch's contiguity rule (a size-1 dimension's stride does not
matter) for the gradients autograd hands in; the second derivative of a sum / mean segment
reduction, 0 (not NaN) at empty segments (torch.autograd.gradgradcheck in float64). Skipped
without torch."""

from __future__ import annotations

import pytest

from conftest import require

torch = require("torch")
import multigather.torch_ops  # noqa: E402,F401  (registers torch.ops.multigather.*)
import multigather.torch as mt  # noqa: E402

ops = torch.ops.multigather


def test_backward_ops_check_grad_output_shape():
    """A grad_output smaller or larger than the forward's output is refused before anything is
    read (it was read at every index position: heap garbage or a crash)."""
    cases = [
        lambda g: ops.gather_backward(g, [3], 0, torch.tensor([0, 1, 2, 0, 1, 2])),
        lambda g: ops.take_backward(g, [3], torch.tensor([0, 1, 2, 0, 1, 2])),
        lambda g: ops.index_select_backward(g, [3], 0, torch.tensor([0, 1, 2, 0, 1, 2])),
        lambda g: ops.take_along_dim_backward(g, [3], torch.tensor([0, 1, 2, 0, 1, 2]), 0),
        lambda g: ops.segment_reduce_backward(g, torch.ones(6), "sum", torch.tensor([2, 4])),
    ]
    for call in cases:
        for bad in (torch.tensor(5.), torch.ones(1), torch.ones(7)):
            with pytest.raises(ValueError, match="grad_output shape .* must be the output shape"):
                call(bad)
    huge = torch.zeros(50_000_000, dtype=torch.long)[:1].expand(50_000_000)
    with pytest.raises(ValueError, match="grad_output shape"):
        ops.gather_backward(torch.ones(1), [3], 0, huge)
    # The right shape still works, and equals PyTorch's gradient.
    i = torch.tensor([0, 1, 2, 0, 1, 2])
    g = torch.arange(6.)
    x = torch.zeros(3, requires_grad=True)
    torch.gather(x, 0, i).backward(g)
    assert torch.equal(ops.gather_backward(g, [3], 0, i), x.grad)


@pytest.mark.parametrize("op", ["gather", "scatter_add", "index_add"])
def test_gradient_with_a_size_one_dimension_of_any_stride(op):
    """PyTorch calls a [1, 2] tensor with strides [4, 1] contiguous (a size-1 dimension's stride
    never matters); the backward ops take it as such."""
    g = torch.arange(8.).reshape(2, 4)[:1, :2]  # shape [1, 2], strides [4, 1]
    assert g.is_contiguous() and g.stride() == (4, 1)
    x = torch.arange(6.).reshape(3, 2)
    i = torch.tensor([[2, 0]])
    calls = {
        "gather": lambda f, x: f.gather(x, 0, i),
        "scatter_add": lambda f, x: f.scatter_add(torch.zeros(1, 2), 0, torch.zeros(2, 2, dtype=torch.long), x[:2]),
        "index_add": lambda f, x: f.index_add(torch.zeros(1, 2), 0, torch.tensor([0, 0]), x[:2]),
    }
    grads = []
    for f in (torch, mt):
        leaf = x.clone().requires_grad_()
        calls[op](f, leaf).backward(g)
        grads.append(leaf.grad)
    assert torch.equal(grads[0], grads[1])


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("lengths", [[2, 0, 1], [0, 3, 0], [1, 1, 1]])
@pytest.mark.parametrize("initial", [None, 0.0, 2.5])
def test_segment_double_backward_at_empty_segments(reduce, lengths, initial):
    """The second derivative of a sum / mean is the transpose of its (linear) gradient: an empty
    segment contributes 0, whatever `initial` is (it was the forward's NaN for a mean without
    initial)."""
    d = torch.randn(3, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor(lengths)
    y = mt.segment_reduce(d, reduce, lengths=lengths, initial=initial)
    g = torch.ones_like(y, requires_grad=True)
    gd, = torch.autograd.grad(y, d, g, create_graph=True)
    v = torch.arange(1., 4., dtype=torch.float64)
    got, = torch.autograd.grad(gd, g, v)
    # d gd[row] / d g[seg] = 1 (sum) or 1 / count (mean) for the rows of seg: by hand.
    want = torch.zeros(len(lengths), dtype=torch.float64)
    start = 0
    for k, n in enumerate(lengths.tolist()):
        if n:
            want[k] = v[start:start + n].sum() / (n if reduce == "mean" else 1)
        start += n
    assert torch.equal(got, want), (got, want)
    assert torch.autograd.gradgradcheck(
        lambda d: mt.segment_reduce(d, reduce, lengths=lengths, initial=initial), (d,))


def test_empty_tensors_are_data_not_shapes():
    """An empty tensor (null data_ptr in PyTorch) gives the numpy path's result, or PyTorch's
    own error, not "indices data is null" or "it needs the values of index"."""
    import numpy as np
    import multigather
    import multigather.torch_scatter as ts

    got = mt.segment_reduce(torch.zeros(3, 2), "sum", lengths=torch.zeros(0, dtype=torch.long), unsafe=True)
    want = multigather.run("torch.segment_reduce", np.zeros((3, 2), np.float32), np.zeros(0, np.int64),
                           reduce="sum", unsafe=True)
    assert tuple(got.shape) == want.shape == (0, 2)
    with pytest.raises(ValueError, match="sums to 0"):
        mt.segment_reduce(torch.zeros(3, 2), "sum", lengths=torch.zeros(0, dtype=torch.long))
    got = ops.segment_reduce(torch.zeros(3, 4), "sum", torch.zeros(3, 0, dtype=torch.long), axis=1, unsafe=True)
    assert tuple(got.shape) == (3, 0)
    for call in (lambda: ts.scatter(torch.zeros(0, 4), torch.zeros(0, dtype=torch.long), 0),
                 lambda: ts.segment_coo(torch.zeros(0, 4), torch.zeros(0, dtype=torch.long))):
        out = call()
        assert tuple(out.shape) == (0, 4)
    # an empty gather / scatter through the C++ ops equals PyTorch's
    x = torch.arange(6.).reshape(2, 3)
    e = torch.zeros(0, 3, dtype=torch.long)
    assert torch.equal(ops.gather(x, 0, e), torch.gather(x, 0, e))
    assert torch.equal(ops.scatter_add(x, 0, e, torch.zeros(0, 3)), torch.scatter_add(x, 0, e, torch.zeros(0, 3)))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.float32, torch.bool])
def test_embedding_ids_dtype_as_f_embedding(dtype):
    """F.embedding takes int32 / int64 ids only (RuntimeError, its words); so do mt.embedding,
    its C++ op and the routed call (they took int8 ... uint64 before)."""
    w = torch.randn(3, 2)
    ids = torch.tensor([0, 1]).to(dtype)
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.embedding(ids, w)
    words = "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"
    assert words in str(want.value)
    for call in (lambda: mt.embedding(ids, w), lambda: ops.embedding(ids, w),
                 lambda: mt.embedding(ids, w.clone().requires_grad_())):
        with pytest.raises(RuntimeError, match=words.replace("(", r"\(").replace(")", r"\)")):
            call()
    with mt.routing(), pytest.raises(RuntimeError, match="Long, Int"):
        torch.nn.functional.embedding(ids, w)


@pytest.mark.parametrize("dtype", [torch.int16, torch.int8, torch.uint8])
def test_embedding_bag_takes_the_small_id_dtypes_pytorch_takes(dtype):
    """PyTorch 2.15's CPU F.embedding_bag takes int16, int8 and uint8 ids: the same values and
    weight gradient through the door, the C++ op and routing."""
    F = torch.nn.functional
    w = torch.randn(7, 3)
    ids = torch.tensor([0, 6, 2, 2, 5]).to(dtype)
    offsets = torch.tensor([0, 2])
    for mode in ("sum", "mean", "max"):
        want = F.embedding_bag(ids, w, offsets, mode=mode)
        assert torch.equal(mt.embedding_bag(ids, w, offsets, mode=mode), want)
        wg, wo = w.clone().requires_grad_(), w.clone().requires_grad_()
        F.embedding_bag(ids, wg, offsets, mode=mode).sum().backward()
        with mt.routing():
            got = F.embedding_bag(ids, wo, offsets, mode=mode)
        assert torch.equal(got, want)
        got.sum().backward()
        assert torch.equal(wo.grad, wg.grad)


def test_clear_messages_for_bad_gradients_and_batch_rank():
    """embedding_bag_backward with a wrong-shaped gradient names the shapes (it said "no gradient
    for data dtype float32"); a negative batch_rank names the rule (it said "cannot create
    std::vector larger than max_size()")."""
    import multigather.torch_ops as to

    with pytest.raises(ValueError, match=r"grad_output shape \[5,3\] must be the output shape \[1,3\]"):
        to.embedding_bag_backward(torch.ones(5, 3), torch.tensor([0, 1]), torch.randn(4, 3), torch.tensor([0]),
                                  "sum", None, False, None)
    with pytest.raises(ValueError, match="batch_rank = -1 must be non-negative"):
        ops.gather(torch.ones(3), 0, torch.tensor([0]), batch_rank=-1)
