"""GQA decode attention: flash-decoding (split the cache across programs, merge partial
softmax states in a second kernel).

float32 inputs; tl.dot runs on TF32 tensor cores on NVIDIA GPUs (task tolerance 1e-2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _decode_split_kernel(
    q_ptr, k_ptr, v_ptr, lens_ptr, m_out, l_out, acc_out, HKV, L, SPLIT_LEN, qk_scale,
    GROUP: tl.constexpr, GP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
    N_SPLITS: tl.constexpr,
):
    """Flash-decoding, phase 1: one program per (batch, KV head, slice of the cache) computes the
    partial softmax state (max, sum, weighted V) of the GROUP query heads sharing that KV head,
    so a long cache is spread over many programs even when batch * heads is small."""
    bk = tl.program_id(0)
    split = tl.program_id(1)
    b = bk // HKV
    seqlen = tl.load(lens_ptr + b)
    rg = tl.arange(0, GP)
    rd = tl.arange(0, HEAD_DIM)
    g_ok = rg < GROUP
    q = tl.load(q_ptr + (bk * GROUP + rg[:, None]) * HEAD_DIM + rd[None, :], mask=g_ok[:, None], other=0.0)
    kv_base = bk.to(tl.int64) * L * HEAD_DIM
    m_i = tl.full([GP], float("-inf"), tl.float32)
    l_i = tl.zeros([GP], dtype=tl.float32)
    acc = tl.zeros([GP, HEAD_DIM], dtype=tl.float32)
    lo = split * SPLIT_LEN
    hi = tl.minimum(lo + SPLIT_LEN, seqlen)
    # Slices past this sequence's length run no iterations and leave (-inf, 0, 0).
    for start in range(lo, hi, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        n_ok = rn < hi
        kt = tl.load(k_ptr + kv_base + rn[None, :] * HEAD_DIM + rd[:, None], mask=n_ok[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        s = tl.where(n_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv_base + rn[:, None] * HEAD_DIM + rd[None, :], mask=n_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    state = bk * N_SPLITS + split
    tl.store(m_out + state * GP + rg, m_i)
    tl.store(l_out + state * GP + rg, l_i)
    tl.store(acc_out + (state * GP + rg[:, None]) * HEAD_DIM + rd[None, :], acc)


@triton.jit
def _decode_combine_kernel(m_in, l_in, acc_in, o_ptr, GROUP: tl.constexpr, GP: tl.constexpr,
                           HEAD_DIM: tl.constexpr, N_SPLITS: tl.constexpr):
    """Flash-decoding, phase 2: merge the slices' partial softmax states for one (batch, KV head)."""
    bk = tl.program_id(0)
    rs = tl.arange(0, N_SPLITS)
    rg = tl.arange(0, GP)
    rd = tl.arange(0, HEAD_DIM)
    state = bk * N_SPLITS + rs
    m = tl.load(m_in + state[:, None] * GP + rg[None, :])
    row_sum = tl.load(l_in + state[:, None] * GP + rg[None, :])
    m_max = tl.max(m, axis=0)
    w = tl.math.exp2(m - m_max[None, :])  # empty slices carry m = -inf and weigh 0
    denom = tl.sum(row_sum * w, axis=0)
    acc = tl.load(acc_in + (state[:, None, None] * GP + rg[None, :, None]) * HEAD_DIM + rd[None, None, :])
    o = tl.sum(acc * w[:, :, None], axis=0) / denom[:, None]
    tl.store(o_ptr + (bk * GROUP + rg[:, None]) * HEAD_DIM + rd[None, :], o, mask=rg[:, None] < GROUP)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                cache_seqlens: torch.Tensor) -> torch.Tensor:
        q, k_cache, v_cache = q.contiguous(), k_cache.contiguous(), v_cache.contiguous()
        cache_seqlens = cache_seqlens.contiguous()
        B, Hq, D = q.shape
        Hkv, L = k_cache.shape[1], k_cache.shape[2]
        group = Hq // Hkv
        gp = max(16, triton.next_power_of_2(group))  # tl.dot needs at least 16 rows
        block_n = 64 if q.is_cuda else 16
        n_splits = min(16 if q.is_cuda else 4, triton.next_power_of_2(triton.cdiv(L, block_n)))
        split_len = triton.cdiv(triton.cdiv(L, n_splits), block_n) * block_n
        dev = q.device
        m = torch.empty((B * Hkv, n_splits, gp), device=dev, dtype=torch.float32)
        row_sum = torch.empty((B * Hkv, n_splits, gp), device=dev, dtype=torch.float32)
        acc = torch.empty((B * Hkv, n_splits, gp, D), device=dev, dtype=torch.float32)
        _decode_split_kernel[(B * Hkv, n_splits)](
            q, k_cache, v_cache, cache_seqlens, m, row_sum, acc, Hkv, L, split_len, D ** -0.5 * 1.4426950408889634,
            GROUP=group, GP=gp, HEAD_DIM=D, BLOCK_N=block_n, N_SPLITS=n_splits, num_warps=4, num_stages=3,
        )
        o = torch.empty((B, Hq, D), device=dev, dtype=torch.float32)
        _decode_combine_kernel[(B * Hkv,)](m, row_sum, acc, o, GROUP=group, GP=gp, HEAD_DIM=D, N_SPLITS=n_splits,
                                           num_warps=4)
        return o
