"""multigather.torch.routing() and multigather.torch.* against PyTorch itself (the oracle):
generated cases over every routed function, Tensor method, in-place method and advanced
indexing form, on contiguous, transposed, sliced and expanded inputs. Each case compares the
routed result's values, dtype, shape and strides (the memory layout: graph libraries hand
results to kernels that read data_ptr as contiguous, e.g. torch._convert_indices_from_coo_to_csr)
with PyTorch's own call on the same inputs, and, for the differentiable ones, the gradients'
values and strides. Then: segment_reduce's "amax" / "amin", in-place methods given their source
by keyword (with autograd), operands on two devices (meta beside CPU), the out-of-range message
of x[idx], and in-place methods on a self whose elements share memory.
"""

from __future__ import annotations

import warnings

import pytest

from conftest import require

torch = require("torch")
import multigather.torch as mt  # noqa: E402
import multigather.torch_ops as ops  # noqa: E402

F = torch.nn.functional
L = torch.long
DT = torch.float64


# ---- inputs in several layouts ---------------------------------------------------------------------

def _layouts(shape, seed=0, dtype=DT):
    """{name: tensor of ``shape``}: contiguous, transposed (last two dimensions swapped in
    memory), sliced (every other element of the last dimension), expanded (stride 0 on the
    first dimension), permuted (a 3-D order), all with the same kind of values."""
    g = torch.Generator().manual_seed(seed)

    def values(*s):
        t = torch.randn(*s, generator=g, dtype=DT)
        return t.to(dtype) if dtype != DT else t

    out = {"contiguous": values(*shape)}
    if len(shape) >= 2:
        swapped = list(shape[:-2]) + [shape[-1], shape[-2]]
        out["transposed"] = values(*swapped).transpose(-1, -2)
    out["sliced"] = values(*shape[:-1], 2 * shape[-1])[..., ::2]
    out["expanded"] = values(1, *shape[1:]).expand(*shape)
    if len(shape) == 3:
        out["permuted"] = values(shape[2], shape[0], shape[1]).permute(1, 2, 0)
    return out


def _leaf(t):
    """``t`` as a leaf that requires grad, with t's strides (a non-contiguous leaf)."""
    return t.detach().requires_grad_(True)


def _cotangent(result):
    g = torch.arange(1, result.numel() + 1, dtype=result.dtype).reshape(result.shape) / 7
    return g


def _assert_same(got, want, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != PyTorch's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != PyTorch's {tuple(want.shape)}"
    assert got.stride() == want.stride(), f"{what}: strides {got.stride()} != PyTorch's {want.stride()}"
    if got.is_floating_point():
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12, equal_nan=True, msg=what)
    else:
        assert torch.equal(got, want), what


def _routed(call, *args):
    with mt.routing():
        return call(*args)


def _compare(call, x, grad=True):
    """call(x) under routing() and plain PyTorch: value, dtype, shape, strides; with grad, the
    gradient of x (a leaf of x's layout) too. Where PyTorch refuses x's layout only because it
    calls x.view(-1) (take_along_dim with dim=None on a non-contiguous input: "view size is not
    compatible"), the oracle is its call on x.contiguous(): multigather reads any strides."""
    try:
        want = call(x)
    except RuntimeError as error:
        if "view size is not compatible" not in str(error):
            raise
        x_oracle = x.contiguous()
        want = call(x_oracle)
        _assert_same(_routed(call, x), want, "result (PyTorch: on x.contiguous())")
        if grad:
            a, b = _leaf(x_oracle), _leaf(x)
            call(a).backward(_cotangent(want))
            _routed(call, b).backward(_cotangent(want))
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-12, atol=1e-12)
        return
    got = _routed(call, x)
    _assert_same(got, want, "result")
    if grad and x.is_floating_point():
        a, b = _leaf(x), _leaf(x)
        out_a = call(a)
        out_b = _routed(call, b)
        out_a.backward(_cotangent(out_a))
        out_b.backward(_cotangent(out_b))
        _assert_same(b.grad, a.grad, "input.grad")


# ---- the generated cases ---------------------------------------------------------------------------
# (name, shape of x, call(x) with torch's API, differentiable in x)

def _index(*values):
    return torch.tensor(values, dtype=L)


SHAPE2, SHAPE3 = (4, 5), (3, 4, 5)


def _function_cases():
    """torch.<op>(x, ...) and x.<op>(...) for every routed out-of-place op."""
    i2 = _index([0, 2, 1, 0, 3], [3, 3, 0, 1, 2])          # [2, 5] into a [4, 5] along dim 0
    row = _index(2, 0, 3)
    src2 = torch.arange(10, dtype=DT).reshape(2, 5) / 3
    cases = [
        ("gather", SHAPE2, lambda f, x: f("gather")(x, 0, i2), True),
        ("gather_dim1", SHAPE2, lambda f, x: f("gather")(x, 1, _index([0, 4], [1, 1], [2, 3], [4, 0])), True),
        ("take", SHAPE2, lambda f, x: f("take")(x, _index([0, 7], [19, 3])), True),
        ("take_transposed_index", SHAPE2, lambda f, x: f("take")(x, _index([0, 7], [19, 3]).t()), True),
        ("take_along_dim", SHAPE2, lambda f, x: f("take_along_dim")(x, i2, 0), True),
        ("take_along_dim_flat", SHAPE2, lambda f, x: f("take_along_dim")(x, _index(3, 0, 19)), True),
        ("index_select", SHAPE2, lambda f, x: f("index_select")(x, 0, row), True),
        ("index_select_dim1", SHAPE2, lambda f, x: f("index_select")(x, 1, _index(4, 0)), True),
        ("scatter_src", SHAPE2, lambda f, x: f("scatter")(x, 0, i2, src2), True),
        ("scatter_value", SHAPE2, lambda f, x: f("scatter")(x, 0, i2, 2.5), True),
        ("scatter_reduce_add", SHAPE2, lambda f, x: f("scatter")(x, 0, i2, src2, reduce="add"), False),
        ("scatter_add", SHAPE2, lambda f, x: f("scatter_add")(x, 0, i2, src2), True),
        ("index_add", SHAPE2, lambda f, x: f("index_add")(x, 0, _index(1, 1), src2), True),
        ("index_add_alpha", SHAPE2, lambda f, x: f("index_add")(x, 1, _index(0, 4), torch.ones(4, 2, dtype=DT),
                                                                   alpha=2), True),
        ("index_copy", SHAPE2, lambda f, x: f("index_copy")(x, 0, _index(3, 0), src2), True),
        ("index_fill", SHAPE2, lambda f, x: f("index_fill")(x, 1, _index(0, 3), -1.5), True),
        ("index_fill_tensor", SHAPE2, lambda f, x: f("index_fill")(x, 0, _index(2), torch.tensor(4.0)), True),
        ("index_put", SHAPE2, lambda f, x: f("index_put")(x, (_index(1, 3),), src2), True),
        ("index_put_accumulate", SHAPE2, lambda f, x: f("index_put")(x, (_index(1, 1), _index(0, 4)),
                                                                    torch.tensor([1.0, 2.0], dtype=DT), True), True),
        ("index_put_mask", SHAPE2, lambda f, x: f("index_put")(x, (_index(0, 1, 0, 1).bool(),), src2), True),
        ("put", SHAPE2, lambda f, x: f("put")(x, _index(0, 19, 7), torch.tensor([1.0, 2.0, 3.0], dtype=DT)), True),
        ("put_accumulate", SHAPE2, lambda f, x: f("put")(x, _index(0, 0, 7), torch.tensor([1.0, 2.0, 3.0], dtype=DT),
                                                         accumulate=True), True),
        ("scatter_add_3d", SHAPE3, lambda f, x: f("scatter_add")(x, 1, _index([0, 3, 1, 2, 0], [1, 1, 1, 1, 1])
                                                                  .expand(3, 2, 5), torch.ones(3, 2, 5, dtype=DT)),
         True),
        ("index_fill_3d", SHAPE3, lambda f, x: f("index_fill")(x, 2, _index(4, 0), 7.0), True),
        ("index_put_3d", SHAPE3, lambda f, x: f("index_put")(x, (_index(1, 2), _index(3, 0)), torch.ones(5, dtype=DT)),
         True),
        ("put_3d", SHAPE3, lambda f, x: f("put")(x, _index(0, 59), torch.ones(2, dtype=DT)), True),
    ]
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            cases.append((f"scatter_reduce_{reduce}_{include_self}", SHAPE2,
                          lambda f, x, r=reduce, s=include_self: f("scatter_reduce")(x, 0, i2, src2, r,
                                                                                     include_self=s), True))
    return cases


def _caller(kind):
    """f(name) -> the callable of that op: torch.<name> or the bound method x.<name>."""
    if kind == "function":
        return lambda name: getattr(torch, name)

    def method(name):
        return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)
    return method


FUNCTION_CASES = [(f"{kind}-{name}-{layout}", shape, layout, (lambda x, c=call, k=kind: c(_caller(k), x)), grad)
                  for name, shape, call, grad in _function_cases()
                  for kind in ("function", "method")
                  for layout in _layouts(shape)]


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_routed_function_matches_pytorch_layout_and_gradient(case):
    _, shape, layout, call, grad = case
    _compare(call, _layouts(shape)[layout], grad)


def _in_place_cases():
    """x.<op>_(...) on a self of each layout (without autograd: multigather writes into self;
    with autograd: the op out of place and self.copy_)."""
    i2 = _index([0, 2, 1, 0, 3], [3, 3, 0, 1, 2])
    src2 = torch.arange(10, dtype=DT).reshape(2, 5) / 3
    return [
        ("scatter_", lambda y: y.scatter_(0, i2, src2)),
        ("scatter_value", lambda y: y.scatter_(0, i2, 2.5)),
        ("scatter_reduce_multiply", lambda y: y.scatter_(0, i2, src2, reduce="multiply")),
        ("scatter_add_", lambda y: y.scatter_add_(0, i2, src2)),
        ("scatter_reduce_amax", lambda y: y.scatter_reduce_(0, i2, src2, "amax")),
        ("scatter_reduce_mean_noself", lambda y: y.scatter_reduce_(0, i2, src2, "mean", include_self=False)),
        ("index_add_", lambda y: y.index_add_(0, _index(3, 3), src2, alpha=-2)),
        ("index_copy_", lambda y: y.index_copy_(1, _index(4, 0), src2.t()[:4].contiguous())),
        ("index_fill_", lambda y: y.index_fill_(1, _index(2), 9.0)),
        ("index_put_", lambda y: y.index_put_((_index(0, 3), _index(4, 4)), torch.tensor([1.0, 2.0], dtype=DT))),
        ("index_put_accumulate", lambda y: y.index_put_((_index(2, 2),), src2, accumulate=True)),
        ("put_", lambda y: y.put_(_index(1, 18), torch.tensor([5.0, 6.0], dtype=DT))),
    ]


IN_PLACE_CASES = [(f"{name}-{layout}", layout, call)
                  for name, call in _in_place_cases() for layout in _layouts(SHAPE2) if layout != "expanded"]


@pytest.mark.parametrize("case", IN_PLACE_CASES, ids=[c[0] for c in IN_PLACE_CASES])
def test_routed_in_place_method_matches_pytorch(case):
    _, layout, call = case
    base = _layouts(SHAPE2)[layout]
    # without autograd: self keeps its layout, the method returns self
    want, got = base.clone(memory_format=torch.preserve_format), base.clone(memory_format=torch.preserve_format)
    if layout == "sliced":  # a non-dense self: the same view of a fresh buffer
        want, got = (torch.zeros(4, 10, dtype=DT)[:, ::2].copy_(base) for _ in range(2))
    assert call(want) is want
    returned = _routed(call, got)
    assert returned is got
    _assert_same(got, want, "self")
    # with autograd: self is a view (of layout `layout`) of a non-leaf; the gradient of the leaf
    grads = []
    try:
        probe = _leaf(torch.ones(4, 5, dtype=DT)) * 1
        call(probe)
        probe.sum().backward()
    except RuntimeError as error:  # scatter_(reduce=): PyTorch has no gradient to compare with
        assert "derivative for aten::scatter_ is not implemented" in str(error)
        return
    for routed in (False, True):
        shape = {"contiguous": (4, 5), "transposed": (5, 4), "sliced": (4, 10)}[layout]
        leaf = _leaf(torch.arange(20 * (2 if layout == "sliced" else 1), dtype=DT).reshape(shape) / 5)
        y = leaf * 1
        view = {"contiguous": y, "transposed": y.t(), "sliced": y[:, ::2]}[layout]
        out = _routed(call, view) if routed else call(view)
        grads.append((out, leaf, view))
        (view * _cotangent(view)).sum().backward()
    (want_out, want_leaf, _), (got_out, got_leaf, _) = grads
    _assert_same(got_out.detach(), want_out.detach(), "self (autograd)")
    _assert_same(got_leaf.grad, want_leaf.grad, "leaf.grad")


def _indexing_keys():
    """Advanced indexing keys for a [3, 4, 5] tensor: index tensors (1-D, 2-D, transposed,
    broadcast, int32, negative), masks, full slices, Ellipsis, several index tensors (adjacent
    and not)."""
    i = _index(2, 0, 1, 2)
    j2 = _index([0, 3], [1, -1])
    jt = _index([0, 3, 2], [1, 1, 0]).t()
    k = _index(4, 0, -5)
    mask0 = torch.tensor([True, False, True])
    mask12 = torch.arange(20).reshape(4, 5) % 3 == 0
    return {
        "i": (i,),
        "j2_dim1": (slice(None), j2),
        "jt_dim1": (slice(None), jt),
        "k_dim2": (slice(None), slice(None), k),
        "ellipsis_k": (Ellipsis, k),
        "i_ellipsis": (i, Ellipsis),
        "i_j": (i[:2], j2[0]),
        "broadcast_pair": (i[:2].reshape(2, 1), slice(None), _index(0, 4, 1).reshape(1, 3)),
        "adjacent_pair": (slice(None), j2, _index(4, 0)),
        "non_adjacent": (_index(0, 2), slice(None), _index(1, 3)),
        "transposed_pair": (slice(None), jt, jt),
        "int32": (slice(None), _index(3, 1).to(torch.int32)),
        "int32_transposed": (jt.to(torch.int32) % 3,),
        "mask0": (mask0,),
        "mask0_k": (mask0, slice(None), _index(1, 0)),
        "mask12": (slice(None), mask12),
        "full_mask": (torch.ones(3, 4, 5, dtype=torch.bool).tril(),),
        "ellipsis_mask": (Ellipsis, torch.tensor([True, False, False, True, True])),
        "expanded_index": (slice(None), _index(1).expand(3)),
    }


INDEX_CASES = [(f"{name}-{layout}", layout, key)
               for name, key in _indexing_keys().items() for layout in _layouts(SHAPE3)]


@pytest.mark.parametrize("case", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_routed_advanced_indexing_matches_pytorch(case):
    _, layout, key = case
    _compare(lambda x: x[key], _layouts(SHAPE3)[layout])


@pytest.mark.parametrize("layout", list(_layouts(SHAPE3)))
def test_mt_index_has_aten_index_layout(layout):
    # the function itself (not only the routed x[idx]): the tuple form of aten.index
    x = _layouts(SHAPE3)[layout]
    for name, key in _indexing_keys().items():
        if Ellipsis in key or any(isinstance(e, torch.Tensor) and e.dtype == torch.bool for e in key):
            continue
        entries = tuple(None if isinstance(e, slice) else e for e in key)
        _assert_same(mt.index(x, entries), torch.ops.aten.index.Tensor(x, list(entries)), name)


def _other_cases():
    """F.embedding, F.embedding_bag, torch.segment_reduce on weights / data of each layout."""
    ids = _index([1, 3], [0, 3])
    cases = [
        ("embedding", (4, 5), lambda w: F.embedding(ids, w)),
        ("embedding_padding", (4, 5), lambda w: F.embedding(ids, w, padding_idx=3)),
        ("embedding_transposed_ids", (4, 5), lambda w: F.embedding(ids.t(), w)),
        ("embedding_bag_mean", (4, 5), lambda w: F.embedding_bag(_index(1, 3, 0, 2), w, _index(0, 1))),
        ("embedding_bag_max", (4, 5), lambda w: F.embedding_bag(ids, w, mode="max")),
        ("embedding_bag_sum_psw", (4, 5), lambda w: F.embedding_bag(_index(1, 3, 0), w, _index(0, 2), mode="sum",
                                                                    per_sample_weights=torch.tensor([1.0, 2, 3],
                                                                                                    dtype=DT))),
    ]
    for reduce in ("sum", "mean", "max", "min", "prod", "amax", "amin"):
        cases.append((f"segment_reduce_{reduce}", (4, 5),
                      lambda d, r=reduce: torch.segment_reduce(d, r, lengths=_index(1, 0, 3), unsafe=False)))
        cases.append((f"segment_reduce_{reduce}_offsets_axis1", (4, 5),
                      lambda d, r=reduce: torch.segment_reduce(d, r, offsets=_index([0, 2, 5]).expand(4, 3),
                                                               axis=1, initial=0.5 if r == "sum" else None)))
    return cases


OTHER_CASES = [(f"{name}-{layout}", shape, layout, call)
               for name, shape, call in _other_cases() for layout in _layouts(shape)]


@pytest.mark.parametrize("case", OTHER_CASES, ids=[c[0] for c in OTHER_CASES])
def test_routed_embedding_and_segment_reduce_match_pytorch(case):
    _, shape, layout, call = case
    _compare(call, _layouts(shape)[layout])


@pytest.mark.parametrize("name", ["gather", "take", "take_along_dim", "index_select", "embedding", "embedding_bag",
                                  "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy",
                                  "index_fill", "index_put", "put", "segment_reduce", "index"])
def test_multigather_torch_functions_return_pytorchs_layout(name):
    # multigather.torch.* called directly, without and with autograd, on a transposed and a
    # permuted input: the strides of PyTorch's op for the same inputs
    i2 = _index([0, 2, 1, 0, 3], [3, 3, 0, 1, 2])
    src2 = torch.ones(2, 5, dtype=DT)
    calls = {
        "gather": (lambda m, x: m.gather(x, 0, i2), lambda x: torch.gather(x, 0, i2)),
        "take": (lambda m, x: m.take(x, i2), lambda x: torch.take(x, i2)),
        "take_along_dim": (lambda m, x: m.take_along_dim(x, i2, 0), lambda x: torch.take_along_dim(x, i2, 0)),
        "index_select": (lambda m, x: m.index_select(x, 1, _index(4, 0)), lambda x: x.index_select(1, _index(4, 0))),
        "embedding": (lambda m, x: m.embedding(i2, x), lambda x: F.embedding(i2, x)),
        "embedding_bag": (lambda m, x: m.embedding_bag(i2, x), lambda x: F.embedding_bag(i2, x)),
        "scatter": (lambda m, x: m.scatter(x, 0, i2, src2), lambda x: torch.scatter(x, 0, i2, src2)),
        "scatter_add": (lambda m, x: m.scatter_add(x, 0, i2, src2), lambda x: torch.scatter_add(x, 0, i2, src2)),
        "scatter_reduce": (lambda m, x: m.scatter_reduce(x, 0, i2, src2, "amin"),
                           lambda x: torch.scatter_reduce(x, 0, i2, src2, "amin")),
        "index_add": (lambda m, x: m.index_add(x, 0, _index(0, 0), src2),
                      lambda x: torch.index_add(x, 0, _index(0, 0), src2)),
        "index_copy": (lambda m, x: m.index_copy(x, 0, _index(1, 0), src2),
                       lambda x: torch.index_copy(x, 0, _index(1, 0), src2)),
        "index_fill": (lambda m, x: m.index_fill(x, 1, _index(1), 3.0),
                       lambda x: torch.index_fill(x, 1, _index(1), 3.0)),
        "index_put": (lambda m, x: m.index_put(x, (_index(1, 0),), src2),
                      lambda x: torch.index_put(x, (_index(1, 0),), src2)),
        "put": (lambda m, x: m.put(x, _index(1, 0), torch.ones(2, dtype=DT)),
                lambda x: torch.put(x, _index(1, 0), torch.ones(2, dtype=DT))),
        "segment_reduce": (lambda m, x: m.segment_reduce(x, "max", lengths=_index(3, 1)),
                           lambda x: torch.segment_reduce(x, "max", lengths=_index(3, 1))),
        "index": (lambda m, x: m.index(x, (None, _index([0, 2], [1, 1]))), lambda x: x[:, _index([0, 2], [1, 1])]),
    }
    ours, theirs = calls[name]
    for layout in ("transposed", "sliced", "expanded", "contiguous"):
        x = _layouts((4, 5))[layout]
        _assert_same(ours(mt, x), theirs(x), f"{name} on {layout}")
        a, b = _leaf(x), _leaf(x)
        want, got = theirs(a), ours(mt, b)
        _assert_same(got.detach(), want.detach(), f"{name} on {layout}, autograd")
        want.backward(_cotangent(want))
        got.backward(_cotangent(got))
        _assert_same(b.grad, a.grad, f"{name} on {layout}: input.grad")


# ---- the graph-library case: a CSR pointer from a routed edge_index[:, perm] -------------------------

def test_csr_pointer_from_a_routed_column_selection():
    # torch._convert_indices_from_coo_to_csr reads its input's data_ptr as contiguous; PyTorch's
    # e[:, perm] is contiguous, so the routed one must be too (a strided one gave wrong pointers,
    # uninitialized entries, and heap writes past the pointer array when the other row's
    # values exceed the size)
    row = _index(0, 0, 1, 2, 4, 5, 5, 5, 5, 5)
    col = _index(5, 4, 3, 2, 1, 0, 1, 2, 3, 4)
    e = torch.stack([row, col])
    perm = torch.arange(10)
    with mt.routing():
        routed = e[:, perm]
    assert routed.stride() == e[:, perm].stride() == (10, 1)
    want = torch._convert_indices_from_coo_to_csr(e[:, perm][0], 6)
    assert torch.equal(torch._convert_indices_from_coo_to_csr(routed[0], 6), want)


# ---- segment_reduce's amax / amin: PyTorch's names ---------------------------------------------------

@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_segment_reduce_accepts_pytorchs_amax_amin(reduce):
    data = _layouts((5, 3), seed=3)["contiguous"]
    data[1, 0] = data[2, 0]  # a tie: PyTorch shares the gradient between them
    lengths = _index(3, 0, 2)
    want = torch.segment_reduce(data, reduce, lengths=lengths)
    same = reduce[1:]  # max / min
    assert torch.equal(want, torch.segment_reduce(data, same, lengths=lengths))  # the oracle's meaning
    for got in (mt.segment_reduce(data, reduce, lengths=lengths),
                ops.segment_reduce(data, reduce, lengths),
                _routed(lambda d: torch.segment_reduce(d, reduce, lengths=lengths), data),
                mt.segment_reduce(data, reduce, offsets=_index(0, 3, 3, 5))):
        _assert_same(got, want, reduce)
    a, b = _leaf(data), _leaf(data)
    torch.segment_reduce(a, reduce, lengths=lengths).backward(_cotangent(want))
    _routed(lambda d: torch.segment_reduce(d, reduce, lengths=lengths), b).backward(_cotangent(want))
    _assert_same(b.grad, a.grad, "grad")
    with pytest.raises(ValueError, match="is not one of"):  # other names stay refused, naming the choices
        mt.segment_reduce(data, "Amax", lengths=lengths)


# ---- in-place methods given their source by keyword (N7) -----------------------------------------

KEYWORD_CASES = {
    "scatter_src": lambda y, s: y.scatter_(0, _index([0, 1, 2, 0]), src=s),
    "scatter_add_src": lambda y, s: y.scatter_add_(0, _index([0, 1, 2, 0]), src=s),
    "scatter_reduce__src": lambda y, s: y.scatter_reduce_(0, _index([0, 1, 2, 0]), src=s, reduce="amax"),
    "scatter_reduce__all_keywords": lambda y, s: y.scatter_reduce_(dim=0, index=_index([2, 2, 2, 0]), src=s,
                                                                   reduce="prod", include_self=False),
    "index_add_source": lambda y, s: y.index_add_(0, _index(1), source=s, alpha=3),
    "index_copy_source": lambda y, s: y.index_copy_(0, _index(2), source=s),
    "put_source": lambda y, s: y.put_(_index(1, 5, 6, 11), source=s.reshape(4)),
    "index_put_values": lambda y, s: y.index_put_((_index(0),), values=s),
    "index_put_indices_values": lambda y, s: y.index_put_(indices=(_index(1),), values=s, accumulate=True),
    "index_fill_value_tensor": lambda y, s: y.index_fill_(1, _index(3), value=s[0, 1]),
}


@pytest.mark.parametrize("self_grad", [False, True])
@pytest.mark.parametrize("name", list(KEYWORD_CASES))
def test_in_place_method_with_a_keyword_source_has_pytorchs_gradient(name, self_grad):
    # self_grad False: only the keyword source requires grad (the call must still be recorded)
    call = KEYWORD_CASES[name]
    results = []
    for routed in (False, True):
        s = (torch.arange(4, dtype=DT).reshape(1, 4) + 1.5).requires_grad_(True)
        x = (torch.arange(12, dtype=DT).reshape(3, 4) / 4).requires_grad_(self_grad)
        y = x * 1
        _routed(call, y, s) if routed else call(y, s)
        (y * _cotangent(y)).sum().backward()
        results.append((y.detach(), s.grad) + ((x.grad,) if self_grad else ()))
    for want, got in zip(*results):
        _assert_same(got, want, name)


# ---- operands on two devices (N4) ------------------------------------------------------------------

MIXED_CASES = {
    "index_add_": lambda x, i, s: x.index_add_(0, i, s),
    "index_copy_": lambda x, i, s: x.index_copy_(0, i, s),
    "scatter_": lambda x, i, s: x.scatter_(0, i, s),
    "scatter_add_": lambda x, i, s: x.scatter_add_(0, i, s),
    "scatter_reduce_": lambda x, i, s: x.scatter_reduce_(0, i, s, "amax"),
    "put_": lambda x, i, s: x.put_(i, s),
    "index_put_": lambda x, i, s: x.index_put_((i,), s),
    "index_put_keywords": lambda x, i, s: x.index_put_(indices=(i,), values=s),
    "scatter_add_keywords": lambda x, i, s: x.scatter_add_(0, index=i, src=s),
    "index_fill_": lambda x, i, s: x.index_fill_(0, i, s[0]),
}


@pytest.mark.parametrize("meta", ["index", "source"])
@pytest.mark.parametrize("name", list(MIXED_CASES))
def test_routed_in_place_with_a_meta_operand_raises_and_writes_nothing(name, meta):
    call = MIXED_CASES[name]
    x = torch.arange(4, dtype=DT)
    i, s = _index(0), torch.ones(1, dtype=DT)
    if meta == "index":
        i = i.to("meta")
    else:
        s = s.to("meta")
    before = x.clone()
    with mt.routing(), pytest.raises((RuntimeError, NotImplementedError), match="same device|meta"):
        call(x, i, s)
    assert torch.equal(x, before)  # nothing written (the unrouted x keeps its values too where PyTorch raises)


@pytest.mark.parametrize("op, call", [
    ("gather", lambda x, i: ops.gather(x, 0, i)),
    ("take", lambda x, i: ops.take(x, i)),
    ("index_select", lambda x, i: ops.index_select(x, 0, i)),
    ("scatter_add", lambda x, i: ops.scatter_add(x, 0, i, torch.ones_like(x[:1]))),
    ("index_add", lambda x, i: ops.index_add(x, 0, i, torch.ones_like(x[:1]))),
    ("index_put", lambda x, i: ops.index_put(x, i[:, None], torch.ones_like(x[:1]), index_dims=[0])),
    ("segment_reduce", lambda x, i: ops.segment_reduce(x, "sum", i + 3)),
    ("embedding", lambda x, i: ops.embedding(i, x.reshape(2, 2))),
    ("embedding_bag", lambda x, i: ops.embedding_bag(i[None], x.reshape(2, 2))),
    ("mt.index", lambda x, i: mt.index(x, (i,))),
    ("mt.embedding", lambda x, i: mt.embedding(i, x.reshape(2, 2))),
])
@pytest.mark.parametrize("meta", ["input", "index"])
def test_ops_with_cpu_and_meta_operands_raise(op, call, meta):
    x, i = torch.arange(4, dtype=DT), _index(1)
    if meta == "input":
        x = x.to("meta")
    else:
        i = i.to("meta")
    with pytest.raises(RuntimeError, match="same device"):
        call(x, i)
    # all on meta: the fake kernel's meta result, as before
    result = call(x.to("meta"), i.to("meta"))
    assert result.device.type == "meta"


def test_index_add_mixed_device_message_is_pytorchs():
    x, i, s = torch.arange(4.0), _index(0), torch.ones(1, device="meta")
    with pytest.raises(RuntimeError) as want:
        torch.index_add(x, 0, i, s)
    with pytest.raises(RuntimeError) as got:
        mt.index_add(x, 0, i, s)
    assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0]


# ---- the out-of-range message of x[idx] (N11a) -----------------------------------------------------

@pytest.mark.parametrize("key, value, dim, size, position", [
    ((slice(None), _index([0, 1], [1, 5])), 5, 1, 3, "[1, 1]"),
    ((_index(0, -3),), -3, 0, 2, "[1]"),
    ((slice(None), slice(None), _index(3, 0)), None, None, None, None),  # in range
    ((_index(1), slice(None), _index([3, 9])), 9, 2, 4, "[0, 1]"),
    ((Ellipsis, _index(7)), 7, 2, 4, "[0]"),
])
@pytest.mark.parametrize("grad", [False, True])
def test_index_out_of_range_names_the_users_index_in_pytorchs_words(key, value, dim, size, position, grad):
    x = _layouts((2, 3, 4))["contiguous"].requires_grad_(grad)
    if value is None:
        assert torch.equal(_routed(lambda t: t[key], x), x[key])
        return
    with pytest.raises(IndexError, match=f"index {value} is out of bounds for dimension"):
        x[key]  # PyTorch's words (its dimension number counts the index tensors)
    with pytest.raises(IndexError) as error:
        _routed(lambda t: t[key], x)
    message = str(error.value)
    assert f"index {value} is out of bounds for dimension {dim} with size {size}" in message, message
    assert f"at position {position} of the index for dimension {dim}" in message, message
    assert "indices[" not in message, message  # not the internal stacked coordinates


# ---- in-place methods on a self whose elements share memory (N12) -----------------------------------

OVERLAP_CASES = {
    "index_fill_": lambda y: y.index_fill_(1, _index(1), 2.0),
    "index_put_": lambda y: y.index_put_((_index(1),), torch.tensor(5.0, dtype=DT)),
    "index_put_accumulate": lambda y: y.index_put_((_index(1), _index(2)), torch.tensor(5.0, dtype=DT), True),
    "scatter_": lambda y: y.scatter_(1, _index([1], [1], [1]), 3.0),
    "scatter_add_": lambda y: y.scatter_add_(1, _index([1], [1], [1]), torch.ones(3, 1, dtype=DT)),
    "index_add_": lambda y: y.index_add_(1, _index(1), torch.ones(3, 1, dtype=DT)),
    "put_": lambda y: y.put_(_index(1), torch.tensor([7.0], dtype=DT)),
}


@pytest.mark.parametrize("kind", ["expanded", "interleaved"])
@pytest.mark.parametrize("name", list(OVERLAP_CASES))
def test_routed_in_place_on_overlapping_self_does_what_pytorch_does(name, kind):
    call = OVERLAP_CASES[name]

    def fresh():
        if kind == "expanded":
            return torch.zeros(1, 4, dtype=DT).expand(3, 4)
        return torch.zeros(8, dtype=DT).as_strided((3, 3), (2, 1))  # rows overlap by one element

    outcomes = []
    for routed in (False, True):
        y = fresh()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                _routed(call, y) if routed else call(y)
                outcome = ("wrote", y.tolist())
            except RuntimeError as error:
                outcome = ("raised", str(error).splitlines()[0])
        outcomes.append((outcome, sorted({str(w.message).splitlines()[0] for w in caught
                                          if "deprecated" in str(w.message)})))
    assert outcomes[1] == outcomes[0]


def test_generated_cases_cover_every_routed_op():
    # every routed torch function / Tensor method has generated cases above
    from multigather._torch_routing import _routes

    source = open(__file__).read()
    for route in _routes(mt):
        name = route.__name__
        if name == "__getitem__":
            assert INDEX_CASES
        else:
            assert f'"{name}"' in source or f".{name}(" in source, name


@pytest.mark.parametrize("name", ["index_fill", "index_put", "put", "index", "gather", "scatter_add"])
@pytest.mark.parametrize("x", [torch.arange(3, dtype=DT).reshape(3, 1).t(),
                               torch.arange(6, dtype=DT).reshape(3, 2, 1).permute(2, 0, 1),
                               torch.arange(1, dtype=DT).as_strided((1, 1, 1), (2, 2, 2))],
                         ids=["t_of_column", "permuted_size1_first", "all_size1_odd_strides"])
def test_size_one_dimensions_keep_pytorchs_strides(name, x):
    # contiguous tensors whose size-1 dimensions have other strides than the canonical ones:
    # a preserving clone keeps them (index_fill / index_put / put), TensorIterator orders by them
    i = _index(0)
    calls = {
        "index_fill": lambda t: torch.index_fill(t, 0, i, 2.0),
        "index_put": lambda t: torch.index_put(t, (i,), torch.tensor(3.0, dtype=DT)),
        "put": lambda t: torch.put(t, i, torch.ones(1, dtype=DT)),
        "index": lambda t: t[:, i],
        "gather": lambda t: torch.gather(t, 0, torch.zeros_like(t, dtype=L)),
        "scatter_add": lambda t: torch.scatter_add(t, 0, torch.zeros_like(t, dtype=L), torch.ones_like(t)),
    }
    _compare(calls[name], x)


@pytest.mark.parametrize("shape,key", [((32, 32), ([3, -1, 31, 0], [0, 5, -32, 31])),
                                       ((4, 3, 2), ([[1, -4], [3, 0]], [[2, 0], [-1, 1]])),
                                       ((4, 3, 2), ([1, 2], [0, -3], [1, -2])), ((5, 4), ([], []))])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_index_on_the_leading_dimensions_equals_pytorch(shape, key, dtype):
    """mt.index's direct form for x[i, j, ..] (index tensors of one shape and dtype on the
    leading dimensions, contiguous operands): one call of numpy.advanced_index's row without
    autograd, the general path with it; values, shape, strides and the gradient equal PyTorch's,
    negatives wrapped, an index out of range in PyTorch's words."""
    x = torch.nn.Parameter(torch.randn(*shape, dtype=DT))
    entries = tuple(torch.tensor(k, dtype=dtype) for k in key)
    want = x[entries]
    _assert_same(mt.index(x.detach(), entries), want.detach(), "x[i, j] without grad")
    got = mt.index(x, entries)
    _assert_same(got, want, "x[i, j]")
    (g,) = torch.autograd.grad((got * 1.5).sum(), [x])
    (w,) = torch.autograd.grad((want * 1.5).sum(), [x])
    _assert_same(g, w, "grad")
    if entries[0].numel():
        bad = tuple(e.clone() for e in entries)
        bad[1].view(-1)[-1] = shape[1]
        with pytest.raises(IndexError, match=rf"^torch.index: index {shape[1]} is out of bounds for dimension 1 "
                                             rf"with size {shape[1]}"):
            mt.index(x.detach(), bad)


@pytest.mark.parametrize("shape,index", [((32, 32), [3, -1, 31, 0]), ((7,), [[6, -7], [0, 2]]),
                                         ((4, 3, 2), [[1], [3]]), ((5, 4), [])])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_index_on_the_first_dimension_equals_pytorch(shape, index, dtype):
    """mt.index's direct form for x[i] (one index tensor, first dimension, contiguous operands):
    values, shape, strides and the gradient of a Parameter equal PyTorch's, negatives wrapped."""
    x = torch.nn.Parameter(torch.randn(*shape, dtype=DT))
    i = torch.tensor(index, dtype=dtype)
    got, want = mt.index(x, (i,)), x[i]
    _assert_same(got, want, "x[i]")
    (g,) = torch.autograd.grad((got * 1.5).sum(), [x])
    (w,) = torch.autograd.grad((want * 1.5).sum(), [x])
    _assert_same(g, w, "grad")
    with mt.routing():
        _assert_same(x.detach()[i], want.detach(), "routed x[i]")
    # no autograd to see the call: the one direct call (numpy.take's row on the first dimension)
    _assert_same(mt.index(x.detach(), (i,)), want.detach(), "x[i] without grad")
    n = shape[0]
    bad = torch.tensor([0, n], dtype=dtype)
    with pytest.raises(IndexError, match=rf"^torch.index: index {n} is out of bounds for dimension 0 with size {n} "
                                         rf"at position \[1\]"):
        mt.index(x.detach(), (bad,))
