"""Whose out-of-memory it was: the kernel's, or that of the processes beside its scoring.

A scoring is sized (scorer/gpu/memory.py) to fit in USABLE_SHARE of the device by itself.
Other scorings on the same GPU (a sweep scores several at once), an agent's benchmark or any other
program take memory from that promise: on an 80 GB H100 with eight scorings at once an honest swish
ran out of memory in `torch.empty` and was given `runtime_error`. A verdict must not depend on who
else was on the device.

The moment the kernel's worker reports an out-of-memory, the judge reads the device's memory
through NVML (its own view: nothing the kernel's process reports is used but the size it says it
asked for, which can only make the kernel's case worse) and blames the neighbours only when both
hold:
- processes outside this scoring held more than the headroom the fit leaves (1 - USABLE_SHARE of
  the device): they ate into what the scoring was promised;
- this scoring's own processes, with the allocation that failed, stayed within USABLE_SHARE: the
  kernel asked for no more than it would have had alone.
Then the scoring fails as the scorer's (ScorerBroken: the sweep retries it, the CLI says so), not
with a verdict. A kernel that fakes an out-of-memory gains at most that retry, and only on a
crowded device. Where NVML cannot tell (no pynvml, pids of another namespace, no per-process
figures) the verdict stands, as before, with what could not be read written beside it.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from scorer.gpu.contention import nvml_handle, own_tree, pid_namespace_is_nvmls, process_table
from scorer.gpu.memory import USABLE_SHARE

_GIB = 1 << 30
# torch: "Tried to allocate 2.00 GiB." (also MiB, KiB, B)
_TRIED = re.compile(r"Tried to allocate ([0-9.]+) ?(B|KiB|MiB|GiB|TiB)")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


@dataclass(frozen=True)
class DeviceMemory:
    """The device's memory as NVML saw it: total, and what this scoring's processes and all
    others held (bytes)."""
    total: int
    own: int
    foreign: int
    foreign_processes: int

    def describe(self) -> str:
        return (f"device memory at the failure: {self.own / _GIB:.1f} GiB this scoring's, {self.foreign / _GIB:.1f} GiB "
                f"held by {self.foreign_processes} other process(es), of {self.total / _GIB:.1f} GiB")


def requested_bytes(error: str) -> int:
    """The size of the allocation that failed, where the error names it (torch's message), else 0."""
    found = _TRIED.search(error)
    return int(float(found.group(1)) * _UNITS[found.group(2)]) if found else 0


def crowded_out(memory: DeviceMemory, requested: int, usable_share: float = USABLE_SHARE) -> bool:
    """True when the neighbours, not the kernel, took the memory the scoring was sized for."""
    headroom = (1.0 - usable_share) * memory.total
    return memory.foreign > headroom and memory.own + requested <= usable_share * memory.total


def read_device_memory(gpu_key: str | None, roots: Collection[int] = ()) -> tuple[DeviceMemory | None, str]:
    """(the reading, "") or (None, why NVML could not tell own from foreign memory). `roots`: this
    scoring's worker processes, whose trees are its own; without them the judge's whole tree. A
    session scoring several kernels at once forks every scoring's workers under one judge: on an
    H100 with 8 at once an honest gelu's out-of-memory read as "75.2 GiB this scoring's, 0.0 GiB
    held by 0 other process(es)", the seven other scorings counted as its own."""
    nvml, handle, why = nvml_handle(gpu_key)
    if handle is None:
        return None, why
    if not pid_namespace_is_nvmls():
        return None, "judge in its own pid namespace: NVML's pids cannot be told apart from its own"
    try:
        total = int(nvml.nvmlDeviceGetMemoryInfo(handle).total)
        processes = list(nvml.nvmlDeviceGetComputeRunningProcesses(handle))
    except Exception as exc:  # NVMLError's subclasses: none is the kernel's doing
        return None, f"NVML could not read the device's memory: {exc}"
    table = process_table()
    tree = set().union(*(own_tree(table, root) for root in roots)) if roots else own_tree(table)
    return split_by_owner(total, processes, tree)


def split_by_owner(total: int, processes: list[Any], tree: set[int]) -> tuple[DeviceMemory | None, str]:
    own = foreign = others = 0
    for p in processes:
        used = getattr(p, "usedGpuMemory", None)
        if not isinstance(used, int):  # NVML_VALUE_NOT_AVAILABLE comes back as None
            return None, "NVML gives no per-process memory on this host"
        if int(p.pid) in tree:
            own += used
        else:
            foreign, others = foreign + used, others + 1
    return DeviceMemory(total, own, foreign, others), ""
