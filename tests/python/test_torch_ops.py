"""The PyTorch ops (multigather.torch_ops, torch.ops.multigather.*): torch.library.opcheck on
every op (schema, fake tensors, autograd registration, AOT dispatch), gradcheck in float64 of
gather_multiaxis and scatter_multiaxis (index modes, broadcasting, strided inputs), gradients equal
to PyTorch's own (torch.gather, index_select, take, take_along_dim, F.embedding, scatter_add,
index_add, scatter / index_put with unique indices), every requires_grad input gets a grad_fn,
torch.compile(fullgraph=True) and torch.export of a small model (embedding lookup + GatherND
point sampler). CUDA cases skip without a GPU. Skipped when torch is missing."""

from __future__ import annotations

import numpy as np
import pytest

import multigather
from conftest import require

torch = require("torch")
import multigather.torch_ops  # noqa: E402,F401  (registers torch.ops.multigather.*)
import multigather.torch as mt  # noqa: E402

ops = torch.ops.multigather
F = torch.nn.functional


def rand(*shape, dtype=torch.float64, requires_grad=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    if len(shape) == 1 and isinstance(shape[0], tuple):
        shape = shape[0]
    return torch.randn(list(shape), generator=g, dtype=dtype).requires_grad_(requires_grad)


def ints(low, high, shape, seed=1, dtype=torch.int64):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g, dtype=dtype)


def strided(t):
    """t's values as a non-contiguous (column-major) view."""
    return t.detach().transpose(0, 1).contiguous().transpose(0, 1).requires_grad_(t.requires_grad)


# ---- opcheck -----------------------------------------------------------------------------------

OPCHECK_SAMPLES = [
    ("gather_multiaxis", lambda: (rand(4, 5, 3, requires_grad=True),
                                  ints(-4, 4, (2, 5, 1)), [0]), {}),
    ("gather_multiaxis", lambda: (rand(4, 5, 3, requires_grad=True),
                                  ints(-1, 6, (4, 2, 2)), [1, 0]),
     {"index_mode": "clamp"}),
    ("gather_multiaxis", lambda: (rand(4, 1, 3, requires_grad=True),
                                  ints(-9, 9, (4, 6, 1)), [2]),
     {"index_mode": "wrap"}),
    ("gather_multiaxis", lambda: (rand(4, 5, 3, requires_grad=True),
                                  ints(-2, 7, (1, 7, 1)), [1]),
     {"index_mode": "fill", "fill_value": 1.5}),
    ("scatter_multiaxis", lambda: (rand(5, 3, requires_grad=True), ints(0, 5, (4, 1)),
                                   rand(4, 3, requires_grad=True, seed=2), [0]),
     {"reduction": "add"}),
    ("scatter_multiaxis", lambda: (rand(5, 3, requires_grad=True), ints(0, 5, (6, 1)),
                                   rand(6, 1, requires_grad=True, seed=2), [0]),
     {"reduction": "none"}),
    ("scatter_multiaxis", lambda: (rand(5, 3, requires_grad=True), ints(-2, 7, (6, 1)),
                                   rand(6, 3, requires_grad=True, seed=2), [0]),
     {"reduction": "add", "index_mode": "drop", "include_input": False}),
    ("scatter_multiaxis", lambda: (rand(5, 3), ints(0, 5, (4, 1)), rand(4, 3, seed=2), [0]),
     {"reduction": "max"}),
    ("gather", lambda: (rand(4, 5, requires_grad=True), 1, ints(0, 5, (3, 2))), {}),
    ("take", lambda: (rand(4, 5, requires_grad=True), ints(-20, 20, (3, 2))), {}),
    ("take_along_dim", lambda: (rand(4, 5, requires_grad=True), ints(-5, 9, (1, 7)), 1), {}),
    ("take_along_dim", lambda: (rand(4, 5, requires_grad=True), ints(0, 20, (6,)), None), {}),
    ("index_select", lambda: (rand(4, 5, requires_grad=True), 0, ints(0, 4, (7,))), {}),
    ("embedding", lambda: (ints(0, 10, (3, 4)), rand(10, 6, requires_grad=True), None), {}),
    ("embedding", lambda: (ints(0, 10, (3, 4)), rand(10, 6, requires_grad=True), 2), {}),
]


@pytest.mark.parametrize("name,make,kwargs", OPCHECK_SAMPLES,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(OPCHECK_SAMPLES)])
def test_opcheck(name, make, kwargs):
    torch.library.opcheck(getattr(ops, name), make(), kwargs)


# ---- gradcheck (float64) -----------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["error", "clamp", "wrap", "fill"])
@pytest.mark.parametrize("view", [False, True])
def test_gradcheck_gather_multiaxis(mode, view):
    x = rand(4, 1, 5, requires_grad=True)  # dimension 1 broadcasts against the indices
    x = strided(x) if view else x
    low, high = (0, 4) if mode == "error" else (-6, 9)
    idx = ints(low, high, (2, 3, 2))  # logical [2, 3, 1]: (axis 2, axis 0) coordinate pairs
    fn = lambda x: ops.gather_multiaxis(x, idx, [2, 0], mode, True, 0.0)  # noqa: E731
    assert fn(x).shape == (2, 3, 1)
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", ["none", "add"])
@pytest.mark.parametrize("mode", ["error", "clamp", "wrap", "drop"])
@pytest.mark.parametrize("include_input", [True, False])
def test_gradcheck_scatter_multiaxis(reduction, mode, include_input):
    x = strided(rand(6, 4, requires_grad=True))
    low, high = (0, 6) if mode == "error" else (-8, 9)
    idx = ints(low, high, (5, 1))  # duplicates likely: 5 updates into 6 rows
    for updates in (rand(5, 4, requires_grad=True, seed=3), rand(5, 1, requires_grad=True, seed=4)):
        fn = lambda x, u: ops.scatter_multiaxis(x, idx, u, [0], reduction, mode, True,  # noqa
                                                include_input)
        assert torch.autograd.gradcheck(fn, (x, updates))


def test_scatter_none_duplicates_only_the_winner_gets_gradient():
    x = torch.zeros(3, requires_grad=True, dtype=torch.float64)
    u = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([1, 1, 0])
    y = ops.scatter_multiaxis(x, idx, u, [0], "none")
    assert y.tolist() == [3.0, 2.0, 0.0]  # the last update to element 1 wins
    y.backward(torch.tensor([10.0, 20.0, 30.0], dtype=torch.float64))
    assert u.grad.tolist() == [0.0, 20.0, 10.0]
    assert x.grad.tolist() == [0.0, 0.0, 30.0]


@pytest.mark.parametrize("reduction", ["mul", "min", "max"])
def test_scatter_other_reductions_raise_in_backward(reduction):
    x = rand(4, requires_grad=True)
    y = ops.scatter_multiaxis(x, torch.tensor([1, 2]), rand(2, seed=5), [0], reduction)
    assert y.grad_fn is not None
    with pytest.raises(NotImplementedError, match=f"reduction {reduction} is not implemented"):
        y.sum().backward()


# ---- gradients equal PyTorch's -----------------------------------------------------------------

def same_grad(ours, theirs, inputs, seed=7):
    """Values and gradients (w.r.t. every tensor in inputs) of ours() and theirs() agree."""
    y1, y2 = ours(), theirs()
    assert y1.shape == y2.shape and y1.dtype == y2.dtype
    torch.testing.assert_close(y1, y2, rtol=0, atol=0)
    assert y1.grad_fn is not None
    g = rand(*y2.shape, seed=seed, dtype=y2.dtype)
    g1 = torch.autograd.grad(y1, inputs, g)
    g2 = torch.autograd.grad(y2, inputs, g)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("view", [False, True])
def test_grads_equal_torch_gather(view):
    x = rand(5, 6, requires_grad=True)
    x = strided(x) if view else x
    for dim, index in [(1, ints(0, 6, (5, 4))), (0, ints(0, 5, (3, 2))), (-1, ints(0, 6, (2, 9))),
                       (0, ints(0, 5, (0, 6)))]:
        same_grad(lambda: mt.gather(x, dim, index), lambda: torch.gather(x, dim, index), [x])
    s = rand((), requires_grad=True)
    same_grad(lambda: mt.gather(s, 0, torch.tensor(0)), lambda: torch.gather(s, 0, torch.tensor(0)),
              [s])


def test_grads_equal_torch_index_select_take_take_along_dim():
    x = rand(5, 6, 2, requires_grad=True)
    for dim in (0, 1, -1):
        index = ints(0, x.shape[dim], (9,))
        same_grad(lambda: mt.index_select(x, dim, index),
                  lambda: torch.index_select(x, dim, index), [x])
    index = torch.tensor(3)
    same_grad(lambda: mt.index_select(x, 1, index), lambda: torch.index_select(x, 1, index), [x])
    flat = ints(-60, 60, (4, 7))
    same_grad(lambda: mt.take(x, flat), lambda: torch.take(x, flat), [x])
    y = rand(4, 1, 6, requires_grad=True)  # dimension 1 broadcasts against the indices
    along = ints(-6, 12, (1, 5, 3))
    same_grad(lambda: mt.take_along_dim(y, along, 2), lambda: torch.take_along_dim(y, along, 2),
              [y])
    along = ints(0, 24, (10,))
    same_grad(lambda: mt.take_along_dim(y, along), lambda: torch.take_along_dim(y, along), [y])


@pytest.mark.parametrize("padding_idx", [None, 3, -2])
def test_grads_equal_f_embedding(padding_idx):
    w = rand(10, 4, requires_grad=True)
    idx = ints(0, 10, (3, 5))
    idx[0, 0] = 3
    idx[1, 1] = 8
    same_grad(lambda: mt.embedding(idx, w, padding_idx), lambda: F.embedding(idx, w, padding_idx),
              [w])
    i32 = idx.to(torch.int32)
    same_grad(lambda: mt.embedding(i32, w), lambda: F.embedding(i32, w), [w])


def test_grads_equal_scatter_add_index_add_scatter_index_put():
    x = rand(6, 4, requires_grad=True)
    u = rand(5, 4, requires_grad=True, seed=3)
    index = ints(0, 6, (5,))  # duplicates
    # index_add(0): indices as a [5, 1] column broadcast over the 4 columns.
    same_grad(lambda: multigather.scatter_multiaxis(x, index[:, None], u, [0], reduction="add"),
              lambda: x.index_add(0, index, u), [x, u])
    # scatter_add(1, index2): coordinates along axis 1 for every (row, j).
    index2 = ints(0, 4, (6, 3))
    u2 = rand(6, 3, requires_grad=True, seed=4)
    same_grad(lambda: multigather.scatter_multiaxis(x, index2, u2, [1], reduction="add"),
              lambda: x.scatter_add(1, index2, u2), [x, u2])
    # assignment with unique indices: torch.scatter and index_put agree with the exact gradient.
    unique = torch.randperm(6, generator=torch.Generator().manual_seed(0))[:5]
    same_grad(lambda: multigather.scatter_multiaxis(x, unique[:, None], u, [0]),
              lambda: x.index_put((unique,), u), [x, u])
    perm = torch.stack([torch.randperm(4, generator=torch.Generator().manual_seed(r))[:3]
                        for r in range(6)])
    same_grad(lambda: multigather.scatter_multiaxis(x, perm, u2, [1]),
              lambda: x.scatter(1, perm, u2), [x, u2])


def test_gradients_in_any_layout_equal_torchs():
    """The backward ops take the output's gradient in the layout autograd hands them (the
    engine copies it C-contiguous, no torch call in between): the expanded scalar of a sum's
    gradient, a column-major gradient, a slice of a larger one; torch's own gradients for each,
    exactly, and under vmap (whose batched backward makes the gradient contiguous first)."""
    x = rand(6, 5, requires_grad=True)
    u = rand(6, 3, requires_grad=True, seed=3)
    r = rand(4, 5, requires_grad=True, seed=4)
    index = ints(0, 5, (6, 3))
    rows = ints(0, 6, (4,))
    cases = [
        (lambda f: f.gather(x, 1, index), [x]),
        (lambda f: f.index_select(x, 0, rows), [x]),
        (lambda f: f.take(x, index), [x]),
        (lambda f: (F if f is torch else f).embedding(index, x), [x]),
        (lambda f: f.scatter_add(x, 1, index, u), [x, u]),
        (lambda f: f.index_add(x, 0, rows, r), [x, r]),
        (lambda f: f.scatter_reduce(x, 1, index, u, "sum"), [x, u]),
    ]
    for call, inputs in cases:
        ours, theirs = call(mt), call(torch)
        shape = theirs.shape
        wide = rand(*shape[:-1], 2 * shape[-1], seed=9)
        for g in (torch.tensor(2.0, dtype=torch.float64).expand(shape),
                  rand(*reversed(shape), seed=8).permute(*reversed(range(len(shape)))),
                  wide[..., ::2]):
            assert not g.is_contiguous()
            for a, b in zip(torch.autograd.grad(ours, inputs, g, retain_graph=True),
                            torch.autograd.grad(theirs, inputs, g, retain_graph=True)):
                torch.testing.assert_close(a, b, rtol=0, atol=0)
        for a, b in zip(torch.autograd.grad(ours.sum(), inputs), torch.autograd.grad(theirs.sum(), inputs)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    # vmap over a batch of sum-of-gather losses: the per-example gradients.
    xs = rand(3, 6, 5, seed=5)
    per_example = torch.func.vmap(torch.func.grad(lambda t: mt.gather(t, 1, index).sum()))(xs)
    want = torch.func.vmap(torch.func.grad(lambda t: torch.gather(t, 1, index).sum()))(xs)
    torch.testing.assert_close(per_example, want, rtol=0, atol=0)


def test_backward_calls_that_differ_only_in_attributes_or_gradients_asked_get_their_own():
    """The backward op keeps its VJP's lowering per thread (a call-site cache keyed by the
    call's sizes, attributes, layouts and the gradients asked for): calls alternating between
    attributes or the gradients asked for, on operands of the same layouts, each get torch's
    gradients (a cache keyed by layouts alone would hand dim=1 the lowering of dim=0)."""
    x = rand(6, 6, requires_grad=True)
    u = rand(6, 6, requires_grad=True, seed=3)
    index = ints(0, 6, (6, 6))  # duplicates along both dimensions
    for _ in range(2):
        for dim in (0, 1, -1):
            same_grad(lambda: torch.ops.multigather.gather(x, dim, index), lambda: x.gather(dim, index), [x])
            same_grad(lambda: torch.ops.multigather.scatter_add(x, dim, index, u),
                      lambda: x.scatter_add(dim, index, u), [x, u])
        # input_grad / updates_grad in turn; scatter_add passes its input's gradient on (the
        # backward op then runs for src's alone, input_grad=False).
        for name in ("scatter", "scatter_add"):
            for wanted in ([x], [u], [x, u]):
                ours = torch.autograd.grad(getattr(torch.ops.multigather, name)(x, 1, index, u).square().sum(), wanted)
                theirs = torch.autograd.grad(getattr(x, name)(1, index, u).square().sum(), wanted)
                for a, b in zip(ours, theirs):
                    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_gather_multiaxis_grads_equal_advanced_indexing():
    x = rand(4, 5, 3, requires_grad=True)
    rows, cols = ints(0, 4, (7,)), ints(-5, 5, (7,))
    idx = torch.stack([rows, cols], -1)[:, None, :]  # [7, 1, 2] -> rank 3 with [1] pad
    idx = idx[:, :, None, :].reshape(7, 1, 2)[None]  # [1, 7, 1, 2]
    x4 = x[None]  # [1, 4, 5, 3]: GatherND over axes 1, 2
    same_grad(lambda: multigather.gather_multiaxis(x4, idx, [1, 2]).reshape(7, 3),
              lambda: x[rows, cols], [x])


# ---- no silent loss of autograd ------------------------------------------------------------------

def test_requires_grad_inputs_always_get_a_grad_fn():
    x = rand(4, 5, requires_grad=True)
    i = ints(0, 4, (4, 5))
    results = [
        mt.gather(x, 0, i), mt.take(x, i), mt.take_along_dim(x, i, 0), mt.index_select(x, 0, i[0]),
        mt.embedding(i, x), multigather.gather_multiaxis(x, i, [0]),
        multigather.scatter_multiaxis(x, i, rand(4, 5, seed=2), [0], reduction="add"),
        multigather.scatter_multiaxis(rand(4, 5), i, rand(4, 5, requires_grad=True), [0]),
        multigather.scatter_multiaxis(x, i, rand(4, 5, seed=2), [0], reduction="max"),
        mt.gather(x.to(torch.float32), 0, i),
    ]
    for r in results:
        assert r.requires_grad and r.grad_fn is not None
    # Paths that cannot carry a grad_fn refuse (never a silently detached result).
    with pytest.raises(RuntimeError, match="requires grad"):
        multigather.run("torch.gather", x, i, dim=0)
    with pytest.raises(RuntimeError, match="requires grad"):
        multigather.numpy.take(x, i[0], axis=0)
    with pytest.raises(RuntimeError, match="requires grad"):
        multigather.gather_multiaxis(x, i, [0], out=torch.empty(4, 5, dtype=torch.float64))
    # Without grad mode, or detached, the same calls run.
    with torch.no_grad():
        assert multigather.run("torch.gather", x, i, dim=0).grad_fn is None
        assert mt.gather(x, 0, i).grad_fn is None
    assert torch.equal(multigather.run("torch.gather", x.detach(), i, dim=0),
                       torch.gather(x.detach(), 0, i))


def test_errors_pass_through_the_ops():
    x = rand(4, 5)
    with pytest.raises(IndexError):
        mt.gather(x, 1, torch.tensor([[5]]))
    with pytest.raises(IndexError):
        mt.embedding(torch.tensor([10]), rand(10, 3))
    with pytest.raises(ValueError, match="weight must be 2-D"):
        mt.embedding(torch.tensor([1]), rand(10))
    with pytest.raises(ValueError, match="padding_idx"):
        mt.embedding(torch.tensor([1]), rand(10, 3), padding_idx=10)
    with pytest.raises(ValueError):
        ops.gather_multiaxis(x, torch.tensor([[0]]), [0, 1, 2])


def test_meta_tensors_get_shapes_from_the_core_inference():
    x = torch.empty(5, 1, 3, device="meta")
    idx = torch.empty(5, 4, 2, dtype=torch.int64, device="meta")
    y = ops.gather_multiaxis(x, idx, [0, 1])
    assert y.device.type == "meta" and tuple(y.shape) == (5, 4, 3)
    s = ops.scatter_multiaxis(x, idx, torch.empty(5, 4, 3, device="meta"), [0, 1], "add")
    assert s.device.type == "meta" and tuple(s.shape) == (5, 1, 3)
    e = ops.embedding(torch.empty(2, 7, dtype=torch.int64, device="meta"),
                      torch.empty(10, 4, device="meta"))
    assert tuple(e.shape) == (2, 7, 4)
    with pytest.raises(ValueError, match="updates shape"):
        ops.scatter_multiaxis(x, idx, torch.empty(5, 2, 3, device="meta"), [0, 1], "add")


def test_plain_eager_tensors_and_no_grad_give_the_same_values():
    x = rand(6, 5, requires_grad=True)
    i = ints(0, 5, (6, 3))
    with torch.no_grad():
        a = mt.gather(x, 1, i)
    b = mt.gather(x.detach(), 1, i)
    c = mt.gather(x, 1, i)
    assert a.grad_fn is None and b.grad_fn is None and c.grad_fn is not None
    assert torch.equal(a, torch.gather(x.detach(), 1, i)) and torch.equal(a, b)
    assert torch.equal(a, c.detach())


def test_torch_compile_dynamic_shapes():
    torch._dynamo.reset()
    fn = torch.compile(lambda a, b: mt.take_along_dim(a, b, 1), fullgraph=True, dynamic=True,
                       backend="aot_eager")
    for n in (3, 5, 8):
        a, b = rand(n, 4), ints(-4, 8, (n, 6), seed=n)
        assert torch.equal(fn(a, b), torch.take_along_dim(a, b, 1))


def test_numpy_inputs_keep_numpy_behaviour():
    x = np.arange(12.0).reshape(3, 4)
    got = mt.gather(x, 1, np.array([[0], [3], [1]]))
    assert isinstance(got, np.ndarray) and got.ravel().tolist() == [0.0, 7.0, 9.0]
    emb = mt.embedding(np.array([[2, 0]]), x)
    assert isinstance(emb, np.ndarray) and emb.shape == (1, 2, 4)
    assert emb.tolist() == [[x[2].tolist(), x[0].tolist()]]


# ---- torch.compile and torch.export ------------------------------------------------------------

class PointModel(torch.nn.Module):
    """An embedding lookup plus a GatherND-style point sampler: features [B, H, W, C] read at
    integer points [B, P, 2] (row, column), conditioned on token embeddings."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(rand(20, 8, dtype=torch.float32))
        self.proj = torch.nn.Linear(8, 8, dtype=torch.float32)

    def forward(self, tokens, features, points):
        e = mt.embedding(tokens, self.table).mean(1)                       # [B, 8]
        p = multigather.gather_multiaxis(features, points[:, :, None, :], [1, 2])  # [B, P, 1, C]
        return (p[:, :, 0, :] * self.proj(e)[:, None, :]).sum(-1)          # [B, P]


def model_inputs():
    tokens = ints(0, 20, (2, 5))
    features = rand(2, 6, 7, 8, dtype=torch.float32, seed=9, requires_grad=True)
    points = torch.stack([ints(0, 6, (2, 4), seed=3), ints(0, 7, (2, 4), seed=4)], -1)
    return tokens, features, points


def reference(model, tokens, features, points):
    e = F.embedding(tokens, model.table).mean(1)
    b = torch.arange(2)[:, None]
    p = features[b, points[..., 0], points[..., 1]]
    return (p * model.proj(e)[:, None, :]).sum(-1)


def test_model_eager_matches_torch_with_gradients():
    model = PointModel()
    tokens, features, points = model_inputs()
    out = model(tokens, features, points)
    want = reference(model, tokens, features, points)
    torch.testing.assert_close(out, want)
    got = torch.autograd.grad(out.sum(), [model.table, features])
    ref = torch.autograd.grad(want.sum(), [model.table, features])
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b)


def test_torch_compile_fullgraph_equals_eager():
    torch._dynamo.reset()
    model = PointModel()
    tokens, features, points = model_inputs()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    out_c = compiled(tokens, features, points)
    out_e = model(tokens, features, points)
    torch.testing.assert_close(out_c, out_e, rtol=0, atol=0)
    gc = torch.autograd.grad(out_c.sum(), [model.table, features])
    ge = torch.autograd.grad(out_e.sum(), [model.table, features])
    for a, b in zip(gc, ge):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    fn = torch.compile(lambda a, b: mt.gather(a, 1, b), fullgraph=True)
    a, b = rand(3, 4, dtype=torch.float32), ints(0, 4, (3, 2))
    assert torch.equal(fn(a, b), torch.gather(a, 1, b))


def test_torch_compile_inductor():
    torch._dynamo.reset()
    model = PointModel()
    tokens, features, points = model_inputs()
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(compiled(tokens, features, points), model(tokens, features, points))


def test_torch_export_has_multigather_nodes():
    model = PointModel()
    tokens, features, points = model_inputs()
    features = features.detach()
    program = torch.export.export(model, (tokens, features, points))
    targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert "multigather.embedding.default" in targets
    assert "multigather.gather_multiaxis.default" in targets
    torch.testing.assert_close(program.module()(tokens, features, points),
                               model(tokens, features, points), rtol=0, atol=0)


def test_torch_export_dynamic_batch():
    model = PointModel()
    tokens, features, points = model_inputs()
    batch = torch.export.Dim("batch", min=2, max=64)
    program = torch.export.export(model, (tokens, features.detach(), points),
                                  dynamic_shapes=({0: batch}, {0: batch}, {0: batch}))
    for b in (3, 5):
        t = ints(0, 20, (b, 5), seed=b)
        f = rand(b, 6, 7, 8, dtype=torch.float32, seed=b)
        p = torch.stack([ints(0, 6, (b, 4), seed=b + 1), ints(0, 7, (b, 4), seed=b + 2)], -1)
        torch.testing.assert_close(program.module()(t, f, p), model(t, f, p), rtol=0, atol=0)


def test_fake_shapes_stay_symbolic():
    torch._dynamo.reset()
    cases = [  # (fn, input shape, indices shape for growth g)
        (lambda a, b: multigather.gather_multiaxis(a, b, [0]), (4, 3), lambda g: (5 + g, 1)),
        (lambda a, b: mt.gather(a, 1, b), (6, 3), lambda g: (6, 2 + g)),
        (lambda a, b: mt.take(a, b), (4, 3), lambda g: (7 + g,)),
        (lambda a, b: mt.take_along_dim(a, b, 0), (4, 3), lambda g: (9 + g, 3)),
        (lambda a, b: mt.take_along_dim(a, b), (4, 3), lambda g: (5 + g,)),
        (lambda a, b: mt.index_select(a, 0, b), (4, 3), lambda g: (8 + g,)),
        (lambda a, b: mt.embedding(b, a), (4, 3), lambda g: (2 + g, 5 + g)),
    ]
    counters = torch._dynamo.utils.counters
    counters.clear()
    for fn, xs, ishape in cases:
        compiled = torch.compile(fn, fullgraph=True, dynamic=True, backend="aot_eager")
        for grow in (0, 2, 5):  # the indices' sizes change: same values as eager
            a, b = rand(*xs), ints(0, 3, ishape(grow), seed=grow)
            assert torch.equal(compiled(a, b), fn(a, b))
    assert counters["stats"]["unique_graphs"] == len(cases)  # one graph each: no recompiles


# ---- CUDA ----------------------------------------------------------------------------------------

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@cuda
def test_cuda_gather_and_scatter():
    if not multigather._multigather.has_cuda:
        pytest.skip("multigather built without the CUDA engine")
    x = rand(5, 6, device="cuda") if False else rand(5, 6).cuda()
    i = ints(0, 6, (5, 3)).cuda()
    assert torch.equal(mt.gather(x, 1, i), torch.gather(x, 1, i))
    u = rand(5, 3).cuda()
    want = torch.scatter_add(x, 1, i, u)
    got = ops.scatter_multiaxis(x, i, u, [1], "add")
    assert got.device == x.device
    torch.testing.assert_close(got, want)
    # deterministic: the same bytes as the CPU engine
    assert torch.equal(got.cpu(), ops.scatter_multiaxis(x.cpu(), i.cpu(), u.cpu(), [1], "add"))


def test_out_that_requires_grad_raises_as_torch_does():
    """out= writes outside autograd: an out tensor that requires grad is refused (torch's own
    out= overloads raise too), never silently overwritten without a gradient."""
    x = torch.randn(4, 3)
    i = torch.tensor([[0], [2]])
    out = torch.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out="):
        torch.gather(x, 0, i.expand(2, 3), out=out)
    with pytest.raises(RuntimeError, match="out requires grad: functions with out= arguments"):
        multigather.gather_multiaxis(x, i, [0], out=out)
    target = torch.zeros(4, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="out requires grad"):
        multigather.scatter_multiaxis(x, i, torch.ones(2, 3), [0], out=target)
    assert torch.equal(out, torch.zeros(2, 3)) and torch.equal(target, torch.zeros(4, 3))
    with torch.no_grad():  # outside grad mode it is an ordinary write, as in torch
        multigather.gather_multiaxis(x, i, [0], out=out)
    assert torch.equal(out, x[[0, 2]])
