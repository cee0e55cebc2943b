"""A digest of one call's outputs: the kernel's worker commits to each timed repetition's outputs
with it before the judge says whether that repetition is kept, and the reference worker computes
it again on the outputs that arrive. A kernel that does no work on a repetition and computes the
output only once told it is kept cannot know the digest it should have sent.

The digest reads every element (a weighted sum of the raw bits in 64-bit integers, exact and
independent of the order a device adds in), so it is the same in both workers for the same bits
and costs one pass over the outputs, outside the timed region.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

_WEIGHT = 0x9E3779B97F4A7C15 - (1 << 64)  # an odd 64-bit constant, as a signed int64
_OFFSET = 0x632BE59BD9B4E019
_CHUNK = 1 << 22  # elements per pass: a bounded scratch on the device beside a large task
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_MASK = (1 << 64) - 1


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The raw bits of a tensor's elements as integers, one dimension."""
    flat = t.detach().as_subclass(torch.Tensor).reshape(-1)
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    if flat.dtype == torch.bool:
        return flat.to(torch.uint8)
    return flat.view(_INT_OF_SIZE[flat.element_size()]) if flat.is_floating_point() else flat


def _weighted_sum(bits: torch.Tensor) -> int:
    total = 0
    for start in range(0, bits.numel(), _CHUNK):
        piece = bits[start:start + _CHUNK].to(torch.int64)
        weights = torch.arange(start, start + piece.numel(), device=piece.device, dtype=torch.int64) * _WEIGHT + _OFFSET
        total = (total + int((piece * weights).sum().item())) & _MASK
    return total


def digest(outputs: list[Any]) -> str:
    """sha256 over each output's type, shape, dtype and weighted bit sum."""
    h = hashlib.sha256()
    with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
        for out in outputs:
            if not isinstance(out, torch.Tensor):
                h.update(f"{type(out).__name__}|{out!r}"[:4096].encode())
                continue
            h.update(f"{tuple(out.shape)}|{out.dtype}|".encode())
            h.update(_weighted_sum(_bits(out)).to_bytes(8, "little"))
    return h.hexdigest()


def is_digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
