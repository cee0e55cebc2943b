"""RoPE + causal attention: rotary embedding applied to q/k tiles in registers inside a
flash-attention kernel.

float32 inputs; tl.dot runs on TF32 tensor cores on NVIDIA GPUs (task tolerance 1e-2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rope_attention_kernel(
    q_ptr, k_ptr, v_ptr, cos_ptr, sin_ptr, o_ptr, H, S, qk_scale,
    HALF: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """Causal flash attention with rotary embedding applied as q and k tiles are loaded.

    Rotate-half RoPE on halves x1, x2: (x1 cos1 - x2 sin1, x2 cos2 + x1 sin2), so
    q.k = q1'.k1' + q2'.k2' and the rotated tensors never touch memory. (B, H, S, D) contiguous.
    """
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    D: tl.constexpr = 2 * HALF
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HALF)
    base = bh * S * D
    m_ok = rm[:, None] < S
    q1 = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=m_ok, other=0.0)
    q2 = tl.load(q_ptr + base + rm[:, None] * D + HALF + rd[None, :], mask=m_ok, other=0.0)
    c1 = tl.load(cos_ptr + rm[:, None] * D + rd[None, :], mask=m_ok, other=0.0)
    c2 = tl.load(cos_ptr + rm[:, None] * D + HALF + rd[None, :], mask=m_ok, other=0.0)
    s1 = tl.load(sin_ptr + rm[:, None] * D + rd[None, :], mask=m_ok, other=0.0)
    s2 = tl.load(sin_ptr + rm[:, None] * D + HALF + rd[None, :], mask=m_ok, other=0.0)
    qr1 = q1 * c1 - q2 * s1
    qr2 = q2 * c2 + q1 * s2
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc1 = tl.zeros([BLOCK_M, HALF], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_M, HALF], dtype=tl.float32)
    hi = tl.minimum(S, (pid_m + 1) * BLOCK_M)
    for start in range(0, hi, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        n_ok = rn[None, :] < S
        kt_off = rn[None, :] * D + rd[:, None]
        k1 = tl.load(k_ptr + base + kt_off, mask=n_ok, other=0.0)
        k2 = tl.load(k_ptr + base + kt_off + HALF, mask=n_ok, other=0.0)
        kc1 = tl.load(cos_ptr + kt_off, mask=n_ok, other=0.0)
        kc2 = tl.load(cos_ptr + kt_off + HALF, mask=n_ok, other=0.0)
        ks1 = tl.load(sin_ptr + kt_off, mask=n_ok, other=0.0)
        ks2 = tl.load(sin_ptr + kt_off + HALF, mask=n_ok, other=0.0)
        kr1 = k1 * kc1 - k2 * ks1
        kr2 = k2 * kc2 + k1 * ks2
        s = (tl.dot(qr1, kr1) + tl.dot(qr2, kr2)) * qk_scale
        s = tl.where(n_ok & (rn[None, :] <= rm[:, None]), s, -1.0e30)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v_off = rn[:, None] * D + rd[None, :]
        v1 = tl.load(v_ptr + base + v_off, mask=rn[:, None] < S, other=0.0)
        v2 = tl.load(v_ptr + base + v_off + HALF, mask=rn[:, None] < S, other=0.0)
        acc1 = acc1 * alpha[:, None] + tl.dot(p, v1)
        acc2 = acc2 * alpha[:, None] + tl.dot(p, v2)
        m_i = m_new
    o_off = base + rm[:, None] * D + rd[None, :]
    tl.store(o_ptr + o_off, acc1 / l_i[:, None], mask=m_ok)
    tl.store(o_ptr + o_off + HALF, acc2 / l_i[:, None], mask=m_ok)


class ModelNew(nn.Module):
    def __init__(self, head_dim: int, max_seq_len: int, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(max_seq_len).float(), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        bm, bn, warps = (64, 64, 8) if q.is_cuda else (32, 32, 4)
        _rope_attention_kernel[(triton.cdiv(S, bm), B * H)](
            q, k, v, self.cos_cached, self.sin_cached, o, H, S, D ** -0.5 * 1.4426950408889634,
            HALF=D // 2, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps, num_stages=2,
        )
        return o
