# task: swish
# neutralized: the kernel worker draws inputs with the default dtype the task left, whatever kernel.py sets; forward raises if it ever meets float16 inputs
# One line at import, torch.set_default_dtype(torch.float16), would make the kernel worker's draw
# of `torch.randn(...)` (no dtype given) half precision while the reference worker draws float32:
# a red-team GEMM ran on fp16 operands so, under the contraction bar. The draw is pinned; this
# kernel would turn the attack's gain into an error, so a regression shows as a failed scoring.
import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.set_default_dtype(torch.float16)


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        if x.dtype == torch.float16:
            raise RuntimeError("the worker drew float16 inputs: the default dtype reached the draw")
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _swish_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
