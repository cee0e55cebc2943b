import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    # Scan each block in registers and carry the running total across blocks of the row.
    row = tl.program_id(0)
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        scanned = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * n_cols + cols, scanned, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, n_cols = x.shape
        y = torch.empty_like(x)
        _cumsum_kernel[(rows,)](x, y, n_cols, BLOCK=1024, num_warps=4)
        return y
