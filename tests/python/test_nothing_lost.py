"""Nothing lost, nothing silently wrong (issue 27): every reproducer of the adversarial sweep,
against numpy and torch as oracles.

- torch out= and in-place writes into conjugate / negative views write the true values;
- a gather that fails leaves out= unchanged (a view of a marker-filled buffer: margins too);
- numpy.*_at take numpy's index forms (tuples, slices, ...) and any strides of ``a``;
- messages name the argument, the value and the rule.
"""

from __future__ import annotations

import numpy as np
import pytest

import multigather

torch = pytest.importorskip("torch")

MARK = -7.0


def marked_view(shape, dtype=np.float64):
    """A view of ``shape`` inside a larger MARK-filled buffer (every other element of a wider
    last dimension, one margin row and column around), and the buffer."""
    shape = tuple(shape)
    if not shape:
        buf = np.full(3, MARK, dtype)
        return buf[1:2].reshape(()), buf
    big = tuple(n + 2 for n in shape[:-1]) + (2 * shape[-1] + 3,)
    buf = np.full(big, MARK, dtype)
    return buf[tuple(slice(1, n + 1) for n in shape[:-1]) + (slice(1, 2 * shape[-1] + 1, 2),)], buf


# ---- conjugate and negative views ---------------------------------------------------------------

def test_gather_out_into_conjugate_and_negative_views_holds_true_values():
    cx = torch.tensor([[1 + 1j, 2 + 2j, 3 + 3j]], dtype=torch.complex64)
    idx = torch.tensor([[2, 0]])
    want = torch.gather(cx, 1, idx)
    o = torch.zeros(1, 2, dtype=torch.complex64).conj()
    multigather.gather_multiaxis(cx, idx, [1], out=o)
    assert o.is_conj() and torch.equal(o.resolve_conj(), want)
    x = torch.tensor([[1.0, 2.0, 3.0]])
    n = torch._neg_view(torch.zeros(1, 2))
    multigather.gather_multiaxis(x, idx, [1], out=n)
    assert n.is_neg() and torch.equal(n.resolve_neg(), torch.gather(x, 1, idx))
    r = torch.zeros(2, dtype=torch.complex64).conj()
    multigather.run("onnx.Gather", cx[0], torch.tensor([2, 0]), out=r, axis=0)
    assert torch.equal(r.resolve_conj(), cx[0, [2, 0]])
    t = torch.zeros(2, dtype=torch.complex64).conj()
    multigather.numpy.take(cx[0], torch.tensor([2, 0]), out=t)
    assert torch.equal(t.resolve_conj(), cx[0, [2, 0]])


def test_in_place_scatter_into_conjugate_view_keeps_untouched_elements():
    base = torch.tensor([1 + 1j, 2 + 2j, 3 + 3j, 4 + 4j], dtype=torch.complex64)
    a = base.clone().conj()  # values: conj(base)
    want = a.resolve_conj().index_add(0, torch.tensor([1, 1, 3]), torch.ones(3, dtype=torch.complex64))
    multigather.numpy.add_at(a, torch.tensor([1, 1, 3]), torch.ones(3, dtype=torch.complex64))
    assert torch.equal(a.resolve_conj(), want)
    s = torch._neg_view(torch.arange(4.0))
    want = s.resolve_neg().scatter(0, torch.tensor([2]), torch.tensor([9.0]))
    multigather.scatter_multiaxis(s, torch.tensor([2]), torch.tensor([9.0]), [0], out=s)
    assert torch.equal(s.resolve_neg(), want)


# ---- a failed call leaves out= unchanged -------------------------------------------------------

@pytest.mark.parametrize("route", ["take", "gather_multiaxis", "run", "torch_out"])
def test_failed_gather_leaves_out_and_margins_unchanged(route):
    x = np.arange(12.0).reshape(3, 4)
    good = np.array([[0, 3, 1], [2, 2, 0]])
    bad = np.array([[0, 3, 1], [2, 9, 0]])  # 9: out of range, after in-range rows
    out, buf = marked_view((2, 3))
    before = buf.copy()

    def call(indices, o):
        if route == "take":
            return multigather.numpy.take(x[0], indices, out=o)
        if route == "gather_multiaxis":
            return multigather.gather_multiaxis(x[:2], indices, [1], out=o)
        if route == "run":
            return multigather.run("numpy.take_along_axis", x[:2, :], indices, out=o, axis=1)
        return multigather.run("torch.gather", torch.from_numpy(x[:2]), torch.from_numpy(indices),
                               out=torch.from_numpy(o), dim=1)

    with pytest.raises(IndexError):
        call(bad, out)
    assert np.array_equal(buf, before)  # the view and its margins
    call(good, out)
    want = np.take(x[0], good) if route == "take" else np.take_along_axis(x[:2], good, 1)
    assert np.array_equal(out, want)
    margins = buf.copy()
    margins[1:3, 1:7:2] = MARK
    assert (margins == MARK).all()


def test_failed_gather_with_many_indices_leaves_out_unchanged():
    x = np.arange(1000, dtype=np.float32)
    rng = np.random.default_rng(0)
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        hi = min(1000, np.iinfo(dtype).max)
        idx = rng.integers(0, hi, 300_000).astype(dtype)
        idx[-1] = 1000 if np.iinfo(dtype).max >= 1000 else idx[-1]  # one past the end, last
        out = np.full(idx.shape, -1.0, np.float32)
        if np.iinfo(dtype).max >= 1000:
            with pytest.raises(IndexError):
                multigather.numpy.take(x, idx, out=out)
            assert (out == -1).all(), dtype
        idx[-1] = 0
        multigather.numpy.take(x, idx, out=out)
        assert np.array_equal(out, np.take(x, idx)), dtype


# ---- numpy.*_at ----------------------------------------------------------------------------------

AT = [("add_at", np.add), ("multiply_at", np.multiply), ("minimum_at", np.minimum),
      ("maximum_at", np.maximum)]
INDEX_FORMS = [
    lambda: (np.array([0, 1, 1]), np.array([1, 1, 2])),
    lambda: (np.array([0, 2]), slice(None), np.array([1, 1])),  # separated: broadcast dims first
    lambda: (slice(1, 3), np.array([0, 0, 3]), np.array([[1], [2]])),  # adjacent, after a slice
    lambda: (Ellipsis, np.array([2, 0, 2])),
    lambda: (1, np.array([2, 2]), slice(None)),
    lambda: (np.array([[0], [2]]), np.array([0, 1, 1])),
    lambda: np.array([2, 0, 2]),
]


@pytest.mark.parametrize("form", range(len(INDEX_FORMS)))
@pytest.mark.parametrize("name,ufunc", AT)
def test_ufunc_at_index_forms_match_numpy(name, ufunc, form):
    rng = np.random.default_rng(form)
    a = rng.standard_normal((3, 4, 3))
    index = INDEX_FORMS[form]()
    b = rng.standard_normal(a[index].shape)
    want = a.copy()
    ufunc.at(want, index, b)
    getattr(multigather.numpy, name)(a, index, b)
    np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("layout", ["F", "T", "step"])
def test_ufunc_at_any_strides(layout):
    base = {"F": np.zeros((3, 2), order="F"), "T": np.zeros((2, 3)).T,
            "step": np.zeros((3, 4))[:, ::2]}[layout]
    want = base.copy()
    np.add.at(want, np.array([0, 0, 2]), np.array([1.0, 2.0]))
    multigather.numpy.add_at(base, np.array([0, 0, 2]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(base, want)
    want = base.copy()
    np.add.at(want, (np.array([0, 2]), np.array([1, 1])), 5.0)
    multigather.numpy.add_at(base, (np.array([0, 2]), np.array([1, 1])), 5.0)
    np.testing.assert_array_equal(base, want)


def test_ufunc_at_refuses_what_it_does_not_model_and_writes_nothing():
    a = np.zeros((2, 2))
    with pytest.raises(TypeError, match="index entry 0 is a boolean mask"):
        multigather.numpy.add_at(a, (np.array([True, False]), np.array([0, 1])), 1.0)
    with pytest.raises(TypeError, match=r"index entry 1 is None \(np.newaxis\)"):
        multigather.numpy.add_at(a, (np.array([0]), None), 1.0)
    with pytest.raises(IndexError, match="numpy.add_at: index 5 is out of bounds for axis 1 with size 2"):
        multigather.numpy.add_at(a, (np.array([0, 1]), np.array([1, 5])), 1.0)
    assert (a == 0).all()


# ---- messages ------------------------------------------------------------------------------------

X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("call,error,match", [
    (lambda: multigather.run("onnx.Gather", X, np.array([0]), axis=2**64), ValueError,
     r"attribute axis = 18446744073709551616 is outside the 64-bit integer range"),
    (lambda: multigather.run("onnx.Gather", X, np.array([0]), axis=2**63), ValueError,
     r"attribute axis = 9223372036854775808 is outside the int64 range"),
    (lambda: multigather.scatter_multiaxis(X, np.zeros((3, 1), np.int64), np.ones((3, 1)), axes=[2**63]),
     ValueError, r"attribute axes\[0\] = 9223372036854775808 is outside the int64 range"),
    (lambda: multigather.gather_multiaxis(np.zeros((2, 2), np.longdouble), np.zeros((2, 1), np.int64), [1]),
     TypeError, r"input dtype float128 \(long double\) is not supported"),
    (lambda: multigather.gather_multiaxis(np.zeros(4, dtype=[("a", "<f4"), ("b", "<i2")])["a"],
                                          np.zeros(2, np.int64), [0]),
     ValueError, r"input strides \(6,\) \(bytes\) are not whole multiples of its element size 4"),
    (lambda: multigather.gather_multiaxis(torch.zeros(2, 2).to_sparse(), torch.zeros(2, 1, dtype=torch.int64), [1]),
     TypeError, r"input is a torch.sparse_coo tensor"),
    (lambda: multigather.stablehlo.gather(X, np.zeros((2, 1), np.int64), offset_dims=(1,),
                                          collapsed_slice_dims=(0,), start_index_map=(0,),
                                          index_vector_dim=1, slice_sizes=(1, 2**64)),
     ValueError, r"attribute slice_sizes\[1\] = 18446744073709551616 is outside the int64 range"),
    (lambda: multigather.gather_multiaxis(torch.quantize_per_tensor(torch.zeros(2, 2), 0.1, 0, torch.qint8),
                                          torch.zeros(2, 1, dtype=torch.int64), [1]),
     TypeError, r"input is a quantized tensor \(torch.qint8\)"),
    (lambda: multigather.gather_multiaxis(X, np.zeros((3, 1), np.int64), [1], index_mode=None),
     TypeError, r"index_mode must be a str \('error', 'clamp', 'wrap' or 'fill'\), not None"),
    (lambda: multigather.scatter_multiaxis(X, np.zeros((3, 1), np.int64), np.ones((3, 1)), [1], index_mode=None),
     TypeError, r"index_mode must be a str \('error', 'clamp', 'wrap' or 'drop'\), not None"),
    (lambda: multigather.gather_multiaxis(X, np.zeros((3, 1), np.int64), [1], fill_value=None),
     TypeError, r"^fill_value must be a bool, int or float, not None$"),
    (lambda: multigather.gather_multiaxis(X, np.zeros((3, 1), np.int64), [1], negative_indices="False"),
     TypeError, r"attribute negative_indices: expected bool, got string 'False'"),
    (lambda: multigather.torch.embedding(torch.tensor([0]), torch.zeros(4, 2), padding_idx=-5),
     ValueError, r"padding_idx = -5 must be within \[-num_embeddings, num_embeddings\) = \[-4, 4\)"),
    (lambda: multigather.gather_multiaxis(torch.zeros(2, 2, dtype=torch.float8_e4m3fnuz),
                                          torch.zeros(2, 1, dtype=torch.int64), [1]),
     TypeError, r"input dtype torch.float8_e4m3fnuz is not supported"),
    (lambda: multigather.gather_multiaxis(np.zeros(2, np.float32), np.array([5]), [0], index_mode="fill",
                                          fill_value=1e300),
     ValueError, r"fill_value 1e\+300 is not representable in float32 \(it overflows to infinity"),
    (lambda: multigather.gather_multiaxis(np.broadcast_to(np.zeros((1, 1), np.float32), (2**30, 1)),
                                          np.broadcast_to(np.zeros((1, 1), np.int64), (1, 2**30)), [1]),
     MemoryError, r"^Unable to allocate 4.00 EiB for an array with shape \(1073741824, 1073741824\) and "
                  r"data type float32$"),
    (lambda: multigather.gather_multiaxis(torch.zeros(1, 1).expand(2**30, 1),
                                          torch.zeros(1, 1, dtype=torch.int64).expand(1, 2**30), [1]),
     MemoryError, r"^Unable to allocate 4.00 EiB for an array with shape \(1073741824, 1073741824\)"),
    (lambda: multigather.run("torch.gather", torch.zeros(1, 1).expand(2**30, 1),
                             torch.zeros(1, 1, dtype=torch.int64).expand(2**30, 2**30), dim=1),
     MemoryError, r"^Unable to allocate 4.00 EiB for an array with shape \(1073741824, 1073741824\)"),
])
def test_messages_name_the_argument_value_and_rule(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_jax_dtype_is_named_by_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.zeros(4, dtype=jnp.float8_e4m3fnuz)
    with pytest.raises(TypeError, match=r"^input dtype float8_e4m3fnuz is not supported \(supported: "):
        multigather.gather_multiaxis(x, np.array([1]), [0])


def test_torch_gather_message_names_the_negative_rule_only_for_negatives():
    with pytest.raises(IndexError) as e:
        multigather.torch.gather(torch.zeros(2, 2), 1, torch.tensor([[5], [0]]))
    assert "rejects negative" not in str(e.value)
    with pytest.raises(IndexError, match="rejects negative indices"):
        multigather.torch.gather(torch.zeros(2, 2), 1, torch.tensor([[-1], [0]]))


def test_meta_tensors_give_meta_results_as_torch_gather():
    x = torch.zeros(2, 3, device="meta")
    i = torch.zeros(2, 1, dtype=torch.int64, device="meta")
    r = multigather.gather_multiaxis(x, i, [1])
    assert r.is_meta and r.shape == torch.gather(x, 1, i).shape


def test_inference_tensor_out_follows_torch():
    with torch.inference_mode():
        o = torch.zeros(2)
    x, i = torch.arange(4.0), torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        multigather.gather_multiaxis(x, i, [0], out=o)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        multigather.run("torch.gather", x, i, out=o, dim=0)
    assert (o == 0).all()
    with torch.inference_mode():
        multigather.gather_multiaxis(x, i, [0], out=o)
    assert torch.equal(o, x[i])


# ---- interruptible long calls --------------------------------------------------------------------

_LONG_SCATTER = """
import sys, time
import numpy as np
import multigather
multigather.set_num_threads(int(sys.argv[1]))
indices = np.broadcast_to(np.zeros((1, 1), np.int64), (2**29, 2**30))  # 2**59 lookups (years)
x = np.arange(4.0).reshape(4, 1)
before = x.copy()
print("start", flush=True)
start = time.monotonic()
try:
    multigather.scatter_multiaxis(x, indices, np.ones((1, 1)), [0], reduction="add", out=x)
    print("finished")
except KeyboardInterrupt:
    print("interrupted", time.monotonic() - start, bool((x == before).all()), flush=True)
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_sigint_interrupts_a_2_to_59_lookup_scatter_within_a_second(threads):
    # Two threads take the rule whose counting pass (years long here) comes before the first
    # write, so the stop leaves the output unchanged. One thread writes as it goes, and a stop
    # while writing leaves part of the result (multigather/interrupt.hpp). The thread count is
    # set: the automatic one drops to 1 on a loaded machine.
    import os
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", _LONG_SCATTER, str(threads)], stdout=subprocess.PIPE,
                             text=True, env=dict(os.environ))
    try:
        assert child.stdout.readline().strip() == "start"
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=20)
        waited = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    words = out.split()
    assert words[0] == "interrupted", out
    assert waited < 1.0 + 0.5, waited  # within a second of the signal (plus the exit)
    if threads == 2:
        assert words[2] == "True", "the output changed: the stop came before the first write"


# ---- every registry op writes only its out= view -------------------------------------------------

def _registry_cases():
    from test_explain_svg import CASES, SCATTER_CASES  # one call per registry op

    return ([pytest.param(op, i, x, None, a, id=op) for op, i, x, a in CASES] +
            [pytest.param(op, i, x, u, a, id=op) for op, i, x, u, a in SCATTER_CASES])


@pytest.mark.parametrize("op,input_shape,indices_shape,updates_shape,attrs", _registry_cases())
def test_every_op_writes_only_its_out_view(op, input_shape, indices_shape, updates_shape, attrs):
    rng = np.random.default_rng(7)
    x = rng.integers(1, 100, input_shape).astype(np.float32)
    updates = None if updates_shape is None else rng.integers(1, 100, updates_shape).astype(np.float32)
    for dtype in (np.int64, np.int32):
        good = np.zeros(indices_shape, dtype)
        try:
            want = multigather.run(op, x, good, updates=updates, **attrs)
            break
        except TypeError:  # the op's index dtype rule
            continue
    out, buf = marked_view(want.shape, np.float32)
    if updates is not None:
        out[...] = x  # an in-place scatter's starting values
    before = buf.copy()
    multigather.run(op, out if updates is not None else x, good, updates=updates, out=out, **attrs)
    np.testing.assert_array_equal(out, want)
    mask_view, view_mask = marked_view(want.shape, bool)
    view_mask[...] = False
    mask_view[...] = True
    np.testing.assert_array_equal(buf[~view_mask], before[~view_mask])  # margins untouched
    # The last index out of range (after in-range ones that an engine checking as it goes would
    # already have written): an error leaves the view and margins as they were; an op that
    # clamps, wraps, fills or drops writes what its one-shot form returns.
    bad = good.copy()
    bad.flat[-1] = 1000
    out[...] = MARK
    before = buf.copy()
    try:
        want_bad = multigather.run(op, x, bad, updates=updates, **attrs)
    except (IndexError, ValueError):
        with pytest.raises((IndexError, ValueError)):
            multigather.run(op, out if updates is not None else x, bad, updates=updates, out=out, **attrs)
        np.testing.assert_array_equal(buf, before)
    else:
        if updates is not None:
            out[...] = x
        multigather.run(op, out if updates is not None else x, bad, updates=updates, out=out, **attrs)
        np.testing.assert_array_equal(out, want_bad)
        np.testing.assert_array_equal(buf[~view_mask], before[~view_mask])
