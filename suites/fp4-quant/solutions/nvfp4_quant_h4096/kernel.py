"""Standalone NVFP4 quantize: each program quantizes COLS columns of one row.

Bit-exact with the reference: the division is the correctly rounded form (div_rn), FMA
contraction is disabled at launch, and E4M3 rounding is done arithmetically (the Triton
interpreter's float8 cast does not round to nearest even).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _e4m3_round(s):
    """Round non-negative s <= 448 to E4M3 (nearest even); returns (value, uint8 bit pattern)."""
    bits = s.to(tl.int32, bitcast=True)
    # Biased fp32 exponent of the E4M3 quantum at this magnitude (3 mantissa bits, min normal 2^-6).
    qexp = tl.maximum((bits >> 23) & 0xFF, 121) - 3
    quantum = (qexp << 23).to(tl.float32, bitcast=True)
    inv_quantum = ((254 - qexp) << 23).to(tl.float32, bitcast=True)
    # Adding and subtracting 1.5 * 2**23 rounds |t| < 2**22 to an integer, ties to even.
    r = (((s * inv_quantum) + 12582912.0) - 12582912.0) * quantum
    rbits = r.to(tl.int32, bitcast=True)
    rexp = (rbits >> 23) & 0xFF
    code = tl.where(rexp >= 121, ((rexp - 120) << 3) | ((rbits >> 20) & 7), (r * 512.0).to(tl.int32))
    return r, code


@triton.jit
def _e2m1_code(q):
    a = tl.abs(q)
    code = ((a > 0.25).to(tl.int32) + (a >= 0.75).to(tl.int32) + (a > 1.25).to(tl.int32)
            + (a >= 1.75).to(tl.int32) + (a > 2.5).to(tl.int32) + (a >= 3.5).to(tl.int32)
            + (a > 5.0).to(tl.int32))
    return code | (((q.to(tl.int32, bitcast=True) >> 31) & 1) << 3)


@triton.jit
def _quantize_store(y, gs, out_ptr, sf_ptr, out_base, sf_base, n_valid, COLS: tl.constexpr):
    """NVFP4-quantize COLS values y (COLS a multiple of 16); store the first n_valid of them."""
    G: tl.constexpr = COLS // 16
    yb = tl.reshape(y, (G, 16))
    amax = tl.max(tl.abs(yb), axis=1)
    s = tl.minimum((amax * 0.16666666666666666) * gs, 448.0)
    sf, sf_code = _e4m3_round(s)
    inv_gs = tl.math.div_rn(1.0, gs)
    # The guard keeps the discarded lane from dividing by zero.
    denom = tl.where(sf == 0.0, 1.0, sf * inv_gs)
    oscl = tl.where(sf == 0.0, 0.0, tl.math.div_rn(tl.full([G], 1.0, tl.float32), denom))
    codes = _e2m1_code(yb * oscl[:, None])
    lo, hi = tl.split(tl.reshape(codes, (COLS // 2, 2)))
    packed = (lo | (hi << 4)).to(tl.uint8)
    pcols = tl.arange(0, COLS // 2)
    tl.store(out_ptr + out_base + pcols, packed, mask=pcols < n_valid // 2)
    gcols = tl.arange(0, G)
    tl.store(sf_ptr + sf_base + gcols, sf_code.to(tl.uint8), mask=gcols < n_valid // 16)


@triton.jit
def _nvfp4_quant_kernel(x_ptr, gs_ptr, out_ptr, sf_ptr, hidden, COLS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    col0 = tl.program_id(1) * COLS
    cols = col0 + tl.arange(0, COLS)
    y = tl.load(x_ptr + row * hidden + cols, mask=cols < hidden, other=0.0).to(tl.float32)
    gs = tl.load(gs_ptr)
    _quantize_store(y, gs, out_ptr, sf_ptr, row * (hidden // 2) + col0 // 2,
                    row * (hidden // 16) + col0 // 16, hidden - col0, COLS)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, global_scale: torch.Tensor):
        x = x.contiguous()
        rows, hidden = x.shape
        packed = torch.empty(rows, hidden // 2, dtype=torch.uint8, device=x.device)
        scales = torch.empty(rows, hidden // 16, dtype=torch.uint8, device=x.device)
        cols = 512
        _nvfp4_quant_kernel[(rows, triton.cdiv(hidden, cols))](
            x, global_scale, packed, scales, hidden, COLS=cols, num_warps=4, enable_fp_fusion=False,
        )
        return packed, scales
