"""Every GPU check and benchmark of the repo in one run (for a lent H200; see gpu_check.sh).

Parts (run all by default, or pick with --parts):
  demo      score each demo solution three times: verdicts, speedups and their spread
  suites    score every reference solution of kernelbench and fp4-quant: the suite table
  hacks     the anti-hack corpus on CUDA (tests/hacks/gpu_corpus.py)
  pytest    the GPU-marked tests
Full logs and JSON go to --out; a short table is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scorer import score_kernel  # noqa: E402
from scorer.aggregate import KernelResult, summarize  # noqa: E402
from scorer.suites import load_suite  # noqa: E402

# Reference-solution roofline ceilings measured on this workplace's H200s (KINDS.md): device copy
# ~4.3 TB/s; dense bf16 ~790 TFLOP/s. fp32 non-tensor by datasheet.
H200_BW = 4.3e12
H200_FP32 = 67e12


DEVICE = "cuda"


def _score(suite, task_id, kernel, reps):
    from scorer.options import ScoreOptions

    t0 = time.perf_counter()
    score = score_kernel(suite, task_id, Path(kernel), device=DEVICE, options=ScoreOptions(device=DEVICE))
    return score.to_dict(), time.perf_counter() - t0


def part_demo(out: Path, workers: int) -> list[str]:
    suite = load_suite("demo")
    jobs = [(t, r) for t in suite.tasks for r in range(3)]
    results: dict[str, list[dict]] = {t: [] for t in suite.tasks}
    with ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(_score, suite, t, suite.tasks[t].solution, 3): t for t, _ in jobs}
        for fut, task in futures.items():
            score, _ = fut.result()
            results[task].append(score)
    (out / "demo.json").write_text(json.dumps(results, indent=1))
    lines = ["demo: task | verdicts | baseline ms | kernel ms | speedups (3 runs) | spread"]
    for task, scores in results.items():
        speedups = [s["timing"]["speedup"] for s in scores if s.get("timing") and s["timing"].get("speedup")]
        spread = (max(speedups) - min(speedups)) / statistics.median(speedups) if speedups else float("nan")
        lines.append(
            f"  {task} | {','.join(s['verdict'] for s in scores)} | "
            f"{_fmt(scores[0], 'baseline_ms')} | {_fmt(scores[0], 'kernel_ms')} | "
            f"{' '.join(f'{x:.3f}' for x in speedups)} | {spread:.1%}"
        )
    return lines


def _fmt(score: dict, key: str) -> str:
    value = (score.get("timing") or {}).get(key)
    return f"{value:.4f}" if isinstance(value, (int, float)) else "-"


def part_suites(out: Path, workers: int, names: list[str]) -> list[str]:
    lines: list[str] = []
    for name in names:
        suite = load_suite(name)
        tasks = [t for t in suite.tasks.values() if t.solution is not None]
        with ThreadPoolExecutor(workers) as pool:
            scored = list(pool.map(lambda t: (t, _score(suite, t.id, t.solution, 1)), tasks))
        rows = []
        for task, (score, wall_s) in scored:
            timing = score.get("timing") or {}
            kernel_ms = timing.get("kernel_ms")
            floor_ms = None
            if kernel_ms and (task.flops or task.bytes_moved):
                floor_s = max((task.flops or 0) / H200_FP32, (task.bytes_moved or 0) / H200_BW)
                floor_ms = floor_s * 1e3
            rows.append(
                {
                    "task": task.id,
                    "verdict": score["verdict"],
                    "baseline_ms": timing.get("baseline_ms"),
                    "kernel_ms": kernel_ms,
                    "speedup": timing.get("speedup"),
                    "roofline_share": (floor_ms / kernel_ms) if floor_ms and kernel_ms else None,
                    "hacks": [h["pattern"] for h in score.get("hacks", [])],
                    "error": (score.get("error") or "")[:300],
                    "wall_s": wall_s,
                }
            )
        (out / f"suite_{name}.json").write_text(json.dumps(rows, indent=1))
        summary = summarize([KernelResult(r["task"], r["verdict"], r["speedup"]) for r in rows])
        lines.append(f"suite {name}: task | verdict | baseline ms | solution ms | speedup | roofline share")
        for r in rows:
            share = f"{r['roofline_share']:.0%}" if r["roofline_share"] else "-"
            b = f"{r['baseline_ms']:.4f}" if r["baseline_ms"] else "-"
            k = f"{r['kernel_ms']:.4f}" if r["kernel_ms"] else "-"
            s = f"{r['speedup']:.3f}" if r["speedup"] else "-"
            extra = f" {r['hacks']} {r['error'][:120]}" if r["verdict"] != "passed" else ""
            lines.append(f"  {r['task']} | {r['verdict']} | {b} | {k} | {s} | {share}{extra}")
        lines.append(f"  suite score: {summary}")
    return lines


def part_hacks(out: Path, kind: str) -> list[str]:
    hacks_out = out / f"hacks_{kind}"
    hacks_out.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/hacks/gpu_corpus.py"), "--device", DEVICE, "--kind", kind,
         "--out", str(hacks_out)],
        capture_output=True, text=True, cwd=ROOT,
    )
    (out / f"hacks_{kind}.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    tail = proc.stdout.strip().splitlines()[-30:]
    return [f"hacks {kind} (exit {proc.returncode}):"] + ["  " + line for line in tail]


def part_pytest(out: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "tests"],
        capture_output=True, text=True, cwd=ROOT,
    )
    (out / "pytest_gpu.log").write_text(proc.stdout + proc.stderr)
    return [f"pytest -m gpu (exit {proc.returncode}): " + (proc.stdout.strip().splitlines() or ["?"])[-1]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/gpu_check")))
    parser.add_argument("--parts", default="demo,suites,attacks,clean,pytest",
                        help="comma list of: demo, suites, attacks, clean, pytest (each fits one 10-minute call)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a smoke test of this script")
    parser.add_argument("--suites", default="kernelbench,fp4-quant")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    args.out.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    report: list[str] = []
    for part in parts:
        t0 = time.perf_counter()
        try:
            if part == "demo":
                lines = part_demo(args.out, args.workers)
            elif part == "suites":
                lines = part_suites(args.out, args.workers, args.suites.split(","))
            elif part in ("attacks", "clean"):
                lines = part_hacks(args.out, part)
            elif part == "pytest":
                lines = part_pytest(args.out)
            else:
                lines = [f"unknown part {part}"]
        except Exception as exc:  # one broken part must not hide the others' results
            import traceback

            (args.out / f"{part}_error.txt").write_text(traceback.format_exc())
            lines = [f"{part}: FAILED {type(exc).__name__}: {exc}"]
        lines.append(f"  ({part} took {time.perf_counter() - t0:.0f} s)")
        report.extend(lines)
        (args.out / "summary.txt").write_text("\n".join(report) + "\n")
        print("\n".join(lines), flush=True)
    print("\n==== SUMMARY ====\n" + "\n".join(report))


if __name__ == "__main__":
    main()
