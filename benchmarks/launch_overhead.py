"""What the kernel worker's instrumentation adds to a launch-bound forward's host time.

    python benchmarks/launch_overhead.py [--task level3_4_lstm] [--json PATH]

The LSTM solution launches one Triton kernel per time step (128 and more a forward), so its time
is the host's launch rate, and anything the worker adds per launch shows in it. Each row runs in a
fresh process: the solution's forward with nothing of ours, then with each piece the kernel worker
installs before kernel.py is imported (MALLOC_PERTURB_ in the environment, the runtime guard's
audit hook, the ghost-kernel census's launch wrapper), then all of them; and the torch function
modes every timed call runs under: an empty one (torch's own cost of a mode) and the library-call
monitor. Per row: the median host time of forward + synchronize, `triton.testing.do_bench`'s
median, and (mode rows) how many calls a forward hands the mode: each tensor argument of a Triton
launch reaches it several times (`data_ptr`, `dtype`, strides). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONFIGS = {"bare": set(), "malloc_perturb": {"perturb"}, "guard": {"guard"}, "census": {"census"},
           "census_after_first_call": {"census", "census_off"}, "all": {"perturb", "guard", "census"},
           "function_mode": {"empty_mode"}, "monitor": {"monitor"}, "monitor_no_window": {"monitor", "no_window"}}


def _around(parts: set[str], solution: Path) -> tuple[Any, list[int]]:
    """What each forward runs inside for the mode rows, and the count of calls it saw."""
    from contextlib import nullcontext

    from torch.overrides import TorchFunctionMode

    seen = [0]

    class Counting(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen[0] += 1
            return func(*args, **(kwargs or {}))

    if "empty_mode" in parts:
        return Counting, seen
    if "monitor" in parts:
        from scorer.checks import launch_window
        from scorer.checks.dynamic import LibraryCallMonitor

        if "no_window" not in parts:
            launch_window.install()  # as the kernel worker does before kernel.py is imported

        monitor = LibraryCallMonitor(frozenset({str(solution)}))
        return (lambda: monitor), seen
    return nullcontext, seen


def child(task_id: str, parts: set[str]) -> dict[str, float]:
    import statistics
    import time

    import torch
    import triton.testing

    from scorer.tasks.load import build_model, load_module, make_inputs
    from scorer.tasks.suites import load_suite

    task = load_suite("kernelbench").tasks[task_id]
    ref_mod = load_module(task.path, "overhead_task")
    _, init_inputs = build_model(ref_mod, 1)
    guard = None
    if "guard" in parts:
        from scorer.checks.guard import RuntimeGuard

        guard = RuntimeGuard(task.solution)
        guard.arm()
    sol = load_module(task.solution, "kernelarena_kernel")
    if "census" in parts:
        from scorer.checks.census import install_census

        install_census(sol, task.solution.read_text())
    torch.manual_seed(1)
    model = sol.ModelNew(*init_inputs).cuda()
    inputs = make_inputs(ref_mod, 2, "cuda")
    around, seen = _around(parts, task.solution)

    def forward() -> Any:
        with around():
            return model(*inputs)

    with torch.no_grad():
        forward()
        torch.cuda.synchronize()
        calls = seen[0]
        if "census_off" in parts:
            from scorer.checks.census import stop_counting

            stop_counting()
        host = []
        for _ in range(60):
            t0 = time.perf_counter()
            forward()
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) * 1e3)
        bench = triton.testing.do_bench(forward, warmup=50, rep=300, return_mode="median")
    if guard is not None:
        guard.check("timing")
    return {"host_ms": statistics.median(host[10:]), "do_bench_ms": bench, "mode_calls": calls}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="level3_4_lstm", help="a kernelbench task, or several, comma-separated")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.task, set(filter(None, args.child.split(","))))))
        return 0
    from scorer.checks.poison import perturb_environment

    rows = []
    for task in args.task.split(","):
        for name, parts in CONFIGS.items():
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            if "perturb" in parts:
                env.update(perturb_environment())
            proc = subprocess.run([sys.executable, __file__, "--task", task, "--child", ",".join(sorted(parts))],
                                  capture_output=True, text=True, env=env, timeout=300)
            if proc.returncode != 0:
                rows.append({"task": task, "config": name, "error": proc.stderr.strip().splitlines()[-1:]})
                continue
            rows.append({"task": task, "config": name, **json.loads(proc.stdout.strip().splitlines()[-1])})
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"{'task':24s} {'config':24s} {'host ms':>8s} {'do_bench ms':>11s} {'vs bare':>8s} {'mode calls':>10s}")
    for r in rows:
        if "host_ms" not in r:
            print(f"{r['task']:24s} {r['config']:24s} failed: {r['error']}")
            continue
        bare = next((b for b in rows if b["task"] == r["task"] and b["config"] == "bare" and "host_ms" in b), None)
        rel = f"{r['do_bench_ms'] / bare['do_bench_ms'] - 1:+.1%}" if bare else "-"
        calls = str(r.get("mode_calls") or "")
        print(f"{r['task']:24s} {r['config']:24s} {r['host_ms']:8.3f} {r['do_bench_ms']:11.3f} {rel:>8s} {calls:>10s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
