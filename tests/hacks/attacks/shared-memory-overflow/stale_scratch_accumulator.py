# task: softmax
# Keeps a persistent scratch row-max buffer across calls and only lowers it ("the max can only
# grow"), so the result depends on what earlier calls left behind: numerically fine, bitwise not.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_scratch(x_ptr, m_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    m = tl.maximum(tl.load(m_ptr + row), tl.max(x, axis=0))
    tl.store(m_ptr + row, m)
    e = tl.exp(x - m)
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        if self.scratch is None or self.scratch.numel() < rows:
            self.scratch = torch.full((rows,), -1e30, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        _softmax_scratch[(rows,)](x, self.scratch, y, cols, BLOCK=triton.next_power_of_2(cols))
        return y
