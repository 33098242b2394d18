"""CUDA arrays through the CUDA engine (a build with MULTIGATHER_CUDA and a GPU; skipped
otherwise): torch and cupy arrays are viewed in place, gathered on their device and stream, and
come back as arrays of the same framework on the same device.

Oracles: the framework's own CUDA ops (torch.index_select, torch.gather, cupy.take) and
multigather's CPU engine on host copies of the same arrays (every index mode, negative indices,
broadcasting, strided views), byte for byte; error messages equal the CPU engine's.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import multigather
from conftest import require

# bench/cuda_check.sh sets MULTIGATHER_REQUIRE_GPU=1 where nvidia-smi lists a GPU: there every
# reason to skip (no CUDA engine in the build, no torch/cupy, no device) is a failure instead.
REQUIRE_GPU = os.environ.get("MULTIGATHER_REQUIRE_GPU") == "1"


def skip_or_fail(reason: str):
    if REQUIRE_GPU:
        pytest.fail(f"MULTIGATHER_REQUIRE_GPU=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _cuda_engine_built():
    if not multigather._multigather.has_cuda:
        skip_or_fail("multigather was built without its CUDA engine (MULTIGATHER_CUDA=OFF)")


def gpu_module(name: str):
    if REQUIRE_GPU:
        try:
            return importlib.import_module(name)
        except ImportError as error:
            skip_or_fail(f"{name} does not import: {error}")
    return require(name)


def cuda_torch():
    torch = gpu_module("torch")
    if not torch.cuda.is_available():
        skip_or_fail(f"torch {torch.__version__} sees no CUDA device (built for CUDA "
                     f"{torch.version.cuda})")
    return torch


def cuda_cupy():
    cupy = gpu_module("cupy")
    try:
        cupy.zeros(1)
    except Exception as error:  # no GPU
        skip_or_fail(f"cupy cannot allocate on a GPU here: {error}")
    return cupy


def test_embedding_rows_match_torch_index_select_on_the_same_device():
    torch = cuda_torch()
    gen = torch.Generator(device="cpu").manual_seed(6)
    table = torch.randn(1000, 96, generator=gen).cuda()
    ids = torch.randint(0, 1000, (257,), generator=gen).cuda()
    got = multigather.gather_multiaxis(table, ids[:, None], [0])
    assert isinstance(got, torch.Tensor) and got.device == table.device
    assert torch.equal(got, torch.index_select(table, 0, ids))


def test_take_along_axis_matches_torch_gather_for_every_index_dtype():
    torch = cuda_torch()
    gen = torch.Generator(device="cpu").manual_seed(7)
    data = torch.randn(64, 120, generator=gen).half().cuda()
    ids = torch.randint(0, 120, (64, 40), generator=gen)  # fits every index dtype
    want = torch.gather(data, 1, ids.cuda())
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        got = multigather.gather_multiaxis(data, ids.to(dtype).cuda(), [1])
        assert torch.equal(got, want), dtype


@pytest.mark.parametrize("mode", ["error", "clamp", "wrap", "fill"])
@pytest.mark.parametrize("negative", [True, False])
def test_modes_strides_and_broadcasting_match_the_cpu_engine(mode, negative):
    torch = cuda_torch()
    rng = np.random.default_rng(8)
    base = torch.from_numpy(rng.standard_normal((6, 40, 9)).astype(np.float32)).cuda()
    data = base.transpose(0, 1)[:, ::2]  # [40, 3, 9] strided view, read in place
    low, high = (-40, 40) if mode == "error" and negative else (0, 40)
    if mode != "error":
        low, high = -60, 60
    ids = torch.from_numpy(rng.integers(low, high, (17, 1, 1))).cuda()  # broadcast over 1, 2
    kwargs = dict(index_mode=mode, negative_indices=negative, fill_value=-7)
    got = multigather.gather_multiaxis(data, ids, [0], **kwargs)
    want = multigather.gather_multiaxis(data.cpu().numpy(), ids.cpu().numpy(), [0], **kwargs)
    assert got.device == data.device
    np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_out_of_range_raises_the_cpu_engines_index_error():
    torch = cuda_torch()
    data = torch.arange(10.0).reshape(5, 2).cuda()
    ids = torch.tensor([[0], [7], [1]]).cuda()
    with pytest.raises(IndexError) as on_gpu:
        multigather.gather_multiaxis(data, ids, [0])
    with pytest.raises(IndexError) as on_cpu:
        multigather.gather_multiaxis(data.cpu(), ids.cpu(), [0])
    assert str(on_gpu.value) == str(on_cpu.value)
    assert "indices[1,0] = 7 is out of range for axis 0 of size 5" in str(on_gpu.value)


def test_out_argument_and_a_side_stream():
    torch = cuda_torch()
    data = torch.randn(300, 64).cuda()
    ids = torch.randint(0, 300, (1000, 1)).cuda()
    out = torch.empty(1000, 64, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # runs on torch's current stream, the side stream here
        multigather.gather_multiaxis(data, ids, [0], index_mode="clamp", out=out)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(out, data[ids[:, 0]])


def test_a_torch_cuda_out_is_written_in_place_with_its_version_bumped():
    # The door takes a torch CUDA out= as it is (one call, no Python normalization): the bytes
    # of the CPU engine, torch's version counter bumped (autograd's in-place check sees the
    # write), a strided out written only where it points, and torch's out= rules kept: an out
    # that requires grad is refused in grad mode, written under no_grad.
    torch = cuda_torch()
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(64, 8, generator=gen)
    ids = torch.randint(0, 64, (100, 1), generator=gen)
    u = torch.randn(100, 8, generator=gen)
    want = multigather.scatter_multiaxis(x, ids, u, [0], reduction="add")
    y = x.cuda()
    version = y._version
    got = multigather.scatter_multiaxis(y, ids.cuda(), u.cuda(), [0], reduction="add", out=y)
    assert got is y and y._version > version
    assert torch.equal(y.cpu(), want)
    wide = torch.zeros(64, 16, device="cuda")
    multigather.scatter_multiaxis(x.cuda(), ids.cuda(), u.cuda(), [0], reduction="add", out=wide[:, ::2])
    assert torch.equal(wide[:, ::2].cpu(), want)
    assert torch.equal(wide[:, 1::2].cpu(), torch.zeros(64, 8))
    leaf = x.cuda().requires_grad_()
    with pytest.raises(RuntimeError, match="out requires grad"):
        multigather.scatter_multiaxis(x.cuda(), ids.cuda(), u.cuda(), [0], reduction="add", out=leaf)
    with torch.no_grad():
        multigather.scatter_multiaxis(leaf, ids.cuda(), u.cuda(), [0], reduction="add", out=leaf)
    assert torch.equal(leaf.detach().cpu(), want)


def test_arrays_on_two_devices_are_refused():
    torch = cuda_torch()
    data = torch.randn(4, 3).cuda()
    with pytest.raises(ValueError, match="every array of a call must be on one CUDA device"):
        multigather.gather_multiaxis(data, torch.zeros(2, 1, dtype=torch.int64), [0])


def test_cupy_take_on_the_device():
    cupy = cuda_cupy()
    data = cupy.arange(5000, dtype=cupy.float32).reshape(1000, 5)
    ids = cupy.asarray(np.random.default_rng(9).integers(0, 1000, (333, 1)))
    got = multigather.gather_multiaxis(data, ids, [0])
    assert isinstance(got, cupy.ndarray)
    assert bool((got == cupy.take(data, ids[:, 0], axis=0)).all())


def test_one_shot_results_come_from_torchs_caching_allocator():
    # No cudaMalloc/cudaFree per call: the result is a block of torch's caching allocator
    # (counted by torch.cuda.memory_allocated, returned to it when the result goes).
    torch = cuda_torch()
    data = torch.randn(1000, 64, device="cuda")
    ids = torch.randint(0, 1000, (500, 1), device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = multigather.gather_multiaxis(data, ids, [0])
    assert torch.cuda.memory_allocated() - before >= out.numel() * out.element_size()
    assert torch.equal(out, data[ids[:, 0]])
    del out
    assert torch.cuda.memory_allocated() == before


def test_one_shot_results_come_from_cupys_memory_pool():
    cupy = cuda_cupy()
    data = cupy.arange(64000, dtype=cupy.float32).reshape(1000, 64)
    ids = cupy.asarray(np.random.default_rng(3).integers(0, 1000, (500, 1)))
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    out = multigather.gather_multiaxis(data, ids, [0])
    assert pool.used_bytes() - before >= out.nbytes
    assert bool((out == cupy.take(data, ids[:, 0], axis=0)).all())
    del out
    assert pool.used_bytes() == before


# ---- scatter on the device (deterministic: the CPU engine's bytes) ------------------------------

@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_scatter_matches_the_cpu_engine_byte_for_byte(reduction):
    torch = cuda_torch()
    rng = np.random.default_rng(9)
    data = rng.standard_normal((50, 7, 3)).astype(np.float32)
    ids = rng.integers(-50, 50, (400, 1, 1))  # many duplicates, negative indices
    updates = rng.standard_normal((400, 7, 3)).astype(np.float32)
    for include_input in (True, False):
        kwargs = dict(reduction=reduction, include_input=include_input)
        got = multigather.scatter_multiaxis(torch.from_numpy(data).cuda(), torch.from_numpy(ids).cuda(),
                                            torch.from_numpy(updates).cuda(), [0], **kwargs)
        want = multigather.scatter_multiaxis(data, ids, updates, [0], **kwargs)
        assert got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_framework_scatters_match_torch_on_the_device():
    torch = cuda_torch()
    gen = torch.Generator(device="cpu").manual_seed(10)
    x = torch.randn(64, 33, generator=gen).cuda()
    ids = torch.randint(0, 64, (500,), generator=gen).cuda()
    src = torch.randn(500, 33, generator=gen).cuda()
    mt = importlib.import_module("multigather.torch")
    got = mt.index_add(x, 0, ids, src)
    assert got.device == x.device
    torch.testing.assert_close(got, torch.index_add(x, 0, ids, src))
    index = torch.randint(0, 64, (80, 33), generator=gen).cuda()
    upd = torch.randn(80, 33, generator=gen).cuda()
    torch.testing.assert_close(mt.scatter_add(x, 0, index, upd),
                               torch.scatter_add(x, 0, index, upd))


def test_index_add_alpha_on_the_device_is_applied_by_pytorch_on_the_device():
    # alpha is the lowering's step on the updates, which the CUDA engine runs on the device
    # (kernels/updates_step.hpp), with or without autograd (source's gradient: alpha times).
    torch = cuda_torch()
    gen = torch.Generator(device="cpu").manual_seed(11)
    x = torch.randn(6, 5, generator=gen).cuda()
    ids = torch.tensor([4, 0, 4]).cuda()
    src = torch.randn(3, 5, generator=gen).cuda()
    mt = importlib.import_module("multigather.torch")
    for alpha in (2, -2.5):
        got = mt.index_add(x, 0, ids, src, alpha=alpha)
        assert got.is_cuda
        torch.testing.assert_close(got, torch.index_add(x, 0, ids, src, alpha=alpha))
    a, b = x.clone().requires_grad_(), src.clone().requires_grad_()
    mt.index_add(a, 0, ids, b, alpha=-2.5).sum().backward()
    torch.testing.assert_close(b.grad, torch.full_like(src, -2.5))
    torch.testing.assert_close(a.grad, torch.ones_like(x))
    xi, si = torch.arange(30).reshape(6, 5).cuda(), torch.arange(15).reshape(3, 5).cuda()
    assert torch.equal(mt.index_add(xi, 0, ids, si, alpha=3), torch.index_add(xi, 0, ids, si, alpha=3))


def test_torch_op_index_add_alpha_on_the_device():
    # torch.ops.multigather.index_add called directly (torch.compile and torch.export reach it
    # so): the CUDA engine scales the source on the device, and the VJP the source's gradient.
    # float16 too (PyTorch's CUDA rounding: the product rounded to float16, then added).
    torch = cuda_torch()
    ops = importlib.import_module("multigather.torch_ops")
    gen = torch.Generator(device="cpu").manual_seed(12)
    x = torch.randn(6, 5, generator=gen).cuda()
    ids = torch.tensor([4, 0, 4]).cuda()
    src = torch.randn(3, 5, generator=gen).cuda()
    for alpha in (2, -2.5):
        got = ops.index_add(x, 0, ids, src, alpha=alpha)
        assert got.is_cuda
        torch.testing.assert_close(got, torch.index_add(x, 0, ids, src, alpha=alpha))
    a, b = x.clone().requires_grad_(), src.clone().requires_grad_()
    ops.index_add(a, 0, ids, b, alpha=-2.5).pow(2).sum().backward()
    a2, b2 = x.clone().requires_grad_(), src.clone().requires_grad_()
    torch.index_add(a2, 0, ids, b2, alpha=-2.5).pow(2).sum().backward()
    torch.testing.assert_close(a.grad, a2.grad)
    torch.testing.assert_close(b.grad, b2.grad)
    xi, si = torch.arange(30).reshape(6, 5).cuda(), torch.arange(15).reshape(3, 5).cuda()
    assert torch.equal(ops.index_add(xi, 0, ids, si, alpha=3), torch.index_add(xi, 0, ids, si, alpha=3))
    xh, sh = x.half(), src.half()
    unique = torch.tensor([4, 0, 2]).cuda()  # (no duplicates: PyTorch's atomics add them in any order)
    assert torch.equal(ops.index_add(xh, 0, unique, sh, alpha=-2.5), torch.index_add(xh, 0, unique, sh, alpha=-2.5))


def test_scatter_out_of_range_raises_the_cpu_engines_index_error_and_writes_nothing():
    torch = cuda_torch()
    x = torch.arange(10.0).reshape(5, 2).cuda()
    ids = torch.tensor([[0], [7], [1]]).cuda()
    u = torch.ones(3, 2).cuda()
    out = x.clone()
    with pytest.raises(IndexError) as on_gpu:
        multigather.scatter_multiaxis(x, ids, u, [0], reduction="add", out=out)
    with pytest.raises(IndexError) as on_cpu:
        multigather.scatter_multiaxis(x.cpu(), ids.cpu(), u.cpu(), [0], reduction="add")
    assert str(on_gpu.value) == str(on_cpu.value)
    assert torch.equal(out, x)


# ---- segment ops on the device (the identity filled in there; the CPU engine's bytes) ------------

def test_torch_scatter_on_the_device_equals_the_cpu_engine_and_torch():
    # A message-passing step as PyTorch Geometric writes it: gather rows by source, reduce into
    # targets (sum and mean with their gradients, max, min, mul), on CUDA tensors; the same bytes
    # as on the CPU, and the values of torch's own scatter_reduce on the device.
    torch = cuda_torch()
    ts = importlib.import_module("multigather.torch_scatter")
    gen = torch.Generator(device="cpu").manual_seed(12)
    x = torch.randn(30, 8, generator=gen, dtype=torch.float64)
    src, dst = torch.randint(0, 30, (200,), generator=gen), torch.randint(0, 30, (200,), generator=gen)
    for reduce, torch_reduce in (("sum", "sum"), ("max", "amax"), ("min", "amin"), ("mul", "prod"),
                                 ("mean", "mean")):
        got = ts.scatter(x.cuda()[src.cuda()], dst.cuda(), dim=0, dim_size=30, reduce=reduce)
        assert got.is_cuda
        assert torch.equal(got.cpu(), ts.scatter(x[src], dst, dim=0, dim_size=30, reduce=reduce)), reduce
        index = dst.cuda()[:, None].expand(-1, 8)
        base = torch.ones if reduce == "mul" else torch.zeros  # an element no row reaches: 1 / 0
        want = base(30, 8, dtype=torch.float64, device="cuda").scatter_reduce(
            0, index, x.cuda()[src.cuda()], torch_reduce, include_self=False)
        torch.testing.assert_close(got, want)
    leaf = x.cuda().requires_grad_()
    ts.scatter(leaf[src.cuda()], dst.cuda(), dim=0, dim_size=30).pow(2).sum().backward()
    ref = x.clone().requires_grad_()
    torch.zeros(30, 8, dtype=torch.float64).index_add(0, dst, ref[src]).pow(2).sum().backward()
    torch.testing.assert_close(leaf.grad.cpu(), ref.grad)
    # max's gradient (to the first tie, torch_scatter's rule): the CPU engine's bytes; torch's
    # amax shares ties, so it is the oracle where no element has two
    for reduce in ("max", "min"):
        on_gpu = x.cuda().requires_grad_()
        ts.scatter(on_gpu[src.cuda()], dst.cuda(), dim=0, dim_size=30, reduce=reduce).pow(2).sum().backward()
        on_cpu = x.clone().requires_grad_()
        ts.scatter(on_cpu[src], dst, dim=0, dim_size=30, reduce=reduce).pow(2).sum().backward()
        assert torch.equal(on_gpu.grad.cpu(), on_cpu.grad), reduce
    # the mean's gradient (GraphSAGE's aggregation): against torch's scatter_reduce mean
    leaf = x.cuda().requires_grad_()
    ts.scatter(leaf[src.cuda()], dst.cuda(), dim=0, dim_size=30, reduce="mean").pow(2).sum().backward()
    ref = x.clone().requires_grad_()
    torch.zeros(30, 8, dtype=torch.float64).scatter_reduce(
        0, dst[:, None].expand(-1, 8), ref[src], "mean", include_self=False).pow(2).sum().backward()
    torch.testing.assert_close(leaf.grad.cpu(), ref.grad)


def test_torch_scatter_without_dim_size_reads_the_size_back_as_torch_scatter_does():
    torch = cuda_torch()
    ts = importlib.import_module("multigather.torch_scatter")
    x = torch.randn(6, 2, dtype=torch.float64)
    index = torch.tensor([0, 1, 1, 4, 0, 3])
    for reduce in ("sum", "mean", "max"):
        got = ts.scatter(x.cuda(), index.cuda(), dim=0, reduce=reduce)
        assert got.is_cuda and got.shape == (5, 2)
        assert torch.equal(got.cpu(), ts.scatter(x, index, dim=0, reduce=reduce)), reduce
    got = ts.segment_coo(x.cuda(), torch.tensor([0, 0, 2, 2, 2, 5]).cuda())
    assert torch.equal(got.cpu(), ts.segment_coo(x, torch.tensor([0, 0, 2, 2, 2, 5])))
    with pytest.raises(IndexError, match=r"index\[2\] = -1 is out of range"):
        ts.scatter(x.cuda(), torch.tensor([0, 1, -1, 2, 0, 3]).cuda(), dim=0)


def test_segments_from_lengths_offsets_and_indptr_are_computed_on_the_device():
    # The ids are computed on the device (Lowering::segment_ids): torch's own segment_reduce on
    # the device is the oracle, forward and gradient; the CPU's bytes for segment_csr; a bad
    # length is the CPU's error.
    torch = cuda_torch()
    mt = importlib.import_module("multigather.torch")
    ts = importlib.import_module("multigather.torch_scatter")
    gen = torch.Generator(device="cpu").manual_seed(5)
    data = torch.randn(2, 40, 3, generator=gen, dtype=torch.float64)
    lengths = torch.tensor([[10, 0, 30], [40, 0, 0]])
    offsets = torch.tensor([[0, 5, 5, 39], [2, 2, 2, 40]])
    for reduce in ("sum", "mean", "max", "min"):
        for kw in ({"lengths": lengths.cuda()}, {"offsets": offsets.cuda()}):
            leaf = data.cuda().requires_grad_()
            got = mt.segment_reduce(leaf, reduce, axis=1, **kw)
            ref_leaf = data.cuda().requires_grad_()
            want = torch.segment_reduce(ref_leaf, reduce, axis=1, **kw)
            assert got.is_cuda
            torch.testing.assert_close(got, want, equal_nan=True)
            got.nan_to_num().pow(2).sum().backward()
            want.nan_to_num().pow(2).sum().backward()
            torch.testing.assert_close(leaf.grad, ref_leaf.grad)
    indptr = torch.tensor([[0, 7, 7, 33, 40]])
    got = ts.segment_csr(data.cuda(), indptr.cuda())
    assert torch.equal(got.cpu(), ts.segment_csr(data, indptr))
    with pytest.raises(ValueError, match=r"lengths\[0,:\] sums to 41, but the data has 40 rows along the axis"):
        mt.segment_reduce(data.cuda(), "sum", lengths=torch.tensor([[10, 31], [40, 0]]).cuda(), axis=1)


def test_tf_sorted_segments_read_the_last_id_back_and_run_on_the_device():
    # multigather.tf.segment_* on ids in CUDA memory: segment_ids[-1] + 1 read back (as
    # TensorFlow's GPU kernel copies it), then the row on the device: the CPU's bytes for sorted
    # ids (an empty segment 0, max included); a negative last id is TensorFlow's error.
    torch = cuda_torch()
    mtf = importlib.import_module("multigather.tf")
    data = torch.randn(7, 3, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    ids = torch.tensor([0, 0, 2, 2, 2, 5, 5])
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min", "segment_mean"):
        got = getattr(mtf, name)(data.cuda(), ids.cuda())
        assert got.is_cuda and got.shape == (6, 3), name
        assert torch.equal(got.cpu(), torch.from_numpy(np.asarray(getattr(mtf, name)(data.numpy(), ids.numpy())))), name
    with pytest.raises(ValueError, match=r"segment ids must be >= 0"):
        mtf.segment_sum(data.cuda(), torch.tensor([-3] * 7).cuda())


def test_embedding_bag_runs_on_the_device_forward_and_backward():
    # Bag starts and ids checked on the device, then the fused reduction: the CPU's bytes, torch's
    # own F.embedding_bag on the device as the oracle; a bad id is the CPU's IndexError. The
    # weight's gradient (sorted terms added in bag order on the device) is the CPU engine's bytes,
    # close to torch's own CUDA gradient; per_sample_weights' too.
    torch = cuda_torch()
    mt = importlib.import_module("multigather.torch")
    F = torch.nn.functional
    gen = torch.Generator(device="cpu").manual_seed(3)
    weight = torch.randn(50, 8, generator=gen, dtype=torch.float64)
    ids = torch.randint(0, 50, (30,), generator=gen)
    ids[:6] = 7  # a hot row: one long run of terms
    offsets = torch.tensor([0, 4, 4, 11, 29])
    psw = torch.randn(30, generator=gen, dtype=torch.float64)
    on = lambda kw: {k: v.cuda() if hasattr(v, "cuda") else v for k, v in kw.items()}  # noqa: E731
    for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        for mode, kw in (("sum", {"per_sample_weights": psw.to(dtype)}), ("sum", {}), ("mean", {"padding_idx": 13}),
                         ("max", {})):
            table = weight.to(dtype)
            got = mt.embedding_bag(ids.cuda(), table.cuda(), offsets.cuda(), mode=mode, **on(kw))
            assert got.is_cuda
            assert torch.equal(got.cpu(), mt.embedding_bag(ids, table, offsets, mode=mode, **kw)), (dtype, mode)
            want = F.embedding_bag(ids.cuda(), table.cuda(), offsets.cuda(), mode=mode, **on(kw))
            torch.testing.assert_close(got, want)
            seed = torch.randn(got.shape, generator=gen, dtype=torch.float64).to(dtype)
            grads = []
            for device in ("cpu", "cuda"):
                leaf = table.to(device).requires_grad_()
                kwd = {k: (v.to(device).requires_grad_() if k == "per_sample_weights" else v) for k, v in kw.items()}
                out = mt.embedding_bag(ids.to(device), leaf, offsets.to(device), mode=mode, **kwd)
                out.backward(seed.to(device))
                grads.append((leaf.grad.cpu(), kwd["per_sample_weights"].grad.cpu() if "per_sample_weights" in kwd else None))
            assert torch.equal(grads[0][0], grads[1][0]), (dtype, mode)  # the CPU engine's bytes
            if grads[0][1] is not None:
                torch.testing.assert_close(grads[1][1], grads[0][1])
            leaf = table.cuda().requires_grad_()
            F.embedding_bag(ids.cuda(), leaf, offsets.cuda(), mode=mode, **on(kw)).backward(seed.cuda())
            # torch's own CUDA gradient (it sums 16-bit terms in float32; the CPU engine's bytes
            # round each add, as torch's CPU kernel does)
            loose = {"rtol": 3e-2, "atol": 3e-2} if dtype in (torch.float16, torch.bfloat16) else {}
            torch.testing.assert_close(grads[1][0], leaf.grad.cpu(), **loose)
    bad = ids.clone()
    bad[17] = 50
    with pytest.raises(IndexError, match=r"input\[17\] = 50 is out of range \[0, 50\)"):
        mt.embedding_bag(bad.cuda(), weight.cuda(), offsets.cuda(), mode="sum")
