# Copied from https://github.com/rusty1s/pytorch_scatter (torch_scatter 2.1.2), torch_scatter/testing.py
# at commit 648dda3cf964731ffb4de11eafc445a83133eda4.
# License: MIT, Copyright (c) 2020 Matthias Fey.
# Changed: none (the device list already holds CUDA only when torch.cuda.is_available()).
# Expected failures are marked in conftest.py of this directory (not in the test bodies).
from typing import Any

import torch

reductions = ['sum', 'add', 'mean', 'min', 'max']

dtypes = [
    torch.half, torch.bfloat16, torch.float, torch.double, torch.int,
    torch.long
]
grad_dtypes = [torch.float, torch.double]

devices = [torch.device('cpu')]
if torch.cuda.is_available():
    devices += [torch.device('cuda:0')]


def tensor(x: Any, dtype: torch.dtype, device: torch.device):
    return None if x is None else torch.tensor(x, device=device).to(dtype)
