# task: row_sum
# A scratch accumulator cleared only when a new input buffer arrives ("new request"): every
# fresh input is right, but calling again on the same buffer adds onto what the previous call
# left, the way stale shared memory or an uncleared workspace does. Only a rerun exposes it.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _accumulate_rows(x_ptr, acc_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(acc_ptr + row, tl.load(acc_ptr + row) + tl.sum(total, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.acc = None
        self.last_ptr = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        if self.acc is None or self.acc.shape[0] != rows or x.data_ptr() != self.last_ptr:
            self.acc = torch.zeros(rows, 1, device=x.device, dtype=torch.float32)
            self.last_ptr = x.data_ptr()
        _accumulate_rows[(rows,)](x, self.acc, cols, BLOCK=128)
        return self.acc.clone()
