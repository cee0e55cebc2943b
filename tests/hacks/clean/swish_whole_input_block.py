# task: swish
# Small inputs in one program (on a CPU the interpreter runs it as a few numpy calls, faster than
# the cache flush between timed repetitions); larger ones in 1024-element blocks.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_ONE_PROGRAM_MAX = 1 << 16


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        block = triton.next_power_of_2(n) if x.device.type == "cpu" and n <= _ONE_PROGRAM_MAX else 1024
        _swish[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
