"""Who started a thread: the kernel's own code, or the runtime acting for itself.

A CPU matmul in a task's glue starts OpenBLAS's or OpenMP's worker pool; torch starts its
intra-op pool on the first parallel op; Triton and torch may start helper threads while they
compile. None of them is the kernel's. Names do not tell them apart (an OpenBLAS worker inherits
the process's name, `python`), so threads are attributed by their code:

* **Python threads:** by the code they run. A thread whose target, or any frame on its stack, is
  kernel.py's is the kernel's; one running only library code was started by the library. (A
  start from kernel.py's code also raises the `_thread.start_new_thread` audit event the guard
  records, whoever's code the thread then runs.)
* **Native threads:** by the code on their stack. While a thread waits in a system call,
  `/proc/self/task/<tid>/syscall` gives its stack pointer; the words from there to the top of its
  stack (the live frames, down to its start routine) are looked up in the executable mappings.
  A pointer into a shared object that is not installed (a `load_inline` extension, anything the
  kernel built or wrote) makes it the kernel's thread. A thread whose stack holds only installed
  code (libgomp, OpenBLAS, libtorch, libc) is the runtime's, except one that runs Python without
  `threading` knowing it (started through `_thread` directly). A thread that never waits
  while sampled, or whose stack cannot be read, cannot be attributed and is reported as before.
"""

from __future__ import annotations

import bisect
import os
import sys
import time
from array import array
from dataclasses import dataclass

# How much of a thread's stack is read above its stack pointer: idle runtime workers use a few KiB.
_STACK_BYTES = 256 * 1024
_SAMPLES = 20
_SAMPLE_PAUSE_S = 0.005


@dataclass(frozen=True)
class Origin:
    """`kind`: "runtime", "kernel" or "unknown"; `detail`: the objects found, or why unknown."""

    kind: str
    detail: str


class _ExecMaps:
    """The process's file-backed executable mappings, for address -> object lookups."""

    def __init__(self, maps: list[tuple[int, int, str, str]]) -> None:
        code = sorted((lo, hi, path) for lo, hi, perms, path in maps if "x" in perms and path.startswith("/"))
        self.starts = [lo for lo, _, _ in code]
        self.code = code

    def object_at(self, addr: int) -> str | None:
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0 and addr < self.code[i][1]:
            return self.code[i][2]
        return None


def _read_maps() -> list[tuple[int, int, str, str]]:
    out = []
    with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(None, 5)
            if len(parts) < 5:
                continue
            lo, hi = parts[0].split("-")
            out.append((int(lo, 16), int(hi, 16), parts[1], parts[5] if len(parts) > 5 else ""))
    return out


def _waiting_sp(tid: str) -> int | None:
    """The thread's stack pointer while it waits in a system call; None while it runs."""
    for i in range(_SAMPLES):
        try:
            with open(f"/proc/self/task/{tid}/syscall", encoding="ascii") as fh:
                fields = fh.read().split()
        except OSError:
            return None
        # "<nr> <6 args> <sp> <pc>" in a system call, "-1 <sp> <pc>" blocked outside one, "running".
        if fields and fields[0] != "running" and len(fields) >= 3:
            try:
                return int(fields[-2], 16)
            except ValueError:
                return None
        if i + 1 < _SAMPLES:
            time.sleep(_SAMPLE_PAUSE_S)
    return None


def native_origin(tid: str, trusted_roots: tuple[str, ...]) -> Origin:
    """Attribute one native thread of this process by the code its stack points into."""
    sp = _waiting_sp(tid)
    if sp is None:
        return Origin("unknown", "it never waited while sampled (or /proc is unreadable)")
    try:
        maps = _read_maps()
    except OSError as exc:
        return Origin("unknown", f"/proc/self/maps: {exc}")
    region = next(((lo, hi) for lo, hi, perms, _ in maps if lo <= sp < hi and "r" in perms), None)
    if region is None:
        return Origin("unknown", "its stack pointer is in no readable mapping")
    end = min(region[1], sp + _STACK_BYTES)
    start = sp - sp % 8
    try:
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        try:
            data = os.pread(fd, end - start, start)
        finally:
            os.close(fd)
    except OSError as exc:
        return Origin("unknown", f"its stack could not be read ({exc})")
    words = array("Q")
    words.frombytes(data[: len(data) - len(data) % 8])
    exec_maps = _ExecMaps(maps)
    objects = {obj for obj in map(exec_maps.object_at, words) if obj is not None}
    own = sorted(o for o in objects if not _installed(o, trusted_roots))
    if own:
        return Origin("kernel", "code of " + ", ".join(os.path.basename(o) for o in own[:4]))
    if any(_is_interpreter(o) for o in objects):
        # Runs Python but is no thread `threading` knows: started through `_thread` directly,
        # which libraries do not do (their threads come through `threading`, judged by their code).
        return Origin("kernel", "a Python thread started outside `threading` (interpreter code on its stack)")
    return Origin("runtime", ", ".join(sorted(os.path.basename(o) for o in objects)[:6]) or "no code pointers")


def _is_interpreter(path: str) -> bool:
    name = os.path.basename(path)
    return name.startswith("libpython") or os.path.realpath(path) == os.path.realpath(sys.executable)


def _installed(path: str, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path.removesuffix(" (deleted)"))
    return not path.endswith(" (deleted)") and (path.startswith(roots) or real.startswith(roots))
