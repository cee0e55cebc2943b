"""How the GPU lock's shared holders shape a concurrent run's wall time.

Scorers share one GPU: timing holds the GPU lock exclusively, every other GPU step (a
reference's outputs, correctness, comparisons) holds it shared. A run of many scorings takes at
least the sum of its exclusive sections; what it takes beyond that is time in which only shared
holders held the lock, or nobody did. This replays scorings made of host, shared and exclusive
steps (sleeps standing in for GPU work) through the real lock (scorer/gpu/lock.py), real flocks and
one thread per scorer, and reports the wall time and the lock's occupancy (scorer/gpu/lock_trace.py),
with shared holders that keep the lock for a whole step and with holders that let a waiting timer
in between pieces of it (`GpuLock.yield_to_timer`, as the workers do between trials).

    python benchmarks/gpu_lock_policy.py                       # the H200's stage means (H200_MEANS)
    python benchmarks/gpu_lock_policy.py --durations OUT/suite_kernelbench.json  # a gpu_check run

The step durations are the H200's (docs/results/2026-12-04-timers-first-lock-deeper-pool.md), scaled down by --scale to keep
the replay short; figures are reported scaled back up. Sleeps do not slow each other the way
concurrent GPU work does, so the figures rank structures; they do not predict the H200's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scorer.gpu.lock import LOCK_DIR_ENV, TRACE_ENV, GpuLock  # noqa: E402
from scorer.gpu.lock_trace import occupancy, read_trace  # noqa: E402

Step = tuple[str, float]  # ("host" | "shared" | "exclusive", seconds)

# The H200's means over the 47 suite scorings (durations_s, seconds; the run of
# docs/results/2026-12-04-timers-first-lock-deeper-pool.md): the worker-side figures where the
# judge's include lock waits. A reference's host work (spawn, build, the rest of its
# preparation) and the compile inside correctness are host steps; the GPU part of correctness is
# taken as half of its worker time.
H200_MEANS = {
    "reference_host": 5.4, "reference_outputs": 0.41, "kernel_host": 0.55, "compile": 2.0, "correctness_gpu": 2.0,
    "compare": 1.99, "release": 0.06, "baseline_timing": 0.67, "timing": 0.52, "compare_timed": 0.02,
    "reference_batch": 0.30, "batch_collect": 0.05, "kernel_batch": 0.12, "batch_verify": 0.07, "close": 0.3,
}
COLD_SPAWN_S = 7.0  # the first scoring of each scorer starts its reference worker cold


def from_durations(d: dict[str, float]) -> dict[str, float]:
    """A scoring's step figures from a gpu_check row's durations_s."""
    corr = d.get("correctness_worker", 0.0)
    ref_total = d.get("reference", 0.0)
    outputs = d.get("reference_outputs_worker", 0.0)
    return {
        "reference_host": max(0.0, ref_total - outputs) + d.get("reference_spawn", 0.0),
        "reference_outputs": outputs, "kernel_host": d.get("kernel_setup", 0.0) + d.get("load", 0.0),
        "compile": corr / 2, "correctness_gpu": corr / 2, "compare": d.get("compare", 0.0),
        "release": d.get("release", 0.0), "baseline_timing": d.get("baseline_timing", 0.0),
        "timing": d.get("timing", 0.0), "compare_timed": d.get("compare_timed", 0.0),
        "reference_batch": d.get("reference_batch", 0.0), "batch_collect": 0.05,
        "kernel_batch": d.get("batch_setup", 0.0) + d.get("batch", 0.0) + d.get("batch_attach", 0.0)
        + d.get("batch_sample", 0.0), "batch_verify": d.get("batch_verify", 0.0), "close": 0.3,
    }


def scoring_steps(f: dict[str, float]) -> list[Step]:
    """The judge's sequence of lock holds for one scoring (scorer/judge/scoring.py)."""
    return [("host", f["reference_host"]), ("shared", f["reference_outputs"]), ("host", f["kernel_host"]),
            ("host", f["compile"]), ("shared", f["correctness_gpu"]), ("shared", f["compare"] + f["release"]),
            ("exclusive", f["baseline_timing"]), ("exclusive", f["timing"]), ("shared", f["compare_timed"]),
            ("exclusive", f["reference_batch"]), ("shared", f["batch_collect"]), ("exclusive", f["kernel_batch"]),
            ("shared", f["batch_verify"]), ("shared", f["close"])]


def workload(means: dict[str, float], n: int, seed: int) -> list[dict[str, float]]:
    """n scorings around the means (each step scaled by its own factor in [0.5, 1.5])."""
    rng = random.Random(seed)
    return [{k: v * rng.uniform(0.5, 1.5) for k, v in means.items()} for _ in range(n)]


def replay(scorings: Iterable[dict[str, float]], piece_s: float | None, scorers: int, scale: float) -> dict[str, Any]:
    """Wall time and lock occupancy of the scorings, `scorers` at once; a shared step is held whole
    (piece_s None) or let go to a waiting timer every piece_s seconds."""
    jobs = list(scorings)
    with tempfile.TemporaryDirectory(prefix="kernelarena-lockbench-") as tmp:
        os.environ[LOCK_DIR_ENV] = tmp
        trace = Path(tmp) / "trace.jsonl"
        os.environ[TRACE_ENV] = str(trace)
        cold = threading.local()

        def hold(kind: str, seconds: float) -> None:
            lock = GpuLock("GPU-bench", shared=kind == "shared")
            try:
                lock.acquire()
                piece = piece_s if kind == "shared" and piece_s else seconds
                left = seconds
                while left > 0:
                    time.sleep(min(piece, left) * scale)
                    left -= piece
                    if left > 0:
                        lock.yield_to_timer(lambda: None)
            finally:
                lock.close()

        def run(figures: dict[str, float]) -> None:
            if not getattr(cold, "started", False):
                cold.started = True
                time.sleep(COLD_SPAWN_S * scale)
            for kind, seconds in scoring_steps(figures):
                if kind == "host":
                    time.sleep(seconds * scale)
                else:
                    hold(kind, seconds)

        t0 = time.monotonic()
        try:
            with ThreadPoolExecutor(scorers) as pool:
                list(pool.map(run, jobs))
        finally:
            os.environ.pop(TRACE_ENV, None)
            os.environ.pop(LOCK_DIR_ENV, None)
        wall = time.monotonic() - t0
        held = occupancy(read_trace(trace))
    assert held is not None
    return {"wall_s": wall / scale, "exclusive_s": held.exclusive_s / scale, "shared_only_s": held.shared_only_s / scale,
            "idle_s": held.idle_s / scale, "timer_behind_shared_s": held.timer_queued_behind_shared_s / scale}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=Path, action="append", default=[],
                        help="a gpu_check suite JSON (rows with durations_s); repeatable; default: the H200's means")
    parser.add_argument("--scorings", type=int, default=47)
    parser.add_argument("--scorers", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--piece-s", type=float, default=0.25, help="a yielding holder's piece of GPU work (s)")
    parser.add_argument("--scale", type=float, default=0.1, help="replay speed: 0.1 runs ten times faster than the H200")
    parser.add_argument("--compare-s", type=float, default=None, help="replace the comparison's shared hold (s)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    if args.durations:
        rows = [r for path in args.durations for r in json.loads(path.read_text()) if r.get("durations_s")]
        scorings = [from_durations(r["durations_s"]) for r in rows]
    else:
        scorings = workload(H200_MEANS, args.scorings, args.seed)
    if args.compare_s is not None:
        scorings = [{**s, "compare": args.compare_s} for s in scorings]
    print(f"{len(scorings)} scorings through {GpuLock.__module__}.{GpuLock.__name__}, replayed at {args.scale:g}x "
          "(seconds below are the H200's)")
    print(f"{'at once':>8} {'shared holds':>14} {'wall s':>8} {'exclusive':>10} {'shared only':>12} {'idle':>8} "
          f"{'timer behind shared':>20}")
    for scorers in args.scorers:
        for piece in (None, args.piece_s):
            runs = [replay(scorings, piece, scorers, args.scale) for _ in range(args.repeats)]
            mid = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            how = "whole" if piece is None else f"{piece:g} s pieces"
            print(f"{scorers:>8} {how:>14} {mid['wall_s']:>8.1f} {mid['exclusive_s']:>10.1f} {mid['shared_only_s']:>12.1f} "
                  f"{mid['idle_s']:>8.1f} {mid['timer_behind_shared_s']:>20.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
