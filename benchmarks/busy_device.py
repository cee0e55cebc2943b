"""What a busy neighbour does to the scorer's speedups, with and without exclusive timing.

Reference solutions are scored three times, each time in a fresh scoring session (so baselines
are timed again):
  quiet      nothing of this benchmark beside the scorer;
  busy       a synthetic agent hammers the same device in bursts (CPU: every core spinning in a
             real process sandbox or docker container; GPU: a CUDA matmul loop in a process
             sandbox), registered with no freeze server: only detection (scorer/gpu/contention.py);
  exclusive  the same agent, registered with a freeze server (scorer/gpu/freeze.py): frozen while
             a judge times on its device.
It prints, per kernel, the speedups and their change against quiet, whether the scoring was
flagged contended, and what the agent's wall-time budget counted (its frozen time left out).

    python benchmarks/busy_device.py                           # CPU, the demo suite, process sandbox
    python benchmarks/busy_device.py --agent docker            # the burner in a docker container
    python benchmarks/busy_device.py --device cuda --suites demo,kernelbench --json OUT/busy.json

The CPU run fits CI's machine class (2 cores) in a few minutes at its defaults. A box with other
work on it is never quiet: the quiet row is what that box gives.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harnesses.budget import Budget, BudgetConfig  # noqa: E402
from sandbox import SandboxConfig, open_sandbox  # noqa: E402
from scorer.gpu import freeze  # noqa: E402
from scorer.gpu.lock import LOCK_DIR_ENV, device_lock_key  # noqa: E402
from scorer.judge.session import ScoringSession  # noqa: E402
from scorer.options import ScoreOptions  # noqa: E402
from scorer.tasks.suites import load_suite  # noqa: E402

CPU_BURST = """
import multiprocessing, sys, time
def spin(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass
on, off, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
while True:
    procs = [multiprocessing.Process(target=spin, args=(on,)) for _ in range(n)]
    for p in procs: p.start()
    for p in procs: p.join()
    time.sleep(off)
"""
GPU_BURST = """
import sys, time, torch
on, off = float(sys.argv[1]), float(sys.argv[2])
x = torch.randn(8192, 8192, device="cuda")
while True:
    end = time.time() + on
    while time.time() < end:
        y = x @ x
        torch.cuda.synchronize()
    time.sleep(off)
"""
CONDITIONS = ("quiet", "busy", "exclusive")


def kernels(suite_names: list[str], only: set[str], device: str, limit: int | None = None) -> list[tuple[Any, str, Path]]:
    found: list[tuple[Any, str, Path]] = []
    for name in suite_names:
        suite = load_suite(name)
        if device not in suite.targets:
            continue
        for task_id, task in sorted(suite.tasks.items()):
            if (only and task_id not in only) or task.solution is None or not Path(task.solution).is_file():
                continue
            if device == "cpu" and task.cuda_only:
                continue
            found.append((suite, task_id, Path(task.solution)))
    return found[:limit] if limit else found


def score_in_child(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The scorings run in a child process: a judge counts its own process tree's CPU as its own,
    and the agent's sandbox is a child of this process (as in a sweep, where both are the
    orchestrator's)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [sys.executable, __file__, "--score-rows", out.name] + [a for a in sys.argv[1:] if a != "--score-rows"]
        subprocess.run(argv, check=True)
        return json.loads(Path(out.name).read_text())


def score_all(items: list[tuple[Any, str, Path]], options: ScoreOptions, device: str) -> list[dict[str, Any]]:
    rows = []
    with ScoringSession(options, max_references=1) as session:
        for suite, task_id, path in items:
            t0 = time.perf_counter()
            score = session.score(suite, task_id, path, device=device)
            timing = score.timing
            rows.append({"suite": suite.name, "task": task_id, "verdict": score.verdict,
                         "speedup": score.speedup, "kernel_ms": timing.kernel_ms if timing else None,
                         "baseline_ms": timing.baseline_ms if timing else None, "contended": score.contended,
                         "retimed": bool(score.contention.get("retimed")),
                         "foreign": _foreign(score.contention.get("windows") or []),
                         "frozen": score.contention.get("frozen", {}), "seconds": round(time.perf_counter() - t0, 2),
                         "error": (score.error or "")[-600:]})
            print(f"  {suite.name}/{task_id}: {score.verdict} speedup {score.speedup} contended {score.contended}"
                  + (f"\n    {(score.error or '').strip().splitlines()[-1][:300]}" if score.error else ""), flush=True)
    return rows


def _foreign(windows: list[dict[str, Any]]) -> float | None:
    """The most foreign load any watched window saw: CPU cores, or on a GPU the busiest foreign
    process's SM utilisation in percent."""
    if not windows:
        return None
    if windows[0].get("device") == "cuda":
        return float(max((e["sm_pct"] for w in windows for e in w.get("foreign_gpu", [])), default=0))
    seen = [w["foreign_cpu_cores"] for w in windows if w.get("foreign_cpu_cores") is not None]
    return max(seen) if seen else None


class Agent:
    """The synthetic agent: a sandbox running the burst loop, optionally registered for freezing,
    with a wall-time budget that leaves its frozen time out."""

    def __init__(self, backend: str, device: str, burst: tuple[float, float], server: freeze.FreezeServer | None):
        self.backend, self.device, self.burst, self.server = backend, device, burst, server
        self.budget = Budget(BudgetConfig(wall_time_s=None))
        self.wall_s = self.frozen_s = 0.0
        self.registered = False
        self._ready, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.error: str | None = None

    def __enter__(self) -> Agent:
        self._thread.start()
        if not self._ready.wait(120):
            raise RuntimeError(f"the agent sandbox did not start: {self.error}")
        if self.error:
            raise RuntimeError(self.error)
        time.sleep(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)

    async def _run(self) -> None:
        gpus: Any = [0] if self.device == "cuda" else "none"
        # A CUDA process holds a few GB of host memory for its context and libraries.
        cfg = SandboxConfig(backend=self.backend, gpus=gpus, cpus=float(os.cpu_count() or 1),
                            memory="16g" if self.device == "cuda" else "4g")
        try:
            async with open_sandbox(cfg) as sb:
                cgroup = getattr(sb, "freezer_cgroup", lambda: None)()
                reg = None
                if self.server is not None:
                    if cgroup is None:
                        raise RuntimeError(f"no freezer cgroup: {sb.info.not_enforced.get('freeze')}")
                    key = freeze.CPU_DEVICE if self.device == "cpu" else (device_lock_key("cuda:0") or freeze.ALL_DEVICES)
                    reg = self.server.register(f"busy-agent-{os.getpid()}", cgroup, [key])
                    self.registered = True
                    self.budget.exclude_paused(reg.frozen_s)
                script, args = (CPU_BURST, f"{self.burst[0]} {self.burst[1]} {os.cpu_count() or 1}") \
                    if self.device == "cpu" else (GPU_BURST, f"{self.burst[0]} {self.burst[1]}")
                await sb.write_file("burst.py", script)
                self.budget.start()
                t0 = time.monotonic()
                job = asyncio.create_task(sb.exec(f"python3 burst.py {args}", timeout=3600))
                self._ready.set()
                while not self._stop.is_set() and not job.done():
                    await asyncio.sleep(0.1)
                self.budget.stop()
                self.wall_s = time.monotonic() - t0
                job.cancel()
                if reg is not None and self.server is not None:
                    self.frozen_s = self.server.unregister(reg)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._ready.set()


def run(args: argparse.Namespace) -> dict[str, Any]:
    if not kernels(args.suites.split(","), {t for t in args.tasks.split(",") if t}, args.device, args.max_kernels):
        raise SystemExit("no reference solutions selected; check --suites and --tasks")
    lock_dir = Path(tempfile.mkdtemp(prefix="busy-device-locks-"))
    lock_dir.chmod(0o1777)  # as the default lock folder: the walled kernel worker runs under a uid of its own
    os.environ[LOCK_DIR_ENV] = str(lock_dir)
    burst = (args.burst_on, args.burst_off)
    results: dict[str, Any] = {"device": args.device, "agent": args.agent, "burst_s": burst, "rows": {}, "agents": {}}
    for condition in CONDITIONS:
        if condition not in args.conditions.split(","):
            continue
        print(f"== {condition}", flush=True)
        if condition == "quiet":
            results["rows"][condition] = score_in_child(args)
            continue
        try:
            with freeze.FreezeServer(lock_dir) if condition == "exclusive" else _nothing() as server:
                with Agent(args.agent, args.device, burst, server) as agent:
                    results["rows"][condition] = score_in_child(args)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:  # the other conditions still count
            results.setdefault("errors", {})[condition] = f"{type(exc).__name__}: {exc}"
            print(f"  {condition} not run: {exc}", flush=True)
            continue
        results["agents"][condition] = {"wall_s": round(agent.wall_s, 2), "frozen_s": round(agent.frozen_s, 2),
                                        "budget_wall_time_s": round(agent.budget.elapsed_s, 2),
                                        "registered": agent.registered}
    return results


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def table(results: dict[str, Any]) -> str:
    rows = results["rows"]
    quiet = {(r["suite"], r["task"]): r for r in rows.get("quiet", [])}
    lines = ["| kernel | quiet speedup | busy speedup (change) | exclusive speedup (change) | baseline ms quiet / busy / excl. "
             "| foreign load quiet / busy / excl. | contended quiet / busy / excl. | verdict quiet / busy / excl. |",
             "|---|---|---|---|---|---|---|---|"]
    changes: dict[str, list[float]] = {c: [] for c in ("busy", "exclusive")}
    for r in rows.get("quiet", []) or rows.get("busy", []) or rows.get("exclusive", []):
        key = (r["suite"], r["task"])
        q = quiet.get(key, {}).get("speedup")
        cells = [f"{q:.3g}" if q else "-"]
        for condition in ("busy", "exclusive"):
            other = next((o for o in rows.get(condition, []) if (o["suite"], o["task"]) == key), None)
            s = other and other["speedup"]
            if s and q:
                change = s / q - 1
                changes[condition].append(abs(change))
                cells.append(f"{s:.3g} ({change:+.0%})")
            else:
                cells.append(f"{s:.3g}" if s else "-")
        found = [quiet.get(key)] + [next((o for o in rows.get(c, []) if (o["suite"], o["task"]) == key), None)
                                    for c in ("busy", "exclusive")]
        base = " / ".join(f"{o['baseline_ms']:.3g}" if o and o["baseline_ms"] else "-" for o in found)
        load = " / ".join(f"{o['foreign']:.2g}" if o and o.get("foreign") is not None else "-" for o in found)
        flags = " / ".join("-" if o is None else ("yes" if o["contended"] else "no") for o in found)
        # An honest solution rejected under load is the benchmark's most important finding: never
        # hidden behind its speedup.
        verdicts = " / ".join("-" if o is None else o["verdict"] for o in found)
        lines.append(f"| {key[0]}/{key[1]} | " + " | ".join(cells) + f" | {base} | {load} | {flags} | {verdicts} |")
    for condition, values in changes.items():
        if values:
            lines.append(f"median |change| against quiet, {condition}: {statistics.median(values):.0%} "
                         f"(max {max(values):.0%}, {len(values)} kernels)")
    for condition, error in results.get("errors", {}).items():
        lines.append(f"{condition}: not run: {error}")
    for condition, agent in results["agents"].items():
        lines.append(f"agent ({condition}): wall {agent['wall_s']} s, frozen {agent['frozen_s']} s, "
                     f"budget counted {agent['budget_wall_time_s']} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--suites", default=None, help="default: demo on cpu, demo,kernelbench on cuda")
    parser.add_argument("--tasks", default="", help="comma list of task ids (default: every reference solution)")
    parser.add_argument("--max-kernels", type=int, default=None,
                        help="score the first N selected solutions (default: all on cpu, 16 on cuda: three "
                             "conditions fit one 10-minute device call)")
    parser.add_argument("--agent", default="process", choices=("process", "docker"), help="the burner's sandbox (CPU)")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--burst-on", type=float, default=1.0, help="seconds the agent computes in a burst")
    parser.add_argument("--burst-off", type=float, default=0.5, help="seconds it rests between bursts")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--score-rows", type=Path, default=None, help=argparse.SUPPRESS)  # the scoring child
    args = parser.parse_args()
    if args.suites is None:
        args.suites = "demo" if args.device == "cpu" else "demo,kernelbench"
    if args.max_kernels is None and args.device == "cuda" and not args.tasks:
        args.max_kernels = 16
    if args.repetitions is None:
        args.repetitions = 5 if args.device == "cpu" else 100
    if args.warmup is None:
        args.warmup = 1 if args.device == "cpu" else 10
    if args.device == "cuda" and args.agent == "docker":
        raise SystemExit("--agent docker is for the CPU run; the GPU burner runs in a process sandbox")
    if args.score_rows is not None:
        items = kernels(args.suites.split(","), {t for t in args.tasks.split(",") if t}, args.device, args.max_kernels)
        if not items:
            raise SystemExit("no reference solutions selected; check --suites and --tasks")
        options = ScoreOptions(device=args.device, repetitions=args.repetitions, warmup=args.warmup, seeds=args.seeds)
        args.score_rows.write_text(json.dumps(score_all(items, options, args.device)))
        return
    results = run(args)
    print(table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
