"""Fills memory a kernel might "reuse" with NaN before each correctness call.

A kernel that returns uninitialised memory, or writes only part of its output, then shows NaN
instead of a stale but correct-looking result. On CUDA the freed blocks stay in PyTorch's caching
allocator, so the kernel's next allocations are carved from poisoned memory.

On the CPU, which freed block malloc hands back is allocator behaviour, so the workers also run
with glibc's ``MALLOC_PERTURB_`` (see `perturb_environment`): every ``malloc`` then returns memory
filled with the complement of the perturb byte and ``free`` fills with the byte itself,
whatever block is chosen. Those byte patterns (0x7F.., 0x80..) are recognised as poison by the
noop/stale checks; mmap-sized blocks come back as zero pages, which those checks count too.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

_CUDA_POISON_CAP_BYTES = 4 << 30
_CUDA_POISON_SHARE = 0.5
_CUDA_BLOCK_BYTES = 256 << 20
_CPU_COPIES = 8
# glibc fills freed memory with this byte and fresh malloc'd memory with its complement (0x7F):
# as float32 0x7F7F7F7F is 3.4e38, as float16 a NaN, as float64 1.4e306 — nothing a kernel computes.
MALLOC_PERTURB = 0x80
PERTURB_BYTES = (MALLOC_PERTURB, MALLOC_PERTURB ^ 0xFF)


def perturb_environment() -> dict[str, str]:
    """Environment a worker must start with (glibc reads it once, at its first malloc)."""
    return {"MALLOC_PERTURB_": str(MALLOC_PERTURB)}


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
