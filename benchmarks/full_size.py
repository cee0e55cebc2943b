"""Published-size KernelBench-format problems through the whole scorer: time to verdict, peak host
memory and peak disk use.

    python benchmarks/full_size.py [--folder benchmarks/kernelbench_full/level1] [--tasks 23_Softmax,...]

Each task is scored once, fresh (score_kernel, no session), with the size-independent solution of
the CPU test folder, tests/suites/kernelbench_format/level1/solutions/<task>/kernel.py. Host
memory: the peak resident set (VmHWM) of the judge and of each of its worker processes, by role,
and their sum. Disk: the scoring's temporary folder (TMPDIR is pointed at a fresh one), polled.
Needs a CUDA GPU with room for the tensors (a 4096 x 393216 fp32 tensor is 6.4 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SOLUTIONS = ROOT / "tests/suites/kernelbench_format/level1/solutions"


def _folder_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _watch_peaks(tmp: Path, stop: threading.Event, peak: dict[str, Any]) -> None:
    while not stop.is_set():
        peak["disk"] = max(peak["disk"], _folder_bytes(tmp))
        for name, hwm in _descendant_peaks().items():
            peak["procs"][name] = max(peak["procs"].get(name, 0), hwm)
        stop.wait(0.5)


def _descendant_peaks() -> dict[str, int]:
    """Peak resident set (VmHWM) of each live descendant of this process, by what it is: the
    scorer's workers by role (`--role kernel`), anything else by its program name."""
    me, peaks = os.getpid(), {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) != me and int(stat[2]) != me:  # parent or process group is the judge
                continue
            status = Path(f"/proc/{pid}/status").read_text()
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        label = words[words.index("--role") + 1] if "--role" in words[:-1] else Path(words[0]).name if words else pid
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks[f"{label}:{pid}"] = int(line.split()[1]) * 1024
    return peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "benchmarks/kernelbench_full/level1")
    parser.add_argument("--tasks", default="23_Softmax,36_RMSNorm_")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="full-size-"))
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = str(tmp)
    from scorer import ScoreOptions, score_kernel
    from scorer.tasks.suites import load_suite

    suite = load_suite(str(args.folder))
    rows = []
    for task_id in [t for t in args.tasks.split(",") if t]:
        peak: dict[str, Any] = {"disk": 0, "procs": {}}
        stop = threading.Event()
        watcher = threading.Thread(target=_watch_peaks, args=(tmp, stop, peak), daemon=True)
        watcher.start()
        t0 = time.perf_counter()
        score = score_kernel(suite, task_id, SOLUTIONS / task_id / "kernel.py", device="cuda",
                             options=ScoreOptions(device="cuda"))
        wall = time.perf_counter() - t0
        stop.set()
        watcher.join()
        t = score.timing
        row = {"task": task_id, "verdict": score.verdict, "wall_s": round(wall, 1),
               "speedup": t.speedup if t else None, "kernel_ms": t.kernel_ms if t else None,
               "baseline_ms": t.baseline_ms if t else None, "judge_bound_ms": t.judge_bound_ms if t else None,
               "peak_worker_rss_gb": round(sum(peak["procs"].values()) / 1e9, 2),
               "peak_rss_gb_by_process": {k: round(v / 1e9, 2) for k, v in sorted(peak["procs"].items())},
               "judge_maxrss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9, 2),
               "peak_disk_gb": round(peak["disk"] / 1e9, 3), "error": (score.error or "")[:600],
               "hacks": score.hacks, "durations_s": score.durations_s}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"{'task':16s} {'verdict':10s} {'wall s':>7s} {'speedup':>8s} {'workers RSS GB':>14s} {'judge RSS GB':>12s} "
          f"{'disk GB':>8s}")
    for r in rows:
        print(f"{r['task']:16s} {r['verdict']:10s} {r['wall_s']:7.1f} {r['speedup'] or 0:8.3f} "
              f"{r['peak_worker_rss_gb']:14.2f} {r['judge_maxrss_gb']:12.2f} {r['peak_disk_gb']:8.3f}")
        print("  peak RSS GB by process: " + ", ".join(f"{k} {v:.2f}" for k, v in r["peak_rss_gb_by_process"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
