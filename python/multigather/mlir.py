"""MLIR's gathers on multigather: ``tensor_gather`` (tensor.gather) and the torch-mlir TCP
dialect's ``tcp_gather`` (tcp.gather) and ``tcp_gather_nd`` (tcp.gather_nd). They run in the C++
op registry (the frontends). Out-of-range indices are errors (MLIR leaves them undefined).

Sources: https://mlir.llvm.org/docs/Dialects/TensorOps/#tensorgather-tensorgatherop,
https://github.com/llvm/mlir-tcp (TcpOps.td).
"""

from __future__ import annotations

from typing import Any, Sequence

from ._registry import document as _registry_document
from ._registry import fast_op, op_function, run_fast, run_general, run_scatter

_TENSOR_GATHER = fast_op("tensor.gather", "gather_dims", "rank_reduced")

__all__ = ["tensor_gather", "tensor_scatter", "tcp_gather", "tcp_gather_nd"]


def tensor_gather(source: Any, indices: Any, gather_dims: Sequence[int],
                  rank_reduced: bool = False) -> Any:
    """tensor.gather %source[%indices] gather_dims(...); ``rank_reduced`` is the rank-reduced result
    type of MLIR's assembly form. The rules and the index rule are the registry row's (below)."""
    result = run_fast(_TENSOR_GATHER, source, indices, None, gather_dims, rank_reduced)
    if result is NotImplemented:
        result = run_general("tensor.gather", source, indices, gather_dims=gather_dims,
                             rank_reduced=rank_reduced)
    return result


tcp_gather = op_function("tcp.gather", "tcp_gather")
tcp_gather_nd = op_function("tcp.gather_nd", "tcp_gather_nd")


def tensor_scatter(source: Any, dest: Any, indices: Any, scatter_dims: Sequence[int],
                   unique: bool = True) -> Any:
    """tensor.scatter %source into %dest[%indices] scatter_dims(...) unique, in the assembly form's
    order (source first; the row's input operand is dest): a new array of dest's shape and dtype.
    The rules and the index rule are the registry row's (below)."""
    return run_scatter("tensor.scatter", dest, indices, source, scatter_dims=scatter_dims,
                       unique=unique)

# Each wrapper's signature, formula, attributes and source: its registry row.
_registry_document(globals(), __all__)
