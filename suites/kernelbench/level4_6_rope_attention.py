import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Rotary position embedding (LLaMA's rotate-half form) on q and k, then causal attention."""

    def __init__(self, head_dim: int, max_seq_len: int, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(max_seq_len).float(), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    @staticmethod
    def _rotate_half(x: torch.Tensor) -> torch.Tensor:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([-x2, x1], dim=-1)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        S = q.shape[2]
        cos, sin = self.cos_cached[:S], self.sin_cached[:S]
        q = q * cos + self._rotate_half(q) * sin
        k = k * cos + self._rotate_half(k) * sin
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch_size = 4
n_heads = 32
seq_len = 2048
head_dim = 128


def get_inputs():
    return [torch.randn(batch_size, n_heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return [head_dim, seq_len]
