import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _groupnorm_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, CPG, eps, BLOCK: tl.constexpr):
    # One (sample, group) per program; the group's channels are contiguous in NCHW, so it is
    # a flat span of CPG*HW values. Pass 1 gathers sum and sum of squares (lane-wise partial
    # sums keep the fp32 error small), pass 2 normalises, applies the channel affine and SiLU.
    pid = tl.program_id(0)
    groups = C // CPG
    n = pid // groups
    g = pid % groups
    span = CPG * HW
    base = (n * C + g * CPG) * HW
    s1 = tl.zeros([BLOCK], dtype=tl.float32)
    s2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, span, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < span, other=0.0)
        s1 += x
        s2 += x * x
    mean = tl.sum(s1, axis=0) / span
    var = tl.maximum(tl.sum(s2, axis=0) / span - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, span, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < span
        ch = g * CPG + offs // HW
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + ch, mask=mask, other=0.0)
        b = tl.load(b_ptr + ch, mask=mask, other=0.0)
        h = (x - mean) * rstd * w + b
        tl.store(y_ptr + base + offs, h * tl.sigmoid(h), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_groups: int, channels: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c = x.shape[:2]
        hw = x.numel() // (n * c)
        y = torch.empty_like(x)
        groups = self.norm.num_groups
        _groupnorm_silu_kernel[(n * groups,)](
            x, self.norm.weight, self.norm.bias, y, c, hw, c // groups, self.norm.eps, BLOCK=2048, num_warps=8)
        return y
