"""The scorer's own overhead per kernel: process spawn, data transfer and checks, beside the
compile (load) and timed work it wraps.

    TRITON_INTERPRET=1 .venv/bin/python benchmarks/scorer_overhead.py --device cpu
    python benchmarks/scorer_overhead.py --device cuda --full-shapes      # on a GPU box

Transfer is each stage's wall time minus the time the worker spent in its handler (`worker_s`),
i.e. serialisation, pipe traffic and deserialisation on both ends.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scorer import ScoreOptions, score_kernel  # noqa: E402
from scorer.tasks.suites import load_suite  # noqa: E402

_STAGES = ("reference", "baseline_timing", "load", "correctness", "timing")
COLUMNS = ("task", "verdict", "total", "spawn", "transfer", "checks", "overhead", "compile", "timed", "ref+trials")


def breakdown(d: dict[str, float]) -> dict[str, float]:
    spawn = d.get("reference_spawn", 0.0) + d.get("kernel_spawn", 0.0)
    transfer = sum(max(0.0, d.get(s, 0.0) - d.get(f"{s}_worker", 0.0)) for s in _STAGES)
    checks = d.get("checks", 0.0) + d.get("static", 0.0) + d.get("source", 0.0)
    return {
        "total": d.get("total", 0.0), "spawn": spawn, "transfer": transfer, "checks": checks,
        "overhead": spawn + transfer + checks,
        "compile": d.get("load_worker", 0.0),
        "timed": d.get("timing_worker", 0.0) + d.get("baseline_timing_worker", 0.0),
        "ref+trials": d.get("reference_worker", 0.0) + d.get("correctness_worker", 0.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="demo")
    parser.add_argument("--tasks", nargs="*", default=None, help="default: every task with a solution")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--full-shapes", action="store_true", help="task shapes, not the small CPU test shapes")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    tasks = args.tasks or [t for t, task in suite.tasks.items() if task.solution is not None]
    options = ScoreOptions(device=args.device, repetitions=args.repetitions, warmup=args.warmup,
                           use_test_shapes=False if args.full_shapes else None)
    print(" ".join(f"{c:>11}" for c in COLUMNS) + "   (seconds)")
    rows = []
    for task in tasks:
        solution = suite.tasks[task].solution
        if solution is None:
            continue
        score = score_kernel(suite, task, solution, device=args.device, options=options)
        row = breakdown(score.durations_s)
        rows.append({"task": task, "verdict": score.verdict, **row})
        print(f"{task:>11} {score.verdict:>11} " + " ".join(f"{row[c]:>11.3f}" for c in COLUMNS[2:]))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
