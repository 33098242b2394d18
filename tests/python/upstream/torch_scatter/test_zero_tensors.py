# Copied from https://github.com/rusty1s/pytorch_scatter (torch_scatter 2.1.2), test/test_zero_tensors.py
# at commit 648dda3cf964731ffb4de11eafc445a83133eda4.
# License: MIT, Copyright (c) 2020 Matthias Fey.
# Changed: `from torch_scatter.testing import` -> `from .testing import` (our copy of torch_scatter/testing.py); `from torch_scatter import` -> `from multigather.torch_scatter import`.
# Expected failures are marked in conftest.py of this directory (not in the test bodies).
from itertools import product

import pytest
import torch
from multigather.torch_scatter import (gather_coo, gather_csr, scatter, segment_coo,
                           segment_csr)
from .testing import devices, grad_dtypes, reductions, tensor


@pytest.mark.parametrize('reduce,dtype,device',
                         product(reductions, grad_dtypes, devices))
def test_zero_elements(reduce, dtype, device):
    x = torch.randn(0, 0, 0, 16, dtype=dtype, device=device,
                    requires_grad=True)
    index = tensor([], torch.long, device)
    indptr = tensor([], torch.long, device)

    out = scatter(x, index, dim=0, dim_size=0, reduce=reduce)
    out.backward(torch.randn_like(out))
    assert out.size() == (0, 0, 0, 16)

    out = segment_coo(x, index, dim_size=0, reduce=reduce)
    out.backward(torch.randn_like(out))
    assert out.size() == (0, 0, 0, 16)

    out = gather_coo(x, index)
    out.backward(torch.randn_like(out))
    assert out.size() == (0, 0, 0, 16)

    out = segment_csr(x, indptr, reduce=reduce)
    out.backward(torch.randn_like(out))
    assert out.size() == (0, 0, 0, 16)

    out = gather_csr(x, indptr)
    out.backward(torch.randn_like(out))
    assert out.size() == (0, 0, 0, 16)
