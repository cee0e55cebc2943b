"""What the kernel's turns (scorer/checks/turns.py) add to one call of the judge-clocked batch.

    python benchmarks/turns_cost.py [--device cuda] [--task level1_9_log_softmax] [--calls 400]

The batch draws each call's inputs in the scorer's turn and calls forward in the kernel's, so the
turns switch twice a call. The judge's clock takes the reference worker's per-call cost of
drawing and copying off the batch's time; whatever the turns add beyond that reads as the
kernel's time. Rows, each the median per call over `--calls`:
  plain       draw + forward, nothing of ours
  turns       the same in a scorer turn, forward as the kernel's turn (what the kernel worker runs)
  calibration the draw alone in Turns.calibration()'s turn (what the reference worker deducts)
  draw only   the draw alone, nothing of ours
  turn entry  a scorer turn entered (sys.monitoring: restarted) and one call in it, each time: less the
              `turns` row, what entering a turn costs the call after it (the judge-clocked batch's
              turn does not restart, its set-up's does; a batch of a few calls would count it)
The forward is the task's reference Model. Python 3.12+ uses sys.monitoring, earlier the profile
function; the table says which.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--suite", default="kernelbench")
    parser.add_argument("--task", default="level1_9_log_softmax")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--test-shapes", action="store_true", help="the task's small test shapes (default on CPU)")
    parser.add_argument("--profile-function", action="store_true",
                        help="the pre-3.12 mechanism (sys.setprofile) even where sys.monitoring exists")
    args = parser.parse_args()

    import torch

    from scorer.checks import turns as turns_mod
    from scorer.checks.turns import Turns
    from scorer.tasks.load import build_model, load_module, make_inputs
    from scorer.tasks.suites import load_suite

    if args.profile_function:
        turns_mod._MONITOR[:] = [None]
    task = load_suite(args.suite).tasks[args.task]
    small = args.test_shapes or args.device == "cpu"
    module = load_module(task.path, "turns_cost_task", task.test_shapes if small else {})
    model, _ = build_model(module, 0)
    model = model.to(args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    kernel_file = str(ROOT / "tests" / "hacks" / "clean" / "kernel.py")  # a kernel file that never runs here
    turns = Turns(frozenset({kernel_file}), (str(ROOT / "nonexistent-build"),))

    def per_call(step) -> float:
        for seed in range(20):
            step(seed)
        sync()
        times = []
        for seed in range(args.calls):
            t0 = time.perf_counter()
            step(seed)
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    forward = turns.kernel_call(model)

    def plain(seed: int) -> None:
        with torch.no_grad():
            model(*make_inputs(module, seed, args.device))

    def in_turns(seed: int) -> None:
        with torch.no_grad():
            forward(*make_inputs(module, seed, args.device))

    def draw(seed: int) -> None:
        make_inputs(module, seed, args.device)

    rows = [("plain", per_call(plain))]
    with turns.scorer_turn("benchmark"):
        rows.append(("turns", per_call(in_turns)))
    with Turns.calibration().scorer_turn("calibration"):
        rows.append(("calibration (draw only)", per_call(draw)))
    rows.append(("draw only, no turns", per_call(draw)))

    def entered(seed: int) -> None:
        with turns.scorer_turn("benchmark"):
            in_turns(seed)

    rows.append(("turn entry + one call", per_call(entered)))
    mechanism = "sys.monitoring" if turns_mod._monitor() is not None else "sys.setprofile"
    print(f"Python {sys.version.split()[0]}, turns by {mechanism}, {args.task} on {args.device}, "
          f"{args.calls} calls a row")
    print(f"{'row':28s} {'ms a call':>10s}")
    for label, ms in rows:
        print(f"{label:28s} {ms:10.4f}")
    plain_ms, turns_ms, calib_ms, draw_ms, entry_ms = (ms for _, ms in rows)
    print(f"turns add {turns_ms - plain_ms:.4f} ms a call; the calibration deducts "
          f"{calib_ms - draw_ms:.4f} ms of it; unexplained {turns_ms - plain_ms - (calib_ms - draw_ms):.4f} ms; "
          f"entering a turn adds {entry_ms - turns_ms:.4f} ms to the call after it")


if __name__ == "__main__":
    main()
