"""Many Python threads calling multigather at once (the GIL is released during each gather).

Each thread makes thousands of calls with its own shapes, dtypes, index dtypes and ``out=``
buffers, through gather_multiaxis, multigather.run and the framework wrappers (numpy.take,
take_along_axis), and checks every result against numpy computed by the same thread. Some calls
share one input array across all threads; some write into a per-thread ``out=`` buffer that is
reused call after call; some use several engine threads. A wrong value, an exception or a
deadlock (the join has a timeout) fails the test.
"""

from __future__ import annotations

import os
import threading

import numpy as np

import multigather
import multigather.numpy  # noqa: F401

THREADS = 8
CALLS = int(os.environ.get("MULTIGATHER_CONCURRENCY_CALLS", "2000"))  # per thread
DTYPES = [np.uint8, np.int16, np.int32, np.float32, np.float64, np.complex64, np.bool_]
INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]


def _data(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def _worker(seed, shared, errors, counts):
    rng = np.random.default_rng(seed)
    out_cache = {}
    try:
        for it in range(CALLS):
            use_shared = it % 4 == 0
            if use_shared:
                x = shared
            else:
                rank = int(rng.integers(1, 4))
                shape = tuple(int(n) for n in rng.integers(1, 6, rank))
                x = _data(rng, shape, DTYPES[int(rng.integers(len(DTYPES)))])
                if it % 7 == 0 and x.ndim >= 2:
                    x = x.transpose()  # a non-contiguous view
            axis = int(rng.integers(x.ndim))
            n = x.shape[axis]
            idt = INDEX_DTYPES[int(rng.integers(len(INDEX_DTYPES)))]
            kind = it % 4
            if kind == 0:  # gather_multiaxis along one axis (c = 1), into a reused out=
                ishape = list(x.shape)
                ishape[axis] = int(rng.integers(1, 5))
                lo = -n if np.issubdtype(idt, np.signedinteger) else 0
                idx = rng.integers(max(lo, np.iinfo(idt).min), n, ishape).astype(idt)
                want = np.take_along_axis(x, idx.astype(np.int64) % n, axis)
                key = (want.shape, want.dtype.str)
                out = out_cache.setdefault(key, np.empty(want.shape, want.dtype))
                got = multigather.gather_multiaxis(x, idx, [axis], out=out)
                assert got is out
                np.testing.assert_array_equal(got, want)
            elif kind == 1:  # numpy.take with a flat or axis take
                idx = rng.integers(0, n, int(rng.integers(0, 6))).astype(idt)
                want = np.take(x, idx, axis=axis)
                np.testing.assert_array_equal(multigather.numpy.take(x, idx, axis=axis), want)
            elif kind == 2:  # run() of a registry op, with several engine threads sometimes
                ishape = list(x.shape)
                ishape[axis] = int(rng.integers(1, 4))
                idx = rng.integers(0, n, ishape).astype(np.int64)
                want = np.take_along_axis(x, idx, axis)
                got = multigather.run("torch.gather", x, idx, dim=axis)
                np.testing.assert_array_equal(got, want)
            else:  # take_along_axis into out= with modes
                ishape = list(x.shape)
                ishape[axis] = int(rng.integers(1, 4))
                idx = rng.integers(-2 * n, 2 * n, ishape).astype(np.int64)
                want = np.take_along_axis(x, np.clip(idx, 0, n - 1), axis)
                got = multigather.gather_multiaxis(
                    np.moveaxis(x, axis, -1), np.moveaxis(idx, axis, -1), [-1],
                    index_mode="clamp", negative_indices=False)
                np.testing.assert_array_equal(got, np.moveaxis(want, axis, -1))
            counts[seed] += 1
    except BaseException as e:  # noqa: BLE001 - reported by the main thread
        errors.append((seed, repr(e)))


def _run_threads(num_threads_setting):
    previous = multigather.get_num_threads()
    multigather.set_num_threads(num_threads_setting)
    try:
        shared = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
        errors, counts = [], {}
        threads = []
        for t in range(THREADS):
            counts[t] = 0
            threads.append(threading.Thread(target=_worker, args=(t, shared, errors, counts)))
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=600)
            assert not th.is_alive(), "a thread did not finish (deadlock?)"
        assert errors == []
        assert counts == {t: CALLS for t in range(THREADS)}
    finally:
        multigather.set_num_threads(previous)


def test_many_threads_one_engine_thread_each():
    _run_threads(1)


def test_many_threads_automatic_engine_threads():
    _run_threads(0)


def test_a_scatter_of_broadcast_updates_into_a_small_output_releases_the_gil():
    """The GIL is released by how much a call combines, not by its output's size: a scatter of
    2^27 broadcast (stride 0) updates into one element lets another Python thread run meanwhile
    at a good part of its free rate (it held the GIL for the whole call: measured 1% of the free
    rate on 4ee44a0, about 100% now)."""
    import time

    n = 1 << 27
    indices = np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), (n,), (0,))
    updates = np.lib.stride_tricks.as_strided(np.ones(1, np.float32), (n,), (0,))
    ticks = [0]
    running = threading.Event()
    done = threading.Event()

    def count():
        running.set()
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    running.wait()
    start, before = time.perf_counter(), ticks[0]
    time.sleep(0.3)  # the counter's free rate, under the machine's current load
    free_rate = (ticks[0] - before) / (time.perf_counter() - start)
    out = np.zeros(1, np.float32)
    start, before = time.perf_counter(), ticks[0]
    multigather.numpy.add_at(out, indices, updates)
    rate = (ticks[0] - before) / (time.perf_counter() - start)
    done.set()
    counter.join()
    assert out[0] == float(1 << 24)  # float32 counting stops at 2^24: the call ran in full
    assert rate > 0.15 * free_rate, f"the other thread ran at {rate / free_rate:.1%} of its free rate"
