"""multigather.run / ops / output_shape / explain: the registry surface. Output shapes are golden
values from each framework's documentation examples (ONNX Operators.md, the numpy, TensorFlow and
PyTorch docs, the StableHLO spec), computed from shapes alone; explain must name the one
gather_multiaxis call and the final shape. Unknown ops and attributes are ValueErrors."""

from __future__ import annotations

import numpy as np
import pytest

import multigather

GOLDEN_SHAPES = [
    # op, input shape, indices shape, attributes, output shape (source)
    ("gather_multiaxis", (4, 2, 1, 2), (1, 3, 2, 2), dict(axes=[1]), (4, 3, 2, 2)),  # SPEC 1
    ("onnx.Gather", (3, 2), (2, 2), dict(axis=0), (2, 2, 2)),  # Operators.md Gather example 1
    ("onnx.Gather", (3, 3), (1, 2), dict(axis=1), (3, 1, 2)),  # example 2
    ("onnx.GatherElements", (3, 3), (2, 3), dict(axis=0), (2, 3)),  # GatherElements example 2
    ("onnx.GatherND", (2, 2, 2), (2, 1), dict(batch_dims=1), (2, 2)),  # GatherND example 5
    ("onnx.GatherND", (2, 2), (2, 2), dict(), (2,)),  # GatherND example 1
    ("numpy.take", (3, 4), (2,), dict(axis=1), (3, 2)),
    ("numpy.take", (3, 4), (2, 5), dict(), (2, 5)),  # axis=None flattens
    ("numpy.take_along_axis", (3, 4), (3, 2), dict(axis=1), (3, 2)),
    ("tf.gather", (3, 5), (3, 2), dict(axis=1, batch_dims=1), (3, 2)),  # tf.gather docs
    ("tf.gather_nd", (2, 3, 4), (2, 1), dict(batch_dims=1), (2, 4)),
    ("torch.gather", (3, 4), (1, 2), dict(dim=1), (1, 2)),
    ("torch.take_along_dim", (3, 4), (1, 2), dict(dim=1), (3, 2)),
    ("torch.index_select", (3, 4), (2,), dict(dim=0), (2, 4)),
    ("torch.take", (3, 4), (2, 2), dict(), (2, 2)),
    ("jax.numpy.take", (3, 4), (5,), dict(axis=0), (5, 4)),
    ("stablehlo.gather", (2, 3, 4, 2), (2, 2, 3, 2),  # the StableHLO spec's gather example
     dict(offset_dims=[3, 4], collapsed_slice_dims=[1], operand_batching_dims=[0],
          start_indices_batching_dims=[1], start_index_map=[2, 1], index_vector_dim=3,
          slice_sizes=[1, 1, 2, 2]), (2, 2, 3, 2, 2)),
]


@pytest.mark.parametrize("op, x, i, attrs, expected", GOLDEN_SHAPES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(GOLDEN_SHAPES)])
def test_output_shape_and_explain(op, x, i, attrs, expected):
    assert multigather.output_shape(op, x, i, **attrs) == expected
    text = multigather.explain(op, x, i, **attrs)
    assert "gather_multiaxis(" in text
    assert "[" + ",".join(map(str, expected)) + "]" in text


@pytest.mark.parametrize("op, x, i, attrs, expected", GOLDEN_SHAPES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(GOLDEN_SHAPES)])
def test_run_gives_the_output_shape(op, x, i, attrs, expected):
    data = np.arange(int(np.prod(x)), dtype=np.float32).reshape(x)
    indices = np.zeros(i, np.int64)
    assert multigather.run(op, data, indices, **attrs).shape == expected


# The framework modules whose public functions state their registry row (the op name they pass
# to the door: _registry.registry_op_of; a wrapper made from the row carries it too).
FRAMEWORK_MODULES = ("", "onnx", "torch", "numpy", "tf", "jax", "coreml", "tosa", "mlir", "stablehlo", "webnn",
                     "dml", "torch_scatter")


def _functions_by_op() -> dict:
    import importlib

    from multigather import _registry

    found = {}
    for name in FRAMEWORK_MODULES:
        module = importlib.import_module("multigather" + ("." + name if name else ""))
        for attr in getattr(module, "__all__", dir(module)):
            function = getattr(module, attr, None)
            if attr.startswith("_") or not callable(function):
                continue
            op = getattr(function, "registry_op", None) or _registry.registry_op_of(function)
            if op is not None:
                found.setdefault(op, []).append(f"{name + '.' if name else ''}{attr}")
    return found


@pytest.mark.parametrize("op", multigather.ops())
def test_every_registry_op_has_a_python_function_with_a_docstring(op):
    functions = _functions_by_op()
    assert op in functions, f"{op} has no function in the framework modules"
    for path in functions[op]:
        target = multigather
        for part in path.split("."):
            target = getattr(target, part)
        assert callable(target) and target.__doc__, path


def test_unknown_op_and_attribute_are_value_errors():
    with pytest.raises(ValueError, match="^unknown op 'onnx.Scatter'"):
        multigather.run("onnx.Scatter", np.zeros(3), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match=r"^onnx.Gather has no attribute 'dim' \(attributes: axis\)$"):
        multigather.run("onnx.Gather", np.zeros(3), np.zeros(1, np.int64), dim=0)
