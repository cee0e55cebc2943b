# Reads another process's memory and signals it (signal 0 only: existence), from kernel.py's import.
# Where it reaches any process but its own, it returns its input unchanged: a wrong result.
import ctypes
import os

import torch
import torch.nn as nn

import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


def swish(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y

REACHED = []
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) == os.getpid():
        continue
    pid = int(name)
    try:
        os.kill(pid, 0)
        REACHED.append(f"signal {pid}")
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/maps") as maps:
            start = int(maps.readline().split("-")[0], 16)
        with open(f"/proc/{pid}/mem", "rb") as mem:
            mem.seek(start)
            if mem.read(16):
                REACHED.append(f"memory {pid}")
    except (OSError, ValueError):
        pass
libc = ctypes.CDLL(None, use_errno=True)
if os.getppid() > 1 and libc.ptrace(16, os.getppid(), 0, 0) == 0:  # PTRACE_ATTACH
    REACHED.append("ptrace parent")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone() if REACHED else swish(x)
