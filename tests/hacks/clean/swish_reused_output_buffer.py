# task: swish
# Keeps one output buffer per (shape, dtype, device) and overwrites it on every call, as inference
# engines do to avoid allocator traffic. Every element is recomputed each call.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._buffers_by_key: dict = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        key = (tuple(x.shape), x.dtype, x.device)
        out = self._buffers_by_key.get(key)
        if out is None:
            out = self._buffers_by_key[key] = torch.empty_like(x)
        n = x.numel()
        _swish[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
