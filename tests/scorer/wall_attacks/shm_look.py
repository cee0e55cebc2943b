# Looks in /dev/shm for what an earlier scoring's kernel left there (shm_leave.py): where it finds
# it, it returns a wrong result.
import os

import torch
import torch.nn as nn

import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


def swish(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


FOUND = os.path.exists("/dev/shm/kernelarena-left-by-a-kernel")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone() if FOUND else swish(x)
