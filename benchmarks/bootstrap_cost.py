"""What the leaderboard's bootstrap intervals cost (orchestrator.bootstrap).

    python benchmarks/bootstrap_cost.py [--resamples N] [--samples K] [--repeats R]

Synthetic results with a fixed seed (30 % incorrect, log-normal speedups) for models x tasks of
10 x 40 and 50 x 300; prints the best of R wall-clock times of `bootstrap()` (every model's
resampled scores and geometric means) plus the intervals and adjacent-rank confidences read from it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from orchestrator.bootstrap import bootstrap  # noqa: E402
from scorer.aggregate import KernelResult  # noqa: E402

SIZES = ((10, 40), (50, 300))


def synthetic(models: int, tasks: int, samples: int, seed: int = 0) -> list[dict[str, list[KernelResult]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(models):
        fail = rng.random((tasks, samples)) < 0.3
        speed = rng.lognormal(0, 0.8, size=(tasks, samples))
        out.append({f"t{t}": [KernelResult(f"t{t}", "incorrect") if fail[t, s]
                              else KernelResult(f"t{t}", "passed", float(speed[t, s])) for s in range(samples)]
                    for t in range(tasks)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=1, help="samples per model and task")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"{'models':>6} {'tasks':>6} {'samples':>7} {'resamples':>9} {'seconds':>8}")
    for models, tasks in SIZES:
        data = synthetic(models, tasks, args.samples)
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            result = bootstrap(data, args.resamples, seed=0)
            [result.score_ci(i) for i in range(models)]
            [result.geomean_ci(i) for i in range(models)]
            [result.order_confidence(i, i + 1) for i in range(models - 1)]
            best = min(best, time.perf_counter() - t0)
        print(f"{models:>6} {tasks:>6} {args.samples:>7} {args.resamples:>9} {best:>8.3f}")


if __name__ == "__main__":
    main()
