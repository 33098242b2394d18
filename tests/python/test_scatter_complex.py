"""Complex min / max scatters (docs/spec.md section 4: StableHLO's lexicographic order of the
(real, imaginary) pairs, with XLA's NaN and tie rule) against JAX on XLA's CPU (64-bit enabled):
``jax.lax.scatter_max`` / ``scatter_min`` and ``x.at[idx].max`` / ``.min`` on complex64 and
complex128, through ``multigather.scatter_multiaxis``, ``multigather.jax.at`` and
``multigather.stablehlo.scatter``, eagerly and inside ``jax.jit`` (the XLA FFI custom call).
Parts come from a small set with NaN, -0, +0, +-inf and repeated values, so ties on the real
part, NaN on either side and signed zeros are common. Nothing is computed, only chosen: the
results compare bit for bit. The frameworks whose own rule differs keep a TypeError.
"""
from __future__ import annotations

import numpy as np
import pytest

import multigather
from conftest import require

jax = require("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

DTYPES = [np.complex64, np.complex128]
NAN = float("nan")
LAX = {"max": lax.scatter_max, "min": lax.scatter_min}
# (input element, updates into it in order, the max, the min): worked out by hand from the rule
# (max keeps the output side a when re(a) == re(b) ? im(a) > im(b) : re(a) > re(b), else takes
# the update b; min with <), and checked against XLA below.
TABLE = [
    (1 + 2j, [1 + 3j, 1 + 1j], 1 + 3j, 1 + 1j),                    # equal real parts: imaginary decides
    (1 + 2j, [0 + 9j, -1 + 9j], 1 + 2j, -1 + 9j),                  # the real parts decide
    (complex(NAN, 0), [1 + 0j], 1 + 0j, 1 + 0j),                   # a NaN output element is replaced
    (1 + 0j, [complex(NAN, 0)], complex(NAN, 0), complex(NAN, 0)),  # a NaN update replaces
    (0j, [complex(NAN, 0), 1 + 0j], 1 + 0j, 1 + 0j),
    (0j, [1 + 0j, complex(NAN, 0)], complex(NAN, 0), complex(NAN, 0)),
    (complex(1, NAN), [1 + 5j], 1 + 5j, 1 + 5j),
    (1 + 5j, [complex(1, NAN)], complex(1, NAN), complex(1, NAN)),
    (complex(0, NAN), [1 + 5j], 1 + 5j, complex(0, NAN)),          # imaginary NaN: only on a real tie
    (1 + 5j, [complex(0, NAN)], 1 + 5j, complex(0, NAN)),
    (complex(0.0, 1), [complex(-0.0, 1)], complex(-0.0, 1), complex(-0.0, 1)),  # a tie takes the update
    (complex(1, -0.0), [complex(1, 0.0)], complex(1, 0.0), complex(1, 0.0)),
]
PARTS = np.array([NAN, -np.inf, -1.0, -0.0, 0.0, 1.0, 2.0, np.inf])


def bits(a):
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def check_bits(got, want):
    got_np, want_np = np.asarray(got), np.asarray(want)
    assert got_np.dtype == want_np.dtype and got_np.shape == want_np.shape
    assert bits(got_np) == bits(want_np), (got_np, want_np)


def random_parts(rng, shape, dtype):
    real = rng.choice(PARTS, size=shape)
    imag = rng.choice(PARTS, size=shape)
    out = np.empty(shape, dtype)
    out.real, out.imag = real, imag
    return out


def lax_dn(rank):
    """A rows scatter along dim 0 of a rank-`rank` operand: indices [k, 1], updates [k, rest..]."""
    return lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, rank)), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))


def stablehlo(x, idx, u, op):
    """multigather.stablehlo.scatter of the same rows scatter (idx of shape [k, 1])."""
    rank = np.ndim(x)
    return multigather.stablehlo.scatter(x, idx, u, update_window_dims=tuple(range(1, rank)),
                                         inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                                         index_vector_dim=1, update_computation=op)


def multiaxis(x, idx, u, op, include_input=True):
    """scatter_multiaxis of the same rows scatter: indices [k, 1, ..] (broadcast over the rest)."""
    rank = np.ndim(x)
    return multigather.scatter_multiaxis(x, idx.reshape(idx.shape[:1] + (1,) * (rank - 1)), u, [0],
                                         reduction=op, include_input=include_input)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_hand_table_against_xla(dtype, op):
    for start, ups, want_max, want_min in TABLE:
        want_value = want_max if op == "max" else want_min
        x = np.array([start, 7 + 7j], dtype)
        u = np.array(ups, dtype)
        idx = np.zeros((len(ups), 1), np.int64)
        want = np.array([want_value, 7 + 7j], dtype)
        # XLA agrees with the table (jax's lowering of complex max / min: compare and select)
        check_bits(LAX[op](jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), lax_dn(1)), want)
        check_bits(getattr(jnp.asarray(x).at[idx[:, 0]], op)(jnp.asarray(u)), want)
        # and so does multigather, on numpy and on jax arrays
        check_bits(multiaxis(x, idx, u, op), want)
        check_bits(multiaxis(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), op), want)
        check_bits(getattr(multigather.jax.at(jnp.asarray(x))[jnp.asarray(idx[:, 0])], op)(jnp.asarray(u)), want)
        check_bits(stablehlo(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), op), want)
        # include_input=False: the element starts from its first update
        first = np.array([ups[0]], dtype)
        rest = np.array(ups[1:], dtype)
        expected = LAX[op](jnp.asarray(np.array([first[0], 7 + 7j], dtype)),
                           jnp.asarray(np.zeros((len(rest), 1), np.int64)), jnp.asarray(rest), lax_dn(1))
        check_bits(multiaxis(x, idx, u, op, include_input=False), expected)


def random_case(seed, dtype):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    rest = tuple(int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    k = int(rng.integers(1, 12))
    x = random_parts(rng, (n,) + rest, dtype)
    idx = rng.integers(0, n, size=(k, 1)).astype(rng.choice([np.int32, np.int64]))
    u = random_parts(rng, (k,) + rest, dtype)
    return x, idx, u


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", range(40))
def test_random_rows_against_lax_scatter_and_at(seed, dtype, op):
    x, idx, u = random_case(seed, dtype)
    xj, ij, uj = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u)
    want = LAX[op](xj, ij, uj, lax_dn(x.ndim))
    check_bits(getattr(xj.at[ij[:, 0]], op)(uj), want)  # the two JAX forms agree
    got = multiaxis(x, idx, u, op)
    assert isinstance(got, np.ndarray)
    check_bits(got, want)
    got = getattr(multigather.jax.at(xj)[ij[:, 0]], op)(uj)
    assert isinstance(got, jax.Array)
    check_bits(got, want)
    check_bits(stablehlo(xj, ij, uj, op), want)
    # include_input=False: reached elements start from the identity (-inf, -inf) for max,
    # (+inf, +inf) for min, under which XLA's first combine returns the update itself
    inf = np.inf if op == "min" else -np.inf
    reached = np.zeros(x.shape[0], bool)
    reached[idx[:, 0]] = True
    start = np.where(reached.reshape((-1,) + (1,) * (x.ndim - 1)), np.asarray(complex(inf, inf), dtype), x)
    check_bits(multiaxis(x, idx, u, op, include_input=False), LAX[op](jnp.asarray(start), ij, uj, lax_dn(x.ndim)))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_inside_jit_through_the_ffi_call(dtype, op):
    for seed in range(12):
        x, idx, u = random_case(100 + seed, dtype)
        xj, ij, uj = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u)
        want = LAX[op](xj, ij, uj, lax_dn(x.ndim))
        forms = {
            "scatter_multiaxis": lambda a, i, v: multiaxis(a, i, v, op),
            "jax.at": lambda a, i, v: getattr(multigather.jax.at(a)[i[:, 0]], op)(v),
            "stablehlo.scatter": lambda a, i, v: stablehlo(a, i, v, op),
        }
        for name, form in forms.items():
            traced = []

            def f(a, i, v, form=form):
                traced.append(isinstance(a, jax.core.Tracer))
                return form(a, i, v)

            got = jax.jit(f)(xj, ij, uj)
            assert traced == [True], name  # traced once, on tracers: the FFI custom call
            assert isinstance(got, jax.Array) and got.dtype == dtype and got.shape == x.shape, name
            check_bits(got, want)


def test_frameworks_with_another_rule_keep_their_type_error():
    a = np.array([1 + 0j, 2 + 0j], np.complex64)
    with pytest.raises(TypeError, match=r"numpy.maximum_at: a dtype complex64 is not supported with maximum "
                                        r"\(numpy's complex maximum / minimum propagate NaN"):
        multigather.numpy.maximum_at(a, np.array([0]), np.array([3 + 0j], np.complex64))
    np.testing.assert_array_equal(a, [1, 2])  # nothing written
    torch = pytest.importorskip("torch")
    t = torch.zeros(2, dtype=torch.complex64)
    with pytest.raises(NotImplementedError):  # PyTorch's own rule
        t.scatter_reduce(0, torch.tensor([0, 0]), torch.ones(2, dtype=torch.complex64), "amax")
    with pytest.raises(TypeError, match=r"torch.scatter_reduce: self dtype complex64 is not supported with "
                                        r"reduce = 'amax' \(PyTorch implements amax and amin for no complex dtype\)"):
        multigather.torch.scatter_reduce(t, 0, torch.tensor([0, 0]), torch.ones(2, dtype=torch.complex64), "amax")
