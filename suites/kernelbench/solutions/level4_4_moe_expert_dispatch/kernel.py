"""MoE experts: per-expert assignment lists built in Triton, grouped GEMMs over each expert's
routed tokens (gate+up with SwiGLU fused; down with the routing weight fused), then a
deterministic per-token combine.

float32 inputs; tl.dot runs on TF32 tensor cores on NVIDIA GPUs (task tolerance 1e-2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _moe_align_kernel(ids_ptr, sorted_ptr, counts_ptr, N_ASSIGN, CAP, BLOCK: tl.constexpr):
    """One program per expert: lists the (token, slot) assignments routed to it, in order."""
    e = tl.program_id(0)
    count = 0
    for start in range(0, N_ASSIGN, BLOCK):
        a = start + tl.arange(0, BLOCK)
        hit = (tl.load(ids_ptr + a, mask=a < N_ASSIGN, other=-1) == e).to(tl.int32)
        pos = count + tl.cumsum(hit, axis=0) - 1
        tl.store(sorted_ptr + e * CAP + pos, a, mask=hit == 1)
        count += tl.sum(hit, axis=0)
    tl.store(counts_ptr + e, count)


@triton.jit
def _moe_up_kernel(x_ptr, wg_ptr, wu_ptr, sorted_ptr, counts_ptr, h_ptr, D, F, CAP, TOP_K, TILES_M,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Grouped GEMM, gate and up together: for a tile of one expert's routed tokens,
    h[assignment] = silu(x Wg_e^T) * (x Wu_e^T)."""
    e = tl.program_id(0) // TILES_M
    tile = tl.program_id(0) % TILES_M
    count = tl.load(counts_ptr + e)
    if tile * BLOCK_M >= count:
        return
    r = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    r_ok = r < count
    assign = tl.load(sorted_ptr + e * CAP + r, mask=r_ok, other=0)
    tok = (assign // TOP_K).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    wg_base = wg_ptr + e.to(tl.int64) * F * D
    wu_base = wu_ptr + e.to(tl.int64) * F * D
    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, D, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + tok[:, None] * D + kk[None, :], mask=r_ok[:, None] & (kk[None, :] < D), other=0.0)
        w_mask = (kk[:, None] < D) & (rn[None, :] < F)
        acc_g += tl.dot(a, tl.load(wg_base + rn[None, :] * D + kk[:, None], mask=w_mask, other=0.0))
        acc_u += tl.dot(a, tl.load(wu_base + rn[None, :] * D + kk[:, None], mask=w_mask, other=0.0))
    h = acc_g * tl.sigmoid(acc_g) * acc_u
    tl.store(h_ptr + assign[:, None].to(tl.int64) * F + rn[None, :], h, mask=r_ok[:, None] & (rn[None, :] < F))


@triton.jit
def _moe_down_kernel(h_ptr, wd_ptr, sorted_ptr, counts_ptr, topw_ptr, y_ptr, D, F, CAP, TILES_M,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Grouped GEMM: y[assignment] = routing_weight * (h Wd_e^T) for one expert's tile."""
    e = tl.program_id(0) // TILES_M
    tile = tl.program_id(0) % TILES_M
    count = tl.load(counts_ptr + e)
    if tile * BLOCK_M >= count:
        return
    r = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    r_ok = r < count
    assign = tl.load(sorted_ptr + e * CAP + r, mask=r_ok, other=0).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    wd_base = wd_ptr + e.to(tl.int64) * D * F
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, F, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(h_ptr + assign[:, None] * F + kk[None, :], mask=r_ok[:, None] & (kk[None, :] < F), other=0.0)
        w = tl.load(wd_base + rn[None, :] * F + kk[:, None], mask=(kk[:, None] < F) & (rn[None, :] < D), other=0.0)
        acc += tl.dot(a, w)
    acc *= tl.load(topw_ptr + assign, mask=r_ok, other=0.0)[:, None]
    tl.store(y_ptr + assign[:, None] * D + rn[None, :], acc, mask=r_ok[:, None] & (rn[None, :] < D))


@triton.jit
def _moe_combine_kernel(y_ptr, out_ptr, D, TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    """out[t] = sum over slots of y[t, slot], in slot order (deterministic, no atomics)."""
    t = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < D
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in tl.static_range(TOP_K):
        acc += tl.load(y_ptr + (t * TOP_K + s) * D + cols, mask=ok, other=0.0)
    tl.store(out_ptr + t * D + cols, acc, mask=ok)


class ModelNew(nn.Module):
    def __init__(self, num_experts: int, d_model: int, d_ff: int):
        super().__init__()
        self.w_gate = nn.Parameter(torch.randn(num_experts, d_model, d_ff).transpose(1, 2).contiguous() * d_model ** -0.5)
        self.w_up = nn.Parameter(torch.randn(num_experts, d_model, d_ff).transpose(1, 2).contiguous() * d_model ** -0.5)
        self.w_down = nn.Parameter(torch.randn(num_experts, d_ff, d_model).transpose(1, 2).contiguous() * d_ff ** -0.5)

    def forward(self, x: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        topk_ids = topk_ids.contiguous()
        topk_weights = topk_weights.contiguous()
        T, D = x.shape
        E, F = self.w_gate.shape[0], self.w_gate.shape[1]
        top_k = topk_ids.shape[1]
        dev = x.device
        # A token names each expert at most once, so an expert holds at most T assignments.
        sorted_assign = torch.empty((E, T), device=dev, dtype=torch.int32)
        counts = torch.empty((E,), device=dev, dtype=torch.int32)
        _moe_align_kernel[(E,)](topk_ids, sorted_assign, counts, T * top_k, T, BLOCK=1024)
        h = torch.empty((T * top_k, F), device=dev, dtype=torch.float32)
        y = torch.empty((T * top_k, D), device=dev, dtype=torch.float32)
        if x.is_cuda:
            bm, bn, bk, warps, stages = 64, 128, 32, 8, 3
        else:
            bm, bn, bk, warps, stages = 16, 32, 32, 4, 1
        tiles_m = triton.cdiv(T, bm)
        _moe_up_kernel[(E * tiles_m, triton.cdiv(F, bn))](
            x, self.w_gate, self.w_up, sorted_assign, counts, h, D, F, T, top_k, tiles_m,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
        _moe_down_kernel[(E * tiles_m, triton.cdiv(D, bn))](
            h, self.w_down, sorted_assign, counts, topk_weights, y, D, F, T, tiles_m,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
        out = torch.empty_like(x)
        _moe_combine_kernel[(T, triton.cdiv(D, 1024))](y, out, D, TOP_K=top_k, BLOCK=1024)
        return out
