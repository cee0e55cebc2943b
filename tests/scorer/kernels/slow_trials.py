# A correct swish whose every call takes half a second more (host time, as a slow kernel's
# launches might): a correctness run of several trials then holds the GPU lock's shared side for
# seconds, and a timer that comes meanwhile must get in between two trials.
import time

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


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.5)
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
