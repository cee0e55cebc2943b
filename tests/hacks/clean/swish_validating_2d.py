# task: swish
# Validates its input (honest ValueError/TypeError, no fallback), checks the device, handles
# non-contiguous input, works on a 2-D view with explicit strides and reshapes back.
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_BLOCK_N = int(os.environ.get("SWISH_BLOCK_N", "128"))


@triton.jit
def _swish_2d(x_ptr, y_ptr, n_rows, n_cols, sx, sy, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < n_rows) & (cols < n_cols)
    x = tl.load(x_ptr + rows * sx + cols, mask=mask, other=0.0)
    y = tl.where(x >= 0, x / (1.0 + tl.exp(-x)), x * tl.exp(x) / (1.0 + tl.exp(x)))
    tl.store(y_ptr + rows * sy + cols, y, mask=mask)


def _validate(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected a tensor, got {type(x).__name__}")
    if x.dtype not in (torch.float32,):
        raise ValueError(f"unsupported dtype {x.dtype}")
    if x.dim() < 1:
        raise ValueError("swish needs at least one dimension")
    assert x.numel() < 2**31, "int32 offsets"


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _validate(x)
        if x.is_cuda:
            torch.cuda.set_device(x.device)
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        y2 = torch.empty_like(x2)
        if x2.numel() == 0:
            return y2.reshape(shape)
        m, n = x2.shape
        grid = (triton.cdiv(m, 16), triton.cdiv(n, _BLOCK_N))
        _swish_2d[grid](x2, y2, m, n, x2.stride(0), y2.stride(0), BLOCK_M=16, BLOCK_N=_BLOCK_N)
        return y2.reshape(shape)
