"""TorchScript stand-ins of multigather.torch_scatter's functions: ``torch.jit.script(f)`` of one
of them (directly, or inside a scripted function or module that calls it) compiles the function
of the same name here (through ``__prepare_scriptable__``, which torch_scatter.py sets on each),
typed as torch_scatter's. Each calls the Python function back (``torch.jit.ignore``): a scripted
caller runs where Python runs, with the eager results; it cannot be saved with torch.jit.save
(torch_scatter's own are C++ ops). Imported only by torch.jit.script (it imports
torch).

Imports: torch. torch_scatter imports this module (lazily) and fills IMPLEMENTATIONS with its
functions, which the callbacks call (no import back)."""

# One pattern per public function of multigather.torch_scatter: an ignored callback and a typed
# stand-in with torch_scatter's signature.

from typing import Optional, Tuple

import torch

# name -> multigather.torch_scatter's function of that name (set by torch_scatter.py).
IMPLEMENTATIONS: dict = {}


@torch.jit.ignore
def _py_scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_sum"](src, index, dim, out, dim_size)


def scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_sum(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter_add(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_add"](src, index, dim, out, dim_size)


def scatter_add(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_add(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter_mul(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_mul"](src, index, dim, out, dim_size)


def scatter_mul(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_mul(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter_mean(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_mean"](src, index, dim, out, dim_size)


def scatter_mean(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_mean(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter_min(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["scatter_min"](src, index, dim, out, dim_size)


def scatter_min(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_scatter_min(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter_max(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["scatter_max"](src, index, dim, out, dim_size)


def scatter_max(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_scatter_max(src, index, dim, out, dim_size)


@torch.jit.ignore
def _py_scatter(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, reduce: str = "sum") -> torch.Tensor:
    return IMPLEMENTATIONS["scatter"](src, index, dim, out, dim_size, reduce)


def scatter(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, reduce: str = "sum") -> torch.Tensor:
    return _py_scatter(src, index, dim, out, dim_size, reduce)


@torch.jit.ignore
def _py_segment_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, reduce: str = "sum") -> torch.Tensor:
    return IMPLEMENTATIONS["segment_coo"](src, index, out, dim_size, reduce)


def segment_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, reduce: str = "sum") -> torch.Tensor:
    return _py_segment_coo(src, index, out, dim_size, reduce)


@torch.jit.ignore
def _py_segment_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None, reduce: str = "sum") -> torch.Tensor:
    return IMPLEMENTATIONS["segment_csr"](src, indptr, out, reduce)


def segment_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None, reduce: str = "sum") -> torch.Tensor:
    return _py_segment_csr(src, indptr, out, reduce)


@torch.jit.ignore
def _py_segment_sum_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_sum_coo"](src, index, out, dim_size)


def segment_sum_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_segment_sum_coo(src, index, out, dim_size)


@torch.jit.ignore
def _py_segment_sum_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_sum_csr"](src, indptr, out)


def segment_sum_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _py_segment_sum_csr(src, indptr, out)


@torch.jit.ignore
def _py_segment_add_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_add_coo"](src, index, out, dim_size)


def segment_add_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_segment_add_coo(src, index, out, dim_size)


@torch.jit.ignore
def _py_segment_add_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_add_csr"](src, indptr, out)


def segment_add_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _py_segment_add_csr(src, indptr, out)


@torch.jit.ignore
def _py_segment_mean_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_mean_coo"](src, index, out, dim_size)


def segment_mean_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_segment_mean_coo(src, index, out, dim_size)


@torch.jit.ignore
def _py_segment_mean_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["segment_mean_csr"](src, indptr, out)


def segment_mean_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _py_segment_mean_csr(src, indptr, out)


@torch.jit.ignore
def _py_segment_min_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["segment_min_coo"](src, index, out, dim_size)


def segment_min_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_segment_min_coo(src, index, out, dim_size)


@torch.jit.ignore
def _py_segment_min_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["segment_min_csr"](src, indptr, out)


def segment_min_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_segment_min_csr(src, indptr, out)


@torch.jit.ignore
def _py_segment_max_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["segment_max_coo"](src, index, out, dim_size)


def segment_max_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_segment_max_coo(src, index, out, dim_size)


@torch.jit.ignore
def _py_segment_max_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return IMPLEMENTATIONS["segment_max_csr"](src, indptr, out)


def segment_max_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    return _py_segment_max_csr(src, indptr, out)


@torch.jit.ignore
def _py_gather_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["gather_coo"](src, index, out)


def gather_coo(src: torch.Tensor, index: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _py_gather_coo(src, index, out)


@torch.jit.ignore
def _py_gather_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["gather_csr"](src, indptr, out)


def gather_csr(src: torch.Tensor, indptr: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _py_gather_csr(src, indptr, out)


@torch.jit.ignore
def _py_scatter_std(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, unbiased: bool = True) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_std"](src, index, dim, out, dim_size, unbiased)


def scatter_std(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, unbiased: bool = True) -> torch.Tensor:
    return _py_scatter_std(src, index, dim, out, dim_size, unbiased)


@torch.jit.ignore
def _py_scatter_logsumexp(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, eps: float = 1e-12) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_logsumexp"](src, index, dim, out, dim_size, eps)


def scatter_logsumexp(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None, dim_size: Optional[int] = None, eps: float = 1e-12) -> torch.Tensor:
    return _py_scatter_logsumexp(src, index, dim, out, dim_size, eps)


@torch.jit.ignore
def _py_scatter_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_softmax"](src, index, dim, dim_size)


def scatter_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_softmax(src, index, dim, dim_size)


@torch.jit.ignore
def _py_scatter_log_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1, eps: float = 1e-12, dim_size: Optional[int] = None) -> torch.Tensor:
    return IMPLEMENTATIONS["scatter_log_softmax"](src, index, dim, eps, dim_size)


def scatter_log_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1, eps: float = 1e-12, dim_size: Optional[int] = None) -> torch.Tensor:
    return _py_scatter_log_softmax(src, index, dim, eps, dim_size)
