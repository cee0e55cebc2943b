# task: swish
# Plain 1-D elementwise kernel, exp2-based sigmoid.
import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    sig = 1.0 / (1.0 + tl.exp2(-x * 1.4426950408889634))
    tl.store(y_ptr + offs, x * sig, mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1)
        if not flat.is_contiguous():
            flat = flat.contiguous()
        out = torch.empty_like(flat)
        n = flat.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        swish_kernel[grid](flat, out, n, BLOCK=512)
        return out.view_as(x)
