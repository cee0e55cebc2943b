"""What the kernel worker's instrumentation adds to a launch-bound forward's host time.

    python benchmarks/launch_overhead.py [--task level3_4_lstm] [--json PATH]

The LSTM solution launches one Triton kernel per time step (128 and more a forward), so its time
is the host's launch rate, and anything the worker adds per launch shows in it. Each row runs in a
fresh process: the solution's forward with nothing of ours, then with each piece the kernel worker
installs before kernel.py is imported (MALLOC_PERTURB_ in the environment, the runtime guard's
audit hook, the ghost-kernel census's launch wrapper), then all of them. Per row: the median host
time of forward + synchronize, and `triton.testing.do_bench`'s median. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONFIGS = {"bare": set(), "malloc_perturb": {"perturb"}, "guard": {"guard"}, "census": {"census"},
           "census_after_first_call": {"census", "census_off"}, "all": {"perturb", "guard", "census"}}


def child(task_id: str, parts: set[str]) -> dict[str, float]:
    import statistics
    import time

    import torch
    import triton.testing

    from scorer.tasks.suites import load_suite
    from scorer.tasks.load import build_model, load_module, make_inputs

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
    with torch.no_grad():
        model(*inputs)
        torch.cuda.synchronize()
        if "census_off" in parts:
            from scorer.checks.census import stop_counting

            stop_counting()
        host = []
        for _ in range(60):
            t0 = time.perf_counter()
            model(*inputs)
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) * 1e3)
        bench = triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median")
    if guard is not None:
        guard.check("timing")
    return {"host_ms": statistics.median(host[10:]), "do_bench_ms": bench}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="level3_4_lstm")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.task, set(filter(None, args.child.split(","))))))
        return 0
    from scorer.checks.poison import perturb_environment

    rows = []
    for name, parts in CONFIGS.items():
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        if "perturb" in parts:
            env.update(perturb_environment())
        proc = subprocess.run([sys.executable, __file__, "--task", args.task, "--child", ",".join(sorted(parts))],
                              capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode != 0:
            rows.append({"config": name, "error": proc.stderr.strip().splitlines()[-1:]})
            continue
        rows.append({"config": name, **json.loads(proc.stdout.strip().splitlines()[-1])})
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    bare = next((r for r in rows if r["config"] == "bare" and "host_ms" in r), None)
    print(f"{'config':26s} {'host ms':>8s} {'do_bench ms':>11s} {'vs bare':>8s}  ({args.task} solution forward)")
    for r in rows:
        if "host_ms" not in r:
            print(f"{r['config']:26s} failed: {r['error']}")
            continue
        rel = f"{r['do_bench_ms'] / bare['do_bench_ms'] - 1:+.1%}" if bare else "-"
        print(f"{r['config']:26s} {r['host_ms']:8.3f} {r['do_bench_ms']:11.3f} {rel:>8s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
