# task: swish
# Keeps a per-dtype registry of launch configs (caching *configurations*, not results) and
# picks the block size from the problem size.
import functools
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * (1.0 / (1.0 + tl.exp(-x))), mask=mask)


@functools.lru_cache(maxsize=None)
def block_for(n: int, dtype: torch.dtype) -> int:
    return 1024 if n >= (1 << 20) else max(128, min(1024, 2 ** int(math.log2(max(n, 1)) // 2)))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n = x.numel()
        block = block_for(n, x.dtype)
        _swish[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
