# task: add_rmsnorm
# xfail: the CPU cost model prices nn.RMSNorm at one operation per element while the interpreter counts each of the Triton add's, so this split sits at the 50% threshold; closed by pricing torch's normalisations at their arithmetic
# the monitor's walk from an op up to kernel.py gives up after 30 frames (_MAX_CALL_FRAMES)
# and then counts nothing. A normalisation block built as a deep stack of nn.Sequential wrappers
# (each level is three frames of torch's module plumbing) puts nn.RMSNorm's F.rms_norm more than
# 30 frames below forward. The solution's Triton kernel does the residual add (all its "own" work);
# the RMSNorm runs in torch unseen.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _residual_add(x_ptr, r_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.load(r_ptr + offs, mask=mask, other=0.0)
    tl.store(h_ptr + offs, h, mask=mask)


def _stack(block: nn.Module, depth: int) -> nn.Module:
    for _ in range(depth):
        block = nn.Sequential(block)
    return block


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        norm = nn.RMSNorm(hidden, eps=eps)
        norm.weight = self.weight
        self._blocks = [_stack(norm, 12)]  # kept out of the state dict: the weight is ModelNew's own

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        h = torch.empty_like(x)
        n = x.numel()
        _residual_add[(triton.cdiv(n, 4096),)](x, residual, h, n, BLOCK=4096)
        return self._blocks[0](h)
