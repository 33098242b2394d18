"""torch.nn.functional.embedding_bag on multigather (registry row
"torch.nn.functional.embedding_bag", the fused gather + reduction per bag) against PyTorch
itself: values and gradients (weight and per_sample_weights) on hypothesis cases (1-D input with
offsets, include_last_offset, 2-D input, empty bags, padding_idx, every mode, int32 / int64 ids,
float dtypes), numpy arrays through the door, errors in PyTorch's words, bytes at 1, 2, 3 and 8
threads, torch.compile, and an unmodified torch.nn.EmbeddingBag model trained under
multigather.torch.routing()."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import multigather  # noqa: E402
import multigather.torch as mt  # noqa: E402

F = torch.nn.functional
OP = "torch.nn.functional.embedding_bag"


@st.composite
def bag_cases(draw):
    """Keyword arguments of one F.embedding_bag call (weight float64, requiring nothing yet)."""
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    v, d = draw(st.integers(1, 12)), draw(st.integers(1, 5))
    index_dtype = draw(st.sampled_from([torch.int64, torch.int32]))
    weight = torch.randn(v, d, generator=g, dtype=torch.float64)
    weight = torch.where(weight > 0.8, torch.full_like(weight, 0.8), weight)  # ties for max
    mode = draw(st.sampled_from(["sum", "mean", "max"]))
    args = dict(weight=weight, mode=mode)
    if draw(st.booleans()):  # 2-D input: fixed bags
        b, length = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        args["input"] = torch.randint(0, v, (b, length), generator=g, dtype=index_dtype)
        args["include_last_offset"] = draw(st.booleans())  # ignored for a 2-D input, as PyTorch does
    else:
        n = draw(st.integers(0, 12))
        bags = draw(st.integers(1, 5))
        cuts = sorted(torch.randint(0, n + 1, (bags - 1,), generator=g).tolist())
        last = draw(st.booleans())
        offsets = [0] + cuts + ([n] if last else [])
        args["input"] = torch.randint(0, v, (n,), generator=g, dtype=index_dtype)
        args["offsets"] = torch.tensor(offsets, dtype=index_dtype)
        args["include_last_offset"] = last
    if mode == "sum" and draw(st.booleans()):
        args["per_sample_weights"] = torch.randn(args["input"].shape, generator=g, dtype=torch.float64)
    if draw(st.booleans()):
        args["padding_idx"] = draw(st.integers(-v, v - 1))
    return args


def _call(f, args, grad_seed=0):
    """f's value and the gradients of weight and per_sample_weights for a random cotangent."""
    args = dict(args)
    leaves = [args["weight"].clone().requires_grad_(True)]
    args["weight"] = leaves[0]
    if args.get("per_sample_weights") is not None:
        leaves.append(args["per_sample_weights"].clone().requires_grad_(True))
        args["per_sample_weights"] = leaves[1]
    y = f(**args)
    cotangent = torch.randn(y.shape, generator=torch.Generator().manual_seed(grad_seed), dtype=y.dtype)
    grads = torch.autograd.grad(y, leaves, cotangent)
    return y.detach(), grads


@settings(max_examples=150, deadline=None)
@given(args=bag_cases())
def test_values_and_gradients_equal_pytorch(args):
    want, want_grads = _call(F.embedding_bag, args)
    got, got_grads = _call(mt.embedding_bag, args)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)
    # The same call without autograd runs the registry row directly (torch tensors in, out).
    plain = {k: (v.detach() if isinstance(v, torch.Tensor) else v) for k, v in args.items()}
    torch.testing.assert_close(mt.embedding_bag(**plain), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_float_dtypes_against_pytorch(dtype, mode):
    g = torch.Generator().manual_seed(1)
    weight = torch.randn(50, 7, generator=g).to(dtype)
    input = torch.randint(0, 50, (40,), generator=g)
    offsets = torch.tensor([0, 3, 3, 17, 39])
    psw = torch.rand(40, generator=g).to(dtype) if mode == "sum" else None
    want = F.embedding_bag(input, weight, offsets, mode=mode, per_sample_weights=psw)
    got = mt.embedding_bag(input, weight, offsets, mode=mode, per_sample_weights=psw)
    assert got.dtype == dtype
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    if mode == "max":
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def test_numpy_arrays_through_the_door():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((30, 4)).astype(np.float32)
    input = rng.integers(0, 30, 25).astype(np.int32)
    offsets = np.array([0, 5, 5, 20], dtype=np.int64)
    psw = rng.random(25).astype(np.float32)
    got = multigather.run(OP, weight, input, offsets=offsets, mode="sum", per_sample_weights=psw)
    assert isinstance(got, np.ndarray) and got.shape == (4, 4)
    want = F.embedding_bag(torch.from_numpy(input), torch.from_numpy(weight), torch.from_numpy(offsets),
                           mode="sum", per_sample_weights=torch.from_numpy(psw))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
    # offsets as a Python list, 2-D input, mean, padding_idx
    got = multigather.run(OP, weight, input[:24].reshape(6, 4), mode="mean", padding_idx=int(input[0]))
    want = F.embedding_bag(torch.from_numpy(input[:24].reshape(6, 4)).long(), torch.from_numpy(weight), mode="mean",
                           padding_idx=int(input[0]))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
    got = multigather.run(OP, weight, input, offsets=[0, 10], mode="max")
    want = F.embedding_bag(torch.from_numpy(input).long(), torch.from_numpy(weight), torch.tensor([0, 10]), mode="max")
    np.testing.assert_array_equal(got, want.numpy())


def test_id_layouts_read_in_place_or_copied_equal_pytorch():
    """C-ordered int64 ids are read in place (one read-only range pass), others copied first:
    every layout gives PyTorch's values, and an id out of range is named at its position."""
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((40, 5)).astype(np.float32)
    base = rng.integers(0, 40, 60)
    offsets = np.array([0, 7, 7, 19], dtype=np.int64)
    for ids in (base[:30], base[::2], base[:30].astype(np.int32), base[1::2].astype(np.int32)):
        got = multigather.run(OP, weight, ids, offsets=offsets, mode="sum")
        want = F.embedding_bag(torch.from_numpy(np.ascontiguousarray(ids)).long(), torch.from_numpy(weight),
                               torch.from_numpy(offsets), mode="sum")
        np.testing.assert_array_equal(got, want.numpy())
    grid = base[:48].reshape(6, 8)
    for ids in (grid, grid.T, grid[:, ::2], grid.astype(np.int32).T):
        got = multigather.run(OP, weight, ids, mode="mean")
        want = F.embedding_bag(torch.from_numpy(np.ascontiguousarray(ids)).long(), torch.from_numpy(weight), mode="mean")
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
    bad = base.copy()
    bad[10] = 40  # position 10 of base; position 5 of base[::2]; [1, 2] of base[:48].reshape(6, 8)
    for ids, where in ((bad[:30], r"input\[10\]"), (bad[::2], r"input\[5\]"), (bad[:48].reshape(6, 8), r"input\[1,2\]"),
                       (bad[:30].astype(np.int32), r"input\[10\]")):
        with pytest.raises(IndexError, match=where + r" = 40 is out of range \[0, 40\)"):
            multigather.run(OP, weight, ids, offsets=None if ids.ndim == 2 else offsets, mode="sum")


def test_errors_name_the_argument_and_the_rule():
    weight, input = torch.randn(5, 3), torch.tensor([0, 1, 4, 2])
    with pytest.raises(IndexError, match=r"input\[2\] = 7 is out of range \[0, 5\)"):
        mt.embedding_bag(torch.tensor([0, 1, 7, 2]), weight, torch.tensor([0, 2]))
    with pytest.raises(IndexError, match="out of range"):
        mt.embedding_bag(torch.tensor([0, -1, 2, 2]), weight, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match=r"offsets\[0\] has to be 0"):
        mt.embedding_bag(input, weight, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="offsets must not decrease"):
        mt.embedding_bag(input, weight, torch.tensor([0, 3, 2]))
    with pytest.raises(ValueError, match=r"offsets\[-1\] can not be greater than input's length 4"):
        mt.embedding_bag(input, weight, torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        mt.embedding_bag(input.reshape(2, 2), weight, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        mt.embedding_bag(input, weight)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        mt.embedding_bag(input, weight, torch.tensor([0, 2]), mode="mean", per_sample_weights=torch.ones(4))
    with pytest.raises(ValueError, match="per_sample_weights is only supported for mode='sum'"):  # the row's
        multigather.run(OP, weight, input, offsets=torch.tensor([0, 2]), mode="mean", per_sample_weights=torch.ones(4))
    with pytest.raises(ValueError, match="per_sample_weights.shape"):
        mt.embedding_bag(input, weight, torch.tensor([0, 2]), mode="sum", per_sample_weights=torch.ones(3))
    with pytest.raises(ValueError, match="padding_idx = 5 must be within"):
        mt.embedding_bag(input, weight, torch.tensor([0, 2]), padding_idx=5)
    with pytest.raises(TypeError, match="weight dtype int64"):
        mt.embedding_bag(input, torch.ones(5, 3, dtype=torch.int64), torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        mt.embedding_bag(input, torch.ones(5), torch.tensor([0, 2]))
    with pytest.raises(NotImplementedError, match="max_norm"):
        mt.embedding_bag(input, weight, torch.tensor([0, 2]), max_norm=1.0)
    with pytest.raises(ValueError, match=r"include_last_offset: offsets\[-1\] = 3 must equal input's length 4"):
        mt.embedding_bag(input, weight, torch.tensor([0, 3]), include_last_offset=True)
    with pytest.raises(ValueError, match="include_last_offset: number of offsets should be at least 1"):
        mt.embedding_bag(input, weight, torch.tensor([], dtype=torch.int64), include_last_offset=True)


def test_double_backward_raises_naming_the_op():
    """The weight gradient is the row's VJP (embedding_bag_backward), which has no gradient of
    its own: a second derivative raises, it is never silently zero."""
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    y = mt.embedding_bag(torch.tensor([0, 5, 2]), w, torch.tensor([0, 1]), mode="sum")
    (g,) = torch.autograd.grad((y * y).sum(), w, create_graph=True)
    with pytest.raises(RuntimeError, match="multigather.embedding_bag_backward"):
        torch.autograd.grad(g.sum(), w)


def test_bit_identical_at_1_2_3_8_threads():
    g = torch.Generator().manual_seed(0)
    weight = torch.randn(5000, 32, generator=g)
    input = torch.randint(0, 5000, (30000,), generator=g)
    offsets = torch.sort(torch.randint(0, 30000, (2000,), generator=g)).values
    offsets[0] = 0
    psw = torch.rand(30000, generator=g)
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3, 8):
            torch.set_num_threads(threads)
            w = weight.clone().requires_grad_(True)
            p = psw.clone().requires_grad_(True)
            y = mt.embedding_bag(input, w, offsets, mode="sum", per_sample_weights=p)
            z = mt.embedding_bag(input, w, offsets, mode="mean", padding_idx=7)
            gw, gp = torch.autograd.grad((y * y).sum() + (z * z).sum(), (w, p))
            results.append((y.detach(), z.detach(), gw, gp))
    finally:
        torch.set_num_threads(before)
    for r in results[1:]:
        for a, b in zip(results[0], r):
            assert torch.equal(a, b)


def test_compile_fullgraph_equals_eager():
    weight = torch.randn(20, 4, dtype=torch.float64)
    input, offsets = torch.randint(0, 20, (15,)), torch.tensor([0, 4, 4, 11])

    def model(w):
        return (mt.embedding_bag(input, w, offsets, mode="max").square().sum() +
                mt.embedding_bag(input, w, offsets, mode="mean").sum())

    compiled = torch.compile(model, fullgraph=True)
    w1, w2 = weight.clone().requires_grad_(True), weight.clone().requires_grad_(True)
    y1, y2 = compiled(w1), model(w2)
    y1.backward()
    y2.backward()
    torch.testing.assert_close(y1, y2)
    torch.testing.assert_close(w1.grad, w2.grad)


def test_routing_trains_an_unmodified_embedding_bag_model():
    """A small recommender built from torch.nn (EmbeddingBag(sum, per_sample_weights) and
    EmbeddingBag(mean, padding_idx) into a Linear), two SGD steps with its code unedited: under
    multigather.torch.routing() the bags run on multigather; outputs and parameters equal the
    model trained by PyTorch alone."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.items = torch.nn.EmbeddingBag(100, 8, mode="sum")
            self.tags = torch.nn.EmbeddingBag(30, 8, mode="mean", padding_idx=0)
            self.head = torch.nn.Linear(16, 1)

        def forward(self, items, offsets, weights, tags):
            return self.head(torch.cat([self.items(items, offsets, per_sample_weights=weights), self.tags(tags)], 1))

    torch.manual_seed(0)
    items, offsets = torch.randint(0, 100, (40,)), torch.tensor([0, 7, 7, 20, 31, 33])
    weights, tags = torch.rand(40), torch.randint(0, 30, (6, 5))
    a, b = Model(), Model()
    b.load_state_dict(a.state_dict())
    for model, routed in ((a, False), (b, True)):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            if routed:
                with mt.routing():
                    y = model(items, offsets, weights, tags)
                    assert "multigather" in model.tags(tags).grad_fn.name()
            else:
                y = model(items, offsets, weights, tags)
            y.square().mean().backward()
            opt.step()
    torch.testing.assert_close(a(items, offsets, weights, tags), b(items, offsets, weights, tags))
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q)
