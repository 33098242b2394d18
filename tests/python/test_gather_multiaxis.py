"""Property-based differential tests of multigather.gather_multiaxis against the independent
numpy fancy-indexing formulation in numpy_oracle.py.

Random cases cover ranks 0 to 6, every input dtype (float16, bfloat16 and float8 through
ml_dtypes included), every index dtype, the four index modes with and without the negative
rule, broadcasting of input and of indices, reordered and negative axes, multi-axis coordinates,
empty dimensions, and strided, reversed and broadcast (stride 0) views of input and indices.
Results are compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, event, given, note
from hypothesis import strategies as st

import multigather
import numpy_oracle
from numpy_oracle import OracleIndexError

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed (pip install ml-dtypes)")

INPUT_DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
        np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
        np.complex128, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
    )
]
INDEX_DTYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                      np.uint16, np.uint32, np.uint64)]
INDEX_MODES = ["error", "clamp", "wrap", "fill"]
# Fill values exact in every float dtype (the conversion itself is tested in test_errors.py).
FILL_VALUES = [0, 1, -1, 3, 0.5, -1.5]


def random_array(rng: np.random.Generator, shape, dtype: np.dtype) -> np.ndarray:
    """Random bits of ``dtype`` (NaNs and infinities included: the comparison is bitwise)."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    raw = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def as_view(rng: np.random.Generator, array: np.ndarray, kind: str) -> np.ndarray:
    """The same values as ``array`` held by a view of another layout: "contiguous", "strided"
    (every other element of a larger array), "reversed" (negative strides), "transposed"
    (a Fortran-order copy viewed back in C order), "broadcast" (a stride-0 dimension)."""
    if kind == "contiguous" or array.ndim == 0:
        return array
    if kind == "strided":
        big = np.empty(tuple(2 * s + 1 for s in array.shape), array.dtype)
        view = big[tuple(slice(1, None, 2) for _ in array.shape)]
        view[...] = array
        return view
    if kind == "reversed":
        flipped = np.ascontiguousarray(array[tuple(slice(None, None, -1) for _ in array.shape)])
        return flipped[tuple(slice(None, None, -1) for _ in array.shape)]
    if kind == "transposed":
        return np.asfortranarray(array)
    if kind == "broadcast":
        d = int(rng.integers(0, array.ndim))
        if array.shape[d] <= 1:
            return array
        row = np.take(array, [0], axis=d)
        broadcast = np.broadcast_to(row, array.shape)
        array[...] = broadcast  # the values become those of the broadcast view
        return broadcast
    raise AssertionError(kind)


@st.composite
def gather_cases(draw):
    r = draw(st.integers(0, 6))
    k = draw(st.integers(0, r))
    axes = draw(st.permutations(range(r)))[:k]
    axes = [a - r if draw(st.booleans()) else a for a in axes]  # negative spellings too
    normalized = [a % r for a in axes]
    max_size = 4 if r <= 3 else 3
    input_shape, logical = [], []
    for d in range(r):
        if d in normalized:
            input_shape.append(draw(st.integers(0, max_size) if draw(st.integers(0, 9)) == 0
                                    else st.integers(1, max_size)))
            logical.append(draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, max_size)))
        else:
            size = draw(st.integers(0, max_size) if draw(st.integers(0, 9)) == 0
                        else st.integers(1, max_size))
            relation = draw(st.sampled_from(["same", "input1", "indices1"]))
            input_shape.append(1 if relation == "input1" else size)
            logical.append(1 if relation == "indices1" else size)
    c = max(k, 1)
    indices_shape = list(logical)
    if r:
        indices_shape[-1] *= c
    return {
        "input_shape": tuple(input_shape),
        "indices_shape": tuple(indices_shape),
        "axes": axes,
        "dtype": draw(st.sampled_from(INPUT_DTYPES)),
        "index_dtype": draw(st.sampled_from(INDEX_DTYPES)),
        "index_mode": draw(st.sampled_from(INDEX_MODES)),
        "negative_indices": draw(st.booleans()),
        "fill_value": draw(st.sampled_from(FILL_VALUES)),
        "out_of_range": draw(st.integers(0, 3)) == 0,
        "input_view": draw(st.sampled_from(["contiguous", "strided", "reversed", "transposed",
                                            "broadcast"])),
        "indices_view": draw(st.sampled_from(["contiguous", "strided", "reversed",
                                              "transposed"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def random_indices(rng, case) -> np.ndarray:
    """Coordinates for each axis: in range, or (when the case asks) up to two sizes outside,
    negative values only for signed dtypes, every value representable in the index dtype."""
    r = len(case["input_shape"])
    shape = case["indices_shape"]
    dtype = case["index_dtype"]
    if r == 0:
        return np.zeros((), dtype)
    axes = [a % r for a in case["axes"]]
    c = max(len(axes), 1)
    values = np.zeros(shape, np.int64)
    info = np.iinfo(dtype)
    for j in range(c):
        n = case["input_shape"][axes[j]] if axes else 1
        lo = -2 * n - 1 if case["out_of_range"] else -n
        hi = 2 * n + 1 if case["out_of_range"] else max(n - 1, 0)
        lo = max(lo, int(info.min))
        hi = min(hi, int(info.max))
        if case["out_of_range"] is False and not case["negative_indices"]:
            lo = max(lo, 0)
        part = rng.integers(lo, hi + 1, size=values[..., j::c].shape)
        values[..., j::c] = part
    return values.astype(dtype)


@given(gather_cases())
def test_gather_multiaxis_matches_numpy_fancy_indexing(case):
    rng = np.random.default_rng(case["seed"])
    note(f"case {case}")
    data = random_array(rng, case["input_shape"], case["dtype"])
    indices = random_indices(rng, case)
    input_view = as_view(rng, data, case["input_view"])
    indices_view = as_view(rng, indices, case["indices_view"])
    kwargs = dict(index_mode=case["index_mode"], negative_indices=case["negative_indices"],
                  fill_value=case["fill_value"])
    if case["dtype"] == np.bool_ and case["fill_value"] not in (0, 1):
        kwargs["fill_value"] = 1
    if case["dtype"].kind in "iu" and isinstance(kwargs["fill_value"], float):
        kwargs["fill_value"] = 2
    if case["dtype"].kind == "u" and kwargs["fill_value"] < 0:
        kwargs["fill_value"] = 1
    event(f"rank {len(case['input_shape'])}")
    event(f"index_mode {case['index_mode']}")
    try:
        expected = numpy_oracle.gather_multiaxis(data, indices, case["axes"], **kwargs)
    except OracleIndexError:
        event("expects IndexError")
        with pytest.raises(IndexError, match="is out of range for axis"):
            multigather.gather_multiaxis(input_view, indices_view, case["axes"], **kwargs)
        return
    event("empty output" if expected.size == 0 else "non-empty output")
    got = multigather.gather_multiaxis(input_view, indices_view, case["axes"], **kwargs)
    assert isinstance(got, np.ndarray)
    assert got.dtype == data.dtype
    assert got.shape == expected.shape
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()


@given(gather_cases())
def test_out_argument_writes_the_same_result_into_a_strided_view(case):
    assume(case["index_mode"] != "error" or not case["out_of_range"])
    rng = np.random.default_rng(case["seed"])
    data = random_array(rng, case["input_shape"], case["dtype"])
    indices = random_indices(rng, case)
    kwargs = dict(index_mode=case["index_mode"], negative_indices=case["negative_indices"],
                  fill_value=0)
    try:
        expected = numpy_oracle.gather_multiaxis(data, indices, case["axes"], **kwargs)
    except OracleIndexError:
        return
    storage = np.zeros(tuple(2 * s for s in expected.shape), data.dtype)
    every_other = tuple(slice(None, None, 2) for _ in expected.shape) + (Ellipsis,)
    out = storage[every_other]
    result = multigather.gather_multiaxis(data, indices, case["axes"], out=out, **kwargs)
    assert result is out
    assert out.tobytes() == np.ascontiguousarray(expected).tobytes()
    untouched = storage.copy()
    untouched[every_other] = 0
    assert not untouched.reshape(-1).view(np.uint8).any()  # nothing written between the strided elements


@pytest.mark.parametrize("dtype", INPUT_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: d.name)
def test_every_dtype_pair_on_a_fixed_multiaxis_case(dtype, index_dtype):
    rng = np.random.default_rng(7)
    data = random_array(rng, (3, 4, 5), dtype)
    # axes [2, 0]: coordinate 0 addresses dim 2, coordinate 1 addresses dim 0.
    indices = np.array([[[4, 2, 0, 1, 3, 0]]], index_dtype)  # logical shape [1,1,3]
    got = multigather.gather_multiaxis(data, indices, [2, 0])
    expected = np.stack([data[2, :, 4], data[1, :, 0], data[0, :, 3]], axis=-1)[None]
    expected = np.broadcast_to(expected, (1, 4, 3))
    assert got.dtype == dtype and got.shape == (1, 4, 3)
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_seed_worked_example_shapes():
    """SPEC section 1: input [4,2,1,2], indices [1,3,2,2], axes [1] gives output [4,3,2,2]."""
    data = np.arange(16).reshape(4, 2, 1, 2)
    indices = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1]).reshape(1, 3, 2, 2)
    got = multigather.gather_multiaxis(data, indices, [1])
    assert got.shape == (4, 3, 2, 2)
    assert multigather.output_shape("gather_multiaxis", (4, 2, 1, 2), (1, 3, 2, 2), axes=[1]) \
        == (4, 3, 2, 2)
    o = np.indices((4, 3, 2, 2))
    assert np.array_equal(got, data[o[0], indices[0, o[1], o[2], o[3]], 0, o[3]])
