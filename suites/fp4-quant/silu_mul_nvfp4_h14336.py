"""SiLU(gate) * up followed by NVFP4 quantization (bit-exact task).

The input holds [gate | up] along the last dimension, as the first projection of a gated MLP
produces them. NVFP4: FP4 E2M1 values (magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6) packed two per byte
(low nibble = even element, high nibble = odd element, bit 3 = sign), one FP8 E4M3 scale per
block of 16 elements, and one FP32 global scale per tensor, an input precomputed by calibration
as in serving stacks (get_inputs derives it from this batch).

Every floating-point step is a single IEEE-754 float32 operation with round-to-nearest-even, in
the order written, so a kernel can reproduce it bit for bit on any device. The exponential is
spelled out (device exp functions differ in their last bit):
  t     = clamp(-gate, -87, 88)
  k     = round_half_even(t * LOG2E)
  r     = (t - k * LN2_HI) - k * LN2_LO
  p     = Horner: p = 1/7!; p = p * r + 1/6!; ... ; p = p * r + 1/0!   (no fused multiply-add)
  e     = p * 2**k                               (2**k built from its exponent bits)
  y     = (gate / (1 + e)) * up
then NVFP4 quantization of y:
  amax  = max |y| over each block of 16
  s     = global_scale * (amax * RCP6)          RCP6 = float32(1/6)
  sf    = E4M3(min(s, 448))                     round-to-nearest-even; stored as uint8 bits
  oscl  = 0 if sf == 0 else 1 / (float(sf) * (1 / global_scale))
  q     = y * oscl, rounded to the E2M1 grid with round-half-to-even, saturating at 6;
          the sign nibble bit is signbit(q).
Outputs: packed (rows, hidden/2) uint8 and block scales (rows, hidden/16) uint8 (E4M3 bits).
"""

import math

import torch
import torch.nn as nn

E4M3_MAX = 448.0
E2M1_MAX = 6.0
BLOCK = 16


def _full(ref: torch.Tensor, value: float) -> torch.Tensor:
    # A tensor operand (not a Python scalar) keeps CUDA from turning a / c into a * (1 / c).
    return torch.full_like(ref, value, dtype=torch.float32)


LOG2E = 1.4426950408889634
LN2_HI = 0.693359375  # few mantissa bits, so k * LN2_HI is exact
LN2_LO = math.log(2.0) - LN2_HI


def exact_exp(t: torch.Tensor) -> torch.Tensor:
    """exp(t) for t in [-87, 88] from basic float32 operations only (see the module docstring)."""
    k = torch.round(t * _full(t, LOG2E))
    r = (t - k * _full(t, LN2_HI)) - k * _full(t, LN2_LO)
    p = _full(t, 1.0 / math.factorial(7))
    for i in range(6, -1, -1):
        p = p * r + _full(t, 1.0 / math.factorial(i))
    two_k = ((k.to(torch.int32) + 127) << 23).view(torch.float32)
    return p * two_k


def silu_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    e = exact_exp(torch.clamp(-gate, -87.0, 88.0))
    return torch.div(gate, _full(e, 1.0) + e) * up


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
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, global_scale: torch.Tensor):
        hidden = x.shape[-1] // 2
        y = silu_mul(x[:, :hidden].float(), x[:, hidden:].float())
        return nvfp4_quantize(y, global_scale)


batch_size = 2048
hidden = 14336


def get_inputs():
    x = torch.randn(batch_size, 2 * hidden).to(torch.bfloat16)
    g, u = x[:, :hidden].float(), x[:, hidden:].float()
    amax = (g * torch.sigmoid(g) * u).abs().amax()
    global_scale = (E4M3_MAX * E2M1_MAX / amax).reshape(1).to(torch.float32)
    return [x, global_scale]


def get_init_inputs():
    return []
