"""A hold on every SM of the GPU before each timed repetition's start event.

While the GPU is held, the host enqueues forward's launches, so host launch overhead stays out of
the device events: on the H200 VM, Triton's Python launcher (~40-80 us per launch there) moved the
median of 0.07-0.2 ms kernels by 15-26% between processes, and a hold before the start event
brought the spread of the same timings to under 1%. The hold fills every warp slot of every SM, so
no kernel from any stream can run during it: work that forward puts on a side stream cannot
overlap the hold and escape the timer, as it could overlap a one-thread `torch.cuda._sleep` spin
on the caller's stream. Copy engines are not held (see docs/HACKS.md, known limits).
"""

from __future__ import annotations

from typing import Any

import torch

from scorer.gpu.compile_gap import open_context, shared_gpu_work
from scorer.gpu.lock import device_lock_key

HOLD_NS = 200_000
_THREADS_PER_PROGRAM = 512
_WARPS_PER_PROGRAM = _THREADS_PER_PROGRAM // 32

try:
    import triton
    import triton.language as tl

    @triton.jit
    def _hold_kernel(hold_ns, where_ptr):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        t = t0
        while t - t0 < hold_ns:
            t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
        tl.store(where_ptr + tl.program_id(0), sm)
except Exception:  # no Triton (or no CUDA backend for it): the timer falls back to a spin
    _hold_kernel = None


class DeviceGate:
    """Launches the hold on the current stream. Each program writes the SM it ran on: `arm()`
    before a hold clears that record, `tally()` after it counts (on the device) the programs that
    did not run, and `sms_used()` reads the count: the whole grid must be there to fill the GPU."""

    def __init__(self, device: Any, hold_kernel: Any, hold_ns: int = HOLD_NS) -> None:
        props = torch.cuda.get_device_properties(device)
        threads = int(getattr(props, "max_threads_per_multi_processor", 0) or 2048)
        self.programs = int(props.multi_processor_count) * max(1, threads // _THREADS_PER_PROGRAM)
        self.hold_ns = int(hold_ns)
        self.kernel = hold_kernel
        self.where = torch.full((self.programs,), -1, dtype=torch.int32, device=device)
        self.missing = torch.zeros((), dtype=torch.int64, device=device)

    def __call__(self) -> None:
        self.kernel[(self.programs,)](self.hold_ns, self.where, num_warps=_WARPS_PER_PROGRAM)

    def arm(self) -> None:
        self.where.fill_(-1)

    def tally(self) -> None:
        self.missing += (self.where < 0).sum()

    def reset(self) -> None:
        self.arm()
        self.missing.zero_()

    def sms_used(self) -> int:
        """SMs the last hold ran on, or -1 if any tallied hold left a program out."""
        if int(self.missing.item()) > 0 or bool((self.where < 0).any()):
            return -1
        return int(self.where.unique().numel())


_GATES: dict[tuple[str, int], DeviceGate | None] = {}


def _gate_key(device: Any, hold_kernel: Any) -> tuple[str, int]:
    return str(device), id(hold_kernel)


def make_gate(device: Any, hold_kernel: Any) -> DeviceGate | None:
    """A compiled, tried gate, or None where it cannot run (no Triton, not an NVIDIA GPU); one per
    device and process, so the kernel worker can build it before kernel.py is imported."""
    key = _gate_key(device, hold_kernel)
    if key not in _GATES:
        _GATES[key] = _new_gate(device, hold_kernel)
    return _GATES[key]


def locked_gate(device: Any, hold_kernel: Any) -> DeviceGate | None:
    """`make_gate` with the GPU lock's shared side taken by the worker itself: the gate's trial run
    fills every SM, which must not land inside another scorer's timing, and the judge does not hold
    the lock around the CPU-bound work (building the task's models) that comes with it; nor is it
    held while the hold kernel compiles (scorer.gpu.compile_gap)."""
    if _gate_key(device, hold_kernel) in _GATES:
        return _GATES[_gate_key(device, hold_kernel)]
    open_context(device)
    with shared_gpu_work(device_lock_key(device)):
        return make_gate(device, hold_kernel)


def _new_gate(device: Any, hold_kernel: Any) -> DeviceGate | None:
    if hold_kernel is None:
        return None
    try:
        if getattr(torch.version, "hip", None):
            return None  # the hold reads NVIDIA's %globaltimer / %smid
        gate = DeviceGate(device, hold_kernel)
        gate()
        torch.cuda.synchronize(device)
        if gate.sms_used() <= 0:
            return None
        gate.reset()
        return gate
    except Exception:
        return None
