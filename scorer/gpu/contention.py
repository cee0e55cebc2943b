"""Foreign compute on the device while a judge times: what exclusive timing (scorer/gpu/freeze.py)
cannot prevent (work outside the sweep, a sandbox with no freezer, a process a kernel detached).

- CPU: the host's busy time from /proc/stat over the window, less the CPU time of the judge's own
  process tree (the judge, its fork server and workers), in cores. /proc/stat is the host's also
  inside a container, so a scoring sandbox sees its neighbours.
- GPU: NVML's per-process utilisation samples since the window began (`pynvml`, from the
  nvidia-ml-py package, where it is importable), for processes outside the judge's tree. Where
  the judge runs in a pid namespace of its own (a container) NVML's pids cannot be matched to
  its own; then more computing processes than the scoring's own two count as foreign.

The judge watches the timed stages, times them once more where it saw foreign compute, and
records what it saw as `contended` in score.json. Only the standard library (and pynvml where
present) is used.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

# Foreign load that makes a CPU timing contended, in cores: beyond the background of a quiet host
# (daemons, the orchestrator's own bookkeeping), below one busy neighbour.
CPU_FOREIGN_CORES = 0.5
# A foreign process whose SM utilisation NVML sampled at this or above during the window.
GPU_FOREIGN_SM_PCT = 5
# The scoring's own processes that can compute on the GPU in a timed stage (kernel, reference).
_OWN_GPU_PROCESSES = 2
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Contention:
    """What one watched window saw."""

    device: str
    window_s: float = 0.0
    foreign_cpu_cores: float | None = None
    own_cpu_cores: float | None = None
    foreign_gpu: list[dict[str, Any]] = field(default_factory=list)
    gpu_note: str = ""

    @property
    def contended(self) -> bool:
        if self.device == "cpu":
            return (self.foreign_cpu_cores or 0.0) >= CPU_FOREIGN_CORES
        return bool(self.foreign_gpu)

    def evidence(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if v not in (None, "", [])}
        for key in ("window_s", "foreign_cpu_cores", "own_cpu_cores"):
            if isinstance(data.get(key), float):
                data[key] = round(data[key], 3)
        return data


# --- CPU ------------------------------------------------------------------------------------------
def _busy_ticks() -> int | None:
    try:
        with open("/proc/stat") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user already)
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields[:8]) - idle


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, CPU ticks of the process and its reaped children)."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        rest = text[text.rfind(")") + 2:].split()
        try:
            # fields after the name: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
            table[int(name)] = (int(rest[1]), sum(int(v) for v in rest[11:15]))
        except (IndexError, ValueError):
            continue
    return table


def own_tree(table: dict[int, tuple[int, int]], root: int | None = None) -> set[int]:
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in tree:
            continue
        tree.add(pid)
        todo += children.get(pid, [])
    return tree


def _own_ticks(table: dict[int, tuple[int, int]], tree: set[int]) -> dict[int, int]:
    return {pid: table[pid][1] for pid in tree if pid in table}


def tree_cpu_ms(root: int) -> float:
    """CPU time of `root` and every process below it (reaped children included), in ms."""
    table = process_table()
    return sum(_own_ticks(table, own_tree(table, root)).values()) * 1e3 / _TICKS


def run_delay_ms(pid: int) -> float | None:
    """How long the process's main thread has waited, runnable, for a CPU (ms; the scheduler's own
    count, /proc/<pid>/task/<pid>/schedstat's second field). None where it cannot be read; a
    kernel without scheduler statistics reports 0 throughout."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as fh:
            return int(fh.read().split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


# --- GPU ------------------------------------------------------------------------------------------
def nvml_handle(gpu_key: str | None) -> tuple[Any, Any, str]:
    """(pynvml, device handle, "") or (None, None, why not)."""
    if not gpu_key:
        return None, None, "no GPU key"
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None, None, "pynvml not importable (nvidia-ml-py): GPU contention not watched"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError has many subclasses; none is the judge's failure
        return None, None, f"NVML unavailable: {exc}"
    for candidate in (gpu_key, f"GPU-{gpu_key}", gpu_key.removeprefix("GPU-")):
        try:
            return pynvml, pynvml.nvmlDeviceGetHandleByUUID(candidate), ""
        except Exception:
            continue
    return None, None, f"NVML knows no GPU {gpu_key}"


def pid_namespace_is_nvmls() -> bool:
    """NVML reports pids of the host's namespace; ours are comparable only in that one."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    return len(line.split()) == 2
    except OSError:
        pass
    return True


def _gpu_samples(nvml: Any, handle: Any, since_us: int) -> list[Any]:
    try:
        return list(nvml.nvmlDeviceGetProcessUtilization(handle, since_us))
    except Exception:  # NVML_ERROR_NOT_FOUND: no sample in the window
        return []


def _foreign_gpu(samples: list[Any], tree: set[int]) -> tuple[list[dict[str, Any]], str]:
    busiest: dict[int, dict[str, Any]] = {}
    for s in samples:
        pid, sm = int(s.pid), int(s.smUtil)
        entry = busiest.setdefault(pid, {"pid": pid, "sm_pct": 0, "mem_pct": 0})
        entry["sm_pct"] = max(entry["sm_pct"], sm)
        entry["mem_pct"] = max(entry["mem_pct"], int(s.memUtil))
    computing = [e for e in busiest.values() if e["sm_pct"] >= GPU_FOREIGN_SM_PCT]
    if pid_namespace_is_nvmls():
        return [e for e in computing if e["pid"] not in tree], ""
    note = "judge in its own pid namespace: processes beyond the scoring's own two count as foreign"
    if len(computing) <= _OWN_GPU_PROCESSES:
        return [], note
    return sorted(computing, key=lambda e: e["sm_pct"])[: len(computing) - _OWN_GPU_PROCESSES], note


@contextmanager
def watch(device_type: str, gpu_key: str | None = None) -> Iterator[Contention]:
    """Watches the block; the yielded record is filled in when it ends."""
    seen = Contention(device_type)
    nvml, handle, why = nvml_handle(gpu_key) if device_type == "cuda" else (None, None, "")
    seen.gpu_note = why
    start_table, busy0 = process_table(), _busy_ticks()
    start_own = _own_ticks(start_table, own_tree(start_table))
    since_us, t0 = int(time.time() * 1e6), time.monotonic()
    try:
        yield seen
    finally:
        seen.window_s = time.monotonic() - t0
        table, busy1 = process_table(), _busy_ticks()
        tree = own_tree(table)
        if busy0 is not None and busy1 is not None and seen.window_s > 0:
            own = sum(max(0, t - start_own.get(pid, 0)) for pid, t in _own_ticks(table, tree).items())
            seen.own_cpu_cores = own / _TICKS / seen.window_s
            seen.foreign_cpu_cores = max(0.0, (busy1 - busy0 - own) / _TICKS / seen.window_s)
        if handle is not None:
            seen.foreign_gpu, note = _foreign_gpu(_gpu_samples(nvml, handle, since_us), tree)
            seen.gpu_note = note


def wait_for_quiet(limit_s: float, window_s: float = 0.5) -> bool:
    """On a CPU: waits, window by window, until one saw less than CPU_FOREIGN_CORES of foreign load,
    for at most `limit_s`. True when it did."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with watch("cpu") as seen:
            time.sleep(window_s)
        if not seen.contended:
            return True
    return False
