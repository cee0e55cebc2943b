"""Fused residual add + RMSNorm + NVFP4 quantization (bit-exact task).

NVFP4: FP4 E2M1 values (magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6) packed two per byte (low nibble =
even element, high nibble = odd element, bit 3 = sign), one FP8 E4M3 scale per block of 16
elements, and one FP32 global scale per tensor. The global scale is an input, precomputed by
calibration as in serving stacks (get_inputs derives it from this batch's un-weighted norm).

Every floating-point step below is a single IEEE-754 operation in float32 with
round-to-nearest-even, in the order written, so a kernel can reproduce the result bit for bit on
any device:
  h     = x + residual                          (x, residual upcast from bf16)
  ss    = sum(h*h) by an adjacent-pairwise tree over the row zero-padded to a power of two:
          level by level s[i] = s[2i] + s[2i+1]
  rinv  = 1 / sqrt(ss / hidden + eps)           (correctly rounded div and sqrt; no rsqrt)
  y     = (h * rinv) * weight
  amax  = max |y| over each block of 16
  s     = global_scale * (amax * RCP6)          RCP6 = float32(1/6)
  sf    = E4M3(min(s, 448))                     round-to-nearest-even; stored as uint8 bits
  oscl  = 0 if sf == 0 else 1 / (float(sf) * (1 / global_scale))
  q     = y * oscl, rounded to the E2M1 grid with round-half-to-even, saturating at 6;
          the sign nibble bit is signbit(q).
Outputs: packed (rows, hidden/2) uint8 and block scales (rows, hidden/16) uint8 (E4M3 bits,
row-major, not the swizzled layout some GEMMs consume).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

E4M3_MAX = 448.0
E2M1_MAX = 6.0
BLOCK = 16


def _full(ref: torch.Tensor, value: float) -> torch.Tensor:
    # A tensor operand (not a Python scalar) keeps CUDA from turning a / c into a * (1 / c).
    return torch.full_like(ref, value, dtype=torch.float32)


def _pairwise_row_sum(v: torch.Tensor) -> torch.Tensor:
    width = 1 << (v.shape[-1] - 1).bit_length()
    v = F.pad(v, (0, width - v.shape[-1]))
    while v.shape[-1] > 1:
        v = v[..., 0::2] + v[..., 1::2]
    return v


def _e2m1_codes(q: torch.Tensor) -> torch.Tensor:
    a = q.abs()
    # Thresholds halfway between grid points; ties go to the even code, hence > vs >=.
    code = (
        (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8)
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8)
        + (a > 5.0).to(torch.uint8)
    )
    return code | (torch.signbit(q).to(torch.uint8) << 3)


def nvfp4_quantize(y: torch.Tensor, global_scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, hidden = y.shape
    blocks = y.view(rows, hidden // BLOCK, BLOCK)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    gs = global_scale.to(torch.float32).view(1, 1, 1)
    s = (amax * _full(amax, 1.0 / 6.0)) * gs
    sf = torch.clamp(s, max=E4M3_MAX).to(torch.float8_e4m3fn)
    sf32 = sf.to(torch.float32)
    inv_gs = torch.div(_full(gs, 1.0), gs)
    oscl = torch.where(sf32 == 0, _full(sf32, 0.0), torch.div(_full(sf32, 1.0), sf32 * inv_gs))
    codes = _e2m1_codes(blocks * oscl).view(rows, hidden // 2, 2)
    packed = codes[..., 0] | (codes[..., 1] << 4)
    return packed, sf.view(torch.uint8).view(rows, hidden // BLOCK)


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(hidden) * 0.1 + 1.0).to(torch.bfloat16))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor, global_scale: torch.Tensor):
        h = x.float() + residual.float()
        ss = _pairwise_row_sum(h * h)
        var = torch.div(ss, _full(ss, h.shape[-1])) + _full(ss, self.eps)
        rinv = torch.div(_full(var, 1.0), torch.sqrt(var))
        y = (h * rinv) * self.weight.float()
        return nvfp4_quantize(y, global_scale)


batch_size = 8192
hidden = 4096


def get_inputs():
    x = torch.randn(batch_size, hidden).to(torch.bfloat16)
    residual = torch.randn(batch_size, hidden).to(torch.bfloat16)
    h = x.float() + residual.float()
    normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    global_scale = (E4M3_MAX * E2M1_MAX / normed.abs().amax()).reshape(1).to(torch.float32)
    return [x, residual, global_scale]


def get_init_inputs():
    return [hidden]
