# task: row_sum
# Lots of glue: views, permute/transpose round trips, torch.cat of per-chunk outputs, stride
# queries, dtype/device checks and an assertion; the reduction itself is one kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    CHUNK_ROWS = 16

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def _chunk(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
        _sum_rows[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=128)
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dtype == torch.float32 and x.dim() == 2
        x = x.transpose(0, 1).t().contiguous()
        parts = [self._chunk(piece) for piece in x.split(self.CHUNK_ROWS, dim=0)]
        return torch.cat(parts).unsqueeze(-1).to(x.dtype)
