"""Every GPU check and benchmark of the repo in one run (for a lent H200; see gpu_check.sh).

Parts (run all by default, or pick with --parts):
  ceilings  measure the device's copy bandwidth and bf16/tf32/fp32 matrix rates (roofline peaks)
  demo      score each demo solution three times: verdicts, speedups and their spread
  stability benchmarks/timing_stability.py: demo timings in fresh processes under several protocols
  suites    score every reference solution of kernelbench and fp4-quant: the suite table
  attacks   the anti-hack attack corpus on CUDA (tests/hacks/gpu_corpus.py)
  clean     the honest-kernel corpus on CUDA
  pytest    the GPU-marked tests
  sweep     `kernelarena sweep` of the scripted models over the demo suite (process sandbox, GPU)
  full      benchmarks/full_size.py: published-size KernelBench-format problems, time, memory, disk
  dobench   benchmarks/do_bench_agreement.py: scorer speedups against triton.testing.do_bench
  launch    benchmarks/launch_overhead.py: host cost per launch of each piece the kernel worker installs
  start     benchmarks/worker_start.py: a worker's start, with exec and from the fork server, walled or not
  turns     tests/scorer/test_turns.py under the machine's Python, benchmarks/turns_cost.py with each
            mechanism (sys.monitoring on 3.12+, the profile function), benchmarks/gil_wait.py
  real      tests/hacks/real/score_real.py: the real-model corpus (materialize it first; carry its folders)
  busy      benchmarks/busy_device.py: demo and suite solutions quiet, beside a CUDA burner agent,
            and beside it with exclusive timing (the agent frozen while a judge times)
  forged    benchmarks/forged_clock_gain.py: what a clock forged 2, 4 and 8 times still gains
  overhead  benchmarks/scorer_overhead.py: the scorer's own cost per demo kernel
Presets: --preset check runs what docs/results/gpu_latest.json records in one device call, each
part in a time budget of its own.
Each part writes JSON/logs to --out as it goes; a short table is printed last, and the run's record,
--out/gpu_latest.json, is written from the parts' files (scripts/gpu_results.py). --budget-s stops
starting new work when the call's time is nearly up, so what finished still comes back.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import multiprocessing
import multiprocessing.util
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scorer.aggregate import KernelResult, summarize  # noqa: E402
from scorer.checks.dynamic import _NO_CONTRACTION_CATEGORIES  # noqa: E402
from scorer.gpu.lock import TRACE_ENV  # noqa: E402
from scorer.gpu.lock_trace import occupancy, read_trace  # noqa: E402
from scorer.judge.pool import judge_pool  # noqa: E402
from scorer.judge.session import ScoringSession  # noqa: E402
from scorer.options import ScoreOptions  # noqa: E402
from scorer.tasks.suites import Suite, Task, load_suite  # noqa: E402
from scripts.gpu_results import commit_here, real_selected, record_from_run, validate  # noqa: E402
from tests.hacks.gpu_corpus import clip  # noqa: E402

# Ceilings used when the `ceilings` part did not run: this workplace's H200 readings (KINDS.md:
# ~4.3 TB/s device copy, ~790 TFLOP/s dense bf16), TF32 and fp32 from the datasheet.
DEFAULT_PEAKS = {"bytes_s": 4.3e12, "bf16": 790e12, "tf32": 495e12, "fp32": 67e12, "fp8": 1580e12}


# One device call (10 minutes with the machine's start): every part the record needs, the suites at
# a sweep's default concurrency (8), each part in a budget of its own that sums within the call.
PRESETS: dict[str, dict[str, object]] = {
    "check": {"parts": "suites,attacks,clean,real,busy,dobench,forged,overhead", "workers": 8, "budget_s": 540.0,
              "part_budgets": "suites=175,attacks=70,clean=50,real=55,busy=50,dobench=50,forged=45,overhead=30",
              "busy_tasks": "swish,softmax,row_sum,add_rmsnorm"},
}


@dataclass
class Budget:
    deadline: float

    def left_s(self) -> float:
        return self.deadline - time.monotonic()

    def allows(self, need_s: float) -> bool:
        return self.left_s() > need_s


# The attack's own large kernel, and small ones, where the clock check's slack (host-bound batches) lies.
FORGED_TASKS = "level1_5_gelu,level1_6_layernorm,level4_6_rope_attention"


def _options(device: str) -> ScoreOptions:
    # Tighter phase limits than the defaults: one stuck kernel must not eat a whole device call.
    return ScoreOptions(device=device, load_s=150.0, correctness_s=150.0, timing_s=120.0, reference_s=180.0)


# Each concurrent scoring has a judge process of its own, as in a sweep (one `python -m scorer`
# per trial): eight judges in one process's threads waited on each other's GIL inside the judge's
# clock (benchmarks/gil_wait.py). A pool process keeps its session (warm kernel workers, the
# references of its last tasks) for the whole part, and closes it as it exits when the part's pool
# shuts down (its warm workers would outlive the run otherwise).
_PROCESS_SESSION: list[ScoringSession] = []
# References a session keeps: the demo scores each task 3 times; suite tasks come once each, and a
# kept reference holds its outputs on the GPU that other scorings need.
_MAX_REFERENCES = [1]


def _close_process_session() -> None:
    for session in _PROCESS_SESSION:
        session.close()


def _score_here(suite_root: str, task_id: str, kernel: str, device: str, max_references: int) -> dict[str, Any]:
    """In a judge process of the pool: one scoring through that process's session."""
    if not _PROCESS_SESSION:
        _PROCESS_SESSION.append(ScoringSession(_options(device), max_references=max_references))
        multiprocessing.util.Finalize(None, _close_process_session, exitpriority=10)
    try:
        return _PROCESS_SESSION[0].score(load_suite(suite_root), task_id, Path(kernel), device=device).to_dict()
    except Exception as exc:  # a scorer failure is a row, not the end of the run
        return {"verdict": "scorer_error", "error": clip(f"{type(exc).__name__}: {exc}")}


def overhead_s(score: dict[str, Any]) -> float | None:
    """Wall time of a scoring beyond the kernel's compile and the timed work (inside the workers'
    handlers: load, the correctness trials with their first-call compile, timing, the batches)."""
    d = score.get("durations_s") or {}
    if "total" not in d:
        return None
    work = sum(d.get(k, 0.0) for k in ("load_worker", "correctness_worker", "timing_worker", "batch_worker",
                                        "baseline_timing", "reference_batch"))
    return d["total"] - work


def _score(pool: ProcessPoolExecutor, suite: Suite, task_id: str, kernel: Path, device: str) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    try:
        score = pool.submit(_score_here, str(suite.root), task_id, str(kernel), device, _MAX_REFERENCES[0]).result()
    except Exception as exc:  # a judge process that died is a row too
        score = {"verdict": "scorer_error", "error": clip(f"{type(exc).__name__}: {exc}")}
    return score, time.perf_counter() - t0


def _ms(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "-"


# --- ceilings ---------------------------------------------------------------------------------------
def part_ceilings(out: Path, device: str) -> tuple[list[str], dict[str, float]]:
    import torch

    if device != "cuda":
        return ["ceilings: skipped on cpu"], dict(DEFAULT_PEAKS)

    def bench(fn, reps: int = 10) -> float:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(reps):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return statistics.median(times)

    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    copy_s = bench(lambda: dst.copy_(src))  # noqa: F821 (run before the `del` below)
    peaks = {"bytes_s": 2 * src.numel() / copy_s}
    del src, dst
    n = 8192
    for name, dtype, tf32 in (("bf16", torch.bfloat16, False), ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
        peaks[name] = 2 * n**3 / bench(partial(torch.matmul, a, b), reps=5 if name == "fp32" else 10)
    torch.backends.cuda.matmul.allow_tf32 = False
    peaks["fp8"] = 2 * peaks["bf16"]  # datasheet ratio; torch has no portable fp8 GEMM to time here
    (out / "ceilings.json").write_text(json.dumps(peaks, indent=1))
    lines = ["ceilings (measured): "
             f"copy {peaks['bytes_s'] / 1e12:.2f} TB/s | bf16 {peaks['bf16'] / 1e12:.0f} TFLOP/s | "
             f"tf32 {peaks['tf32'] / 1e12:.0f} TFLOP/s | fp32 {peaks['fp32'] / 1e12:.1f} TFLOP/s"]
    return lines, peaks


# --- demo -------------------------------------------------------------------------------------------
def part_demo(out: Path, device: str, workers: int, budget: Budget) -> list[str]:
    suite = load_suite("demo")
    results: dict[str, list[dict[str, Any]]] = {t: [] for t in suite.tasks}
    lock = threading.Lock()

    def job(task: str) -> None:
        if not budget.allows(60):
            return
        score, wall_s = _score(judges, suite, task, suite.tasks[task].solution, device)
        score["wall_s"] = wall_s
        with lock:
            results[task].append(score)
            (out / "demo.json").write_text(json.dumps(results, indent=1))

    # Round-robin order, so the three runs of a task are spread in time rather than back to back.
    with judge_pool(workers) as judges, ThreadPoolExecutor(workers) as pool:
        list(pool.map(job, [t for _ in range(3) for t in suite.tasks]))
    lines = ["demo: task | verdicts | baseline ms | kernel ms | speedups (3 runs) | spread (max-min)/median | wall s | "
             "overhead s | judge bound ms"]
    for task, scores in results.items():
        speedups = [s["timing"]["speedup"] for s in scores if (s.get("timing") or {}).get("speedup")]
        spread = (max(speedups) - min(speedups)) / statistics.median(speedups) if len(speedups) > 1 else float("nan")
        first = (scores[0].get("timing") or {}) if scores else {}
        walls = "/".join(f"{s['wall_s']:.0f}" for s in scores)
        errors = "; ".join(s.get("error", "")[:160] for s in scores if s["verdict"] != "passed")
        overheads = "/".join(f"{overhead_s(s) or 0:.1f}" for s in scores)
        lines.append(f"  {task} | {','.join(s['verdict'] for s in scores) or 'not run'} | {_ms(first.get('baseline_ms'))} | "
                     f"{_ms(first.get('kernel_ms'))} | {' '.join(f'{x:.3f}' for x in speedups)} | {spread:.1%} | {walls}"
                     f" | {overheads} | {_ms(first.get('judge_bound_ms'))}" + (f" | {errors}" if errors else ""))
    return lines


# --- suites -----------------------------------------------------------------------------------------
def _cpu_times() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (0, 0 where unreadable)."""
    try:
        fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
    return sum(fields) - idle, sum(fields)


def _stage_sums(rows: list[dict[str, Any]], *, worker_steps: bool = False) -> str:
    """Each stage summed over the scorings (where the wall time of a concurrent run goes); with
    worker_steps, the steps the workers report inside the reference's preparation, the comparison
    and correctness (their waits for the GPU lock among them)."""
    sums: dict[str, float] = {}
    for r in rows:
        for k, v in (r.get("durations_s") or {}).items():
            inside = k.endswith("_worker") and k.startswith(("reference_", "compare_", "correctness_gpu"))
            if k != "total" and (inside if worker_steps else not k.endswith("_worker")):
                sums[k] = sums.get(k, 0.0) + v
    return " ".join(f"{k}={v:.1f}" for k, v in sorted(sums.items(), key=lambda kv: -kv[1]))


def _floor_ms(task: Task, peaks: dict[str, float]) -> float | None:
    if not (task.flops or task.bytes_moved):
        return None
    dtype = (task.dtype or "float32").lower()
    if "fp8" in dtype or "float8" in dtype:
        rate = peaks["fp8"]
    elif dtype in ("bfloat16", "float16", "bf16", "fp16", "half"):
        rate = peaks["bf16"]
    elif (task.category or "").lower() not in _NO_CONTRACTION_CATEGORIES:
        rate = peaks["tf32"]  # the same rule as the precision check: TF32 allowed in contractions
    else:
        rate = peaks["fp32"]
    return max((task.flops or 0) / rate, (task.bytes_moved or 0) / peaks["bytes_s"]) * 1e3


def part_suites(out: Path, device: str, workers: int, names: list[str], only: set[str],
                peaks: dict[str, float], budget: Budget, tag: str = "") -> list[str]:
    """Every solution of the named suites in one pool of `workers` scorings at once (as a sweep
    would score them), then a table per suite and the wall time of the whole pool."""
    suites = [load_suite(name) for name in names]
    jobs = [(suite, t) for suite in suites for t in suite.tasks.values()
            if t.solution is not None and (not only or t.id in only)]
    rows: dict[str, list[dict[str, Any]]] = {suite.name: [] for suite in suites}
    lock = threading.Lock()

    def job(item: tuple[Suite, Task]) -> None:
        suite, task = item
        if not budget.allows(90):
            return
        score, wall_s = _score(judges, suite, task.id, task.solution, device)
        timing = score.get("timing") or {}
        floor_ms = _floor_ms(task, peaks)
        kernel_ms = timing.get("kernel_ms")
        row = {
            "task": task.id, "verdict": score["verdict"], "baseline_ms": timing.get("baseline_ms"),
            "kernel_ms": kernel_ms, "speedup": timing.get("speedup"),
            "kernel_spread": timing.get("kernel_spread"), "floor_ms": floor_ms,
            "roofline_share": floor_ms / kernel_ms if floor_ms and kernel_ms else None,
            "hacks": score.get("hacks", []), "flags": score.get("flags", []),
            "isolation": (score.get("isolation") or {}).get("missing", ["not recorded"]),
            "error": clip(score.get("error") or ""), "wall_s": wall_s,
            "durations_s": score.get("durations_s"), "correctness": score.get("correctness"),
            "judge_bound_ms": timing.get("judge_bound_ms"), "baseline_judge_bound_ms": timing.get("baseline_judge_bound_ms"),
            "judge_calls": timing.get("judge_calls"),
            "judge_device_ms": timing.get("judge_device_ms"), "judge_device_calls": timing.get("judge_device_calls"),
            "judge_device_note": timing.get("judge_device_note"), "floored": timing.get("floored"),
            "judge_device_fixed_ms": timing.get("judge_device_fixed_ms"),
            "overhead_s": overhead_s(score),
        }
        with lock:
            rows[suite.name].append(row)
            (out / f"suite_{suite.name}{tag}.json").write_text(json.dumps(rows[suite.name], indent=1))

    trace = out / f"gpu_lock_trace_suites{tag}.jsonl"
    os.environ[TRACE_ENV] = str(trace)  # the workers inherit it
    pool_t0, cpu0 = time.perf_counter(), _cpu_times()
    try:
        # Started after TRACE_ENV is set: the judge processes inherit it.
        with judge_pool(workers) as judges, ThreadPoolExecutor(workers) as pool:
            list(pool.map(job, jobs))
    finally:
        os.environ.pop(TRACE_ENV, None)
    pool_wall = time.perf_counter() - pool_t0
    cpu1 = _cpu_times()
    busy = (cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]) if cpu1[1] > cpu0[1] else float("nan")
    lines: list[str] = []
    for suite in suites:
        suite_rows = sorted(rows[suite.name], key=lambda r: r["task"])
        summary = summarize([KernelResult(r["task"], r["verdict"], r["speedup"]) for r in suite_rows])
        walled = sum(1 for r in suite_rows if not r["isolation"])
        lines.append(f"suite {suite.name}: kernel worker fully walled in {walled} of {len(suite_rows)} scorings "
                     f"(missing: {sorted({m for r in suite_rows for m in r['isolation']}) or 'none'})")
        lines.append(f"suite {suite.name}: task | verdict | baseline ms | solution ms | speedup | roofline share | wall s | "
                     "judge bound / median (kernel, baseline; kernel batch calls) | overhead s")
        for r in suite_rows:
            share = f"{r['roofline_share']:.0%}" if r["roofline_share"] else "-"
            speed = f"{r['speedup']:.3f}" if r["speedup"] else "-"
            extra = ""
            if r["verdict"] != "passed":
                # A traceback's last lines name the error; a finding's first line says what it is.
                error = r["error"].strip()
                error = error[-300:] if "most recent call last" in error else error[:200]
                extra = f" | {[h['pattern'] for h in r['hacks']]} {error}"
            elif r["flags"]:
                extra = f" | flags {[f['pattern'] for f in r['flags']]}"
            # The batch's calls beside the ratio: a fixed cost in the judge's clock weighs 1/calls a call.
            ratio = (f"{r['judge_bound_ms'] / r['kernel_ms']:.2f}, {r['baseline_judge_bound_ms'] / r['baseline_ms']:.2f}"
                     f" ({r.get('judge_calls') or '?'} calls)"
                     if r.get("judge_bound_ms") and r.get("kernel_ms") and r.get("baseline_judge_bound_ms") else "-")
            if r.get("judge_device_ms") is not None and r.get("kernel_ms"):
                ratio += (f"; device {r['judge_device_ms'] / r['kernel_ms']:.2f} ({r['judge_device_calls']} calls, fixed "
                          f"{_ms(r.get('judge_device_fixed_ms'))} ms{', floored' if r.get('floored') else ''})")
            lines.append(f"  {r['task']} | {r['verdict']} | {_ms(r['baseline_ms'])} | {_ms(r['kernel_ms'])} | {speed} | "
                         f"{share} | {r['wall_s']:.0f} | {ratio} | {r['overhead_s'] or 0:.1f}{extra}")
        done = {r["task"] for r in suite_rows}
        missing = [t.id for s, t in jobs if s is suite and t.id not in done]
        if missing:
            lines.append(f"  not run (budget): {' '.join(missing)}")
        lines.append(f"  {suite.name} over the {len(suite_rows)} scored: score {summary.score:.3f} = mean "
                     f"{summary.mean_speedup or 0:.3f} x median {summary.median_speedup or 0:.3f} "
                     f"x pass@1 {summary.pass_rate:.3f}; "
                     f"geomean {summary.geomean_speedup or 0:.3f}; fast_1 {summary.fast_p:.3f}")
    every = [r for suite_rows in rows.values() for r in suite_rows]
    (out / f"suites_summary{tag}.json").write_text(json.dumps(  # the record's figures (scripts/gpu_results.py)
        {"passed": sum(r["verdict"] == "passed" for r in every), "total": len(jobs),
         "seconds": round(pool_wall, 1), "workers": workers}))
    ratios = sorted(r["judge_bound_ms"] / r["kernel_ms"] for r in every if r.get("judge_bound_ms") and r.get("kernel_ms"))
    if ratios:
        lines.append(f"  judge bound / reported median over the {len(ratios)} bounded: min {ratios[0]:.2f} median "
                     f"{statistics.median(ratios):.2f} max {ratios[-1]:.2f}")
    device = sorted((r["judge_device_ms"] / r["kernel_ms"], r["task"]) for r in every
                    if r.get("judge_device_ms") is not None and r.get("kernel_ms"))
    if device:  # the device-timed batch over the reported median (the verdict is below clock.DEVICE_RATIO)
        lines.append(f"  device-timed bound / reported median over the {len(device)} with one: min {device[0][0]:.2f} "
                     f"({device[0][1]}) median {statistics.median(d for d, _ in device):.2f} max {device[-1][0]:.2f} "
                     f"({device[-1][1]}); floored {sum(bool(r.get('floored')) for r in every)}")
    notes = sorted({f"{r['task']}: {r['judge_device_note']}" for r in every if r.get("judge_device_note")})
    lines += [f"  device-timed note: {n}" for n in notes[:12]]
    lines.append(f"  all {len(every)} of {len(jobs)} scored in {pool_wall:.0f} s wall with {workers} at once; "
                 f"{sum(r['verdict'] == 'passed' for r in every)} passed; CPU busy {busy:.0%} of {os.cpu_count()} cores")
    lines.append(f"  stage sums (s): {_stage_sums(every)}")
    lines.append(f"  worker steps (s): {_stage_sums(every, worker_steps=True)}")
    held = occupancy(read_trace(trace))
    if held is not None:
        lines.append(f"  GPU lock over {held.window_s:.0f} s: exclusive {held.exclusive_s:.0f} s ({held.exclusive_holds} holds), "
                     f"shared only {held.shared_only_s:.0f} s, idle {held.idle_s:.0f} s; a timer queued behind shared "
                     f"holders {held.timer_queued_behind_shared_s:.0f} s, while idle {held.timer_queued_while_idle_s:.1f} s")
        (out / f"gpu_lock_occupancy_suites{tag}.json").write_text(json.dumps(held.to_dict(), indent=1))
    return lines


# --- corpus, pytest, sweep --------------------------------------------------------------------------
def _text(data: str | bytes | None) -> str:
    # TimeoutExpired carries what was captured so far as bytes, even under text=True.
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


_STDERR = "\n--- stderr ---\n"  # between a part's stdout and stderr in its log


def _out_lines(text: str) -> list[str]:
    return text.split(_STDERR)[0].strip().splitlines()


def _err_lines(text: str) -> list[str]:
    return text.split(_STDERR)[-1].strip().splitlines()


_LIBC = ctypes.CDLL(None)  # loaded here: a child between fork and exec should not load libraries


def _die_with_this_process() -> None:
    """In a part's child, before exec: its own group leaves it out of reach of a kill of this
    script's group (the device's time limit), so it is told to end when this script does. Parts run
    from this script's main thread, which the signal follows."""
    _LIBC.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _subprocess(cmd: list[str], log: Path, budget: Budget, env: dict[str, str] | None = None) -> tuple[int, str]:
    """A part in a process group of its own, killed whole at its time limit: the machine stays up
    between calls, and a part's children left running (a benchmark's sweep, a corpus's judges) ran
    beside the next call's parts."""
    timeout = max(30.0, budget.left_s() - 15)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True, preexec_fn=_die_with_this_process,
                            env=None if env is None else {**os.environ, **env})
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        text, rc = stdout + _STDERR + stderr, proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired as exc:  # a child in a session of its own holds the pipes
            stdout, stderr = exc.stdout, exc.stderr
        text = f"{_text(stdout)}{_STDERR}{_text(stderr)}\n(killed after {timeout:.0f} s)"
        rc = 124
    log.write_text(text)
    return rc, text


def part_corpus(out: Path, device: str, kind: str, budget: Budget, only: str, workers: int) -> list[str]:
    corpus_out = out / f"corpus_{kind}"
    corpus_out.mkdir(exist_ok=True)
    cmd = [sys.executable, str(ROOT / "tests/hacks/gpu_corpus.py"), "--device", device, "--kind", kind,
           "--out", str(corpus_out), "--workers", str(workers), "--budget-s", str(max(30, int(budget.left_s() - 30)))]
    if only:
        cmd += ["--only", only]
    rc, text = _subprocess(cmd, out / f"{kind}.log", budget)
    tail = _out_lines(text)[-32:]
    return [f"{kind} corpus (exit {rc}):"] + ["  " + line for line in tail]


def part_stability(out: Path, device: str, budget: Budget) -> list[str]:
    cmd = [sys.executable, str(ROOT / "benchmarks/timing_stability.py"), "--device", device,
           "--json", str(out / "stability.json")] + (["--small"] if device == "cpu" else [])
    rc, text = _subprocess(cmd, out / "stability.log", budget)
    body = _out_lines(text)
    return [f"timing stability (exit {rc}):"] + ["  " + line for line in body[-24:]]


PYTEST_FILES = ("tests/scorer/test_device_clock.py,tests/scorer/test_gpu.py,tests/suites,tests/sandbox/test_process.py,"
                "tests/hacks/test_dynamic_checks.py,"
                "tests/scorer/test_wall.py,tests/scorer/test_contention.py")


def part_pytest(out: Path, budget: Budget, files_csv: str = PYTEST_FILES) -> list[str]:
    # The corpus parts already score every GPU-only corpus entry; the rest of the GPU tests here.
    files = [f for f in files_csv.split(",") if f]
    failures = out / "pytest_failures.txt"
    rc, text = _subprocess([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider",
                            "-p", "scripts.pytest_failure_log", *files],
                           out / "pytest_gpu.log", budget, env={"KA_PYTEST_FAILURES": str(failures)})
    body = _out_lines(text)
    failed = [line for line in body if line.startswith(("FAILED", "ERROR"))][:10]
    if rc == 124 and failures.exists():  # cut off before pytest's own summary: the plugin's record
        record = failures.read_text().splitlines()
        failed = [line for line in record if line.startswith("== ")][:10]
        failed += [line for line in record if line.startswith("E ")][:6]
    return [f"pytest -m gpu (exit {rc}): " + (body[-1] if body else "?")] + ["  " + f for f in failed]


def part_script(out: Path, name: str, script: str, budget: Budget, extra: tuple[str, ...] = (),
                table_lines: int = 10) -> list[str]:
    """A benchmark script of its own (it prints its table last)."""
    rc, text = _subprocess([sys.executable, str(ROOT / script), "--json", str(out / f"{name}.json"), *extra],
                           out / f"{name}.log", budget)
    body = _out_lines(text)
    err = _err_lines(text)[-6:] if rc else []
    return [f"{name} ({script}, exit {rc}):"] + ["  " + line for line in body[-table_lines:] + err]


def part_turns(out: Path, device: str, budget: Budget) -> list[str]:
    """The turns' tests under this machine's Python (3.12+ takes sys.monitoring, which CI's 3.11
    cannot), and their cost a batch call with each mechanism."""
    rc, text = _subprocess([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/scorer/test_turns.py"],
                           out / "turns_pytest.log", budget)
    lines = [f"turns tests (exit {rc}): " + (_out_lines(text) or ["?"])[-1]]
    for extra in ([], ["--profile-function"]):
        rc, text = _subprocess([sys.executable, "benchmarks/turns_cost.py", "--device", device, *extra],
                               out / f"turns_cost{'_profile' if extra else ''}.log", budget)
        lines += [f"turns cost{' (profile function)' if extra else ''} (exit {rc}):"] + [
            "  " + line for line in _out_lines(text)[-8:]]
    for busy in (1, 7):  # the judge's clock in a process judging 8 at once (scorer/judge/clock.py)
        rc, text = _subprocess([sys.executable, "benchmarks/gil_wait.py", "--busy", str(busy)],
                               out / f"gil_wait_{busy}.log", budget)
        lines += [f"GIL wait of a judge thread (exit {rc}):"] + ["  " + line for line in _out_lines(text)[-4:]]
    return lines


def part_sweep(out: Path, device: str, budget: Budget) -> list[str]:
    sweep_dir = out / "sweep"
    spec = ROOT / "examples" / "demo.toml"
    cmd = [sys.executable, "-m", "orchestrator.cli", "sweep", str(spec), "--out", str(sweep_dir)]
    rc, text = _subprocess(cmd, out / "sweep.log", budget)
    index = sweep_dir / "index.json" if (sweep_dir / "index.json").is_file() else None
    lines = [f"sweep examples/demo.toml on {device} (exit {rc})"]
    if index is None:
        last = text.strip().splitlines()[-1][:300] if text.strip() else "no output"
        return lines + [f"  no index.json: {last}"]
    data = json.loads(index.read_text())
    (out / "sweep_index.json").write_text(json.dumps(data, indent=1))
    for trial in data.get("trials", []):
        speedup = trial.get("speedup")
        outcome = (f"speedup {speedup:.3f}" if isinstance(speedup, float)
                   else f"{','.join(trial.get('hacks') or [])} {(trial.get('error') or '')[:120]}")
        lines.append(f"  {trial.get('task')} | {trial.get('model_id')} | {trial.get('state')} | {trial.get('verdict')} "
                     f"| {outcome}")
    return lines


def part_busy(out: Path, device: str, budget: Budget, tasks: str) -> list[str]:
    """benchmarks/busy_device.py on this device (its table is printed last)."""
    cmd = [sys.executable, str(ROOT / "benchmarks/busy_device.py"), "--device", device, "--json", str(out / "busy.json")]
    if tasks:
        cmd += ["--tasks", tasks]
    rc, text = _subprocess(cmd, out / "busy.log", budget)
    body = _out_lines(text)
    table = [line for line in body if line.startswith(("|", "median", "agent"))]
    err = _err_lines(text)[-6:] if rc else []
    return [f"busy device (benchmarks/busy_device.py, exit {rc}):"] + ["  " + line for line in table + err]


def _fork_preflight(device: str) -> str:
    """One scoring through the fork server's workers before anything else: should forked workers
    fail on this machine, the rest of the call starts them with exec (and says so) instead of
    spending the device time on runtime errors."""
    from scorer import score_kernel
    from scorer.workers import forkserver

    if os.environ.get(forkserver.ENV_SWITCH) == "0":
        return "workers: started with exec (KERNELARENA_FORKSERVER=0)"
    demo = load_suite("demo")
    t0 = time.perf_counter()
    score = score_kernel(demo, "row_sum", demo.tasks["row_sum"].solution, device=device, options=_options(device))
    seconds = time.perf_counter() - t0
    why = forkserver.last_failure()
    if score.verdict == "passed" and why:
        # A scoring passes with exec'd workers too: only the server's own record says it forked them.
        # The parts' processes inherit the switch instead of each starting a server that will refuse.
        os.environ[forkserver.ENV_SWITCH] = "0"
        return f"workers: started with exec, the fork server did not start ({why}); preflight scoring passed in {seconds:.1f} s"
    if score.verdict == "passed":
        return f"workers: forked by the fork server (preflight scoring passed in {seconds:.1f} s)"
    os.environ[forkserver.ENV_SWITCH] = "0"
    return f"workers: started with exec; the fork server's preflight scoring gave {score.verdict}: {(score.error or '')[:300]}"


# A part's subprocess starts CUDA, the scorer and its fork server before its first result: on an H100,
# parts given 30 s each (300 s scaled over eight) all ended killed with nothing (2026-12-07).
MIN_PART_S = 60.0


def _fit_part_budgets(spec: str, total_s: float) -> dict[str, float]:
    """part=seconds,... as a dict. Where they sum past the whole call's budget, they are scaled down
    together but none below MIN_PART_S (or its own, if smaller); from the first part that then no longer fits
    on, the parts get 0 (not run): the order given is the priority."""
    budgets = {k: float(v) for k, v in (item.split("=") for item in spec.split(",") if item)}
    whole = sum(budgets.values())
    if whole <= total_s or whole <= 0:
        return budgets
    scaled = {k: max(min(v, MIN_PART_S), v * total_s / whole) for k, v in budgets.items()}
    fitted, used = dict.fromkeys(budgets, 0.0), 0.0
    for k, v in scaled.items():
        if used + v > total_s:
            break
        fitted[k], used = v, used + v
    return fitted


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, dict[str, float]]:
    """The run's options and each part's budget in seconds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/gpu_check")))
    parser.add_argument("--parts", default="ceilings,demo,stability,suites,attacks,clean,pytest,sweep")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a smoke test of this script")
    parser.add_argument("--suites", default="kernelbench,fp4-quant")
    parser.add_argument("--tasks", default="", help="comma list of task ids: score only these suite tasks")
    parser.add_argument("--only", default="", help="corpus parts: comma list, only entries whose name contains one of these")
    parser.add_argument("--only-attacks", default=None,
                        help="attacks part: overrides --only (e.g. stream-injection,timer-patching)")
    parser.add_argument("--workers", type=int, default=4, help="kernels scored at once (suites, corpus)")
    parser.add_argument("--suite-workers", default="", help="suites part: comma list of kernels scored at once, "
                        "one run of the suites for each (default: --workers)")
    parser.add_argument("--demo-workers", type=int, default=1,
                        help="demo runs at once: 1, so the three timings of a kernel see an otherwise idle machine")
    parser.add_argument("--forged-tasks", default=FORGED_TASKS, help="forged part: comma list of task ids")
    parser.add_argument("--pytest-files", default=PYTEST_FILES, help="pytest part: comma list of test paths")
    parser.add_argument("--busy-tasks", default="", help="busy part: comma list of task ids (default: every "
                        "demo and kernelbench reference solution)")
    parser.add_argument("--budget-s", type=float, default=560.0, help="start no new work after this many seconds")
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="check: everything the GPU record needs in one device call, each part in its own time budget")
    parser.add_argument("--part-budgets", default="", help="part=seconds,...: a part starts no new work past its own "
                        "budget, so a slow part cannot starve the ones after it")
    # A preset's values are defaults: a flag given beside it wins (e.g. --budget-s where less device time is left).
    preset = parser.parse_known_args(argv)[0].preset
    if preset:
        parser.set_defaults(**PRESETS[preset])
    args = parser.parse_args(argv)
    try:
        return args, _fit_part_budgets(args.part_budgets, args.budget_s)
    except ValueError:
        parser.error(f"--part-budgets {args.part_budgets!r}: give part=seconds,... (e.g. suites=175,attacks=70)")


def main() -> None:
    args, part_budgets = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    overall = Budget(time.monotonic() + args.budget_s)
    peaks = dict(DEFAULT_PEAKS)
    report: list[str] = [_fork_preflight(args.device)]
    print(report[0], flush=True)
    parts_seconds: dict[str, float] = {}
    for part in args.parts.split(","):
        t0 = time.perf_counter()
        own = part_budgets.get(part)
        if own == 0.0:
            report.append(f"{part}: not run (the whole budget, {args.budget_s:.0f} s, leaves it no time)")
            print(report[-1], flush=True)
            continue
        budget = overall if own is None else Budget(min(overall.deadline, time.monotonic() + own))
        try:
            if part == "ceilings":
                lines, peaks = part_ceilings(args.out, args.device)
            elif part == "demo":
                _MAX_REFERENCES[0] = 4
                lines = part_demo(args.out, args.device, args.demo_workers, budget)
            elif part == "suites":
                _MAX_REFERENCES[0] = 1
                only = {t for t in args.tasks.split(",") if t}
                counts = [int(c) for c in args.suite_workers.split(",") if c] or [args.workers]
                lines = []
                for n in counts:
                    tag = f"_at{n}" if len(counts) > 1 else ""
                    lines += part_suites(args.out, args.device, n, args.suites.split(","), only, peaks, budget, tag)
            elif part in ("attacks", "clean"):
                only_here = args.only_attacks if part == "attacks" and args.only_attacks is not None else args.only
                lines = part_corpus(args.out, args.device, part, budget, only_here, args.workers)
            elif part == "stability":
                lines = part_stability(args.out, args.device, budget)
            elif part == "pytest":
                lines = part_pytest(args.out, budget, args.pytest_files)
            elif part == "sweep":
                lines = part_sweep(args.out, args.device, budget)
            elif part == "full":
                lines = part_script(args.out, "full_size", "benchmarks/full_size.py", budget)
            elif part == "dobench":
                lines = part_script(args.out, "do_bench", "benchmarks/do_bench_agreement.py", budget)
            elif part == "overhead":
                lines = part_script(args.out, "overhead", "benchmarks/scorer_overhead.py", budget,
                                    ("--device", args.device))
            elif part == "forged":
                lines = part_script(args.out, "forged", "benchmarks/forged_clock_gain.py", budget,
                                    ("--device", args.device, "--factors", "2,4,8", "--tasks", args.forged_tasks), table_lines=16)
            elif part == "launch":
                lines = part_script(args.out, "launch_overhead", "benchmarks/launch_overhead.py", budget,
                                    ("--task", "level3_4_lstm,level4_1_mla_attention"), table_lines=17)
            elif part == "busy":
                lines = part_busy(args.out, args.device, budget, args.busy_tasks)
            elif part == "real":
                cmd = [sys.executable, str(ROOT / "tests/hacks/real/score_real.py"), "--device", args.device,
                       "--out", str(args.out / "real"), "--workers", str(args.workers)]
                rc, text = _subprocess(cmd + (["--only", args.only] if args.only else []), args.out / "real.log", budget)
                lines = [f"real corpus (tests/hacks/real/score_real.py, exit {rc}):"] + [
                    "  " + line for line in _out_lines(text)]
            elif part == "start":
                lines = part_script(args.out, "worker_start", "benchmarks/worker_start.py", budget)
            elif part == "turns":
                lines = part_turns(args.out, args.device, budget)
            else:
                lines = [f"unknown part {part}"]
        except Exception as exc:  # one broken part must not hide the others' results
            import traceback

            (args.out / f"{part}_error.txt").write_text(traceback.format_exc())
            lines = [f"{part}: FAILED {type(exc).__name__}: {exc}"]
        parts_seconds[part] = time.perf_counter() - t0
        lines.append(f"  ({part} took {parts_seconds[part]:.0f} s)")
        report.extend(lines)
        (args.out / "summary.txt").write_text("\n".join(report) + "\n")
        print("\n".join(lines), flush=True)
    report.append(_write_record(args.out, args.device, args.only, parts_seconds))
    print("\n==== SUMMARY ====\n" + "\n".join(report))


def _write_record(out: Path, device: str, real_only: str, parts_seconds: dict[str, float]) -> str:
    """$OUT/gpu_latest.json from the parts' files, to commit as docs/results/gpu_latest.json."""
    if device == "cuda":
        import torch

        device = torch.cuda.get_device_name(0)
    record = record_from_run(out, commit=commit_here(), device=device,
                             date=time.strftime("%Y-%m-%d", time.gmtime()),
                             real_total=real_selected(real_only), parts_seconds=parts_seconds)
    (out / "gpu_latest.json").write_text(json.dumps(record, indent=1) + "\n")
    errors = validate(record)
    return f"record: {out / 'gpu_latest.json'} " + (f"INVALID: {'; '.join(errors)}" if errors else "(valid)")


if __name__ == "__main__":
    main()
