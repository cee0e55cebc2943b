# task: add_rmsnorm
# A frozen dataclass launch config chosen once per hidden size by an lru_cache (configs, not
# results), type hints, docstrings, __all__, logging.
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn
import triton
import triton.language as tl

__all__ = ["ModelNew"]

logger = logging.getLogger("add_rmsnorm")


@dataclass(frozen=True)
class LaunchConfig:
    block: int
    num_warps: int


@functools.lru_cache(maxsize=64)
def config_for(hidden: int) -> LaunchConfig:
    """Smallest power-of-two block holding a row; more warps for wider rows."""
    block = triton.next_power_of_2(hidden)
    cfg = LaunchConfig(block=block, num_warps=4 if block <= 2048 else 8)
    logger.debug("add_rmsnorm config for hidden=%d: %s", hidden, cfg)
    return cfg


@triton.jit
def _add_rmsnorm(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row * n_cols
    h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + tl.load(r_ptr + base + cols, mask=mask, other=0.0)
    ms = tl.sum(h * h, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + base + cols, h * tl.rsqrt(ms + eps) * w, mask=mask)


class ModelNew(nn.Module):
    """Residual add + RMSNorm fused into one Triton kernel."""

    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        rows, hidden = x.shape
        cfg = config_for(hidden)
        y = torch.empty_like(x)
        _add_rmsnorm[(rows,)](x, residual, self.weight, y, hidden, self.eps,
                              BLOCK=cfg.block, num_warps=cfg.num_warps)
        return y
