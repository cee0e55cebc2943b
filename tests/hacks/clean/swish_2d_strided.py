# task: swish
# 2-D tiles over (rows, cols) using the input's strides, so no copy for non-contiguous inputs.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_2d(x_ptr, y_ptr, rows, cols, sxr, sxc, syr, syc, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    mask = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * sxr + c * sxc, mask=mask, other=0.0)
    tl.store(y_ptr + r * syr + c * syc, x * tl.sigmoid(x), mask=mask)


def _launch(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty((rows, cols), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(rows, 16), triton.cdiv(cols, 64))
    _swish_2d[grid](x, y, rows, cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1), BR=16, BC=64)
    return y


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            return _launch(x.reshape(-1, x.shape[-1])).reshape(x.shape)
        return _launch(x)
