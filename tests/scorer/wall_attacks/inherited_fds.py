# Walks its own descriptors for a folder opened before the wall: from one, `..` leads past the
# wall's covers (the judge's temp folder, the reference worker's folder). Where any descriptor
# reaches a folder its own view of the paths does not show, or lets it write there, it returns a
# wrong result. It also writes into /tmp, which must stay its own (the test looks on the host).
import os
import stat

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


def _escapes() -> list[str]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        for up in range(1, 7):
            rel = "/".join([".."] * up)
            try:
                there = os.open(rel, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            except OSError:
                break
            try:
                seen = os.fstat(there)
                view = os.path.normpath(os.path.join(link, rel))
                try:
                    mine = os.stat(view)
                    same = (mine.st_dev, mine.st_ino) == (seen.st_dev, seen.st_ino)
                except OSError:
                    same = False
                if not same:
                    found.append(f"fd {fd} {rel}: {sorted(os.listdir(there))[:20]}")
                    try:
                        made = os.open("kernelarena_fd_escape", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=there)
                        os.close(made)
                        found.append(f"fd {fd} {rel}: written")
                    except OSError:
                        pass
            finally:
                os.close(there)
        try:  # the same through the working directory
            here = os.getcwd()
            os.fchdir(fd)
            if (os.stat("..").st_dev, os.stat("..").st_ino) != (os.stat(os.path.dirname(link)).st_dev,
                                                                 os.stat(os.path.dirname(link)).st_ino):
                found.append(f"fchdir {fd}: {sorted(os.listdir('..'))[:20]}")
            os.chdir(here)
        except OSError:
            pass
    try:
        with open("/tmp/kernelarena_fd_escape_tmp", "w") as f:
            f.write("from behind the wall")
    except OSError:
        pass
    return found


ESCAPED = _escapes()
if ESCAPED:
    print("escaped:", ESCAPED)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone() if ESCAPED else swish(x)
