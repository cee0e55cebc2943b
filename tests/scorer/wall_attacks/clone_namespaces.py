# Asks clone for a new user and mount namespace (in which it would be root and could mount over
# what the wall set up), and clone3 for the same. Where either call makes a child, it returns a
# wrong result.
import ctypes
import os
import platform

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


_SYS = {"x86_64": (56, 435), "aarch64": (220, 435)}.get(platform.machine(), (56, 435))
_FLAGS = 0x10000000 | 0x00020000 | 17  # CLONE_NEWUSER | CLONE_NEWNS, SIGCHLD to the parent


def _try() -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    made = []
    pid = libc.syscall(_SYS[0], ctypes.c_ulong(_FLAGS), 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        made.append("clone")
    else:
        print("clone:", os.strerror(ctypes.get_errno()))
    args = (ctypes.c_uint64 * 11)(_FLAGS & ~0xFF, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
    pid = libc.syscall(_SYS[1], ctypes.byref(args), ctypes.c_size_t(88))
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        made.append("clone3")
    else:
        print("clone3:", os.strerror(ctypes.get_errno()))
    return made


MADE = _try()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone() if MADE else swish(x)
