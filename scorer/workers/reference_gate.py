"""The reference worker's side of the device-timed batch (scorer/gpu/release_gate.py).

At the plan it draws the batch's inputs from the fresh batch's secret seeds into its own memory;
at set-up it opens what the kernel's worker shared (input slabs, output slabs, the flag words) and
checks their layout against those inputs; at release it copies the inputs in and writes the flag,
and waits for that to have run. Everything the kernel's process sent is checked here: a malformed
part is a violation. (An interprocess CUDA event would have let this worker time the calls on the
device, but the event's handle opens through /dev/shm, which the wall makes private to the kernel:
on an H100 it failed with "mapping of buffer object failed". The judge's host clock times them.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from scorer.workers.device_share import ShareError, open_shared

# The batch's inputs (in the kernel's slabs and staged here) and outputs take at most this share of
# the device's free memory, and this many bytes: published-size tasks move hundreds of MB a call,
# and the protocol's fixed cost weighs 1/calls on each call's bound.
MEMORY_SHARE = 0.2
MEMORY_CAP = 12 << 30


def calls_that_fit(per_call_bytes: int, free_bytes: int) -> int:
    return int(min(MEMORY_SHARE * free_bytes, MEMORY_CAP) // max(1, per_call_bytes))


@dataclass
class GateSide:
    inputs: list[torch.Tensor] = field(default_factory=list)  # the kernel's slabs, opened here
    staged: list[torch.Tensor] = field(default_factory=list)  # the batch's inputs, in our memory
    flag: torch.Tensor | None = None
    stream: Any = None


def _open(shared: Any, device: torch.device) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
    if not isinstance(shared, dict) or set(shared) != {"inputs", "slabs", "flag"}:
        raise ShareError("the device-timed batch's shares must be exactly inputs, slabs and flag")
    flags = open_shared(shared["flag"], device)
    if len(flags) != 1 or flags[0].dtype != torch.int32 or tuple(flags[0].shape) != (2,):
        raise ShareError("the flag must be one tensor of two int32 words")
    return open_shared(shared["inputs"], device), open_shared(shared["slabs"], device), flags[0]


def draw(calls: int, inputs_for: Callable[[int], list[Any]], warm: list[Any]) -> tuple[list[torch.Tensor], str]:
    """Each input tensor of the batch's calls in a slab of its own (each row copied in as it is
    drawn: the slabs and one call's inputs are all this holds at once), or why the task's inputs
    cannot be slabbed: a tensor inside a container, or another argument not the same for every call."""
    staged = [torch.empty((calls, *w.shape), dtype=w.dtype, device=w.device) for w in warm if isinstance(w, torch.Tensor)]
    for row in range(calls):
        args = inputs_for(row)
        if len(args) != len(warm):
            return [], "the task draws a different number of inputs for different seeds"
        for a, w in zip(args, warm, strict=True):
            if isinstance(a, (list, tuple, dict)) and _holds_tensor(a):
                return [], "an input holds tensors inside a container"
            if isinstance(a, torch.Tensor) != isinstance(w, torch.Tensor):
                return [], "an input is a tensor for some seeds only"
            if isinstance(a, torch.Tensor):
                if a.shape != w.shape or a.dtype != w.dtype or a.layout != torch.strided:
                    return [], "an input's shape or dtype differs between seeds"
            elif not _same(a, w):
                return [], "an argument that is not a tensor differs between seeds"
        for slab, a in zip(staged, (a for a in args if isinstance(a, torch.Tensor)), strict=True):
            slab[row].copy_(a)
    return staged, ""


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an array's ambiguous truth, an object without equality: not the same
        return False


def _holds_tensor(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple, dict)) and _holds_tensor(v)) for v in items)


def setup(side: GateSide, shared: Any, device: torch.device) -> tuple[list[torch.Tensor], str]:
    """Opens the shares against the staged inputs; (the kernel's output slabs, a violation or "")."""
    staged = side.staged
    try:
        inputs, slabs, flag = _open(shared, device)
    except (ShareError, TypeError, KeyError, ValueError, IndexError, RuntimeError) as exc:
        return [], f"the device-timed batch's shares are malformed: {exc}"
    if len(inputs) != len(staged) or any(k.shape != s.shape or k.dtype != s.dtype or not k.is_contiguous()
                                         for k, s in zip(inputs, staged, strict=False)):
        return [], (f"the device-timed batch's input slabs ({[tuple(k.shape) for k in inputs]}) are not the task's "
                    f"inputs for the calls the judge asked ({[tuple(s.shape) for s in staged]})")
    side.inputs, side.flag = inputs, flag
    side.stream = torch.cuda.Stream(device)
    return slabs, ""


def release(side: GateSide, want: int) -> float:
    """Copies the inputs in and writes the flag; the ms this worker waited for that to run on the
    device (the device switches to it from the kernel's spinning gate)."""
    assert side.flag is not None
    started = time.perf_counter()
    with torch.cuda.stream(side.stream):
        side.stream.wait_stream(torch.cuda.default_stream(side.flag.device))
        for slab, src in zip(side.inputs, side.staged, strict=True):
            slab.copy_(src)
        side.flag[0].fill_(int(want))
    side.stream.synchronize()
    return (time.perf_counter() - started) * 1e3
