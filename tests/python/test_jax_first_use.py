"""multigather's first JAX use in a fresh interpreter: whatever comes first (a jitted call, grad,
vmap, an eager call, a scatter; x64 on or off; multigather imported before or after jax), JAX's
CPU backend starts and the result equals JAX's own op.

Each case runs in its own ``python -c`` process, since the bug it guards against (XLA refusing
the handlers: "Types used by FFI handlers must be registered before the handler registration",
after which JAX cannot start its CPU backend at all) only shows when multigather registers its
FFI handlers before any JAX backend exists."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import require

require("jax")

_PRELUDE = {
    "jax_first": "import jax, jax.numpy as jnp, numpy as np\nimport multigather as mg\n",
    "mg_first": "import multigather as mg\nimport numpy as np\nimport jax, jax.numpy as jnp\n",
}

# Each body computes `got` with multigather and `want` with JAX's own op; nothing in JAX runs
# before the multigather call.
_BODIES = {
    "jit_take": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
got = jax.jit(lambda d: mg.jax.take(d, np.array([0, 2]), axis=0))(d)
want = jnp.take(d, np.array([0, 2]), axis=0)
""",
    "grad_take": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
got = jax.grad(lambda d: mg.jax.take(d, np.array([0, 2, 2]), axis=0).sum())(d)
want = jax.grad(lambda d: jnp.take(d, np.array([0, 2, 2]), axis=0).sum())(d)
""",
    "vmap_take": """
d = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
got = jax.vmap(lambda d: mg.jax.take(d, np.array([3, 1]), axis=0))(d)
want = jax.vmap(lambda d: jnp.take(d, np.array([3, 1]), axis=0))(d)
""",
    "jit_segment_sum": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
ids = np.array([0, 2, 2, 1])
got = jax.jit(lambda d: mg.jax.segment_sum(d, ids, 3))(d)
want = jax.ops.segment_sum(d, ids, 3)
""",
    "jit_at_add": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
ids = np.array([0, 2, 2])
got = jax.jit(lambda d: mg.jax.at(d)[ids].add(np.ones((3, 2), np.float32)))(d)
want = jnp.asarray(d).at[ids].add(np.ones((3, 2), np.float32))
""",
    "jit_scatter_ffi": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
ids = np.array([[0], [2], [2]])
got = jax.jit(lambda d: mg.scatter_multiaxis(d, ids, np.ones((3, 2), np.float32), [0], reduction="add"))(d)
want = jnp.asarray(d).at[ids[:, 0]].add(np.ones((3, 2), np.float32))
""",
    "eager_then_jit": """
d = np.arange(8, dtype=np.float32).reshape(4, 2)
first = mg.jax.take(d, np.array([1]), axis=0)
got = jax.jit(lambda d: mg.jax.take(d, np.array([0, 2]), axis=0))(d)
want = jnp.take(d, np.array([0, 2]), axis=0)
""",
}


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("order", sorted(_PRELUDE))
@pytest.mark.parametrize("body", sorted(_BODIES))
def test_first_jax_use_in_a_fresh_process(body, order, x64):
    code = _PRELUDE[order]
    if x64:
        code += 'jax.config.update("jax_enable_x64", True)\n'
    code += _BODIES[body]
    code += ("assert got.dtype == want.dtype and got.shape == want.shape, (got, want)\n"
             "assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)\n"
             "print('ok', jax.devices()[0].platform)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"})
    assert result.returncode == 0 and "ok cpu" in result.stdout, result.stderr[-3000:]
