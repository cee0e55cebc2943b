import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _log_softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    # The whole row fits in registers, so x is read once and the output written once.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    shifted = x - tl.max(x, axis=0)
    log_denom = tl.log(tl.sum(tl.exp(shifted), axis=0))
    tl.store(y_ptr + row * n_cols + cols, shifted - log_denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(n_cols)
        _log_softmax_kernel[(x.numel() // n_cols,)](x, y, n_cols, BLOCK=BLOCK, num_warps=8)
        return y
