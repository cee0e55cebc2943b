import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """LLaMA-style pre-norm attention sub-block with residual (no RoPE):
    h = rmsnorm(x) * w;  y = x + wo(causal_attention(wq(h), wk(h), wv(h)))."""

    def __init__(self, d_model: int, n_heads: int, eps: float = 1e-6):
        super().__init__()
        self.n_heads = n_heads
        self.eps = eps
        self.norm_weight = nn.Parameter(torch.randn(d_model) * 0.1 + 1.0)
        self.wq = nn.Linear(d_model, d_model, bias=False)
        self.wk = nn.Linear(d_model, d_model, bias=False)
        self.wv = nn.Linear(d_model, d_model, bias=False)
        self.wo = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, D = x.shape
        H = self.n_heads
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.norm_weight
        q = self.wq(h).view(B, S, H, D // H).transpose(1, 2)
        k = self.wk(h).view(B, S, H, D // H).transpose(1, 2)
        v = self.wv(h).view(B, S, H, D // H).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.wo(a.transpose(1, 2).reshape(B, S, D))


batch_size = 4
seq_len = 2048
d_model = 2048
n_heads = 16


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
