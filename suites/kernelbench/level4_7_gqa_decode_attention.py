import torch
import torch.nn as nn


class Model(nn.Module):
    """Decode-step grouped-query attention over a KV cache (the flash-decoding problem): each
    sequence's single new query token, per query head, attends to the first cache_seqlens[b]
    positions of its KV head's cache. q (B, Hq, D); caches (B, Hkv, L, D); out (B, Hq, D)."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                cache_seqlens: torch.Tensor) -> torch.Tensor:
        B, Hq, D = q.shape
        Hkv, L = k_cache.shape[1], k_cache.shape[2]
        qg = q.view(B, Hkv, Hq // Hkv, D)
        s = (qg @ k_cache.transpose(-1, -2)) * D ** -0.5
        pos = torch.arange(L, device=q.device)
        s = s.masked_fill(pos[None, None, None, :] >= cache_seqlens[:, None, None, None], float("-inf"))
        return (torch.softmax(s, dim=-1) @ v_cache).view(B, Hq, D)


batch_size = 16
n_q_heads = 32
n_kv_heads = 8
cache_len = 8192
head_dim = 128


def get_inputs():
    return [
        torch.randn(batch_size, n_q_heads, head_dim),
        torch.randn(batch_size, n_kv_heads, cache_len, head_dim),
        torch.randn(batch_size, n_kv_heads, cache_len, head_dim),
        torch.randint(cache_len // 2, cache_len + 1, (batch_size,), dtype=torch.int32),
    ]


def get_init_inputs():
    return []
