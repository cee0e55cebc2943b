# task: softmax
# Style: autograd.Function wrapper, dataclass config, threading.Lock cache,
# typing, __repr__, module-level dict of configs keyed by shape
import math
import threading
from dataclasses import dataclass
from typing import Dict, Tuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


@dataclass(frozen=True)
class SoftmaxConfig:
    block: int
    num_warps: int


_CFG_CACHE: Dict[Tuple[int, int], SoftmaxConfig] = {}
_CFG_LOCK = threading.Lock()


def _get_config(n_rows: int, n_cols: int) -> SoftmaxConfig:
    key = (n_rows, n_cols)
    with _CFG_LOCK:
        cfg = _CFG_CACHE.get(key)
        if cfg is None:
            block = triton.next_power_of_2(n_cols)
            warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
            cfg = SoftmaxConfig(block=block, num_warps=warps)
            _CFG_CACHE[key] = cfg
    return cfg


@triton.jit
def softmax_fwd_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


class _SoftmaxFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        n_rows, n_cols = x2.shape
        y = torch.empty_like(x2)
        cfg = _get_config(n_rows, n_cols)
        softmax_fwd_kernel[(n_rows,)](y, x2, x2.stride(0), y.stride(0), n_cols,
                                      BLOCK=cfg.block, num_warps=cfg.num_warps)
        ctx.save_for_backward(y)
        return y.view(shape)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("inference only")


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _SoftmaxFn.apply(x)

    def __repr__(self) -> str:
        return f"ModelNew(triton softmax, cached configs={len(_CFG_CACHE)}, log2e={math.log2(math.e):.3f})"
