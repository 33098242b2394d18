"""multigather.torch against PyTorch (CPU) on random cases: torch.gather (index smaller than
input: leading part), torch.take, torch.take_along_dim (broadcasting, dim=None) and
torch.index_select. Tensors go in as torch.Tensor (also non-contiguous views) and must come back
as torch.Tensor. Negative and out-of-range indices must fail in both where PyTorch rejects them
(PyTorch: RuntimeError/IndexError; multigather: IndexError). Skipped when torch is missing
(optional: its PyPI wheel pulls several GB of CUDA libraries)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import multigather
from conftest import require
from framework_cases import framework_settings, random_data, random_indices, seeds

torch = require("torch")

TORCH_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.uint8,
                                      np.int32, np.int64, np.bool_, np.complex64)]


def tensor(array: np.ndarray, view: bool):
    """A torch tensor with ``array``'s values, as a non-contiguous view when ``view``."""
    t = torch.from_numpy(np.ascontiguousarray(array))
    if view and t.ndim >= 2:
        return t.transpose(0, 1).contiguous().transpose(0, 1)  # column-major strides
    if view and t.ndim == 1 and t.numel():
        return torch.stack([t, t], dim=1)[:, 0]  # stride 2
    return t


def compare(torch_fn, mg_fn, *args):
    try:
        expected = torch_fn(*args)
    except (RuntimeError, IndexError) as error:
        index_error = "out of" in str(error) or "index" in str(error).lower()
        event("both raise IndexError" if index_error else "both raise ValueError")
        with pytest.raises(IndexError if index_error else ValueError):
            mg_fn(*args)
        return
    event("both compute")
    got = mg_fn(*args)
    assert isinstance(got, torch.Tensor)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.numpy().tobytes() == expected.contiguous().numpy().tobytes()


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@framework_settings
@given(shapes, st.data(), st.sampled_from(TORCH_DTYPES), st.booleans(), st.booleans(), seeds)
def test_gather_matches_torch(x_shape, data, dtype, oob, view, seed):
    rng = np.random.default_rng(seed)
    x = tensor(random_data(rng, x_shape, dtype), view)
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    i_shape = tuple(data.draw(st.integers(0, 4)) if d == dim % x.ndim
                    else data.draw(st.integers(1, n)) for d, n in enumerate(x_shape))
    index = tensor(random_indices(rng, i_shape, x_shape[dim], negative=oob, out_of_range=oob),
                   view)
    compare(torch.gather, multigather.torch.gather, x, dim, index)


@framework_settings
@given(shapes, st.lists(st.integers(0, 3), max_size=3).map(tuple), st.sampled_from(TORCH_DTYPES),
       st.booleans(), st.booleans(), seeds)
def test_take_matches_torch(x_shape, i_shape, dtype, oob, view, seed):
    rng = np.random.default_rng(seed)
    x = tensor(random_data(rng, x_shape, dtype), view)
    index = tensor(random_indices(rng, i_shape, x.numel(), out_of_range=oob), False)
    compare(torch.take, multigather.torch.take, x, index)


@framework_settings
@given(shapes, st.integers(0, 4), st.data(), st.sampled_from(TORCH_DTYPES), st.booleans(),
       st.booleans(), seeds)
def test_take_along_dim_matches_torch(x_shape, j, data, dtype, oob, view, seed):
    rng = np.random.default_rng(seed)
    x = tensor(random_data(rng, x_shape, dtype), view)
    dim = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    if dim is None:
        i_shape = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple))
        size = x.numel()
    else:
        i_shape = tuple(j if d == dim % x.ndim else data.draw(st.sampled_from([n, 1]))
                        for d, n in enumerate(x_shape))
        size = x_shape[dim]
    # dim=None: torch calls .view(-1), which fails on non-contiguous tensors (multigather reads
    # them fine), so that case gets contiguous ones.
    x = x if dim is not None else x.contiguous()
    # With a dim, PyTorch 2.15 takes indices modulo the dim size (so does the adapter); with
    # dim=None both raise on negative and out-of-range values.
    wild = oob
    index = tensor(random_indices(rng, i_shape, size, negative=wild, out_of_range=wild),
                   view and dim is not None)
    compare(lambda a, i: torch.take_along_dim(a, i, dim=dim),
            lambda a, i: multigather.torch.take_along_dim(a, i, dim=dim), x, index)


@framework_settings
@given(shapes, st.data(), st.sampled_from(TORCH_DTYPES), st.sampled_from([np.int32, np.int64]),
       st.booleans(), seeds)
def test_index_select_matches_torch(x_shape, data, dtype, index_dtype, oob, seed):
    rng = np.random.default_rng(seed)
    x = tensor(random_data(rng, x_shape, dtype), True)
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n_shape = data.draw(st.sampled_from([(), (0,), (1,), (3,), (5,)]))
    index = tensor(random_indices(rng, n_shape, x_shape[dim], index_dtype, negative=oob,
                                  out_of_range=oob), False)
    compare(torch.index_select, multigather.torch.index_select, x, dim, index)


def test_take_along_dim_wraps_like_torch_2_15():
    """PyTorch 2.15's take_along_dim with a dim computes indices % input.size(dim) (torch/_refs
    take_along_dim and ATen): negatives and out-of-range values wrap; the adapter does too."""
    x = torch.arange(12.0).reshape(3, 4)
    indices = torch.tensor([[4], [-1], [9]])
    expected = torch.take_along_dim(x, indices, dim=1)  # [[0], [7], [9]]: modulo 4
    assert torch.equal(multigather.torch.take_along_dim(x, indices, dim=1), expected)


@pytest.mark.parametrize("dim", [1, 0, None])
def test_take_along_dim_out_form_writes_out_as_torch_does(dim):
    """torch.take_along_dim(input, indices, dim=None, *, out=None): the row's signature names
    out, and the wrapper made from the row (_registry.op_function) takes it: the values of
    torch's own out= call, written into out (returned, its version bumped), for torch tensors
    and numpy arrays alike; out that requires grad is refused in grad mode, as torch refuses it."""
    x = torch.arange(12.0).reshape(3, 4)
    indices = {1: torch.tensor([[3, 1], [0, 2], [1, 1]]), 0: torch.tensor([[2, 0, 1, 2], [0, 0, 0, 1]]),
               None: torch.tensor([11, 0, 5])}[dim]
    want = torch.empty(0)
    torch.take_along_dim(x, indices, dim=dim, out=want)
    out = torch.full_like(want, -1.0)
    version = out._version
    got = multigather.torch.take_along_dim(x, indices, dim, out=out)
    assert got is out and out._version > version
    assert torch.equal(out, want)
    out_np = np.full(tuple(want.shape), -1.0, np.float32)
    assert multigather.torch.take_along_dim(x.numpy(), indices.numpy(), dim=dim, out=out_np) is out_np
    np.testing.assert_array_equal(out_np, want.numpy())
    leaf = torch.zeros_like(want, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        multigather.torch.take_along_dim(x, indices, dim, out=leaf)
    with pytest.raises(RuntimeError):  # torch's own out= rule, the same call
        torch.take_along_dim(x, indices, dim=dim, out=torch.zeros_like(want, requires_grad=True))


def test_index_select_out_form_writes_out_as_torch_does():
    """torch.index_select(input, dim, index, *, out=None), its out= form made from the row: the
    values of torch's own out= call, written into out (returned, version bumped), torch and
    numpy; an index out of range raises IndexError and leaves out as it was."""
    x = torch.arange(12.0).reshape(3, 4)
    index = torch.tensor([3, 0, 3])
    want = torch.empty(0)
    torch.index_select(x, 1, index, out=want)
    out = torch.full_like(want, -1.0)
    version = out._version
    assert multigather.torch.index_select(x, 1, index, out=out) is out and out._version > version
    assert torch.equal(out, want)
    out_np = np.full(tuple(want.shape), -1.0, np.float32)
    assert multigather.torch.index_select(x.numpy(), 1, index.numpy(), out=out_np) is out_np
    np.testing.assert_array_equal(out_np, want.numpy())
    before = out.clone()
    with pytest.raises(IndexError):
        multigather.torch.index_select(x, 1, torch.tensor([0, 4, 1]), out=out)
    assert torch.equal(out, before)


def test_gather_reads_the_leading_part_where_take_along_dim_broadcasts():
    """docs/semantics.md 4.3: gather(x[3,4], 1, idx[1,2]) -> [1,2] reading row 0 only;
    take_along_dim(x[3,4], idx[1,2], 1) -> [3,2]."""
    x = torch.arange(12.0).reshape(3, 4)
    idx = torch.tensor([[3, 1]])
    assert torch.equal(multigather.torch.gather(x, 1, idx), torch.tensor([[3.0, 1.0]]))
    assert torch.equal(multigather.torch.take_along_dim(x, idx, 1),
                       torch.tensor([[3.0, 1.0], [7.0, 5.0], [11.0, 9.0]]))
