"""`python -m scorer score --suite PATH --task ID --kernel PATH --out score.json [--device D]`.

The command a scoring sandbox runs. Exits 0 whatever the verdict, 2 on bad input, 1 only when
the scorer itself broke.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from scorer.errors import SCORER_BROKE, ScorerBroken, ScorerUserError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scorer", description="Score one kernel.py against one task.")
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score one kernel and write score.json atomically")
    score.add_argument("--suite", required=True, help="suite name or folder")
    score.add_argument("--task", required=True, help="task id within the suite")
    score.add_argument("--kernel", required=True, type=Path, help="path of the solution's kernel.py")
    score.add_argument("--out", required=True, type=Path, help="where to write score.json")
    score.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    score.add_argument("--seeds", type=int, default=5, help="random input sets for correctness")
    score.add_argument("--repetitions", type=int, default=None, help="override the suite's timed repetitions")
    score.add_argument("--warmup", type=int, default=None, help="override the suite's warm-up repetitions")
    score.add_argument("--skip-timing", action="store_true", help="correctness and anti-hack checks only")
    score.add_argument("--accept-weak-isolation", action="store_true",
                       help="score even where the host cannot wall the kernel's process in completely "
                            "(score.json's `isolation` says what was missing)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    from scorer.judge.scoring import score_kernel
    from scorer.options import ScoreOptions
    from scorer.tasks.suites import load_suite

    try:
        if args.seeds < 1:
            raise ScorerUserError("--seeds must be at least 1")
        options = ScoreOptions(device=args.device, seeds=args.seeds, repetitions=args.repetitions,
                               warmup=args.warmup, skip_timing=args.skip_timing,
                               require_isolation=not args.accept_weak_isolation)
        score = score_kernel(load_suite(args.suite), args.task, args.kernel, device=args.device, options=options)
        score.write(args.out)
    except ScorerUserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ScorerBroken as exc:
        print(f"{SCORER_BROKE} {exc}", file=sys.stderr)
        return 1
    print(f"{score.task}: {score.verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
