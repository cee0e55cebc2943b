"""What the anti-hack catalog costs when scoring the demo solutions.

    python benchmarks/catalog_cost.py [--device cpu|cuda] [--repeats N]

ScoreOptions has no switch that turns the catalog off, so the cost is measured piecewise on the
same inputs the scorer uses: the static analysis of each solution, arming and checking the runtime
guard in a fresh process (where the worker arms it), the audit hook's overhead on a Triton launch
loop, and the dynamic checks on full-size outputs; next to it, the end-to-end score_kernel time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from scorer.checks import dynamic as dynamic_checks  # noqa: E402
from scorer.checks.static import analyze_source  # noqa: E402
from scorer.options import ScoreOptions  # noqa: E402
from scorer.tasks.suites import load_suite  # noqa: E402

_GUARD_PROBE = r"""
import sys, time, importlib.util
from pathlib import Path
import torch, triton
import json
import scorer.gpu.timing, scorer.workers.kernel_role
from scorer.checks.guard import RuntimeGuard
from scorer.tasks.load import load_module, make_inputs, to_device
path = Path(sys.argv[1]); device = sys.argv[2]; reps = int(sys.argv[3])
task = load_module(Path(sys.argv[4]), "task_probe", json.loads(sys.argv[5]))
init_inputs = task.get_init_inputs()
inputs = to_device(make_inputs(task, 0), device)

def load():
    spec = importlib.util.spec_from_file_location("sol_" + str(time.perf_counter_ns()), str(path))
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod

def loop(mod):
    model = mod.ModelNew(*init_inputs).to(device)
    args = inputs
    model(*args)
    t0 = time.perf_counter()
    for _ in range(reps):
        model(*args)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e3

mod = load()
plain_ms = loop(mod)
guard = RuntimeGuard(path)
t0 = time.perf_counter(); guard.arm(); arm_ms = (time.perf_counter() - t0) * 1e3
mod = load()
hooked_ms = loop(mod)
t0 = time.perf_counter(); findings = guard.check("timing"); check_ms = (time.perf_counter() - t0) * 1e3
print(arm_ms, check_ms, plain_ms, hooked_ms, len(findings))
"""


def _ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _dynamic_checks(out: torch.Tensor, exp64: torch.Tensor, dtype: str, category: str) -> None:
    dynamic_checks.observe_output(out)
    dynamic_checks.precision_findings(out, exp64, out, dtype, category)
    dynamic_checks.constant_output_findings([out, out + 1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-score", action="store_true", help="skip the end-to-end score_kernel timing")
    args = parser.parse_args(argv)
    suite = load_suite("demo")
    print(f"device={args.device}  (times in ms; medians of {args.repeats})")
    header = (f"{'task':12s} {'static':>8s} {'arm':>8s} {'check':>8s} {'launch':>9s} {'w/ hook':>9s} {'dynamic':>8s} "
              f"{'score_kernel':>13s}")
    print(header)
    for task_id, task in suite.tasks.items():
        assert task.solution is not None
        source = task.solution.read_text()
        static_ms = _ms(partial(analyze_source, source, str(task.solution), suite.policy, task.dtype), args.repeats)
        shapes = json.dumps(task.test_shapes if args.device == "cpu" else {})
        probe = subprocess.run([sys.executable, "-c", _GUARD_PROBE, str(task.solution), args.device, "50",
                                str(task.path), shapes],
                               capture_output=True, text=True, cwd=REPO, timeout=600,
                               env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin",
                                    "TRITON_INTERPRET": "1" if args.device == "cpu" else "0"})
        if probe.returncode != 0:
            print(f"{task_id}: guard probe failed: {probe.stderr[-500:]}")
            return 1
        arm_ms, check_ms, plain_ms, hooked_ms, n_findings = probe.stdout.split()
        out = torch.randn(4096, 4096, device=args.device)
        exp64 = out.double()
        dyn_ms = _ms(partial(_dynamic_checks, out, exp64, task.dtype, task.category), args.repeats)
        score_s = float("nan")
        if not args.skip_score:
            t0 = time.perf_counter()
            from scorer import score_kernel

            score = score_kernel(suite, task_id, task.solution, device=args.device,
                                 options=ScoreOptions(device=args.device, seeds=3, warmup=3, repetitions=20))
            score_s = time.perf_counter() - t0
            assert score.verdict == "passed", (score.verdict, score.error)
        print(f"{task_id:12s} {static_ms:8.2f} {float(arm_ms):8.1f} {float(check_ms):8.2f} {float(plain_ms):9.3f} "
              f"{float(hooked_ms):9.3f} {dyn_ms:8.1f} {score_s * 1e3:13.0f}")
        if int(n_findings):
            print(f"  warning: the guard reported {n_findings} finding(s) on the demo solution")
    print("static: analyze_source; arm/check: RuntimeGuard; launch / w/ hook: one forward() before and after "
          "arming (audit hook live); dynamic: output-object + precision + degenerate checks on a 4096x4096 output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
