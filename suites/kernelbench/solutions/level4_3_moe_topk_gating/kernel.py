"""MoE top-k gating: one kernel does softmax statistics, iterative top-k selection and
renormalisation for a block of tokens."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _topk_gating_kernel(logits_ptr, w_ptr, idx_ptr, T, E, TOP_K: tl.constexpr, K_P2: tl.constexpr,
                        BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    """BLOCK_T tokens per program: softmax denominators, then TOP_K rounds of (max, first index
    of the max, mask it out); the chosen probabilities are renormalised over the chosen set."""
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    re = tl.arange(0, BLOCK_E)
    t_ok = rt < T
    mask = t_ok[:, None] & (re[None, :] < E)
    x = tl.load(logits_ptr + rt[:, None].to(tl.int64) * E + re[None, :], mask=mask, other=float("-inf"))
    x = tl.where(t_ok[:, None], x, 0.0)  # rows past the end: finite filler, never stored
    row_max = tl.max(x, axis=1)
    denom = tl.sum(tl.exp(x - row_max[:, None]), axis=1)
    rk = tl.arange(0, K_P2)
    sel_p = tl.zeros((BLOCK_T, K_P2), dtype=tl.float32)
    sel_i = tl.zeros((BLOCK_T, K_P2), dtype=tl.int64)
    remaining = x
    for j in tl.static_range(TOP_K):
        best = tl.max(remaining, axis=1)
        # Lowest index among equal maxima, as torch.topk reports ties on these inputs.
        best_i = tl.min(tl.where(remaining == best[:, None], re[None, :], BLOCK_E), axis=1)
        p = tl.exp(best - row_max) / denom
        sel_p = tl.where(rk[None, :] == j, p[:, None], sel_p)
        sel_i = tl.where(rk[None, :] == j, best_i[:, None].to(tl.int64), sel_i)
        remaining = tl.where(re[None, :] == best_i[:, None], float("-inf"), remaining)
    w = sel_p / tl.sum(sel_p, axis=1)[:, None]
    out_off = rt[:, None].to(tl.int64) * TOP_K + rk[None, :]
    out_mask = t_ok[:, None] & (rk[None, :] < TOP_K)
    tl.store(w_ptr + out_off, w, mask=out_mask)
    tl.store(idx_ptr + out_off, sel_i, mask=out_mask)


class ModelNew(nn.Module):
    def __init__(self, top_k: int):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = logits.contiguous()
        T, E = logits.shape
        weights = torch.empty((T, self.top_k), device=logits.device, dtype=torch.float32)
        idx = torch.empty((T, self.top_k), device=logits.device, dtype=torch.int64)
        block_t = 16
        _topk_gating_kernel[(triton.cdiv(T, block_t),)](
            logits, weights, idx, T, E, TOP_K=self.top_k, K_P2=triton.next_power_of_2(self.top_k), BLOCK_T=block_t,
            BLOCK_E=triton.next_power_of_2(E), num_warps=4,
        )
        return weights, idx
