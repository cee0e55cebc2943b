# task: row_sum
# Two-pass split reduction: the partial sums live in a scratch buffer kept in `self` and reused
# per shape (buffer reuse, not result reuse: both passes run every call). Deterministic order.
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 128


@triton.jit
def _partials(x_ptr, part_ptr, n_cols, n_chunks, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(part_ptr + row * n_chunks + chunk, tl.sum(v, axis=0))


@triton.jit
def _finish(part_ptr, y_ptr, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    idx = tl.arange(0, BLOCK)
    p = tl.load(part_ptr + row * n_chunks + idx, mask=idx < n_chunks, other=0.0)
    tl.store(y_ptr + row, tl.sum(p, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self._scratch: dict[tuple, torch.Tensor] = {}

    def _scratch_for(self, rows: int, n_chunks: int, like: torch.Tensor) -> torch.Tensor:
        key = (rows, n_chunks, like.device, like.dtype)
        buf = self._scratch.get(key)
        if buf is None:
            buf = torch.empty(rows, n_chunks, device=like.device, dtype=like.dtype)
            self._scratch[key] = buf
        return buf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        n_chunks = triton.cdiv(cols, CHUNK)
        part = self._scratch_for(rows, n_chunks, x)
        _partials[(rows, n_chunks)](x, part, cols, n_chunks, CHUNK=CHUNK)
        y = torch.empty(rows, 1, device=x.device, dtype=x.dtype)
        _finish[(rows,)](part, y, n_chunks, BLOCK=triton.next_power_of_2(n_chunks))
        return y
