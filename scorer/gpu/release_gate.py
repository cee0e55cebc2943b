"""A gate on the kernel worker's stream that another process opens: the device-timed batch.

The judge's host clock around a batch reads a small kernel's launch path (Python, the library-call
monitor, Triton's launcher) as well as its device time, so it bounds a forged clock only loosely.
The device-timed batch takes the kernel's host out: the kernel's worker enqueues the batch's calls
behind this gate, reading their inputs from slabs it shares by CUDA IPC; the reference worker
copies fresh inputs into the slabs and writes the flag word (scorer/workers/reference_gate.py), and
the judge's clock runs from that to the rows read at secret positions (scorer/judge/scoring.py).
The inputs did not exist before, so nothing the kernel's process did earlier shortens that span.

One program spins on the flag with volatile loads until it reads the value it was launched with,
or until `TIMEOUT_NS` (a judge that died must not leave the GPU spinning; the judge opens it
within seconds), and writes whether it gave up into the flag's second word (a diagnostic nothing
rules on: the kernel's process can write it too). Only the caller's stream waits.
"""

from __future__ import annotations

from typing import Any

import torch

TIMEOUT_NS = 20_000_000_000
# A release that waited this long for the device may have come after the gate gave up: the batch's
# calls then ran on inputs not yet copied in, and the batch says nothing (scorer/judge/scoring.py).
RELEASE_VOID_MS = TIMEOUT_NS / 2e6

try:
    import triton
    import triton.language as tl

    @triton.jit
    def _flag_gate_kernel(flag_ptr, want, timeout_ns):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        t = t0
        seen = tl.load(flag_ptr, volatile=True)
        while (seen != want) & (t - t0 < timeout_ns):
            seen = tl.load(flag_ptr, volatile=True)
            t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        tl.store(flag_ptr + 1, (seen != want).to(tl.int32))
except Exception:  # no Triton with a CUDA backend: the judge does not ask for a device-timed batch
    _flag_gate_kernel = None


def available() -> bool:
    return _flag_gate_kernel is not None and torch.cuda.is_available()


class FlagGate:
    """The flag words (shared with the reference worker) and the launch of the gate on them."""

    def __init__(self, device: torch.device) -> None:
        assert _flag_gate_kernel is not None, "the device-timed batch needs Triton"
        self.kernel = _flag_gate_kernel
        self.flag = torch.zeros(2, dtype=torch.int32, device=device)

    def __call__(self, want: int) -> None:
        self.kernel[(1,)](self.flag, int(want), TIMEOUT_NS, num_warps=1)

    def warm(self, want: int) -> None:
        """Compiles the gate and runs it once, open (the flag already holds `want`), then shuts it."""
        self.flag[0].fill_(int(want))
        self(int(want))
        self.flag.zero_()


def flag_value(seed: Any) -> int:
    """An odd value above 1: Triton compiles an int argument apart where it is 1 or a multiple of 16,
    and the gate must come from the compile made before kernel.py was imported (`warm(WARM_FLAG)`)."""
    return 3 + 2 * (int(seed) % (1 << 29))


WARM_FLAG = 3
