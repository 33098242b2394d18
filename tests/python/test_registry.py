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


FUNCTIONS = {  # registry op -> the Python function with the framework's signature
    "gather_multiaxis": "gather_multiaxis", "scatter_multiaxis": "scatter_multiaxis",
    "onnx.Gather": "onnx.gather", "onnx.GatherElements": "onnx.gather_elements",
    "onnx.GatherND": "onnx.gather_nd",
    "torch.gather": "torch.gather", "torch.take": "torch.take",
    "torch.take_along_dim": "torch.take_along_dim", "torch.index_select": "torch.index_select",
    "numpy.take": "numpy.take", "numpy.take_along_axis": "numpy.take_along_axis",
    "numpy.advanced_index": "numpy.advanced_index",
    "tf.gather": "tf.gather", "tf.gather_nd": "tf.gather_nd",
    "jax.numpy.take": "jax.take", "jax.numpy.take_along_axis": "jax.take_along_axis",
    "coreml.gather": "coreml.gather", "coreml.gather_along_axis": "coreml.gather_along_axis",
    "coreml.gather_nd": "coreml.gather_nd", "tosa.gather": "tosa.gather",
    "tensor.gather": "mlir.tensor_gather", "tcp.gather": "mlir.tcp_gather",
    "tcp.gather_nd": "mlir.tcp_gather_nd", "stablehlo.gather": "stablehlo.gather",
    "webnn.gather": "webnn.gather", "webnn.gatherElements": "webnn.gather_elements",
    "webnn.gatherND": "webnn.gather_nd", "dml.Gather": "dml.gather",
    "dml.GatherElements": "dml.gather_elements", "dml.GatherND": "dml.gather_nd",
    "scatter_multiaxis": "scatter_multiaxis",
    "onnx.ScatterElements": "onnx.scatter_elements", "onnx.ScatterND": "onnx.scatter_nd",
    "torch.scatter": "torch.scatter", "torch.scatter_add": "torch.scatter_add",
    "torch.scatter_reduce": "torch.scatter_reduce", "torch.index_add": "torch.index_add",
    "numpy.put_along_axis": "numpy.put_along_axis", "numpy.add_at": "numpy.add_at",
    "webnn.scatterElements": "webnn.scatter_elements", "webnn.scatterND": "webnn.scatter_nd",
    "tf.tensor_scatter_nd_update": "tf.tensor_scatter_nd_update", "tf.tensor_scatter_nd_add": "tf.tensor_scatter_nd_add",
    "tf.tensor_scatter_nd_sub": "tf.tensor_scatter_nd_sub", "tf.tensor_scatter_nd_min": "tf.tensor_scatter_nd_min",
    "tf.tensor_scatter_nd_max": "tf.tensor_scatter_nd_max", "tf.scatter_nd": "tf.scatter_nd",
    "coreml.scatter": "coreml.scatter", "coreml.scatter_along_axis": "coreml.scatter_along_axis",
    "coreml.scatter_nd": "coreml.scatter_nd", "tosa.scatter": "tosa.scatter",
    "dml.ScatterElements": "dml.scatter_elements", "dml.ScatterND": "dml.scatter_nd",
    "tensor.scatter": "mlir.tensor_scatter", "numpy.multiply_at": "numpy.multiply_at",
    "numpy.minimum_at": "numpy.minimum_at", "numpy.maximum_at": "numpy.maximum_at",
    "torch.index_copy": "torch.index_copy", "torch.index_fill": "torch.index_fill", "torch.put": "torch.put",
    "torch.index_put": "torch.index_put",
    "numpy.put": "numpy.put",
    "jax.at.set": "jax.at_set", "jax.at.add": "jax.at_add", "jax.at.subtract": "jax.at_subtract",
    "jax.at.multiply": "jax.at_multiply", "jax.at.min": "jax.at_min", "jax.at.max": "jax.at_max",
    "stablehlo.scatter": "stablehlo.scatter",
    **{f"jax.ops.segment_{r}": f"jax.segment_{r}" for r in ("sum", "prod", "max", "min")},
    **{f"tf.math.unsorted_segment_{r}": f"tf.unsorted_segment_{r}"
       for r in ("sum", "prod", "max", "min", "mean", "sqrt_n")},
    **{f"tf.math.segment_{r}": f"tf.segment_{r}" for r in ("sum", "prod", "max", "min", "mean")},
    "torch.segment_reduce": "torch.segment_reduce",
    "torch.nn.functional.embedding_bag": "torch.embedding_bag",
    **{f"torch_scatter.{n}": f"torch_scatter.{n}" for n in ("scatter", "segment_coo", "segment_csr")},
}


@pytest.mark.parametrize("op", multigather.ops())
def test_every_registry_op_has_a_python_function_with_a_docstring(op):
    assert op in FUNCTIONS, f"{op} has no function in the framework modules"
    target = multigather
    for part in FUNCTIONS[op].split("."):
        target = getattr(target, part)
    assert callable(target) and target.__doc__


def test_unknown_op_and_attribute_are_value_errors():
    with pytest.raises(ValueError, match="^unknown op 'onnx.Scatter'"):
        multigather.run("onnx.Scatter", np.zeros(3), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match=r"^onnx.Gather has no attribute 'dim' \(attributes: axis\)$"):
        multigather.run("onnx.Gather", np.zeros(3), np.zeros(1, np.int64), dim=0)
