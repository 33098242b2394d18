"""The per-call fast path of the registry ops (python/src/op_fast.cpp: run_op_fast) and the
output memory (src/core/output_memory.cpp) against the general path and numpy.

Every op of the registry runs once through the fast path and once through the general DLPack
path (multigather._registry.run_general) on the same operands; the results must be equal, of the
same dtype and framework. Repeated calls (the cached lowering, its data pointers moved to new
operands), other strides, lists, out=, errors and torch tensors are checked the same way. No
timing here: bench/peers.py measures.
"""

from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import multigather
from multigather import _multigather as core
from multigather import _registry

RNG = np.random.default_rng(20261122)


def data(shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 100).astype(dtype)


def ints(lo, hi, shape, dtype=np.int64):
    return RNG.integers(lo, hi, shape).astype(dtype)


# op, input shape, indices factory, attributes (by name; the op's defaults for the others)
CALLS = [
    ("gather_multiaxis", (3, 4, 5), lambda: np.stack([ints(0, 4, (3, 2, 1)), ints(0, 5, (3, 2, 1))], -1).reshape(3, 2, 2), {"axes": [1, 2]}),
    ("gather_multiaxis", (3, 4, 5), lambda: ints(-9, 9, (3, 2, 1)), {"axes": [1], "index_mode": "wrap"}),
    ("gather_multiaxis", (3, 4, 5), lambda: ints(-9, 9, (3, 2, 1)), {"axes": [1], "index_mode": "fill", "fill_value": 7.5}),
    ("onnx.Gather", (3, 4, 5), lambda: ints(-4, 4, (2, 3)), {"axis": 1}),
    ("onnx.GatherElements", (3, 4, 5), lambda: ints(-4, 4, (3, 2, 5)), {"axis": 1}),
    ("onnx.GatherND", (3, 4, 5), lambda: ints(0, 4, (3, 2, 1)), {"batch_dims": 1}),
    ("torch.gather", (3, 4, 5), lambda: ints(0, 4, (3, 2, 5)), {"dim": 1}),
    ("torch.take", (3, 4, 5), lambda: ints(-60, 60, (2, 3)), {}),
    ("torch.take_along_dim", (3, 4, 5), lambda: ints(-8, 8, (3, 2, 5)), {"dim": 1}),
    ("torch.take_along_dim", (3, 4, 5), lambda: ints(0, 60, (7,)), {"dim": None}),
    ("torch.index_select", (3, 4, 5), lambda: ints(0, 4, (6,)), {"dim": 1}),
    ("numpy.take", (3, 4, 5), lambda: ints(-4, 4, (2, 3)), {"axis": 1}),
    ("numpy.take", (3, 4, 5), lambda: ints(-70, 70, (2, 3)), {"axis": None, "mode": "clip"}),
    ("numpy.take", (3, 4, 5), lambda: ints(-70, 70, (4,)), {"axis": 2, "mode": "wrap"}),
    ("numpy.take_along_axis", (3, 4, 5), lambda: ints(-4, 4, (3, 2, 1)), {"axis": 1}),
    ("numpy.take_along_axis", (3, 4, 5), lambda: ints(0, 60, (9,)), {"axis": None}),
    ("numpy.advanced_index", (3, 4, 5), lambda: np.stack([ints(0, 3, (2, 3)), ints(0, 5, (2, 3))], -1), {"index_dims": [0, 2]}),
    ("tf.gather", (3, 4, 5), lambda: ints(0, 4, (2,)), {"axis": 1}),
    ("tf.gather", (3, 4, 5), lambda: ints(0, 4, (3, 2)), {"axis": 1, "batch_dims": 1}),
    ("tf.gather_nd", (3, 4, 5), lambda: np.stack([ints(0, 3, (2,)), ints(0, 4, (2,))], -1), {}),
    ("jax.numpy.take", (3, 4, 5), lambda: ints(-9, 9, (2, 3)), {"axis": 1}),
    ("jax.numpy.take", (3, 4, 5), lambda: ints(-9, 9, (2, 3)), {"axis": 1, "mode": "fill", "fill_value": -1.0}),
    ("jax.numpy.take_along_axis", (3, 4, 5), lambda: ints(-9, 9, (3, 2, 5)), {"axis": 1, "mode": "clip"}),
    ("coreml.gather", (3, 4, 5), lambda: ints(0, 4, (2, 3)), {"axis": 1}),
    ("coreml.gather_along_axis", (3, 4, 5), lambda: ints(0, 4, (3, 2, 5)), {"axis": 1}),
    ("coreml.gather_nd", (3, 4, 5), lambda: np.stack([ints(0, 3, (2,)), ints(0, 4, (2,))], -1), {}),
    ("tosa.gather", (2, 5, 3), lambda: ints(0, 5, (2, 4), np.int32), {}),
    ("tensor.gather", (3, 4, 5), lambda: ints(0, 4, (2, 1)), {"gather_dims": [1]}),
    ("tcp.gather", (3, 4, 5), lambda: ints(0, 4, (3, 2, 5)), {"dim": 1}),
    ("tcp.gather_nd", (3, 4, 5), lambda: np.stack([ints(0, 3, (2,)), ints(0, 4, (2,))], -1), {}),
    ("stablehlo.gather", (3, 4, 5), lambda: ints(0, 3, (2, 1)),
     {"offset_dims": [1, 2], "collapsed_slice_dims": [0], "start_index_map": [0],
      "index_vector_dim": 1, "slice_sizes": [1, 4, 5]}),
    ("webnn.gather", (3, 4, 5), lambda: ints(0, 4, (2, 3)), {"axis": 1}),
    ("webnn.gatherElements", (3, 4, 5), lambda: ints(0, 4, (3, 2, 5)), {"axis": 1}),
    ("webnn.gatherND", (3, 4, 5), lambda: np.stack([ints(0, 3, (2,)), ints(0, 4, (2,))], -1), {}),
    ("dml.Gather", (3, 4, 5), lambda: ints(0, 4, (1, 1, 6)), {"axis": 1, "index_dimensions": 1}),
    ("dml.GatherElements", (3, 4, 5), lambda: ints(0, 4, (3, 2, 5)), {"axis": 1}),
    ("dml.GatherND", (3, 4, 5), lambda: np.stack([ints(0, 3, (1, 2)), ints(0, 4, (1, 2))], -1),
     {"input_dimension_count": 3, "indices_dimension_count": 2}),
    # segment ops: called as gathers (data, segment_ids)
    *[(f"jax.ops.segment_{r}", (6, 2, 3), lambda: ints(-1, 5, (6,)), {"num_segments": 4})
      for r in ("sum", "prod", "max", "min")],
    *[(f"tf.math.unsorted_segment_{r}", (6, 2, 3), lambda: ints(-1, 4, (6,)), {"num_segments": 4})
      for r in ("sum", "prod", "max", "min", "mean", "sqrt_n")],
    *[(f"tf.math.segment_{r}", (6, 2, 3), lambda: np.sort(ints(0, 4, (6,))), {})
      for r in ("sum", "prod", "max", "min", "mean")],
    ("torch.segment_reduce", (6, 2, 3), lambda: np.array([2, 0, 3, 1]), {"reduce": "mean"}),
    ("torch_scatter.scatter", (6, 2, 3), lambda: ints(0, 4, (2,)), {"dim": 1, "reduce": "max"}),
    ("torch_scatter.segment_coo", (6, 2, 3), lambda: np.sort(ints(0, 4, (6,))), {"dim_size": 4, "reduce": "mean"}),
    ("torch_scatter.segment_csr", (6, 2, 3), lambda: np.array([0, 2, 2, 6]), {"reduce": "sum"}),
    ("torch.nn.functional.embedding_bag", (6, 3), lambda: ints(0, 6, (4, 2)), {"mode": "mean", "padding_idx": 2}),
]


def fast(op, input, indices, out=None, **attrs):
    """run_op_fast with the attributes in declaration order (the op's defaults for the rest)."""
    handle, names = _registry._fast_entry(op)
    return core.run_op_fast(handle, input, indices, out,
                            *[attrs.get(n, _registry.DEFAULT) for n in names])


def general(op, input, indices, out=None, **attrs):
    return _registry.run_general(op, input, indices, out, **attrs)


def assert_same(got, expected):
    assert type(got) is type(expected)
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, expected)


def test_every_registry_op_has_a_case():
    gathers = {op for op in multigather.ops() if not multigather._registry.is_scatter(op)}
    assert {c[0] for c in CALLS} == gathers
    scatters = {op for op in multigather.ops() if multigather._registry.is_scatter(op)}
    assert {c[0] for c in scatter_calls()} == scatters


def scatter_calls():
    from test_explain_svg import SCATTER_CASES  # one call per scatter op of the registry

    return SCATTER_CASES


def scatter_operands(op, input_shape, indices_shape, updates_shape, attrs):
    """Data, indices of the op's index dtype (values 0 and 1: in range for every case), updates."""
    x, u = data(input_shape), np.asarray(data(updates_shape))  # 0-d: an ndarray, not a scalar
    for dtype in (np.int64, np.int32):
        i = ints(0, 2, indices_shape, dtype)
        try:
            _registry.run_scatter_general(op, x, i, u, **attrs)
            return x, i, u
        except TypeError:  # the op's index dtype rule
            continue
    raise AssertionError(f"{op}: no index dtype accepted")


def fast_scatter(op, input, indices, updates, out=None, **attrs):
    handle, names = _registry._fast_entry(op)
    return core.run_op_fast(handle, input, indices, updates, out,
                            *[attrs.get(n, _registry.DEFAULT) for n in names])


@pytest.mark.parametrize("op,input_shape,indices_shape,updates_shape,attrs", scatter_calls(),
                         ids=[c[0] for c in scatter_calls()])
def test_scatter_fast_path_equals_the_general_path(op, input_shape, indices_shape, updates_shape, attrs):
    x, i, u = scatter_operands(op, input_shape, indices_shape, updates_shape, attrs)
    for _ in range(3):  # the first call lowers; the next ones reuse the lowering, new data
        x, i, u = data(input_shape), ints(0, 2, indices_shape, i.dtype), np.asarray(data(updates_shape))
        want = _registry.run_scatter_general(op, x, i, u, **attrs)
        got = fast_scatter(op, x, i, u, **attrs)
        assert got is not NotImplemented
        assert_same(got, want)
        assert_same(multigather.run(op, x, i, updates=u, **attrs), want)
        # In place: out is the input itself.
        inplace = x.copy()
        assert multigather.run(op, inplace, i, updates=u, out=inplace, **attrs) is inplace
        np.testing.assert_array_equal(inplace, want)
    # Other strides, same shapes: reversed and strided input and updates.
    x = data(input_shape[:-1] + (2 * input_shape[-1],))[..., ::-2]
    u = np.asarray(data(updates_shape))
    u = np.asfortranarray(u) if u.ndim else u
    got = fast_scatter(op, x, i, u, **attrs)
    assert got is not NotImplemented
    assert_same(got, _registry.run_scatter_general(op, x, i, u, **attrs))


def test_scatter_errors_of_the_door_are_the_general_paths():
    # An execute error (an index out of range) is raised by the fast path itself, worded as the
    # general path words it; out= is left unchanged either way.
    x, u = data((4, 3)), data((2, 3))
    bad = np.array([1, 9])
    for op, attrs in (("torch.index_add", {"dim": 0}), ("numpy.add_at", {})):
        out = x.copy()
        with pytest.raises(IndexError) as fast_error:
            multigather.run(op, out, bad, updates=u, out=out, **attrs)
        np.testing.assert_array_equal(out, x)
        with pytest.raises(IndexError) as general_error:
            _registry.run_general_call(op, x.copy(), bad, updates=u, **attrs)
        assert str(fast_error.value) == str(general_error.value)
    with pytest.raises(IndexError) as fast_error:
        multigather.run("onnx.Gather", x, np.array([0, 4]), axis=0)
    with pytest.raises(IndexError) as general_error:
        _registry.run_general_call("onnx.Gather", x, np.array([0, 4]), axis=0)
    assert str(fast_error.value) == str(general_error.value)


def test_the_door_sends_what_it_does_not_take_to_the_general_path():
    x, i = data((4, 3)), np.array([0, 2])
    with pytest.raises(ValueError, match="unknown op 'onnx.Gatherr'"):
        multigather.run("onnx.Gatherr", x, i)
    with pytest.raises(ValueError, match="has no attribute 'axsi'"):
        multigather.run("onnx.Gather", x, i, axsi=0)
    with pytest.raises(ValueError, match="is a scatter: it needs source"):
        multigather.run("torch.index_add", x, i, dim=0)
    with pytest.raises(ValueError, match="is a gather: it takes no updates"):
        multigather.run("onnx.Gather", x, i, updates=x)
    with pytest.raises(TypeError):
        multigather.run("onnx.Gather", x)  # a missing operand: the general path's TypeError
    np.testing.assert_array_equal(multigather.run("onnx.Gather", memoryview(x), i, axis=0), x[[0, 2]])
    # Keyword operands, op names built at run time (another str object each call) and many ops.
    np.testing.assert_array_equal(multigather.run(op="onnx.Gather", input=x, indices=i), x[[0, 2]])
    for k in range(100):
        name = "".join(["onnx.", "Gather"])
        np.testing.assert_array_equal(multigather.run(name, x, i, axis=k % 2), np.take(x, i, axis=k % 2))


@pytest.mark.parametrize("op,shape,make_indices,attrs", CALLS,
                         ids=[f"{c[0]}-{j}" for j, c in enumerate(CALLS)])
def test_fast_path_equals_the_general_path(op, shape, make_indices, attrs):
    for _ in range(3):  # the first call lowers; the next ones reuse the lowering, new data
        x, i = data(shape), make_indices()
        got = fast(op, x, i, **attrs)
        assert got is not NotImplemented
        assert_same(got, general(op, x, i, **attrs))
        assert_same(multigather.run(op, x, i, **attrs), got)
    # Other strides, same shapes: a reversed, strided input and a Fortran-ordered copy of i.
    x = data(tuple(shape[:-1]) + (2 * shape[-1],))[(slice(None),) * (len(shape) - 2) + (slice(None, None, -1),
                                                                                         slice(None, None, 2))]
    i = np.asfortranarray(make_indices())
    got = fast(op, x, i, **attrs)
    assert got is not NotImplemented
    assert_same(got, general(op, x, i, **attrs))


@pytest.mark.parametrize("op,shape,make_indices,attrs", CALLS[:8],
                         ids=[c[0] for c in CALLS[:8]])
def test_out_is_written_and_returned(op, shape, make_indices, attrs):
    x, i = data(shape), make_indices()
    expected = general(op, x, i, **attrs)
    out = np.full(expected.shape, -1, expected.dtype)
    assert fast(op, x, i, out, **attrs) is out
    np.testing.assert_array_equal(out, expected)
    # A strided out of the right shape.
    big = np.full(expected.shape + (2,), -1, expected.dtype)
    strided = big[..., 0]
    assert fast(op, x, i, strided, **attrs) is strided
    np.testing.assert_array_equal(strided, expected)


def test_wrappers_match_numpy_on_lists_and_arrays():
    x = data((16, 16))
    np.testing.assert_array_equal(multigather.numpy.take(x, [3, 1, 4, 1], axis=0),
                                  np.take(x, [3, 1, 4, 1], axis=0))
    np.testing.assert_array_equal(multigather.numpy.take(x, (3, -1), axis=1),
                                  np.take(x, (3, -1), axis=1))
    np.testing.assert_array_equal(multigather.numpy.take(x, 5), np.take(x, 5))
    i = ints(0, 16, (16, 4))
    np.testing.assert_array_equal(multigather.onnx.gather_elements(x, i, axis=1),
                                  np.take_along_axis(x, i, axis=1))
    np.testing.assert_array_equal(multigather.numpy.take_along_axis(x, i.tolist(), axis=1),
                                  np.take_along_axis(x, i, axis=1))
    out = np.empty((4, 16), np.float32)
    assert multigather.numpy.take(x, [3, 1, 4, 1], axis=0, out=out) is out
    np.testing.assert_array_equal(out, x[[3, 1, 4, 1]])


def test_run_fills_in_defaults_that_are_not_none():
    x, i = data((3, 4)), ints(0, 4, (3, 2))
    # numpy.take_along_axis's axis defaults to -1 (None would flatten).
    np.testing.assert_array_equal(multigather.run("numpy.take_along_axis", x, i),
                                  np.take_along_axis(x, i, axis=-1))
    j = ints(0, 3, (2,))
    assert_same(multigather.run("tf.gather", x, j), general("tf.gather", x, j))
    assert_same(multigather.run("jax.numpy.take", x, j, axis=0), general("jax.numpy.take", x, j, axis=0))


@pytest.mark.parametrize("call", [
    lambda: multigather.numpy.take(data((3, 4)), [0, 9], axis=1),  # IndexError
    lambda: multigather.onnx.gather(data((3, 4)), ints(0, 3, (2,)), axis=5),  # ValueError
    lambda: multigather.onnx.gather(data((3, 4)), np.zeros(2, np.float32)),  # TypeError
    lambda: multigather.numpy.take(data((3, 4)), [0], axis=0, mode="nope"),  # ValueError
    lambda: multigather.onnx.gather(data((3, 4)), [0], axis="x"),  # TypeError
    lambda: multigather.torch.gather(data((3, 4)), 1, ints(-1, 0, (3, 4))),  # IndexError
])
def test_errors_are_the_general_paths(call):
    with pytest.raises(Exception) as fast_error:
        call()
    run_fast = _registry.run_fast
    try:
        # The same call with the fast path off: the general path's exception and message.
        _registry.run_fast = lambda *a: NotImplemented
        for module in (multigather.numpy, multigather.onnx, multigather.torch):
            module.run_fast = _registry.run_fast
        with pytest.raises(Exception) as general_error:
            call()
    finally:
        _registry.run_fast = run_fast
        for module in (multigather.numpy, multigather.onnx, multigather.torch):
            module.run_fast = run_fast
    assert type(fast_error.value) is type(general_error.value)
    assert str(fast_error.value) == str(general_error.value)


def test_bad_out_gets_the_general_messages():
    x, i = data((3, 4)), [0, 2]
    with pytest.raises(TypeError, match="out dtype"):
        multigather.numpy.take(x, i, axis=0, out=np.empty((2, 4), np.float64))
    with pytest.raises(ValueError, match="out shape"):
        multigather.numpy.take(x, i, axis=0, out=np.empty((3, 4), np.float32))
    read_only = np.empty((2, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        multigather.numpy.take(x, i, axis=0, out=read_only)
    with pytest.raises(ValueError, match="overlaps"):
        multigather.numpy.take(x, i, axis=0, out=x[:2])


def test_not_taken_only_without_a_reader():
    x = data((3, 4))
    handle, _ = _registry._fast_entry("onnx.Gather")
    # Another attribute type or array type: the door's general conversion and DLPack / buffer
    # readers take it in the same call.
    np.testing.assert_array_equal(core.run_op_fast(handle, x, np.array([0, 1]), None, np.int64(1)), x[:, [0, 1]])
    np.testing.assert_array_equal(core.run_op_fast(handle, memoryview(x), np.array([0, 1]), None, 0), x[[0, 1]])
    # No reader (numpy's C API and DLPack both refuse a non-native byte order): NotImplemented,
    # and the wrapper's normalization gives the message.
    assert core.run_op_fast(handle, x.astype(">f4"), np.array([0, 1]), None, 0) is NotImplemented
    np.testing.assert_array_equal(multigather.onnx.gather(x, np.array([0, 1]), axis=np.int64(1)),
                                  x[:, [0, 1]])
    with pytest.raises(TypeError, match="non-native byte order"):
        multigather.onnx.gather(x.astype(">f4"), [0, 1])


def test_op_handle_checks_the_attribute_order():
    with pytest.raises(ValueError, match="in this order"):
        core.op_handle("numpy.take", ["mode", "axis"])
    with pytest.raises(ValueError, match="unknown op"):
        core.op_handle("numpy.takee", [])
    with pytest.raises(TypeError):
        core.run_op_fast(_registry._fast_entry("numpy.take")[0], data((2,)), [0], None, None)


# ---- the output memory ------------------------------------------------------------------------


def test_large_results_own_their_memory_and_blocks_are_reused():
    x = data((1024, 256))
    i = ints(0, 1024, (512,))
    before = core.output_memory_stats()
    a = multigather.numpy.take(x, i, axis=0)  # 512 KiB: a mapped block
    assert a.base is not None and type(a.base).__name__ == "PyCapsule"
    expected = np.take(x, i, axis=0)
    del x, i
    gc.collect()
    np.testing.assert_array_equal(a, expected)
    del a
    x, i = data((1024, 256)), ints(0, 1024, (512,))
    for _ in range(3):
        np.testing.assert_array_equal(multigather.numpy.take(x, i, axis=0), np.take(x, i, axis=0))
    after = core.output_memory_stats()
    assert after["reused"] >= before["reused"] + 3
    assert after["cached_bytes"] <= after["limit_bytes"]


def test_cache_limit_zero_unmaps_and_still_works():
    limit = core.output_memory_stats()["limit_bytes"]
    try:
        core.set_output_memory_cache_limit(0)
        assert core.output_memory_stats()["cached_bytes"] == 0
        x, i = data((1024, 256)), ints(0, 1024, (512, 1))
        for _ in range(2):
            np.testing.assert_array_equal(multigather.gather_multiaxis(x, i, [0]), x[i[:, 0]])
        assert core.output_memory_stats()["cached_bytes"] == 0
    finally:
        core.set_output_memory_cache_limit(limit)


def test_general_path_results_use_the_output_memory_too():
    x = data((1024, 256))
    i = ints(0, 1024, (512,))
    expected = np.take(x, i, axis=0)
    for _ in range(2):  # Tensor storage through DLPack (the general path)
        np.testing.assert_array_equal(general("numpy.take", x, i, axis=0), expected)


def test_threads_share_the_cached_lowerings():
    x = data((512, 512))
    indices = [ints(0, 512, (256,)) for _ in range(4)]
    errors = []

    def work(i):
        try:
            for _ in range(20):
                np.testing.assert_array_equal(multigather.numpy.take(x, i, axis=0), x[i])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in indices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- torch tensors ----------------------------------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_torch_in_torch_out(torch):
    x = torch.from_numpy(data((16, 16)))
    i = torch.from_numpy(ints(0, 16, (16, 4)))
    for _ in range(2):
        got = multigather.torch.gather(x, 1, i)
        assert isinstance(got, torch.Tensor)
        assert torch.equal(got, torch.gather(x, 1, i))
    assert torch.equal(multigather.torch.index_select(x.t(), 0, i[:, 0]),
                       torch.index_select(x.t(), 0, i[:, 0]))
    assert torch.equal(multigather.torch.take(x, i), torch.take(x, i))
    out = torch.empty(16, 4)
    assert multigather.run("torch.gather", x, i, out=out, dim=1) is out
    assert torch.equal(out, torch.gather(x, 1, i))


def test_torch_tensors_the_fast_path_leaves_to_the_general_path(torch):
    x = torch.randn(4, 5, requires_grad=True)
    i = torch.tensor([[0, 2], [1, 1], [4, 0], [3, 3]])
    got = multigather.torch.gather(x, 1, i)  # torch.ops.multigather.gather: differentiable
    assert torch.equal(got, torch.gather(x.detach(), 1, i)) and got.grad_fn is not None
    with pytest.raises(RuntimeError, match="requires grad"):  # no autograd here: refused
        multigather.run("torch.gather", x, i, dim=1)
    with torch.no_grad():  # read detached
        assert torch.equal(multigather.run("torch.gather", x, i, dim=1), torch.gather(x, 1, i))
    c = torch.randn(4, 5, dtype=torch.complex64)
    assert torch.equal(multigather.torch.gather(c.conj(), 1, i), torch.gather(c.conj(), 1, i))
    neg = c.conj().imag  # a real tensor with the negative bit
    assert neg.is_neg()
    assert torch.equal(multigather.torch.gather(neg, 1, i), torch.gather(neg.resolve_neg(), 1, i))
    b = torch.randn(4, 5).to(torch.bfloat16)
    assert torch.equal(multigather.torch.gather(b, 1, i), torch.gather(b, 1, i))
    sparse = torch.eye(4).to_sparse()
    with pytest.raises(Exception):
        multigather.torch.gather(sparse, 1, i[:, :1])


def test_torch_views_offsets_and_dtypes(torch):
    base = torch.arange(6 * 8 * 5, dtype=torch.float32).reshape(6, 8, 5)
    x = base[1:, ::2, :].transpose(0, 2)  # storage offset, strides, transposed: [5, 4, 5]
    i = torch.from_numpy(ints(0, 4, (5, 3, 5)))
    assert torch.equal(multigather.torch.gather(x, 1, i), torch.gather(x, 1, i))
    for dtype in (torch.bool, torch.int8, torch.float16, torch.float64, torch.complex64):
        y = (base * 3 % 7).to(dtype)
        j = torch.from_numpy(ints(0, 8, (6, 2, 5)))
        got = multigather.torch.gather(y, 1, j)
        assert got.dtype == dtype and torch.equal(got, torch.gather(y, 1, j))
    b = base.to(torch.bfloat16)
    j = torch.from_numpy(ints(0, 8, (6, 2, 5)))
    out = torch.empty(6, 2, 5, dtype=torch.bfloat16)
    assert multigather.run("torch.gather", b, j, out=out, dim=1) is out
    assert torch.equal(out, torch.gather(b, 1, j))
    i32 = j.to(torch.int32)
    assert torch.equal(multigather.torch.gather(base, 1, i32), torch.gather(base, 1, j))


def test_torch_results_own_their_memory(torch):
    x = torch.randn(1024, 256)
    i = torch.randint(0, 1024, (512,))
    before = core.output_memory_stats()
    got = multigather.torch.index_select(x, 0, i)  # 512 KiB: output memory through DLPack
    expected = torch.index_select(x, 0, i)
    del x
    gc.collect()
    assert torch.equal(got, expected)
    view = got[3:]
    del got
    gc.collect()
    assert torch.equal(view, expected[3:])  # the storage lives as long as a view of it
    freed = []
    t = threading.Thread(target=lambda: freed.append(view.sum()))
    t.start()
    t.join()
    del view
    gc.collect()
    assert core.output_memory_stats()["cached_bytes"] >= before["cached_bytes"]
    b = torch.randn(4, 5).to(torch.bfloat16)
    j = torch.tensor([[0, 2], [1, 1], [4, 0], [3, 3]])
    got = multigather.torch.gather(b, 1, j)
    assert got.dtype == torch.bfloat16 and torch.equal(got, torch.gather(b, 1, j))


def test_torch_fast_hooks_are_on_when_built_for_this_torch(torch):
    # multigather._torch_fast (python/torch_fast) reads torch tensors from their at::Tensor and
    # makes torch results; scripts/test-python.sh builds it against the installed torch and sets
    # MULTIGATHER_EXPECT_TORCH_FAST=1, so that a build without it fails here instead of silently
    # taking the DLPack route.
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(multigather.torch.gather(x, 1, torch.tensor([[2], [0]])),
                       torch.tensor([[2.0], [3.0]]))
    state = core.torch_fast_state()
    if os.environ.get("MULTIGATHER_TORCH_FAST") == "0":  # the run of the DLPack route below
        assert state == "off: MULTIGATHER_TORCH_FAST=0"
    elif os.environ.get("MULTIGATHER_EXPECT_TORCH_FAST") == "1":
        assert state == f"on (torch {torch.__version__})"
    elif not state.startswith("on"):
        pytest.skip(f"torch tensors take the DLPack route: {state}")


def test_torch_tests_pass_on_the_dlpack_route(torch):
    # Without multigather._torch_fast (an isolated `pip install .`, another torch version) torch
    # tensors take the DLPack route: this file's torch tests again, in a process that turns the
    # hooks off.
    import subprocess
    import sys

    if os.environ.get("MULTIGATHER_TORCH_FAST") == "0":
        pytest.skip("this is the run on the DLPack route")
    env = dict(os.environ, MULTIGATHER_TORCH_FAST="0")
    env.pop("MULTIGATHER_EXPECT_TORCH_FAST", None)
    run = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider",
                          "-k", "torch"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


TORCH_GATHERS = [  # (the function's name in multigather.torch and torch, args after input)
    ("gather", lambda torch: (1, torch.tensor([[0, 3], [2, 2], [1, 0]]))),
    ("take", lambda torch: (torch.tensor([[11, -1], [0, 5]]),)),
    ("take_along_dim", lambda torch: (torch.tensor([[0, 3], [2, 2], [1, 0]]), 1)),
    ("index_select", lambda torch: (1, torch.tensor([3, 0, 3]))),
]


def _torch_pair(torch, name, args_of):
    mine = getattr(multigather.torch, name)
    theirs = getattr(torch, name)
    return mine, theirs, args_of(torch)


@pytest.mark.parametrize("name, args_of", TORCH_GATHERS)
def test_torch_modes_see_the_torch_op(torch, name, args_of):
    # The fast path takes a plain eager call only: under a torch function mode or a dispatch
    # mode the call is torch.ops.multigather.<name>, which the mode sees.
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen:
        def __init__(self):
            super().__init__()
            self.names = []

        def record(self, func, args, kwargs):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    class FunctionMode(Seen, TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return self.record(func, args, kwargs)

    class DispatchMode(Seen, TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return self.record(func, args, kwargs)

    mine, theirs, args = _torch_pair(torch, name, args_of)
    x = torch.randn(3, 4)
    expected = theirs(x, *args)
    for mode in (FunctionMode, DispatchMode):
        with mode() as m:
            got = mine(x, *args)
        assert f"multigather.{name}.default" in m.names, (mode.__name__, m.names)
        assert torch.equal(got, expected)
    with FunctionMode() as m:  # the mode is gone: the next call is not recorded
        pass
    assert torch.equal(mine(x, *args), expected) and m.names == []


@pytest.mark.parametrize("name, args_of", TORCH_GATHERS)
def test_torch_grad_modes_inference_and_subclasses(torch, name, args_of):
    mine, theirs, args = _torch_pair(torch, name, args_of)
    x = torch.randn(3, 4, requires_grad=True)
    got = mine(x, *args)  # grad mode: the torch op, differentiable
    assert got.grad_fn is not None and torch.equal(got, theirs(x, *args))
    with torch.no_grad():  # outside grad mode a result without grad_fn, as torch's
        got, expected = mine(x, *args), theirs(x, *args)
    assert not got.requires_grad and got.grad_fn is None and torch.equal(got, expected)
    with torch.inference_mode():  # an inference tensor, as torch's
        y = torch.randn(3, 4)
        got, expected = mine(y, *args), theirs(y, *args)
        assert got.is_inference() == expected.is_inference() and torch.equal(got, expected)
    p = torch.nn.Parameter(torch.randn(3, 4), requires_grad=False)  # a Tensor subclass
    assert torch.equal(mine(p, *args), theirs(p, *args))
    c = torch.randn(3, 4, dtype=torch.complex64)
    assert torch.equal(mine(c.conj(), *args), theirs(c.conj(), *args))  # the conjugate bit
    assert torch.equal(mine(torch._neg_view(x.detach()), *args), theirs(-x.detach(), *args))


def test_torch_autograd_calls_go_straight_to_the_torch_op(torch):
    # A call that only autograd must see (plain CPU tensors, one requiring grad in grad mode)
    # takes _torch_fast.call_op: the same torch.ops.multigather op through the dispatcher from
    # C++. Its values, autograd node, gradients and errors are the torch.ops call's; every other
    # call gets NotImplemented (the caller takes torch.ops' own road).
    from multigather import _torch_dispatch

    x = torch.randn(6, 5, requires_grad=True)
    u = torch.randn(6, 3, requires_grad=True)
    i = torch.tensor([[0, 4, 4], [1, 1, 0], [3, 2, 1], [0, 0, 0], [4, 3, 2], [2, 2, 4]])
    rows = torch.tensor([5, 0, 5])
    r = torch.randn(3, 5, requires_grad=True)
    mt = multigather.torch
    calls = [  # (multigather.torch's call, torch's, the operands with a gradient)
        (lambda: mt.gather(x, 1, i), lambda: torch.gather(x, 1, i), [x]),
        (lambda: mt.take_along_dim(x, i, 1), lambda: torch.take_along_dim(x, i, 1), [x]),
        (lambda: mt.index_select(x, 0, rows), lambda: torch.index_select(x, 0, rows), [x]),
        (lambda: mt.embedding(i, x), lambda: torch.nn.functional.embedding(i, x), [x]),
        (lambda: mt.scatter(x, 1, i[:, :1], u[:, :1]), lambda: torch.scatter(x, 1, i[:, :1], u[:, :1]), [x, u]),
        (lambda: mt.scatter_add(x, 1, i, u), lambda: torch.scatter_add(x, 1, i, u), [x, u]),
        (lambda: mt.scatter_reduce(x, 1, i, u, "sum", include_self=False),
         lambda: torch.scatter_reduce(x, 1, i, u, "sum", include_self=False), [x, u]),
        (lambda: mt.index_add(x, 0, rows, r, alpha=2.0), lambda: torch.index_add(x, 0, rows, r, alpha=2.0), [x, r]),
        (lambda: mt.index_copy(x, 0, rows[1:], r[1:]), lambda: torch.index_copy(x, 0, rows[1:], r[1:]), [x, r]),
    ]
    for mine, theirs, inputs in calls:
        got, want = mine(), theirs()
        assert torch.equal(got, want) and got.grad_fn.name().startswith("multigather::")
        g = torch.randn(want.shape)
        for a, b in zip(torch.autograd.grad(got, inputs, g), torch.autograd.grad(want, inputs, g)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    # An index out of range: the torch.ops call's exception type and message.
    bad = torch.tensor([[0], [7], [0], [0], [0], [0]])
    with pytest.raises(IndexError) as door:
        torch.ops.multigather.gather.default(x, 1, bad)
    with pytest.raises(IndexError) as direct:
        mt.gather(x, 1, bad)
    assert str(direct.value) == str(door.value)
    if not core.torch_fast_state().startswith("on"):
        assert _torch_dispatch.call_op("multigather::gather", (x, 1, i), None) is NotImplemented
        return
    call_op = _torch_dispatch.call_op
    assert type(call_op).__name__ == "builtin_function_or_method"  # _torch_fast's, bound on first use
    assert torch.equal(call_op("multigather::gather", (x, 1, i), None), torch.gather(x, 1, i))
    # A Parameter is a plain tensor to PyTorch's own checks (THPVariable_CheckExact): a model's
    # weights take this road.
    p = torch.nn.Parameter(x.detach().clone())
    assert torch.equal(call_op("multigather::gather", (p, 1, i), None), torch.gather(p, 1, i))
    # Every other call: NotImplemented.

    class Subclass(torch.Tensor):
        pass

    plain = x.detach()
    others = [
        ("multigather::gather", (plain, 1, i), None),  # nothing requires grad
        ("multigather::gather", (plain.as_subclass(Subclass).requires_grad_(), 1, i), None),
        ("multigather::gather", (x.detach().numpy(), 1, i), None),
        ("multigather::gather", (x, 1, i), {"sparse_grad": True}),  # not in the schema
        ("multigather::gather", (x, 1, i, 0, 0), None),  # too many
        ("multigather::gather", (x, 1.0, i), None),  # not an int: torch.ops' road decides
        ("multigather::no_such_op", (x, 1, i), None),
        ("multigather::gather", (torch.complex(x, x).conj(), 1, i), None),  # the conjugate bit
    ]
    for name, args, kwargs in others:
        assert call_op(name, args, kwargs) is NotImplemented, (name, kwargs)
    with torch.no_grad():
        assert call_op("multigather::gather", (x, 1, i), None) is NotImplemented
    from torch.overrides import TorchFunctionMode

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert call_op("multigather::gather", (x, 1, i), None) is NotImplemented


FIRST_CALLS_REQUIRE_GRAD = """
import torch, multigather.torch as mt
from multigather import _multigather as core, _torch_dispatch
assert core.torch_fast_state() == "torch not seen yet", core.torch_fast_state()
w = torch.randn(8, 4, requires_grad=True)
u = torch.randn(2, 4, requires_grad=True)
ids, rows = torch.tensor([[1, 7], [0, 0]]), torch.tensor([1, 0])
def step(f, embedding):
    return torch.autograd.grad(f.index_add(embedding(ids, w).sum(0), 0, rows, u).square().sum(), (w, u))
mine = step(mt, mt.embedding)
state, call_op = core.torch_fast_state(), type(_torch_dispatch.call_op).__name__
theirs = step(torch, torch.nn.functional.embedding)
print(state, "|", call_op, "|", all(torch.equal(a, b) for a, b in zip(mine, theirs)))
"""


def test_a_process_whose_calls_all_require_grad_takes_the_direct_road(torch):
    # A training loop's calls all require grad, so none reaches the fast path that loads
    # _torch_fast's hooks on its first torch tensor: call_op loads them itself (before, such a
    # process took torch.ops' Python door on every call). Its gradients are torch's.
    import subprocess
    import sys

    if not core.torch_fast_state().startswith("on"):
        pytest.skip(f"torch tensors take the DLPack route: {core.torch_fast_state()}")
    run = subprocess.run([sys.executable, "-c", FIRST_CALLS_REQUIRE_GRAD], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == f"{core.torch_fast_state()} | builtin_function_or_method | True", run.stdout


@pytest.mark.parametrize("name, args_of", TORCH_GATHERS)
def test_torch_vmap_takes_the_torch_op(torch, name, args_of):
    # Inside torch.func.vmap the tensors are functorch wrappers: the torch op takes the call
    # (PyTorch runs it per batch element; it warns that no batching rule is registered).
    import warnings

    mine, theirs, args = _torch_pair(torch, name, args_of)
    x = torch.randn(5, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = torch.func.vmap(lambda a: mine(a, *args))(x)
    assert torch.equal(got, torch.stack([theirs(a, *args) for a in x]))


def test_torch_results_of_the_fast_path_are_ordinary_tensors(torch):
    x = torch.randn(64, 32)
    i = torch.randint(0, 32, (64, 8))
    got = multigather.torch.gather(x, 1, i)
    assert type(got) is torch.Tensor and got.is_contiguous() and got.device.type == "cpu"
    assert got.shape == (64, 8) and got.stride() == (8, 1) and got.storage_offset() == 0
    got += 1  # writable, and its own memory
    assert torch.equal(got, torch.gather(x, 1, i) + 1)
    empty = multigather.torch.index_select(torch.zeros(0, 3), 0, torch.zeros(0, dtype=torch.long))
    assert empty.shape == (0, 3) and empty.dtype == torch.float32
    source = torch.arange(12).reshape(3, 4)
    j = torch.tensor([[3, 0], [1, 1], [2, 0]])
    expected = torch.gather(source, 1, j)  # a gather copies elements: it commutes with .to()
    for dtype in (torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2,
                  torch.bool, torch.complex128, torch.bfloat16):
        got = multigather.torch.gather(source.to(dtype), 1, j)
        assert got.dtype == dtype
        assert torch.equal(got.view(torch.uint8), expected.to(dtype).view(torch.uint8)), dtype


@pytest.mark.parametrize("write", [
    lambda mg, b, x, i: mg.run("torch.gather", x, i, out=b, dim=1),           # the fast path
    lambda mg, b, x, i: mg.gather_multiaxis(x, i, [1], out=b),                 # the general path
    lambda mg, b, x, i: mg.run("torch.scatter_add", b, i, updates=x, out=b, dim=1),  # in place
    lambda mg, b, x, i: mg.scatter_multiaxis(b, i, x, [1], reduction="add", out=b),
], ids=["run", "gather_multiaxis", "scatter_in_place", "scatter_multiaxis"])
def test_torch_out_bumps_the_version_counter(torch, write):
    # As torch.gather(..., out=b) does: overwriting a tensor that autograd saved must make
    # backward raise, not compute a gradient from the new values.
    x = torch.randn(4, 3)
    i = torch.tensor([[0, 1, 2], [2, 2, 0], [1, 0, 1], [0, 0, 0]])
    a = torch.randn(4, 3, requires_grad=True)
    b = a.sigmoid()  # saves its output for backward
    with torch.no_grad():
        torch.gather(x, 1, i, out=b)
    expected_version = b._version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()
    b = a.sigmoid()
    with torch.no_grad():
        write(multigather, b, x, i)
    assert b._version == expected_version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()
    with torch.inference_mode():  # no version counter: written, nothing to bump
        c = torch.zeros(4, 3)
        write(multigather, c, x, i)
        assert c.abs().sum() > 0


FORK_SCRIPT = """
import os, numpy as np, multigather
x = np.arange(1024 * 256, dtype=np.float32).reshape(1024, 256)
i = np.arange(511, -1, -1)
kept = multigather.numpy.take(x, i, axis=0)  # a live mapped block, then a cached one
del kept
pid = os.fork()
if pid == 0:  # the child: allocate, free, allocate again (one thread: OpenMP's pool of the
    # parent does not survive a fork)
    multigather.set_num_threads(1)
    ok = all(np.array_equal(multigather.numpy.take(x, i, axis=0), x[i]) for _ in range(3))
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
assert np.array_equal(multigather.numpy.take(x, i, axis=0), x[i])
"""


def test_fork_keeps_the_output_memory_usable():
    # In a fresh interpreter: this one may hold other libraries' threads (JAX, torch).
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", FORK_SCRIPT], check=True, timeout=120)


def test_empty_results_check_every_call_s_indices():
    # The lowering reads index values when the result is empty (numpy, ONNX, torch check them):
    # a repeated call with other values must check them again.
    x = np.zeros((3, 0), np.float32)
    assert multigather.numpy.take(x, [1, 2], axis=0).shape == (2, 0)
    with pytest.raises(IndexError):
        multigather.numpy.take(x, [1, 5], axis=0)
    assert multigather.numpy.advanced_index(x, np.array([[1]]), [0]).shape == (1, 0)
    with pytest.raises(IndexError):
        multigather.numpy.advanced_index(x, np.array([[7]]), [0])
    assert multigather.onnx.gather(x, np.array([0, 1]), axis=0).shape == (2, 0)
    with pytest.raises(IndexError):
        multigather.onnx.gather(x, np.array([0, 9]), axis=0)


def test_the_door_leaves_to_python_only_the_torch_tensors_autograd_or_a_view_bit_needs(torch):
    # NotImplemented means "no reader takes it as is": a tensor that needs grad in grad mode (the
    # fallback raises, as a result would silently lack a grad_fn) and a negative view (DLPack
    # would export its memory, -x, without the bit). The normalized call then gives the values.
    handle, _ = _registry._fast_entry("torch.gather")
    x = torch.arange(12.0).reshape(3, 4)
    i = torch.tensor([[0, 3], [1, 1], [2, 0]])
    assert core.run_op_fast(handle, x.clone().requires_grad_(), i, None, 1) is NotImplemented
    assert core.run_op_fast(handle, x._neg_view(), i, None, 1) is NotImplemented
    assert torch.equal(core.run_op_fast(handle, x, i, None, 1), torch.gather(x, 1, i))
    assert torch.equal(multigather.run("torch.gather", x._neg_view(), i, dim=1), torch.gather(-x, 1, i))
    with pytest.raises(RuntimeError, match="input requires grad"):
        multigather.run("torch.gather", x.clone().requires_grad_(), i, dim=1)
