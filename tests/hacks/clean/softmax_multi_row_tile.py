# task: softmax
# Two rows per program in a 2-D tile, max-subtracted, masked columns; the grid helper is a
# module-level function and the block choice a static method.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_tile(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < n_rows) & (c < n_cols)
    x = tl.load(x_ptr + r * n_cols + c, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.where(mask, tl.exp(x), 0.0)
    tl.store(y_ptr + r * n_cols + c, e / tl.sum(e, axis=1)[:, None], mask=mask)


def grid_for(rows: int, per_program: int) -> tuple[int]:
    return (triton.cdiv(rows, per_program),)


class ModelNew(nn.Module):
    ROWS = 2

    @staticmethod
    def block(cols: int) -> int:
        return triton.next_power_of_2(cols)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        _softmax_tile[grid_for(rows, self.ROWS)](x, y, rows, cols, ROWS=self.ROWS, BLOCK=self.block(cols))
        return y
