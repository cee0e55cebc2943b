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
records what it saw as `contended` in score.json. A watched stage also does untimed work (the
checks of the timed outputs, waits for the device lock while sibling scorings compute, a frozen
agent's thaw), so where the timer's exclusive holds ran inside the window (`timed_section`, entered
by `scorer.gpu.lock.hold_gpu`) the load is read over those sections alone: what ran beside the
clock, not beside the bookkeeping. Only the standard library (and pynvml where present) is used.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

# Foreign load that makes a CPU timing contended, in cores: beyond the background of a quiet host
# (daemons, the orchestrator's own bookkeeping), below one busy neighbour.
CPU_FOREIGN_CORES = 0.5
# A foreign process whose SM utilisation NVML sampled at this or above during the window.
GPU_FOREIGN_SM_PCT = 5
# The scoring's own processes that can compute on the GPU in a timed stage (kernel, reference).
_OWN_GPU_PROCESSES = 2
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# NVML averages a process's SM use over its sampling period (about a sixth of a second); the
# period is read from the samples' own timestamps where there are enough of them.
_NVML_PERIOD_US = 167_000
_NVML_PERIOD_BOUNDS_US = (20_000, 1_000_000)
# Samples read from before the window, so the period can be estimated at its start.
_NVML_LOOKBACK_US = 2_000_000
_OPEN = threading.local()


@dataclass
class Contention:
    """What one watched window saw."""

    device: str
    window_s: float = 0.0
    # The timer's exclusive sections inside the window and their length: the load was read there.
    sections: int = 0
    timed_s: float = 0.0
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
        for key in ("window_s", "timed_s", "foreign_cpu_cores", "own_cpu_cores"):
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


def _schedstat_ms(pid: int, field: int) -> float | None:
    """One field of the main thread's /proc/<pid>/task/<pid>/schedstat (ns), in ms; None where
    it cannot be read."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as fh:
            return int(fh.read().split()[field]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


def thread_cpu_ms(pid: int) -> float | None:
    """CPU time of the process's main thread in ms, to the nanosecond (the scheduler's own count),
    where clock ticks are too coarse for a short stage."""
    return _schedstat_ms(pid, 0)


def run_delay_ms(pid: int) -> float | None:
    """How long the process's main thread has waited, runnable, for a CPU (ms; the scheduler's own
    count). A kernel without scheduler statistics reports 0 throughout."""
    return _schedstat_ms(pid, 1)


# --- GPU ------------------------------------------------------------------------------------------
def nvml_handle(gpu_key: str | None) -> tuple[Any, Any, str]:
    """(pynvml, device handle, "") or (None, None, why not)."""
    if not gpu_key:
        return None, None, "no GPU key"
    try:
        import pynvml
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


def sample_period_us(samples: list[Any]) -> int:
    """NVML's sampling period: the median gap between one process's consecutive samples."""
    stamps: dict[int, list[int]] = {}
    for s in samples:
        stamps.setdefault(int(s.pid), []).append(int(s.timeStamp))
    gaps = [b - a for ts in stamps.values() for a, b in pairwise(sorted(ts)) if b > a]
    if not gaps:
        return _NVML_PERIOD_US
    low, high = _NVML_PERIOD_BOUNDS_US
    return int(min(high, max(low, statistics.median(gaps))))


def in_sections(samples: list[Any], sections: list[tuple[int, int]], since_us: int) -> list[Any]:
    """The samples that speak for the timed sections: each covers the period before its
    timestamp, and counts when at least half of that period lay inside a section. Without
    sections, every sample of the window."""
    if not sections:
        return [s for s in samples if int(s.timeStamp) >= since_us]
    period = sample_period_us(samples)
    kept = []
    for s in samples:
        end = int(s.timeStamp)
        inside = sum(max(0, min(end, b) - max(end - period, a)) for a, b in sections)
        if inside * 2 >= period:
            kept.append(s)
    return kept


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


@dataclass
class _Mark:
    """The host's busy ticks and the judge tree's CPU ticks at one moment."""

    wall_us: int
    busy: int | None
    table: dict[int, tuple[int, int]]

    @classmethod
    def now(cls) -> _Mark:
        return cls(int(time.time() * 1e6), _busy_ticks(), process_table())


def _cpu_between(start: _Mark, end: _Mark) -> tuple[int, int] | None:
    """(host busy ticks, the judge tree's own ticks) from start to end; None where /proc/stat is unreadable."""
    if start.busy is None or end.busy is None:
        return None
    before = _own_ticks(start.table, own_tree(start.table))
    own = sum(max(0, t - before.get(pid, 0)) for pid, t in _own_ticks(end.table, own_tree(end.table)).items())
    return end.busy - start.busy, own


class _Window:
    """One open watch: the sections entered while it was open."""

    def __init__(self) -> None:
        self.sections: list[tuple[_Mark, _Mark]] = []


@contextmanager
def timed_section() -> Iterator[None]:
    """A section of timing (the timer's exclusive hold) inside every watch open in this thread;
    where a watch saw any, it reads foreign load over its sections alone. Outside a watch it
    costs nothing."""
    windows: list[_Window] = list(getattr(_OPEN, "windows", ()))
    if not windows:
        yield
        return
    start = _Mark.now()
    try:
        yield
    finally:
        end = _Mark.now()
        for window in windows:
            window.sections.append((start, end))


@contextmanager
def watch(device_type: str, gpu_key: str | None = None) -> Iterator[Contention]:
    """Watches the block; the yielded record is filled in when it ends."""
    seen = Contention(device_type)
    nvml, handle, why = nvml_handle(gpu_key) if device_type == "cuda" else (None, None, "")
    seen.gpu_note = why
    window = _Window()
    _OPEN.windows = [*getattr(_OPEN, "windows", ()), window]
    start, t0 = _Mark.now(), time.monotonic()
    try:
        yield seen
    finally:
        _OPEN.windows = [w for w in _OPEN.windows if w is not window]
        seen.window_s = time.monotonic() - t0
        end = _Mark.now()
        spans = window.sections or [(start, end)]
        seen.sections = len(window.sections)
        seen.timed_s = sum(b.wall_us - a.wall_us for a, b in window.sections) / 1e6
        cpu = [c for c in (_cpu_between(a, b) for a, b in spans) if c is not None]
        seconds = seen.timed_s if window.sections else seen.window_s
        if len(cpu) == len(spans) and seconds > 0:
            busy, own = sum(c[0] for c in cpu), sum(c[1] for c in cpu)
            seen.own_cpu_cores = own / _TICKS / seconds
            seen.foreign_cpu_cores = max(0.0, (busy - own) / _TICKS / seconds)
        if handle is not None:
            samples = _gpu_samples(nvml, handle, start.wall_us - _NVML_LOOKBACK_US)
            sections = [(a.wall_us, b.wall_us) for a, b in window.sections]
            seen.foreign_gpu, note = _foreign_gpu(in_sections(samples, sections, start.wall_us),
                                                  own_tree(end.table))
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
