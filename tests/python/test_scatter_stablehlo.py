"""multigather.stablehlo.scatter against jax.lax.scatter / scatter_add / scatter_mul /
scatter_min / scatter_max (CPU, 64-bit enabled) with explicit lax.ScatterDimensionNumbers and
mode FILL_OR_DROP, on seeded random dimension numbers: point and windowed updates, windows
smaller than the operand on dims that are not indexed, inserted dims indexed or not,
scatter_dims_to_operand_dims in any order, index_vector_dim anywhere (its rank included), batching
dims, and starts out of range (negative, or a window that sticks out: XLA skips the whole window).
Exact comparisons (integer data, or small integers in floats). ``assign`` with duplicate targets
is undefined in StableHLO: its random cases scatter one repeated value (which positions are
written is still checked); distinct values are checked by hand in the C++ tests.
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

COMPUTATIONS = {"assign": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
                "min": lax.scatter_min, "max": lax.scatter_max}


def random_scatter(rng):
    """(operand, scatter_indices, updates, dimension numbers as a dict) of a valid call."""
    R = int(rng.randint(1, 5))
    D = [int(s) for s in rng.randint(1, 5, size=R)]
    dims = list(range(R))
    nb = int(rng.randint(0, min(2, R - 1) + 1)) if R > 1 else 0
    batching = sorted(rng.choice(dims, size=nb, replace=False).tolist())
    rest = [d for d in dims if d not in batching]
    k = int(rng.randint(0, len(rest) + 1)) if rest else 0
    if k == 0 and rest and rng.rand() < 0.8:
        k = 1
    indexed = rng.permutation(rest)[:k].tolist()  # any order
    inserted = sorted(d for d in rest if rng.rand() < 0.4)
    window = {}
    for d in rest:
        if d in inserted:
            window[d] = 1
        elif d in indexed:
            window[d] = 1 if rng.rand() < 0.5 else int(rng.randint(1, D[d] + 1))
        else:
            window[d] = D[d] if rng.rand() < 0.5 else int(rng.randint(1, D[d] + 1))
    # scatter_indices: free dims and batching dims in a random order, the index vector inserted.
    free = [int(s) for s in rng.randint(1, 4, size=int(rng.randint(0, 3)))]
    entries = [("f", s) for s in free] + [("b", d) for d in batching]
    entries = [entries[j] for j in rng.permutation(len(entries))]
    # jax.lax.scatter's index vector is the last dim of scatter_indices
    shape_i, batch_pos = [], {}
    for kind, v in entries:
        if kind == "b":
            batch_pos[v] = len(shape_i)
        shape_i.append(D[v] if kind == "b" else v)
    starts = np.zeros(shape_i + [k], dtype=np.int64)
    for j, d in enumerate(indexed):  # mostly fitting, some out of range (negative or past D - w)
        hi = D[d] - window[d]
        starts[..., j] = rng.randint(-1 if rng.rand() < 0.3 else 0, hi + (2 if rng.rand() < 0.3 else 1),
                                     size=shape_i)
    scatter_sizes = list(shape_i)
    window_sizes = [window[d] for d in rest if d not in inserted]
    U = len(scatter_sizes) + len(window_sizes)
    update_window_dims = sorted(rng.choice(U, size=len(window_sizes), replace=False).tolist())
    ushape, si, wi = [], 0, 0
    for u in range(U):
        if u in update_window_dims:
            ushape.append(window_sizes[wi])
            wi += 1
        else:
            ushape.append(scatter_sizes[si])
            si += 1
    dn = dict(update_window_dims=tuple(update_window_dims), inserted_window_dims=tuple(inserted),
              scatter_dims_to_operand_dims=tuple(int(d) for d in indexed),
              operand_batching_dims=tuple(batching),
              scatter_indices_batching_dims=tuple(batch_pos[d] for d in batching))
    dtype = rng.choice([np.float32, np.float64, np.int32, np.int64])
    operand = rng.randint(-5, 6, size=D).astype(dtype)
    updates = rng.randint(-3, 4, size=ushape).astype(dtype)
    index_dtype = rng.choice([np.int32, np.int64])
    return operand, starts.astype(index_dtype), updates, dn


@pytest.mark.parametrize("computation", sorted(COMPUTATIONS))
@pytest.mark.parametrize("seed", range(60))
def test_stablehlo_scatter_vs_lax_scatter(seed, computation):
    rng = np.random.RandomState(seed)
    operand, indices, updates, dn = random_scatter(rng)
    if computation == "assign":  # duplicates are undefined in StableHLO: one repeated value
        updates = np.full_like(updates, 7)
    if computation == "mul":
        updates = rng.choice(np.array([-1, 1, 2], dtype=operand.dtype), size=updates.shape)
    lax_dn = lax.ScatterDimensionNumbers(
        update_window_dims=dn["update_window_dims"], inserted_window_dims=dn["inserted_window_dims"],
        scatter_dims_to_operand_dims=dn["scatter_dims_to_operand_dims"],
        operand_batching_dims=dn["operand_batching_dims"],
        scatter_indices_batching_dims=dn["scatter_indices_batching_dims"])
    want = COMPUTATIONS[computation](jnp.asarray(operand), jnp.asarray(indices), jnp.asarray(updates),
                                     lax_dn, mode=lax.GatherScatterMode.FILL_OR_DROP)
    # multigather takes index_vector_dim anywhere: the index vector moved to dim ivd (or dropped,
    # ivd = rank, when it has one entry), the batching dims renumbered.
    Q = indices.ndim - 1
    if indices.shape[-1] == 1 and rng.rand() < 0.3:
        ivd, mg_indices = Q, indices[..., 0]
    else:
        ivd = int(rng.randint(0, Q + 1))
        mg_indices = np.moveaxis(indices, -1, ivd)
    batch = tuple(q + (q >= ivd) if ivd < Q + 1 and mg_indices.ndim == Q + 1 else q
                  for q in dn["scatter_indices_batching_dims"])
    got = multigather.stablehlo.scatter(
        jnp.asarray(operand), jnp.asarray(mg_indices), jnp.asarray(updates),
        update_window_dims=dn["update_window_dims"], inserted_window_dims=dn["inserted_window_dims"],
        scatter_dims_to_operand_dims=dn["scatter_dims_to_operand_dims"], index_vector_dim=ivd,
        input_batching_dims=dn["operand_batching_dims"],
        scatter_indices_batching_dims=batch, update_computation=computation)
    assert isinstance(got, jax.Array)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
