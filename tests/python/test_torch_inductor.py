"""torch.ops.multigather.* under torch.compile (multigather._torch_inductor): Inductor's rules.

For every row with a torch op (from the op table; a row without a sample here fails
test_every_row_has_a_sample): compiled (fullgraph=True, Inductor) equals eager, forward and
backward, bit for bit where the compiled graph keeps the C++ op or fuses a gather, in both scatter
modes; the generated code holds fused loops where the rule applies and the extern call where it
declines (dynamic shapes, float scatters in "deterministic" mode); every index mode; bad indices
raise (the compiler's own bounds check); a compiled scatter-add gives eager's bytes at 1 and 2
threads, twice; scatter_reduce's mean / amax / amin gradients in aten equal the C++ op's.
The oracle is the eager C++ op (itself tested against PyTorch's own ops in test_torch_ops.py).
Skipped when torch is missing."""

from __future__ import annotations

import re

import pytest

from conftest import require

torch = require("torch")
import multigather._registry as registry  # noqa: E402
import multigather.torch_ops as mto  # noqa: E402

ops = torch.ops.multigather
run_and_get_code = pytest.importorskip("torch._inductor.utils").run_and_get_code


def rand(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(list(shape), generator=g, dtype=dtype)


def ints(low, high, shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g)


def perm(n, k, seed=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randperm(n, generator=g)[:k]


# op name -> (args, kwargs); float tensors are differentiated. Duplicate targets only where the
# reduction's result does not depend on their order.
SAMPLES = {
    "gather_multiaxis": ((rand(4, 5, 3), ints(-4, 4, (2, 5, 1)), [0]), {}),
    "scatter_multiaxis": ((rand(5, 3), ints(0, 5, (6, 1)), rand(6, 3, seed=2), [0]), {"reduction": "add"}),
    "gather": ((rand(4, 5), 1, ints(0, 5, (3, 2))), {}),
    "take": ((rand(4, 5), ints(-20, 20, (3, 2))), {}),
    "take_along_dim": ((rand(4, 5), ints(0, 5, (1, 7)), 1), {}),
    "index_select": ((rand(4, 5, 6), 1, ints(0, 5, (7,))), {}),
    "scatter": ((rand(5, 3), 0, perm(5, 4)[:, None].expand(4, 3), rand(4, 3, seed=2)), {}),
    "scatter_add": ((rand(5, 3), 0, ints(0, 5, (6, 3)), rand(6, 3, seed=2)), {}),
    "scatter_reduce": ((rand(5, 3), 0, ints(0, 5, (6, 3)), rand(6, 3, seed=2), "amax"), {"include_self": False}),
    "index_add": ((rand(5, 3), 0, ints(0, 5, (6,)), rand(6, 3, seed=2)), {}),
    "index_copy": ((rand(5, 3), 0, perm(5, 3), rand(3, 3, seed=2)), {}),
    "index_fill": ((rand(5, 3), 1, ints(0, 3, (2,)), torch.tensor(1.5)), {}),
    "index_put": ((rand(5, 3), ints(0, 5, (4, 1)), rand(4, 3, seed=2), True), {}),
    "put": ((rand(5, 3), ints(-15, 15, (4,)), rand(4, seed=2), True), {}),
}

ROWS = [row for row in registry.torch_op_rows() if registry.OPS[row]["kind"] != "segment"]


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    mto.set_compiled_scatters("deterministic")
    torch._dynamo.reset()


def test_every_row_has_a_sample():
    assert {registry.torch_op_name(row) for row in ROWS} <= set(SAMPLES)


def differentiable(args):
    return [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() and a.dim() > 0
            else a for a in args]


def forward_backward(fn, args, kwargs):
    args = differentiable(args)
    out = fn(*args, **kwargs)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    grads = torch.autograd.grad(out, leaves, torch.ones_like(out) * 0.5 + torch.arange(out.numel()).reshape(out.shape) / 7)
    return out, grads


def scatters_in_float(name):
    return registry.is_scatter(next(r for r in ROWS if registry.torch_op_name(r) == name))


@pytest.mark.parametrize("mode", ["deterministic", "fused"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_compiled_equals_eager(name, mode):
    mto.set_compiled_scatters(mode)
    args, kwargs = SAMPLES[name]
    op = getattr(ops, name)
    want, want_grads = forward_backward(op, args, kwargs)
    got, got_grads = forward_backward(torch.compile(op, fullgraph=True), args, kwargs)
    # Bit for bit, except where "fused" lets Inductor add floats in its own order.
    exact = mode == "deterministic" or not scatters_in_float(name)
    tol = {"rtol": 0, "atol": 0} if exact else {"rtol": 1e-6, "atol": 1e-6}
    torch.testing.assert_close(got, want, **tol)
    tol = {"rtol": 0, "atol": 0} if mode == "deterministic" else {"rtol": 1e-6, "atol": 1e-6}
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, **tol)


def compiled_code(fn, *args) -> str:
    _, code = run_and_get_code(torch.compile(fn, fullgraph=True), *args)
    return "\n".join(code)


def extern_calls(code: str) -> set:
    return set(re.findall(r"torch\.ops\.multigather\.(\w+)\.default\(", code))


def test_gathers_fuse_with_their_consumer():
    x, i = rand(64, 32), ints(0, 64, (100,))
    code = compiled_code(lambda x, i: (ops.index_select(x, 0, i) * 2.0).relu(), x, i)
    assert extern_calls(code) == set()
    assert re.search(r"cpp_fused_\w*index_select\w*mul\w*relu", code), code[:2000]


def test_float_scatters_stay_the_cpp_op_unless_fused():
    x, i, u = rand(8, 4), ints(0, 8, (20, 4)), rand(20, 4, seed=2)
    fn = lambda x, u: ops.scatter_add(x, 0, i, u * 2.0)  # noqa: E731
    assert extern_calls(compiled_code(fn, x, u)) == {"scatter_add"}
    torch._dynamo.reset()
    mto.set_compiled_scatters("fused")
    code = compiled_code(fn, x, u)
    assert extern_calls(code) == set()
    assert re.search(r"cpp_fused_\w*scatter_add", code)
    torch.testing.assert_close(torch.compile(fn)(x, u), fn(x, u))


def test_integer_scatter_add_fuses_in_deterministic_mode():
    x, i, u = ints(0, 9, (8, 4)), ints(0, 8, (20, 4)), ints(-5, 5, (20, 4), seed=2)
    fn = lambda x, u: ops.scatter_add(x, 0, i, u)  # noqa: E731
    assert extern_calls(compiled_code(fn, x, u)) == set()
    assert torch.equal(torch.compile(fn)(x, u), fn(x, u))


@pytest.mark.parametrize("mode", ["deterministic", "fused"])
def test_dynamic_shapes(mode):
    """Symbolic sizes: a torch row with an aten twin becomes it (gathers in both modes, float
    scatters in "fused"), a row without one (gather_multiaxis) keeps the C++ op; values equal
    eager at every size, and a negative index still raises."""
    mto.set_compiled_scatters(mode)
    cases = {
        "index_select": (lambda x, i, u: ops.index_select(x, 0, i), set()),
        "index_add": (lambda x, i, u: ops.index_add(x, 0, i, u), set() if mode == "fused" else {"index_add"}),
        "gather_multiaxis": (lambda x, i, u: ops.gather_multiaxis(x, i[:, None], [0]), {"gather_multiaxis"}),
    }
    for name, (fn, extern) in cases.items():
        torch._dynamo.reset()
        compiled = torch.compile(fn, fullgraph=True, dynamic=True)
        for n, k in ((6, 4), (9, 11), (3, 2)):
            x, i, u = rand(n, 3, seed=n), ints(0, n, (k,), seed=k), rand(k, 3, seed=k)
            torch.testing.assert_close(compiled(x, i, u), fn(x, i, u), rtol=1e-6, atol=1e-6)
        torch._dynamo.reset()
        _, code = run_and_get_code(torch.compile(fn, fullgraph=True, dynamic=True), rand(6, 3), ints(0, 6, (4,)),
                                   rand(4, 3))
        assert extern_calls("\n".join(code)) == extern, name
    # A negative index: sent out of range first where the aten op wraps it (index_select,
    # index_add), passed as it is to the ops that check the raw index (gather, the scatters).
    bad = {
        "index_select": lambda x, i: ops.index_select(x, 0, i[:, 0]),
        "index_add": lambda x, i: ops.index_add(x, 0, i[:, 0], x[:3]),
        "gather": lambda x, i: ops.gather(x, 0, i),
        "scatter_add": lambda x, i: ops.scatter_add(x, 0, i, x[:3]),
        "scatter_reduce": lambda x, i: ops.scatter_reduce(x, 0, i, x[:3], "amax", include_self=False),
    }
    for name, fn in bad.items():
        torch._dynamo.reset()
        compiled = torch.compile(fn, fullgraph=True, dynamic=True)
        good = torch.tensor([[1, 0, 2], [4, 4, 0], [2, 3, 1]])
        torch.testing.assert_close(compiled(rand(5, 3), good), fn(rand(5, 3), good))
        with pytest.raises((IndexError, RuntimeError), match="out of (bounds|range)"):
            compiled(rand(5, 3), torch.tensor([[1, 0, 2], [-1, -1, 0], [2, 3, 1]]))


@pytest.mark.parametrize("mode,fill", [("clamp", 0), ("wrap", 0), ("fill", 2.5), ("error", 0)])
def test_gather_index_modes(mode, fill):
    x = rand(4, 5, 3)
    i = ints(-4, 4, (4, 2, 2)) if mode == "error" else ints(-9, 9, (4, 2, 2))
    fn = lambda x, i: ops.gather_multiaxis(x, i, [1, 0], index_mode=mode, fill_value=fill)  # noqa: E731
    assert extern_calls(compiled_code(fn, x, i)) == set()
    want, want_grads = forward_backward(lambda x: fn(x, i), [x], {})
    mto.set_compiled_scatters("fused")  # the gradient (a scatter-add) fused too
    torch._dynamo.reset()
    got, got_grads = forward_backward(torch.compile(lambda x: fn(x, i), fullgraph=True), [x], {})
    assert torch.equal(got, want)
    torch.testing.assert_close(got_grads[0], want_grads[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("reduction", ["add", "max", "none"])
@pytest.mark.parametrize("mode", ["drop", "clamp", "wrap"])
def test_scatter_index_modes_fused(reduction, mode):
    mto.set_compiled_scatters("fused")
    x, u = rand(5, 3), rand(6, 3, seed=2)
    if reduction == "none":  # targets distinct once resolved: a replace's duplicates keep any one
        i = torch.tensor([[1], [6], [2], [-2], [-9]] if mode == "clamp" else [[0], [6], [2], [-2], [9]])
        u = u[:5]
    else:
        i = torch.tensor([[-1], [3], [7], [0], [-9], [2]])
    fn = lambda x, u: ops.scatter_multiaxis(x, i, u, [0], reduction=reduction, index_mode=mode)  # noqa: E731
    assert extern_calls(compiled_code(fn, x, u)) == set()
    torch.testing.assert_close(torch.compile(fn, fullgraph=True)(x, u), fn(x, u), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["gather out of range", "gather negative (no negative rule)",
                                  "index_select negative (no negative rule)", "scatter_add out of range",
                                  "scatter_add negative (no negative rule)",
                                  "scatter_reduce negative (no negative rule)", "gather_multiaxis out of range"])
def test_bad_indices_raise(case):
    mto.set_compiled_scatters("fused")
    x = rand(4, 5)
    if case == "gather out of range":
        fn, args = (lambda x, i: ops.gather(x, 1, i)), (x, torch.tensor([[0, 5]]))
    elif case == "gather negative (no negative rule)":
        fn, args = (lambda x, i: ops.gather(x, 1, i)), (x, torch.tensor([[0, -1]]))
    elif case == "index_select negative (no negative rule)":
        fn, args = (lambda x, i: ops.index_select(x, 0, i)), (x, torch.tensor([1, -1, 2]))
    elif case == "scatter_add out of range":
        fn, args = (lambda x, i: ops.scatter_add(x, 0, i, torch.ones(1, 5))), (x, torch.tensor([[4, 0, 0, 0, 0]]))
    elif case == "scatter_add negative (no negative rule)":
        fn, args = (lambda x, i: ops.scatter_add(x, 0, i, torch.ones(1, 5))), (x, torch.tensor([[0, 0, -1, 0, 0]]))
    elif case == "scatter_reduce negative (no negative rule)":
        fn, args = ((lambda x, i: ops.scatter_reduce(x, 0, i, torch.ones(1, 5), "amax", include_self=False)),
                    (x, torch.tensor([[0, 0, 0, -4, 0]])))
    else:
        fn, args = (lambda x, i: ops.gather_multiaxis(x, i, [0])), (x, torch.tensor([[-5]]))
    with pytest.raises(IndexError):
        fn(*args)  # eager: multigather's message
    with pytest.raises((IndexError, RuntimeError), match="out of (bounds|range)"):
        torch.compile(fn, fullgraph=True)(*args)


def test_compiled_scatter_add_is_deterministic():
    x = rand(64, 16)
    i = ints(0, 4, (4096, 16))  # many duplicates per target
    u = rand(4096, 16, seed=5)
    fn = torch.compile(lambda x, u: ops.scatter_add(x, 0, i, u * 1.5), fullgraph=True)
    want = ops.scatter_add(x, 0, i, u * 1.5)
    threads = torch.get_num_threads()
    try:
        for n in (1, 2, 1, 2):
            torch.set_num_threads(n)
            assert torch.equal(fn(x, u), want)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("reduce", ["amax", "amin", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_in_aten_equal_the_cpp_op(reduce, include_self):
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 4.0, 0.0], [0.0, 1.0, 2.0]])
    i = torch.tensor([[0, 1, 1], [0, 1, 1], [2, 0, 1], [0, 0, 1]])
    u = torch.tensor([[1.0, 2.0, 5.0], [1.0, 4.0, 5.0], [3.0, 1.0, 2.0], [0.5, 9.0, 5.0]])  # ties included
    fn = lambda x, u: ops.scatter_reduce(x, 0, i, u, reduce, include_self=include_self)  # noqa: E731
    want, want_grads = forward_backward(fn, [x, u], {})
    got, got_grads = forward_backward(torch.compile(fn, fullgraph=True), [x, u], {})
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=0, atol=0)
    torch._dynamo.reset()
    _, code = run_and_get_code(torch.compile(lambda x, u: torch.autograd.grad(fn(x, u).sum(), [x, u])),
                               x.requires_grad_(), u.requires_grad_())
    assert "scatter_reduce_values_backward.default(" not in "\n".join(code)


def test_set_compiled_scatters_checks_its_mode():
    with pytest.raises(ValueError, match="'atomic' is not 'deterministic' or 'fused'"):
        mto.set_compiled_scatters("atomic")
    assert mto.compiled_scatters() == "deterministic"


def test_modes_are_keyed_in_inductors_caches():
    """The same graph compiled in each mode: the second compile is not served the first's code
    (Inductor's caches key the mode)."""
    x, i, u = rand(8, 4), ints(0, 8, (20, 4)), rand(20, 4, seed=2)
    fn = lambda x, u: ops.scatter_add(x, 0, i, u)  # noqa: E731
    for mode, extern in (("deterministic", {"scatter_add"}), ("fused", set()), ("deterministic", {"scatter_add"})):
        mto.set_compiled_scatters(mode)
        torch._dynamo.reset()
        assert extern_calls(compiled_code(fn, x, u)) == extern, mode


class MessagePassing(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, src, dst):
        h = self.f.index_select(self.lin(x), 0, src)
        target = dst[:, None].expand(-1, x.shape[1])
        total = self.f.scatter_add(torch.zeros_like(x), 0, target, h)
        peak = self.f.scatter_reduce(torch.zeros_like(x), 0, target, h, "amax", include_self=False)
        return (total + peak).square().mean()


@pytest.mark.parametrize("mode", ["deterministic", "fused"])
def test_graph_layer_compiled_equals_unmodified_torch_model(mode):
    """A small torch.nn graph layer on multigather.torch, compiled, against the same layer on
    torch's own ops (eager): loss and gradients."""
    import multigather.torch as mt

    mto.set_compiled_scatters(mode)
    torch.manual_seed(0)
    ours, theirs = MessagePassing(mt), MessagePassing(torch)
    theirs.load_state_dict(ours.state_dict())
    x, src, dst = rand(30, 8), ints(0, 30, (90,)), ints(0, 30, (90,), seed=4)
    compiled = torch.compile(ours, fullgraph=True)
    a, b = compiled(x, src, dst), theirs(x, src, dst)
    torch.testing.assert_close(a, b)
    for p, q in zip(torch.autograd.grad(a, list(ours.parameters())), torch.autograd.grad(b, list(theirs.parameters()))):
        torch.testing.assert_close(p, q)


def test_graph_layer_compiled_reads_its_edge_ids_as_they_are():
    """Fused, the graph layer's gather, scatter-add and their gradients are aten's gather /
    scatter, whose Inductor loops check each raw index (a negative one too): no loop writes the
    edge ids out again (an int64 buffer) to map negatives out of range, and none is saved for
    the backward. The values are checked above and in test_bad_indices_raise."""
    import multigather.torch as mt

    mto.set_compiled_scatters("fused")
    layer = torch.compile(MessagePassing(mt), fullgraph=True)
    x, src, dst = rand(30, 8), ints(0, 30, (90,)), ints(0, 30, (90,), seed=4)
    _, code = run_and_get_code(lambda: layer(x, src, dst).backward())
    assert len(code) == 2  # the forward and the backward graph
    kernels = "\n".join(code)
    assert "cpp_fused" in kernels and extern_calls(kernels) == set()
    assert not re.search(r"int64_t\* out_ptr", kernels), kernels[:4000]


def test_routing_applies_under_compile():
    """An unedited torch model compiled and called inside routing(): the graph holds
    multigather's ops, fused by the rules; loss and gradients equal the unrouted eager model;
    outside routing() the same compiled model runs torch's own graph."""
    import multigather.torch as mt
    from torch._dynamo.testing import CompileCounterWithBackend

    torch.manual_seed(0)
    model = MessagePassing(torch)
    x, src, dst = rand(30, 8), ints(0, 30, (90,)), ints(0, 30, (90,), seed=4)
    want = model(x, src, dst)
    want_grads = torch.autograd.grad(want, list(model.parameters()))
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    with mt.routing():
        got = compiled(x, src, dst)
    torch.testing.assert_close(got, want)
    for g, w in zip(torch.autograd.grad(got, list(model.parameters())), want_grads):
        torch.testing.assert_close(g, w)
    targets = {str(n.target) for n in counter.graphs[0].graph.nodes if n.op == "call_function"}
    assert {"multigather.index_select.default", "multigather.scatter_add.default",
            "multigather.scatter_reduce.default"} <= targets
    compiled(x, src, dst)  # outside: a second graph, torch's own ops
    assert counter.frame_count == 2
    assert not any("multigather" in str(n.target) for n in counter.graphs[1].graph.nodes)
    torch._dynamo.reset()
    with mt.routing():  # the gather fused; the float scatters, and the gather's gradient, the C++ op
        # the backward run inside: its graph is compiled when it first runs (lazily, in a
        # process where no earlier test compiled one eagerly)
        again = torch.compile(model, fullgraph=True)
        _, code = run_and_get_code(lambda: torch.autograd.grad(again(x, src, dst), list(model.parameters())))
    assert extern_calls("\n".join(code)) == {"scatter_add", "scatter_reduce", "index_select_backward"}


def test_multigather_calls_in_a_frame_dynamo_gives_up_on_run_eagerly_and_inline_where_traced():
    """A model frame that Dynamo skips (a data-dependent graph break inside a loop) runs its
    multigather.torch calls eagerly, as it runs torch's own functions: no call becomes a graph of
    its own (each would pay AOTAutograd's wrappers, more than the op). A traced caller still
    inlines them (fullgraph: one graph holding the op). Values and gradients equal eager torch."""
    import torch._dynamo.utils as dynamo_utils

    import multigather.torch as mt

    def f(lib, x, table):
        weight, choice = x.softmax(-1).max(-1)
        out = torch.zeros_like(table)
        for e in range(3):
            rows = (choice == e).nonzero().squeeze(1)
            out = lib.index_add(out, 0, rows, lib.index_select(table, 0, rows) * weight[rows, None])
        return lib.scatter_add(out, 0, choice[:, None].expand(-1, table.shape[1]), table)

    x, table = rand(64, 3), rand(64, 5, seed=3).requires_grad_()
    torch._dynamo.reset()
    dynamo_utils.counters.clear()
    compiled = torch.compile(lambda x, table: f(mt, x, table))
    got = compiled(x, table)
    want = f(torch, x, table)
    torch.testing.assert_close(got, want)
    g = rand(64, 5, seed=5)
    torch.testing.assert_close(torch.autograd.grad(got, table, g)[0], torch.autograd.grad(want, table, g)[0])
    compiled(x, table)  # a second call: no recompile makes graphs either
    assert dynamo_utils.counters["stats"]["unique_graphs"] == 0, dict(dynamo_utils.counters["stats"])
    # Traced from a caller: inlined into its graph.
    i = ints(0, 64, (7,))
    _, code = run_and_get_code(torch.compile(lambda t: mt.index_select(t, 0, i) * 2, fullgraph=True), table.detach())
    assert "index_select" in code[0] and dynamo_utils.counters["stats"]["unique_graphs"] == 1


def test_routing_with_a_frame_dynamo_gives_up_on():
    """A model whose compiled frame Dynamo skips (a data-dependent graph break inside a loop)
    runs eagerly under routing(): its tuple-returning torch calls (x.max(-1)) still unpack, and
    the result equals the unrouted model's."""
    import multigather.torch as mt

    def f(x, table):
        weight, choice = x.softmax(-1).max(-1)
        out = torch.zeros_like(table)
        for e in range(3):
            rows = (choice == e).nonzero().squeeze(1)
            out = out.index_add(0, rows, table.index_select(0, rows) * weight[rows, None])
        return out

    x, table = rand(64, 3), rand(64, 5, seed=3)
    want = f(x, table)
    compiled = torch.compile(f)
    torch.testing.assert_close(compiled(x, table), want)
    with mt.routing():
        torch.testing.assert_close(compiled(x, table), want)
