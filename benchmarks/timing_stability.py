"""How well timing repeats across processes: each demo task's baseline and reference solution are
timed in several fresh processes under the scorer's protocol and under alternative protocols, and
the table gives each protocol's per-process medians and the spread of the speedup across processes.

    python benchmarks/timing_stability.py --device cuda --processes 3 --json /tmp/stability.json
    TRITON_INTERPRET=1 python benchmarks/timing_stability.py --device cpu --processes 2 --small

Protocols (each repetition flushes L2 and rotates the input sets, as the scorer does):
  scorer      scorer.gpu.timing.time_forward as the scorer runs it (also gives drain and idle-drain)
  synced_end  end event recorded after a host device-synchronize (the scorer's earlier protocol)
  queued      triton's do_bench style: no host synchronize between repetitions
  spin200     the scorer's protocol with a 200 us GPU spin before the start event
It exists to find where repeat-to-repeat variation comes from; speed targets are not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROTOCOLS = ("scorer", "synced_end", "queued", "spin200", "scorer_again")


def _quantiles(xs: Sequence[float]) -> dict[str, float]:
    s = sorted(xs)
    pick = lambda q: s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]  # noqa: E731
    return {"min": s[0], "p10": pick(0.1), "median": statistics.median(s), "p90": pick(0.9), "max": s[-1]}


def _variant_loop(fn: Callable[..., Any], sets: list[list[Any]], device: Any, mode: str, reps: int,
                  spin_cycles: int) -> list[float]:
    """An alternative protocol, kept apart from scorer.gpu.timing so the scorer's code stays one path."""
    import torch

    from scorer.gpu.timing import MIN_WARMUP_S, Flusher

    flush = Flusher(device, True)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    t_end = time.perf_counter() + (MIN_WARMUP_S if device.type == "cuda" else 0.0)
    i = 0
    while i < 10 or time.perf_counter() < t_end:
        fn(*sets[i % len(sets)])
        i += 1
    sync()
    if device.type != "cuda":
        times = []
        for rep in range(reps):
            args = sets[rep % len(sets)]
            flush(rep)
            t0 = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - t0) * 1e3)
        return times
    pairs = []
    for rep in range(reps):
        args = sets[rep % len(sets)]
        flush(rep)
        if mode != "queued":
            sync()
            torch.cuda._sleep(spin_cycles)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        if mode == "synced_end":
            sync()
        end.record()
        if mode != "queued":
            sync()
        pairs.append((start, end))
    sync()
    return [float(s.elapsed_time(e)) for s, e in pairs]


def child(task_id: str, device_name: str, small: bool, reps: int) -> dict[str, Any]:
    import torch

    from scorer.gpu.timing import TimingPlan, capture_clock, time_forward
    from scorer.tasks.load import build_model, load_module, make_inputs, to_device
    from scorer.tasks.suites import load_suite

    device = torch.device(device_name)
    task = load_suite("demo").tasks[task_id]
    overrides = dict(task.test_shapes) if small else {}
    ref_mod = load_module(task.path, "stability_task", overrides)
    model, init_inputs = build_model(ref_mod, 1234)
    sol_mod = load_module(task.solution, "stability_solution")
    kernel = sol_mod.ModelNew(*init_inputs)
    if set(kernel.state_dict()) == set(model.state_dict()):
        kernel.load_state_dict(model.state_dict())
    model, kernel = model.to(device), kernel.to(device)
    sets = [to_device(make_inputs(ref_mod, seed), device) for seed in (11, 12, 13, 14)]
    clock = capture_clock()
    out: dict[str, Any] = {}
    with torch.no_grad():
        for protocol in PROTOCOLS:
            for who, fn in (("baseline", model), ("kernel", kernel)):
                if protocol.startswith("scorer"):
                    run = time_forward(fn, sets[0], lambda r: sets[r % len(sets)], TimingPlan(10, reps, True), device, clock)
                    rec: dict[str, Any] = _quantiles(run.times_ms)
                    rec["host_median"] = statistics.median(run.host_times_ms)
                    if run.drain_ms:
                        rec["drain_median"] = statistics.median(run.drain_ms)
                        rec["idle_drain_median"] = statistics.median(run.idle_drain_ms or [float("nan")])
                else:
                    mode = "stream" if protocol == "spin200" else protocol
                    spin = 400_000 if protocol == "spin200" else 40_000
                    rec = _quantiles(_variant_loop(fn, sets, device, mode, reps, spin))
                out.setdefault(protocol, {})[who] = rec
    return out


def _gpu_state() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,pstate,power.draw,temperature.gpu",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--tasks", default="swish,row_sum,softmax,add_rmsnorm")
    parser.add_argument("--small", action="store_true", help="test shapes instead of full size (CPU smoke run)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child, args.device, args.small, args.reps)), flush=True)
        return 0
    results: dict[str, Any] = {}
    for task in args.tasks.split(","):
        for _ in range(args.processes):
            cmd = [sys.executable, __file__, "--child", task, "--device", args.device, "--reps", str(args.reps)]
            proc = subprocess.run(cmd + (["--small"] if args.small else []), capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
            entry = json.loads(line[7:]) if line else {"error": (proc.stderr or proc.stdout)[-2000:]}
            entry["gpu_state"] = _gpu_state()
            results.setdefault(task, []).append(entry)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
    print(table(results))
    return 0


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["task | protocol | baseline medians ms | kernel medians ms | kernel p10-p90 (run 1) | speedups | spread"]
    for task, runs in results.items():
        ok = [r for r in runs if "error" not in r]
        if len(ok) < len(runs):
            lines.append(f"{task} | {len(runs) - len(ok)} process(es) failed: {runs[0].get('error', '')[-300:]!r}")
        for protocol in PROTOCOLS:
            recs = [r[protocol] for r in ok if protocol in r]
            if not recs:
                continue
            base = [r["baseline"]["median"] for r in recs]
            kern = [r["kernel"]["median"] for r in recs]
            speed = [b / k for b, k in zip(base, kern, strict=True) if k > 0]
            spread = (max(speed) - min(speed)) / statistics.median(speed) if speed else float("nan")
            k0 = recs[0]["kernel"]
            extra = ""
            if "drain_median" in recs[0]["kernel"]:
                extra = " | drain-idle ms " + "/".join(
                    f"{r['kernel']['drain_median'] - r['kernel']['idle_drain_median']:.4f}" for r in recs)
            lines.append(f"{task} | {protocol} | {'/'.join(f'{b:.4f}' for b in base)} | "
                         f"{'/'.join(f'{k:.4f}' for k in kern)} | {k0['p10']:.4f}-{k0['p90']:.4f} | "
                         f"{'/'.join(f'{s:.3f}' for s in speed)} | {spread:.1%}{extra}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
