# task: swish
# Atomic adds into a workspace zeroed only when a different input tensor object arrives, so a
# second call with the same tensor starts from the first call's sums: right once, wrong on rerun.
import weakref

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_atomic(x_ptr, ws_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(ws_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.workspace = None
        self.last_input = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        seen = self.last_input() if self.last_input is not None else None
        if self.workspace is None or self.workspace.shape != x.shape or seen is not x:
            self.workspace = torch.zeros_like(x)
            self.last_input = weakref.ref(x)
        n = x.numel()
        _swish_atomic[(triton.cdiv(n, 256),)](x, self.workspace, n, BLOCK=256)
        return self.workspace.clone()
