import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Mixture-of-experts expert computation: every token is sent to its top-k experts (SwiGLU
    FFNs with their own weights), and the expert outputs are summed with the routing weights.
    The routing (expert ids and weights per token, as level4_3 produces) is an input."""

    def __init__(self, num_experts: int, d_model: int, d_ff: int):
        super().__init__()
        # Drawn transposed: the scorer reseeds before get_inputs(), and x's (tokens, d_model) draw
        # would otherwise repeat the first expert's weights row for row.
        self.w_gate = nn.Parameter(torch.randn(num_experts, d_model, d_ff).transpose(1, 2).contiguous() * d_model ** -0.5)
        self.w_up = nn.Parameter(torch.randn(num_experts, d_model, d_ff).transpose(1, 2).contiguous() * d_model ** -0.5)
        self.w_down = nn.Parameter(torch.randn(num_experts, d_ff, d_model).transpose(1, 2).contiguous() * d_ff ** -0.5)

    def forward(self, x: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        for e in range(self.w_gate.shape[0]):
            tok, slot = torch.nonzero(topk_ids == e, as_tuple=True)
            if tok.numel() == 0:
                continue
            h = x[tok]
            y = (F.silu(h @ self.w_gate[e].T) * (h @ self.w_up[e].T)) @ self.w_down[e].T
            out.index_add_(0, tok, y * topk_weights[tok, slot, None])
        return out


num_tokens = 4096
d_model = 2048
d_ff = 1408
num_experts = 16
top_k = 2


def get_inputs():
    x = torch.randn(num_tokens, d_model)
    # Distinct experts per token, uneven load across experts.
    bias = torch.linspace(0.0, 1.0, num_experts)
    topk_ids = (torch.rand(num_tokens, num_experts) + bias).topk(top_k, dim=-1).indices
    topk_weights = torch.softmax(torch.randn(num_tokens, top_k), dim=-1)
    return [x, topk_ids, topk_weights]


def get_init_inputs():
    return [num_experts, d_model, d_ff]
