"""The published score against the old (strict) one on a board of a real sweep's size.

    python benchmarks/score_methods.py [--models 14] [--samples 3] [--low 0.27] [--high 0.72] [--seed 0]

Builds with the orchestrator's planner and ledger (tests/web/factory.py's `ledger_board`) a sweep
of `--models` models x the 41 kernelbench tasks x `--samples` samples, pass rates spread from
`--low` to `--high`, and prints each model's score and rank under the strict method (failures as
speedup 0 inside the mean and the median: what the leaderboard computed before) and under the
published one (mean and median over correct kernels), with the published score's 95 % bootstrap
interval and rank range, and how many models the strict method scores exactly 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.index import load_index  # noqa: E402
from orchestrator.leaderboard import build_leaderboard, fmt_interval, fmt_rank, fmt_rank_range, sig  # noqa: E402
from tests.web.factory import ledger_board  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=14)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--low", type=float, default=0.27)
    ap.add_argument("--high", type=float, default=0.72)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep = ledger_board(Path(tmp) / "board", models=args.models, samples=args.samples,
                             pass_rates=(args.low, args.high), seed=args.seed)
        index = load_index(sweep)
        strict = {m.model: m for m in build_leaderboard(index, resamples=0, method="strict").models}
        t0 = time.perf_counter()
        board = build_leaderboard(index)
        took = time.perf_counter() - t0
    print(f"{args.models} models x 41 tasks x {args.samples} samples ({len(index.trials)} trials); "
          f"published board with 1000 bootstrap resamples built in {took:.2f} s")
    print(f"{'model':10} {'pass@1':>6} | {'strict mean':>11} {'median':>7} {'score':>7} {'rank':>4} | "
          f"{'mean':>6} {'median':>6} {'score':>6} {'95% CI':>15} {'rank (range)':>12}")
    for m in board.models:
        s = strict[m.model]
        print(f"{m.model:10} {m.pass_at_1:6.3f} | {sig(s.mean_speedup):>11} {sig(s.median_speedup):>7} "
              f"{s.score:7.3f} {s.rank:>4} | {sig(m.mean_speedup):>6} {sig(m.median_speedup):>6} "
              f"{sig(m.score):>6} {fmt_interval(m.score_ci):>15} {fmt_rank(m) + ' (' + fmt_rank_range(m) + ')':>12}")
    zeros = sum(1 for s in strict.values() if s.score == 0)
    ranks = len({s.rank for s in strict.values()})
    print(f"strict: {zeros} of {len(strict)} models score exactly 0 ({ranks} distinct ranks); "
          f"published: {sum(1 for m in board.models if m.score == 0)} score 0")


if __name__ == "__main__":
    main()
