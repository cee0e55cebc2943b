import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """DeepSeek-style multi-head latent attention (prefill, causal; the decoupled-RoPE branch is
    left out). Keys and values are not projected from x directly: x is compressed to a shared
    low-rank latent c = RMSNorm(x W_dkv) (the only thing a KV cache would store), and each head's
    K and V are up-projected from c."""

    def __init__(self, d_model: int, n_heads: int, head_dim: int, kv_latent: int, eps: float = 1e-6):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = head_dim
        self.eps = eps
        self.wq = nn.Linear(d_model, n_heads * head_dim, bias=False)
        self.w_dkv = nn.Linear(d_model, kv_latent, bias=False)
        self.kv_norm_weight = nn.Parameter(torch.randn(kv_latent) * 0.1 + 1.0)
        self.w_uk = nn.Linear(kv_latent, n_heads * head_dim, bias=False)
        self.w_uv = nn.Linear(kv_latent, n_heads * head_dim, bias=False)
        self.wo = nn.Linear(n_heads * head_dim, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        H, Dh = self.n_heads, self.head_dim
        c = self.w_dkv(x)
        c = c * torch.rsqrt(c.pow(2).mean(-1, keepdim=True) + self.eps) * self.kv_norm_weight
        q = self.wq(x).view(B, S, H, Dh).transpose(1, 2)
        k = self.w_uk(c).view(B, S, H, Dh).transpose(1, 2)
        v = self.w_uv(c).view(B, S, H, Dh).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(a.transpose(1, 2).reshape(B, S, H * Dh))


batch_size = 4
seq_len = 1024
d_model = 2048
n_heads = 16
head_dim = 128
kv_latent = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads, head_dim, kv_latent]
