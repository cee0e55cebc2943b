import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal grouped-query attention (prefill): n_q_heads query heads share n_kv_heads K/V heads,
    each K/V head serving a contiguous group of query heads."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch_size = 4
n_q_heads = 32
n_kv_heads = 8
seq_len = 2048
head_dim = 128


def get_inputs():
    return [
        torch.randn(batch_size, n_q_heads, seq_len, head_dim),
        torch.randn(batch_size, n_kv_heads, seq_len, head_dim),
        torch.randn(batch_size, n_kv_heads, seq_len, head_dim),
    ]


def get_init_inputs():
    return []
