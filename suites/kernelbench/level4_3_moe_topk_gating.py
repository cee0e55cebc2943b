import torch
import torch.nn as nn


class Model(nn.Module):
    """Mixture-of-experts router gating: softmax over each token's expert logits, the top-k
    experts, and their probabilities renormalised to sum to one.

    Returns (weights (tokens, k) float32, expert indices (tokens, k) int64), both ordered by
    decreasing weight. The logits are an input: computed by a GEMM, their last bits depend on the
    GEMM's summation order, which would make the chosen experts ill-defined at near-ties.
    """

    def __init__(self, top_k: int):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = torch.softmax(logits, dim=-1)
        # Selecting on the logits picks the same experts as on the probabilities (softmax is
        # monotonic) and stays exact where rounding makes two probabilities equal.
        idx = torch.topk(logits, self.top_k, dim=-1).indices
        weights = probs.gather(-1, idx)
        return weights / weights.sum(dim=-1, keepdim=True), idx


num_tokens = 131072
num_experts = 128
top_k = 2


def get_inputs():
    return [torch.randn(num_tokens, num_experts) * 2.0]


def get_init_inputs():
    return [top_k]
