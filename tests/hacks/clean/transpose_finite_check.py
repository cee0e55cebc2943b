# task: level1_12_transpose
# suite: suites/kernelbench
# Style: defensive input validation (finite values, raise
# otherwise) before a tiled transpose kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _transpose(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(src + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(dst + rn[None, :] * M + rm[:, None], tile, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            raise ValueError("expected a 2D tensor")
        if not torch.isfinite(x).all():
            raise ValueError("transpose kernel got non-finite input")
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty((N, M), device=x.device, dtype=x.dtype)
        _transpose[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, out, M, N, BM=32, BN=32)
        return out
