"""Fills memory a kernel might "reuse" with NaN before each correctness call.

A kernel that returns uninitialised memory, or writes only part of its output, then shows NaN
instead of a stale but correct-looking result. On CUDA the freed blocks stay in PyTorch's caching
allocator, so the kernel's next allocations are carved from poisoned memory.
"""

from __future__ import annotations

from typing import Sequence

import torch

_CUDA_POISON_CAP_BYTES = 4 << 30
_CUDA_POISON_SHARE = 0.5
_CUDA_BLOCK_BYTES = 256 << 20
_CPU_COPIES = 8


def _fill_poison(t: torch.Tensor) -> None:
    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


def poison_memory(device: torch.device, output_specs: Sequence[tuple[Sequence[int], torch.dtype]]) -> None:
    blocks: list[torch.Tensor] = []
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        budget = min(int(free * _CUDA_POISON_SHARE), _CUDA_POISON_CAP_BYTES)
        while budget >= _CUDA_BLOCK_BYTES:
            block = torch.empty(_CUDA_BLOCK_BYTES // 4, dtype=torch.float32, device=device)
            block.fill_(float("nan"))
            blocks.append(block)
            budget -= _CUDA_BLOCK_BYTES
    # Several poisoned blocks per output size: on the CPU, malloc's size bins are LIFO and torch's
    # own bookkeeping allocations interleave, so one block might not be the one the kernel gets.
    copies = 1 if device.type == "cuda" else _CPU_COPIES
    for shape, dtype in output_specs:
        for _ in range(copies):
            block = torch.empty(tuple(shape), dtype=dtype, device=device)
            _fill_poison(block)
            blocks.append(block)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    del blocks
