"""Arrays of every framework in, the same framework out, zero-copy.

- numpy, jax, tensorflow, torch (when installed), memoryview and Python lists are accepted; the
  result is an array of the input's framework with the input's dtype (bfloat16 included).
- Strided and broadcast views are read in place: a broadcast view whose copy would need 32 TiB
  gathers in a few bytes, and tracemalloc sees no allocation of the size of a strided input.
- The GIL is released while the kernel runs (another Python thread runs during a long call;
  the test fails when the release is removed), and calls from several threads at once give the
  same results.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import multigather
from conftest import require

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
INDICES = np.array([[[3, 0]], [[1, 2]]], np.int64)  # logical [2,1,1], axes [2, 1]
EXPECTED = np.array([[[X[0, 0, 3]]], [[X[1, 2, 1]]]], np.float32)
EXPECTED = np.broadcast_to(EXPECTED, (2, 1, 1))


def test_numpy_in_numpy_out():
    got = multigather.gather_multiaxis(X, INDICES, [2, 1])
    assert type(got) is np.ndarray and got.dtype == np.float32
    np.testing.assert_array_equal(got, EXPECTED)


def test_memoryview_and_lists_give_numpy():
    got = multigather.gather_multiaxis(memoryview(X), INDICES.tolist(), [2, 1])
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, EXPECTED)


def test_numpy_scalars_rank_zero():
    got = multigather.gather_multiaxis(np.float64(2.5), 0, [])
    assert type(got) is np.ndarray and got.shape == () and got == 2.5


def test_ml_dtypes_bfloat16_numpy_in_bfloat16_out():
    ml_dtypes = require("ml_dtypes")
    got = multigather.gather_multiaxis(X.astype(ml_dtypes.bfloat16), INDICES, [2, 1])
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), EXPECTED)


def test_jax_in_jax_out():
    jax = require("jax")
    import jax.numpy as jnp

    for dtype in (jnp.float32, jnp.bfloat16, jnp.int8, jnp.bool_):
        got = multigather.gather_multiaxis(jnp.asarray(X).astype(dtype), jnp.asarray(INDICES),
                                           [2, 1])
        assert isinstance(got, jax.Array) and got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got.astype(jnp.float32)),
                                      EXPECTED.astype(dtype).astype(np.float32))


def test_jax_out_is_rejected_because_jax_arrays_are_immutable():
    require("jax")
    import jax.numpy as jnp

    with pytest.raises(TypeError, match="^out cannot be a jax array: jax arrays are immutable$"):
        multigather.gather_multiaxis(X, INDICES, [2, 1], out=jnp.zeros((2, 1, 1), jnp.float32))


def test_tensorflow_in_tensorflow_out():
    tf = require("tensorflow")
    for dtype in (tf.float32, tf.bfloat16, tf.int64, tf.bool):
        got = multigather.gather_multiaxis(tf.cast(tf.constant(X), dtype), tf.constant(INDICES),
                                           [2, 1])
        assert isinstance(got, tf.Tensor) and got.dtype == dtype
        np.testing.assert_array_equal(tf.cast(got, tf.float32).numpy(),
                                      tf.cast(tf.cast(EXPECTED, dtype), tf.float32).numpy())


# A fresh interpreter that has seen no torch tensor: tf.Tensor, like torch.Tensor, is a class
# named "Tensor" (the door once took EagerTensor for a torch subclass there: TypeError).
_TF_FIRST = """
import sys
import numpy as np
import multigather
import tensorflow as tf
if sys.argv[1] == "torch":
    import torch  # imported, but no tensor of it seen
x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
indices = np.array([[[3], [0], [2]], [[1], [1], [0]]], np.int64)
got = multigather.gather_multiaxis(tf.constant(x), tf.constant(indices), [2])
assert type(got).__name__ == "EagerTensor", type(got)
np.testing.assert_array_equal(got.numpy(), np.take_along_axis(x, indices, 2))
taken = multigather.numpy.take(tf.constant(x), tf.constant([2, 0]), axis=1)
np.testing.assert_array_equal(taken.numpy(), np.take(x, [2, 0], axis=1))
print("ok", "torch" in sys.modules)
"""


@pytest.mark.parametrize("torch_imported", [False, True])
def test_tensorflow_tensors_before_any_torch_tensor(torch_imported):
    require("tensorflow")
    if torch_imported:
        require("torch")
    result = subprocess.run([sys.executable, "-c", _TF_FIRST, "torch" if torch_imported else "-"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-2:] == ["ok", str(torch_imported)]


def test_torch_in_torch_out_with_strided_views_and_out():
    torch = require("torch")
    base = torch.arange(48, dtype=torch.float32).reshape(4, 3, 4)
    view = base[::2].transpose(1, 2)  # shape [2,4,3], non-contiguous
    indices = torch.tensor([[[2], [0], [1], [2]]])  # [1,4,1], axes [2]
    got = multigather.gather_multiaxis(view, indices, [2])
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    expected = torch.take_along_dim(view, indices.expand(2, 4, 1), dim=2)
    assert torch.equal(got, expected)
    out = torch.empty(2, 4, 1, dtype=torch.float32)
    assert multigather.gather_multiaxis(view, indices, [2], out=out) is out
    assert torch.equal(out, expected)
    bf = multigather.gather_multiaxis(view.to(torch.bfloat16), indices, [2])
    assert bf.dtype == torch.bfloat16 and torch.equal(bf.float(), expected)
    grad = view.clone().requires_grad_()
    assert torch.equal(multigather.gather_multiaxis(grad, indices, [2]), expected)


def test_huge_broadcast_view_is_read_in_place():
    """A stride-0 view of 2**42 elements (32 TiB if copied) gathers four elements."""
    row = np.arange(4, dtype=np.float64)
    huge = np.broadcast_to(row, (2**20, 2**20, 4))
    indices = np.array([[[123456, 654321]]], np.int64)  # logical [1,1,1], axes [0, 1]
    got = multigather.gather_multiaxis(huge, indices, [0, 1])
    np.testing.assert_array_equal(got, row.reshape(1, 1, 4))


def test_strided_view_is_not_copied():
    """tracemalloc sees every numpy allocation: gathering from a 64 MiB array's every-other
    column view allocates only the small output, never a copy of the view."""
    base = np.arange(8 * 2**20, dtype=np.float64).reshape(2**12, 2**11)
    view = base[:, ::2]
    indices = np.array([[5], [7]], np.int64)  # row 0 reads column 5, row 1 column 7
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        got = multigather.gather_multiaxis(view[:2], indices, [1])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, np.array([[view[0, 5]], [view[1, 7]]]))
    assert peak < 2**16, f"peak traced allocation {peak} bytes for a {view.nbytes}-byte view"


def test_threads_share_the_extension():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((64, 256, 32)).astype(np.float32)
    jobs = [rng.integers(-256, 256, (64, 512, 1)) for _ in range(16)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda ix: multigather.gather_multiaxis(data, ix, [1]), jobs))
    for ix, got in zip(jobs, results):
        np.testing.assert_array_equal(got, np.take_along_axis(data, ix % 256, axis=1))


def test_device_arrays_need_a_cuda_build():
    if multigather._multigather.has_cuda:
        pytest.skip("this build has the CUDA engine: device arrays run on the GPU (test_cuda.py)")
    cupy = require("cupy")
    try:
        device_array = cupy.arange(4)
    except Exception as error:  # no GPU on this machine
        pytest.skip(f"cupy cannot allocate on a GPU here: {error}")
    with pytest.raises(ValueError, match="CUDA arrays need a build with MULTIGATHER_CUDA"):
        multigather.gather_multiaxis(device_array, cupy.zeros(1, cupy.int64), [0])


def test_pip_install_puts_the_multigather_command_on_path():
    import shutil
    import subprocess

    command = shutil.which("multigather")
    if command is None:
        pytest.skip("the `multigather` command is not installed (a build without the CLI, or "
                    "the package run from a build tree)")
    version = subprocess.run([command, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.split()[-1] == multigather.__version__


def test_gil_is_released_while_the_kernel_runs():
    """A Python thread keeps running during a long gather: it records timestamps inside the
    middle half of the call's [start, end] interval, which a call holding the GIL would never
    allow (the other thread could not run until the call returned)."""
    import threading
    import time

    data = np.arange(2**22, dtype=np.float32)
    indices = np.random.default_rng(0).integers(0, data.size, 2**25)
    stamps, done = [], threading.Event()

    def ticker():
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0002)

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        start = time.perf_counter()
        multigather.gather_multiaxis(data, indices, [0])
        end = time.perf_counter()
    finally:
        done.set()
        thread.join()
    quarter = (end - start) / 4
    inside = [t for t in stamps if start + quarter < t < end - quarter]
    assert len(inside) >= 5, f"{len(inside)} ticks inside a {end - start:.3f} s call"
