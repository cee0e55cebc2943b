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
    # Distinct logits in every row: a random permutation of levels 0.05 apart, jittered by less
    # than the spacing, scaled by a per-row temperature and shifted. With plain randn, a few of the
    # 131072 rows hold two equal values at the top-k boundary, where the chosen expert is a
    # tie-break, not a right answer.
    levels = torch.argsort(torch.rand(num_tokens, num_experts), dim=-1).to(torch.float32) * 0.05
    jitter = torch.rand(num_tokens, num_experts) * 0.04
    temperature = 0.5 + 2.0 * torch.rand(num_tokens, 1)
    return [(levels + jitter) * temperature + torch.randn(num_tokens, 1) * 2.0]


def get_init_inputs():
    return [top_k]
