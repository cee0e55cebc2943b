"""Scorer speedups against an independent timer: `triton.testing.do_bench` (L2 flushed before every
rep) of the same baseline/kernel pair, built the same way as the scorer builds them.

    python benchmarks/do_bench_agreement.py [--suite kernelbench] [--tasks a,b,...] [--json PATH]

For each task: the scorer's speedup (a full scoring through scorer.session), do_bench's speedup
(baseline Model and the reference solution's ModelNew in this process, on one input set made on the
device), and their difference. Needs a CUDA GPU. Prints a table last.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_TASKS = ("level1_1_square_matmul,level1_4_conv2d_3x3,level2_9_layernorm_linear,level3_4_lstm,"
                 "level3_9_rmsnorm_attention_block,level4_2_gqa_causal_attention")


def do_bench_speedup(task, device: str) -> tuple[float, float]:
    import torch
    import triton.testing

    from scorer.taskload import build_model, load_module, make_inputs

    ref_mod = load_module(task.path, "agreement_task")
    model, init_inputs = build_model(ref_mod, 1234)
    sol_mod = load_module(task.solution, "agreement_solution")
    torch.manual_seed(1234)
    kernel = sol_mod.ModelNew(*init_inputs)
    if set(kernel.state_dict()) == set(model.state_dict()):
        kernel.load_state_dict(model.state_dict())
    model, kernel = model.to(device), kernel.to(device)
    inputs = make_inputs(ref_mod, 99, device)
    with torch.no_grad():
        base = triton.testing.do_bench(lambda: model(*inputs), warmup=100, rep=500, return_mode="median")
        kern = triton.testing.do_bench(lambda: kernel(*inputs), warmup=100, rep=500, return_mode="median")
    return base, kern


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="kernelbench")
    parser.add_argument("--tasks", default=DEFAULT_TASKS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("error: needs a CUDA GPU; run it on the GPU machine (scripts/gpu_check.sh --parts dobench)", file=sys.stderr)
        return 2
    from scorer.options import ScoreOptions
    from scorer.session import ScoringSession
    from scorer.suites import load_suite

    suite = load_suite(args.suite)
    rows = []
    with ScoringSession(ScoreOptions(device="cuda")) as session:
        for task_id in [t for t in args.tasks.split(",") if t]:
            task = suite.tasks[task_id]
            score = session.score(suite, task_id, task.solution, device="cuda")
            base_ms, kern_ms = do_bench_speedup(task, "cuda")
            t = score.timing
            row = {"task": task_id, "verdict": score.verdict,
                   "scorer_baseline_ms": t.baseline_ms if t else None, "scorer_kernel_ms": t.kernel_ms if t else None,
                   "scorer_speedup": t.speedup if t else None, "do_bench_baseline_ms": base_ms,
                   "do_bench_kernel_ms": kern_ms, "do_bench_speedup": base_ms / kern_ms}
            if row["scorer_speedup"]:
                row["difference"] = row["scorer_speedup"] / row["do_bench_speedup"] - 1
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"{'task':36s} {'scorer':>8s} {'do_bench':>8s} {'diff':>7s}  (baseline ms / kernel ms: scorer | do_bench)")
    for r in rows:
        diff = f"{r['difference']:+.1%}" if "difference" in r else "-"
        print(f"{r['task']:36s} {r['scorer_speedup'] or 0:8.3f} {r['do_bench_speedup']:8.3f} {diff:>7s}  "
              f"{r['scorer_baseline_ms'] or 0:.4f}/{r['scorer_kernel_ms'] or 0:.4f} | "
              f"{r['do_bench_baseline_ms']:.4f}/{r['do_bench_kernel_ms']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
