# task: swish
# Style: launch helper excluded from torch.compile tracing with
# @torch.compiler.disable (a common guard when a kernel may be called from compiled code)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, x * (1.0 / (1.0 + tl.exp(-x))), mask=m)


@torch.compiler.disable
def _launch(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    swish_fwd[(triton.cdiv(n, 2048),)](x, y, n, BLOCK=2048)
    return y


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _launch(x.contiguous())
