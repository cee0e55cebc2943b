"""RMSNorm over dim 1 of a (batch, features, *) tensor in Triton: each program takes a block of
spatial positions of one batch item and all its features, so loads are contiguous along the
positions and the mean square is a reduction over the feature axis of the tile."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_dim1(x_ptr, y_ptr, n_feat, n_pos, eps, BLOCK_F: tl.constexpr, BLOCK_P: tl.constexpr):
    pid_p = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    pos = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    feat = tl.arange(0, BLOCK_F)
    mask = (feat[:, None] < n_feat) & (pos[None, :] < n_pos)
    offs = b * n_feat * n_pos + feat[:, None].to(tl.int64) * n_pos + pos[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_feat + eps)
    tl.store(y_ptr + offs, x / rms[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        batch, feats = x.shape[0], x.shape[1]
        positions = x.numel() // (batch * feats)
        block_f = triton.next_power_of_2(feats)
        block_p = max(16, min(128, 8192 // block_f))
        grid = (triton.cdiv(positions, block_p), batch)
        _rmsnorm_dim1[grid](x, y, feats, positions, self.eps, BLOCK_F=block_f, BLOCK_P=block_p)
        return y
