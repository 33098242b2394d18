"""The segment family (jax.ops.segment_*, tf.math.unsorted_segment_*, tf.math.segment_*) against
the frameworks themselves: values on hypothesis cases (empty segments, dropped and out-of-range
ids, every dtype each accepts, broadcasting), errors, gradients (jax.grad and tf.GradientTape),
jax.vmap, determinism at 1, 2, 3 and 8 threads, and a small message-passing model."""

from __future__ import annotations

import numpy as np
import pytest

import multigather
import multigather.jax as mjax
import multigather.tf as mtf

jax = pytest.importorskip("jax")
jnp = jax.numpy
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JAX_REDUCTIONS = ("sum", "prod", "max", "min")
TF_UNSORTED = ("sum", "prod", "max", "min", "mean", "sqrt_n")
TF_SORTED = ("sum", "prod", "max", "min", "mean")


def _tf():
    return pytest.importorskip("tensorflow")


def _data(rng, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@st.composite
def segment_cases(draw, ids_low=-2, ids_over=2, prefix_rank=1):
    """(data, ids, num_segments): data [N, F..] (N >= 0), ids of shape [N] (or a prefix of data's
    shape) with values in [ids_low, num_segments + ids_over)."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    lead = [draw(st.integers(0, 12)) for _ in range(prefix_rank)]
    trailing = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    num_segments = draw(st.integers(0, 6))
    high = max(num_segments + ids_over, ids_low + 1)
    ids = rng.integers(ids_low, high, size=lead).astype(draw(st.sampled_from([np.int32, np.int64])))
    return rng, lead + trailing, ids, num_segments


@settings(max_examples=60, deadline=None)
@given(case=segment_cases(), reduction=st.sampled_from(JAX_REDUCTIONS),
       dtype=st.sampled_from([np.float32, np.int32, np.float16]), mode=st.sampled_from([None, "drop", "clip"]))
def test_jax_segment_ops_equal_jax(case, reduction, dtype, mode):
    rng, shape, ids, num_segments = case
    if mode == "clip" and num_segments == 0:
        return  # jax clamps into an empty range: nothing to compare
    data = _data(rng, shape, dtype)
    got = getattr(mjax, f"segment_{reduction}")(data, ids, num_segments, mode=mode)
    want = np.asarray(getattr(jax.ops, f"segment_{reduction}")(data, ids, num_segments, mode=mode))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_jax_num_segments_none_reads_the_ids():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 3, 3, 1, 0, 2])
    np.testing.assert_array_equal(mjax.segment_max(data, ids), jax.ops.segment_max(data, ids))
    with pytest.raises(ValueError, match="num_segments = None is max\\(segment_ids\\) \\+ 1: it needs the values"):
        jax.jit(lambda d, i: mjax.segment_sum(d, i))(data, ids)


def test_ids_sized_outputs_that_do_not_fit_are_errors():
    # max(segment_ids) + 1 past int64 is refused, never wrapped to a small size
    data = np.ones((2, 3), np.float32)
    for ids in (np.array([0, 2**64 - 1], np.uint64), np.array([0, 2**63 - 1], np.int64)):
        with pytest.raises(ValueError, match=r"jax.ops.segment_sum: segment id \d+ \+ 1 rows do not fit in int64"):
            mjax.segment_sum(data, ids)
    with pytest.raises(ValueError, match=r"tf.math.segment_sum: segment id 9223372036854775807 \+ 1 rows"):
        mtf.segment_sum(data, np.array([0, 2**63 - 1], np.int64))


def test_jax_broadcasts_data_as_jax_does():
    ids = np.array([[0, 1], [1, 2]])
    data = np.arange(6, dtype=np.float32).reshape(1, 2, 3)[0]  # [2, 3] broadcast to [2, 2, 3]
    want = jax.ops.segment_sum(data, ids, 3)
    np.testing.assert_array_equal(mjax.segment_sum(data, ids, 3), want)


@settings(max_examples=60, deadline=None)
@given(case=segment_cases(ids_low=-2, ids_over=0, prefix_rank=2), reduction=st.sampled_from(TF_UNSORTED),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]))
def test_tf_unsorted_segment_ops_equal_tensorflow(case, reduction, dtype):
    tf = _tf()
    rng, shape, ids, num_segments = case
    if reduction in ("mean", "sqrt_n") and np.issubdtype(dtype, np.integer):
        dtype = np.float32
    ids = np.minimum(ids, num_segments - 1)  # TF raises for ids >= num_segments (tested below)
    data = _data(rng, shape, dtype)
    got = getattr(mtf, f"unsorted_segment_{reduction}")(data, ids, num_segments)
    want = getattr(tf.math, f"unsorted_segment_{reduction}")(data, ids, num_segments).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    if reduction == "sqrt_n":  # TF divides by sqrt(count) computed in the dtype, as here
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(case=segment_cases(ids_low=0, ids_over=0), reduction=st.sampled_from(TF_SORTED),
       dtype=st.sampled_from([np.float32, np.float64, np.int32]))
def test_tf_sorted_segment_ops_equal_tensorflow(case, reduction, dtype):
    tf = _tf()
    rng, shape, ids, num_segments = case
    if reduction == "mean":
        dtype = np.float32
    ids = np.sort(ids)
    data = _data(rng, shape, dtype)
    got = getattr(mtf, f"segment_{reduction}")(data, ids)
    want = getattr(tf.math, f"segment_{reduction}")(data, ids).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_tf_errors_are_tensorflows():
    tf = _tf()
    data = np.ones((4, 2), np.float32)
    with pytest.raises(IndexError, match=r"^tf.math.unsorted_segment_sum: segment_ids\[2\] = 5 is out of range \[0, 3\)$"):
        mtf.unsorted_segment_sum(data, np.array([0, -1, 5, 1]), 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[2\] = 5 is out of range \[0, 3\)"):
        tf.math.unsorted_segment_sum(data, np.array([0, -1, 5, 1]), 3)
    with pytest.raises(ValueError, match=r"^tf.math.segment_max: segment ids are not increasing "
                                         r"\(segment_ids\[2\] = 0 follows 1\)$"):
        mtf.segment_max(data, np.array([0, 1, 0, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        tf.math.segment_max(data, np.array([0, 1, 0, 2]))
    with pytest.raises(IndexError, match=r"^tf.math.segment_sum: Segment id -1 out of range \[0, 2\), possibly "
                                         r"because 'segment_ids' input is not sorted. \(segment_ids\[0\] = -1; "):
        mtf.segment_sum(data, np.array([-1, 0, 0, 1]))
    with pytest.raises(ValueError, match="^tf.math.unsorted_segment_sum: num_segments is required$"):
        multigather.run("tf.math.unsorted_segment_sum", data, np.zeros(4, np.int64))
    with pytest.raises(TypeError, match="tf.math.unsorted_segment_sqrt_n: data dtype int32 must be a floating"):
        mtf.unsorted_segment_sqrt_n(np.ones(3, np.int32), np.zeros(3, np.int64), 2)
    with pytest.raises(ValueError, match=r"data.shape = \[4,2\] does not start with segment_ids.shape = \[3\]"):
        mtf.unsorted_segment_sum(data, np.zeros(3, np.int64), 2)


def test_tf_sorted_num_segments_must_be_the_last_id_plus_one_on_the_host():
    # The row's num_segments (what a caller reads back from device ids, as TensorFlow's GPU kernel
    # does) is checked against host ids; with the right value the bytes are TensorFlow's.
    tf = _tf()
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 0, 1, 3, 3, 3])
    want = tf.math.segment_sum(data, ids).numpy()
    np.testing.assert_array_equal(multigather.run("tf.math.segment_sum", data, ids, num_segments=4), want)
    with pytest.raises(ValueError, match=r"^tf.math.segment_sum: num_segments = 5 must be segment_ids\[-1\] \+ 1 = 4$"):
        multigather.run("tf.math.segment_sum", data, ids, num_segments=5)
    with pytest.raises(ValueError, match=r"num_segments = -1 must not be negative"):
        multigather.run("tf.math.segment_sum", data, ids, num_segments=-1)


def _tf_words(call):
    """TensorFlow's own message for a failing call, without its node and op decorations
    ("{{function_node ...}} " and " [Op:...]"), and its exception type."""
    tf = _tf()
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        call()
    text = info.value.message
    text = text.split("}} ", 1)[-1] if text.startswith("{{") else text
    return text.split(" [Op:", 1)[0]


TF_BAD_CALLS = [
    # (name, args for tf.math.<name> and multigather.tf.<name>, the part of TF's message that we
    # must hold where TF's own names a value we word differently (None: all of it))
    ("segment_sum", (np.ones((4, 2), np.float32), np.array([0, 1, 2, 0])), None),   # Segment id 1 out of range
    ("segment_sum", (np.ones((4, 2), np.float32), np.array([-1, -1, 0, 0])), None),  # Segment id -1 out of range
    ("segment_max", (np.ones((4, 2), np.float32), np.array([0, 0, 0, -1])), None),  # segment ids must be >= 0
    ("segment_min", (np.ones((4, 2), np.float32), np.array([0, 0, 0, -2])), None),
    ("segment_prod", (np.ones((4, 2), np.float32), np.array([0, 1, 0, 1])), None),  # not increasing
    ("segment_sum", (np.ones((4, 2), np.float32), np.array([0, -1, 1, 1])), None),
    ("segment_mean", (np.float32(10), np.array([], np.int64)), None),  # input must be at least rank 1
    ("segment_sum", (np.ones((4, 2), np.float32), np.array([[0, 1], [2, 2]])), None),  # should be a vector
    ("segment_sum", (np.ones((4, 4), np.float32), np.array([0, 1])), None),  # same size as dimension 0
    ("segment_sum", (np.ones((1, 10, 1)), np.array([1676240524292489355])), "Encountered overflow when multiplying"),
    ("unsorted_segment_sum", (np.ones(3), np.array([0, 1, 1]), -1), None),  # num_segments must not be negative
    ("unsorted_segment_sum", (np.ones((3, 2)), np.array([0, 1, 5]), 3), None),  # segment_ids[2] = 5 out of range
]


@pytest.mark.parametrize("name, args, words", TF_BAD_CALLS)
def test_tf_errors_hold_tensorflows_words_and_type(name, args, words):
    """Each error holds TensorFlow's own message (taken from TensorFlow, not written here) and is
    tf.errors.InvalidArgumentError, as TensorFlow's in eager mode, as well as our builtin class."""
    tf = _tf()
    theirs = _tf_words(lambda: getattr(tf.math, name)(*args))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        getattr(mtf, name)(*args)
    ours = str(info.value)
    assert (words or theirs) in ours, (ours, theirs)
    if words:
        assert words in theirs
    assert isinstance(info.value, (ValueError, IndexError, TypeError))
    assert ours.startswith(f"tf.math.{name}: ")


@pytest.mark.parametrize("itype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("name", ["segment_sum", "unsorted_segment_sum"])
def test_tf_segment_id_dtypes_are_tensorflows(name, itype):
    """unsorted_segment_* take int16 ids as TensorFlow does; every other refusal holds TF's words."""
    tf = _tf()
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = np.array([0, 0, 1, 1], itype)
    extra = (2,) if name.startswith("unsorted") else ()
    try:
        want = getattr(tf.math, name)(data, tf.constant(ids), *extra).numpy()
    except tf.errors.InvalidArgumentError as error:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            getattr(mtf, name)(data, ids, *extra)
        assert isinstance(info.value, TypeError)
        assert error.message.split("\n")[0] in str(info.value)
        return
    np.testing.assert_array_equal(getattr(mtf, name)(data, ids, *extra), want)
    np.testing.assert_array_equal(getattr(mtf, name)(tf.constant(data), tf.constant(ids), *extra).numpy(), want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("name", ["segment_mean", "unsorted_segment_mean"])
def test_tf_integer_means_are_tensorflows(name, dtype):
    """TensorFlow's integer means: segment_mean truncates toward zero in data's dtype (sums wrap),
    unsorted_segment_mean returns the float quotient (float32 / float64 by data's width)."""
    tf = _tf()
    rng = np.random.default_rng(11)
    data = rng.integers(-120, 120, size=(40, 3)).astype(dtype)
    ids = np.sort(rng.integers(0, 9, size=40))
    extra = (10,) if name.startswith("unsorted") else ()
    if extra:
        ids = rng.integers(-1, 10, size=40)
    want = getattr(tf.math, name)(tf.constant(data), ids, *extra).numpy()
    for given in (data, tf.constant(data)):
        got = np.asarray(getattr(mtf, name)(given, ids, *extra))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _tf_gradient(fn, data, ids, extra, w):
    tf = _tf()
    x = tf.Variable(data)
    with tf.GradientTape() as tape:
        y = fn(x, ids, *extra)
        loss = tf.reduce_sum(w[: y.shape[0]] * tf.tanh(y))
    return tape.gradient(loss, x)


@pytest.mark.parametrize("op", [f"segment_{r}" for r in TF_SORTED] +
                         [f"unsorted_segment_{r}" for r in TF_UNSORTED])
def test_tf_gradient_tape_gradients_equal_tensorflows(op):
    """tf.GradientTape through multigather.tf's segment ops gives TensorFlow's gradients (its
    rules: max / min split among ties, prod with zeros, negative unsorted ids get 0)."""
    tf = _tf()
    rng = np.random.default_rng(12)
    data = _tied(rng, (30, 2))
    data[rng.integers(0, 30, 4), 1] = 0.0
    unsorted = op.startswith("unsorted")
    ids = rng.integers(-1, 7, size=30) if unsorted else np.sort(rng.integers(0, 7, size=30))
    extra = (7,) if unsorted else ()
    w = rng.standard_normal((7, 2)).astype(np.float32)
    want = _tf_gradient(getattr(tf.math, op), data, ids, extra, w)
    got = _tf_gradient(getattr(mtf, op), data, ids, extra, w)
    assert got is not None
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert np.count_nonzero(want.numpy()) > 0


# ---- jax.ops.segment_*: JAX's signature, bool refusal, gradient without num_segments -------------

@pytest.mark.parametrize("reduction", JAX_REDUCTIONS)
def test_jax_signatures_are_jaxs(reduction):
    import inspect

    ours = inspect.signature(getattr(mjax, f"segment_{reduction}")).parameters
    theirs = inspect.signature(getattr(jax.ops, f"segment_{reduction}")).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


@pytest.mark.parametrize("mode", [None, "clip", "drop"])
@pytest.mark.parametrize("reduction", JAX_REDUCTIONS)
def test_jax_bucket_size_and_positional_mode_are_jaxs(reduction, mode):
    rng = np.random.default_rng(13)
    data = rng.integers(-3, 4, size=(23, 2)).astype(np.int32)
    ids = rng.integers(-2, 7, size=23)
    ours = getattr(mjax, f"segment_{reduction}")
    theirs = getattr(jax.ops, f"segment_{reduction}")
    for bucket in (None, 1, 4, 30):
        # positionally, as JAX's: (data, ids, num_segments, sorted, unique, bucket_size, mode)
        np.testing.assert_array_equal(ours(data, ids, 6, False, False, bucket, mode),
                                      theirs(data, ids, 6, False, False, bucket, mode))
    fdata = rng.standard_normal((23, 2)).astype(np.float32)
    np.testing.assert_allclose(ours(fdata, ids, 6, bucket_size=5, mode=mode),
                               theirs(fdata, ids, 6, bucket_size=5, mode=mode), rtol=1e-6)
    np.testing.assert_array_equal(ours(data, ids, 6, mode=jax.lax.GatherScatterMode.CLIP),
                                  theirs(data, ids, 6, mode=jax.lax.GatherScatterMode.CLIP))


def test_jax_out_sharding_other_than_none_is_refused_clearly():
    data, ids = np.ones(4, np.float32), np.array([0, 1, 1, 2])
    np.testing.assert_array_equal(mjax.segment_sum(data, ids, 3, out_sharding=None), [1, 2, 1])
    with pytest.raises(NotImplementedError, match="segment_sum: out_sharding = .* is not supported"):
        mjax.segment_sum(data, ids, 3, out_sharding=jax.sharding.PartitionSpec())


@pytest.mark.parametrize("reduction", ["sum", "prod"])
def test_jax_bool_sum_and_prod_are_refused_as_jax_does(reduction):
    data, ids = np.array([True, False, True]), np.array([0, 0, 1])
    with pytest.raises(TypeError) as theirs:
        getattr(jax.ops, f"segment_{reduction}")(data, ids, 2)
    with pytest.raises(TypeError) as ours:
        getattr(mjax, f"segment_{reduction}")(data, ids, 2)
    assert str(ours.value).startswith(str(theirs.value))
    for other in ("max", "min"):  # these take bool, as JAX's
        np.testing.assert_array_equal(getattr(mjax, f"segment_{other}")(data, ids, 2),
                                      getattr(jax.ops, f"segment_{other}")(data, ids, 2))


@pytest.mark.parametrize("reduction", JAX_REDUCTIONS)
def test_jax_grad_without_num_segments_reads_concrete_ids(reduction):
    rng = np.random.default_rng(14)
    data = jnp.asarray(rng.standard_normal((12, 2)).astype(np.float32))
    ids = rng.integers(0, 5, size=12)

    def loss(fn):
        return lambda d: jnp.sum(jnp.tanh(fn(d, ids)))

    ours = jax.grad(loss(getattr(mjax, f"segment_{reduction}")))(data)
    if reduction == "prod":  # jax.ops.segment_prod has no gradient for repeated ids: ours with num_segments
        theirs = jax.grad(lambda d: jnp.sum(jnp.tanh(mjax.segment_prod(d, ids, int(ids.max()) + 1))))(data)
    else:
        theirs = jax.grad(loss(getattr(jax.ops, f"segment_{reduction}")))(data)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


# ---- gradients -----------------------------------------------------------------------------------

def _tied(rng, shape):
    """Data with ties inside segments (max / min share their gradient among equal elements)."""
    data = rng.integers(-2, 3, size=shape).astype(np.float32)
    return data + 0.0


@pytest.mark.parametrize("reduction", ["sum", "max", "min"])
def test_jax_gradients_equal_jax(reduction):
    rng = np.random.default_rng(1)
    data = jnp.asarray(_tied(rng, (40, 3)))
    ids = jnp.asarray(rng.integers(-1, 9, size=40))
    w = jnp.asarray(rng.standard_normal((8, 3)).astype(np.float32))

    def loss(fn):
        return lambda d: jnp.sum(w * jnp.tanh(fn(d, ids, 8)))

    ours = jax.jit(jax.grad(loss(getattr(mjax, f"segment_{reduction}"))))(data)
    theirs = jax.jit(jax.grad(loss(getattr(jax.ops, f"segment_{reduction}"))))(data)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    assert np.count_nonzero(np.asarray(ours)) > 0


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_segment_prod_gradient_equals_tensorflows(zeros):
    """TensorFlow's rule, zeros included: a segment with one zero gives that row the product of
    the others and the rest 0; one with two zeros gives every row 0. (jax.ops.segment_prod has
    no gradient for repeated ids.)"""
    tf = _tf()
    rng = np.random.default_rng(6)
    data = rng.uniform(0.5, 1.5, size=(24, 3)).astype(np.float32) * rng.choice([-1, 1], size=(24, 3))
    ids = rng.integers(-1, 5, size=24)
    rows = np.flatnonzero(ids == 2)[:zeros]
    data[rows, 1] = 0.0
    w = rng.standard_normal((5, 3)).astype(np.float32)
    x = tf.Variable(data)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w * tf.math.unsorted_segment_prod(x, ids, 5))
    want = tape.gradient(loss, x).numpy()
    for fn, extra in ((mtf.unsorted_segment_prod, ()), (mjax.segment_prod, ())):
        got = jax.jit(jax.grad(lambda d: jnp.sum(w * fn(d, ids, 5, *extra))))(jnp.asarray(data))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_ids_sized_outputs_cannot_be_traced():
    # tf.math.segment_* and num_segments=None size the output from the ids' values: a JAX trace
    # has none, and says so (TensorFlow's own XLA path needs static shapes as well).
    with pytest.raises(ValueError, match="tf.math.segment_sum: the output has segment_ids\\[-1\\] \\+ 1 rows: "
                                         "it needs the values of segment_ids"):
        jax.grad(lambda d: jnp.sum(mtf.segment_sum(d, np.array([0, 0, 1]))))(jnp.ones(3))


@pytest.mark.parametrize("op", [f"unsorted_segment_{r}" for r in ("sum", "max", "min", "mean", "sqrt_n")])
def test_tf_gradients_equal_tensorflow(op):
    tf = _tf()
    rng = np.random.default_rng(2)
    data = _tied(rng, (30, 2))
    sorted_op = op.startswith("segment_")
    ids = np.sort(rng.integers(0, 7, size=30)) if sorted_op else rng.integers(-1, 7, size=30)
    w = rng.standard_normal((7, 2)).astype(np.float32)
    extra = () if sorted_op else (7,)
    x = tf.Variable(data)
    with tf.GradientTape() as tape:
        y = getattr(tf.math, op)(x, ids, *extra)
        loss = tf.reduce_sum(w[: y.shape[0]] * tf.tanh(y))
    want = tape.gradient(loss, x).numpy()
    n = int(ids.max()) + 1 if sorted_op else 7
    got = jax.grad(lambda d: jnp.sum(w[:n] * jnp.tanh(getattr(mtf, op)(d, ids, *extra))))(jnp.asarray(data))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", JAX_REDUCTIONS)
def test_vmap_equals_a_loop(reduction):
    rng = np.random.default_rng(3)
    data = jnp.asarray(rng.standard_normal((4, 10, 2)).astype(np.float32))
    ids = jnp.asarray(rng.integers(-1, 5, size=(4, 10)))
    ours = jax.vmap(lambda d, i: getattr(mjax, f"segment_{reduction}")(d, i, 5))(data, ids)
    theirs = jax.vmap(lambda d, i: getattr(jax.ops, f"segment_{reduction}")(d, i, 5))(data, ids)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("reduction", JAX_REDUCTIONS)
def test_gradient_of_vmap_over_ids_with_shared_data(reduction):
    """Per-example ids over one shared table (vmap's unbatched data): the data's gradient sums
    over the examples, max / min / prod reading the one copy of the data."""
    rng = np.random.default_rng(7)
    data = jnp.asarray(rng.integers(-2, 3, (10, 2)).astype(np.float32))
    ids = jnp.asarray(rng.integers(-1, 4, (3, 10)))

    def loss(fn):
        return lambda d: jnp.sum(jnp.tanh(jax.vmap(lambda i: fn(d, i, 4))(ids)))

    ours = jax.grad(loss(getattr(mjax, f"segment_{reduction}")))(data)
    if reduction == "prod":  # jax has no prod gradient for repeated ids: a loop of ours
        theirs = sum(jax.grad(lambda d: jnp.sum(jnp.tanh(mjax.segment_prod(d, ids[k], 4))))(data) for k in range(3))
    else:
        theirs = jax.grad(loss(getattr(jax.ops, f"segment_{reduction}")))(data)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


# ---- determinism and a model --------------------------------------------------------------------

@pytest.mark.parametrize("sorted_ids", [True, False])
@pytest.mark.parametrize("op", ["jax.ops.segment_sum", "jax.ops.segment_max", "tf.math.unsorted_segment_mean"])
def test_bit_identical_at_every_thread_count(op, sorted_ids):
    rng = np.random.default_rng(4)
    data = rng.standard_normal((60000, 8)).astype(np.float32)
    ids = rng.integers(0, 3000, size=60000)
    if sorted_ids:
        ids = np.sort(ids)
    results = []
    try:
        for threads in (1, 2, 3, 8):
            multigather.set_num_threads(threads)
            results.append(multigather.run(op, data, ids, num_segments=3000))
    finally:
        multigather.set_num_threads(0)
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    # and the sum is the one-thread row-major sum (numpy adds in the same order)
    if op == "jax.ops.segment_sum":
        want = np.zeros((3000, 8), np.float32)
        np.add.at(want, ids, data)
        np.testing.assert_array_equal(results[0], want)


def test_message_passing_model_trains_like_the_unmodified_one():
    """A two-layer graph network in plain JAX (gather by source, segment mean into targets):
    loss and every parameter gradient equal those of the same model written with jax.ops."""
    rng = np.random.default_rng(5)
    nodes, edges, features = 50, 300, 8
    src = jnp.asarray(rng.integers(0, nodes, edges))
    dst = jnp.asarray(rng.integers(0, nodes, edges))
    x = jnp.asarray(rng.standard_normal((nodes, features)).astype(np.float32))
    params = {"w1": jnp.asarray(rng.standard_normal((features, 16)).astype(np.float32) * 0.3),
              "w2": jnp.asarray(rng.standard_normal((16, 1)).astype(np.float32) * 0.3)}
    target = jnp.asarray(rng.standard_normal((nodes, 1)).astype(np.float32))

    def model(segment_sum, segment_max):
        def loss(p):
            h = x
            for w in (p["w1"], p["w2"]):
                messages = h[src] @ w
                total = segment_sum(messages, dst, nodes)
                count = segment_sum(jnp.ones((edges, 1), messages.dtype), dst, nodes)
                h = jnp.tanh(total / jnp.maximum(count, 1) + segment_max(messages, dst, nodes).clip(-5, 5))
            return jnp.mean((h - target) ** 2)
        return jax.jit(jax.value_and_grad(loss))

    ours = model(mjax.segment_sum, mjax.segment_max)(params)
    theirs = model(jax.ops.segment_sum, jax.ops.segment_max)(params)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    for name in params:
        np.testing.assert_allclose(ours[1][name], theirs[1][name], rtol=1e-5, atol=1e-6)


SHARDED_SCRIPT = r"""
import os, warnings
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import numpy as np, jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import multigather.jax as mjax
mesh = Mesh(np.array(jax.devices()).reshape(4), ("x",))
rng = np.random.default_rng(0)
d_np, i_np = rng.standard_normal((64, 8)).astype(np.float32), rng.integers(0, 10, 64)
data = jax.device_put(d_np, NamedSharding(mesh, P("x", None)))
ids = jax.device_put(i_np, NamedSharding(mesh, P("x")))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = jax.jit(lambda d, i: mjax.segment_sum(d, i, 10))(data, ids)
    grad = jax.jit(jax.grad(lambda d, i: jnp.sum(mjax.segment_max(d, i, 10) ** 2)))(data, ids)
messages = [str(w.message) for w in caught if "ReplicationWarning" in type(w.message).__name__]
assert not any("jax.ops.segment_sum" in m for m in messages), messages  # partial sums, all-reduced
assert any("jax.ops.segment_max (call) replicates input along its dimension 0" in m for m in messages), messages
assert any("jax.ops.segment_max (gradient) replicates" in m for m in messages), messages
np.testing.assert_allclose(out, jax.ops.segment_sum(d_np, i_np, 10), rtol=1e-6, atol=1e-6)
want = jax.grad(lambda d: jnp.sum(jax.ops.segment_max(d, i_np, 10) ** 2))(d_np)
np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-6)
print("ok")
"""


def test_sharded_rows_split_for_a_sum_and_replicate_with_a_warning_for_a_max():
    """Under jax.jit on a mesh, a segment sum over rows split across the devices keeps them
    split (partial sums, all-reduced; test_jax_sharding.py counts the collectives), while a
    segment max gathers them, and every such operand gets a ReplicationWarning (never
    silently); the values and gradients are right either way."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SHARDED_SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
