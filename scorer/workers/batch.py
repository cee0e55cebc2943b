"""Back-to-back calls on fresh inputs, timed by the judge's clock (scorer/judge/clock.py).

Each call draws its inputs from its own seed on the device and copies its outputs into row i of a
slab allocated beforehand, so every output of the batch exists at its end. The judge stops its clock
only once the reference worker has read secret positions of every row, so work cannot be skipped,
cached or finished after the reply. With `forward=None` the same loop copies a fixed tensor
instead: the reference worker's calibration of what drawing inputs and copying outputs cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from scorer.tasks.load import as_output_list

# Slabs of one batch take at most this share of the device's free memory, and this many bytes.
SLAB_SHARE = 0.1
SLAB_CAP_BYTES = 4 << 30
MIN_CALLS = 3
MAX_CALLS = {"cuda": 4096, "cpu": 8}
# On a GPU 100 ms is a thousand times the judge's round-trip jitter (~0.05 ms), and every other
# scorer on the GPU waits while a batch holds it. On a CPU the interpreted Triton kernels of the
# tests take 10-100 ms a call: a few calls resolve that, and the CPU test suite scores a few
# hundred kernels.
TARGET_MS = {"cuda": 100.0, "cpu": 20.0}


def batch_calls(device_type: str, call_ms: float, out_bytes: int, free_bytes: int | None) -> int:
    """How many calls: enough for TARGET_MS of work, within the slab memory and the call cap."""
    wanted = int(TARGET_MS[device_type] / max(call_ms, 1e-3)) + 1
    calls = max(MIN_CALLS, min(MAX_CALLS[device_type], wanted))
    if free_bytes is not None and out_bytes > 0:
        # Outputs of published-size tasks are gigabytes: they get MIN_CALLS rows where a fifth of
        # the free memory allows it, whatever the cap.
        budget = max(min(SLAB_SHARE * free_bytes, SLAB_CAP_BYTES), min(MIN_CALLS * out_bytes, 0.2 * free_bytes))
        calls = min(calls, int(budget // out_bytes))
    return max(1, calls)


def make_slabs(calls: int, specs: Sequence[tuple[Sequence[int], torch.dtype]], device: torch.device) -> list[torch.Tensor]:
    return [torch.empty((calls, *shape), dtype=dtype, device=device) for shape, dtype in specs]


WARM_S = {"cuda": 0.05, "cpu": 0.0}
WARM_CALLS = {"cuda": 3, "cpu": 1}


def warm_up(forward: Callable[..., Any], inputs: Callable[[], Sequence[Any]], sync: Callable[[], None],
            device_type: str, perf_counter: Callable[[], float] | None = None) -> None:
    """Untimed calls on known inputs right before a batch: the allocator holds the blocks the
    calls need and the GPU is at its clock (a 3-call batch after an idle second measured 3x)."""
    clock = perf_counter or time.perf_counter
    args = inputs()
    start, calls = clock(), 0
    least, warm_s = WARM_CALLS[device_type], WARM_S[device_type]
    with torch.no_grad():
        while calls < least or clock() - start < warm_s:
            forward(*args)
            calls += 1
            if calls >= least:
                sync()
    sync()


def run_batch(forward: Callable[..., Any] | None, inputs_for: Callable[[int], Sequence[Any]],
              slabs: list[torch.Tensor], sync: Callable[[], None]) -> None:
    templates = [torch.zeros_like(s[0]) for s in slabs] if forward is None else []
    calls = slabs[0].shape[0] if slabs else 0
    args: Sequence[Any] = ()
    with torch.no_grad():
        for i in range(calls):
            args = ()
            args = inputs_for(i)
            outputs = templates if forward is None else as_output_list(forward(*args))
            for slab, out in zip(slabs, outputs, strict=False):  # the kernel's outputs: a short list is the check's to judge
                slab[i].copy_(out)
    sync()


def gather(slabs: list[torch.Tensor], positions: list[torch.Tensor]) -> list[torch.Tensor]:
    """Row-wise values of each slab at its secret flat positions (one small kernel per slab)."""
    return [s.reshape(s.shape[0], -1)[:, p].clone() for s, p in zip(slabs, positions, strict=True)]
