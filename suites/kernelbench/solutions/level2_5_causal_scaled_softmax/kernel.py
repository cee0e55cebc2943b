import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _causal_softmax_kernel(x_ptr, y_ptr, S, scale, BLOCK: tl.constexpr):
    # One (query) row per program; keys after the query position get probability 0 and
    # are never read, which saves about half of the input traffic.
    row = tl.program_id(0)
    q = row % S
    cols = tl.arange(0, BLOCK)
    in_row = cols < S
    visible = cols <= q
    x = tl.load(x_ptr + row * S + cols, mask=visible, other=float("-inf")) * scale
    e = tl.exp(x - tl.max(x, axis=0))
    e = tl.where(visible, e, 0.0)
    tl.store(y_ptr + row * S + cols, e / tl.sum(e, axis=0), mask=in_row)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.contiguous()
        seq = scores.shape[-1]
        y = torch.empty_like(scores)
        BLOCK = triton.next_power_of_2(seq)
        _causal_softmax_kernel[(scores.numel() // seq,)](scores, y, seq, self.scale, BLOCK=BLOCK, num_warps=4)
        return y
