"""Can a trusted process time a kernel's GPU work without the kernel's host in the window?

    python benchmarks/gated_batch_probe.py [--tasks level1_5_gelu,...] [--json PATH]    # needs a GPU

The judge's batch (scorer/workers/batch.py) is timed on the judge's host clock from the seeds'
reveal to the sampled outputs, so for a small kernel it reads the kernel worker's launch path, not
its device time (about 2x on an H100), and the clock check must allow that much. This probe tries
the other way, in two processes as the scorer has them (a trusted one, and one running the
solution): the solution's process enqueues N calls that read their inputs from slabs it shares by
CUDA IPC, behind a one-program gate kernel spinning on a flag word, and records an interprocess
event after them. The trusted process then records event A, copies fresh inputs (drawn in its own
memory) into the slabs, sets the flag, waits on the solution's event, records event B and checks
rows of the outputs against its own calls. A - B, less the copy (timed alone the same way), over N
is a device time the solution's host cannot shorten: the inputs did not exist before A.

Rows per task: the hold-gated event median (as the scorer's timed repetitions measure), the host
wall a call of N back-to-back calls, the gated bound a call, and whether the gate opened on its
flag (not on its time-out) with every checked row right. Two more rows probe the limits: a forward
that synchronizes the host (it cannot be enqueued ahead: the gate times out) and a forward of many
small launches (how many launches the queue takes before the host blocks).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASKS = "level1_5_gelu,level1_6_layernorm,level1_8_mean_dim1,level2_8_bias_gelu_tanh,level1_9_log_softmax,level1_1_square_matmul"
GATE_TIMEOUT_NS = 2_000_000_000
TARGET_MS = 20.0


def _gate_kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def gate(flag_ptr, want, timeout_ns):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        t = t0
        seen = tl.load(flag_ptr, volatile=True)
        while (seen != want) & (t - t0 < timeout_ns):
            seen = tl.load(flag_ptr, volatile=True)
            t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
        tl.store(flag_ptr + 1, (seen != want).to(tl.int32))

    return gate


def _load(task_id: str, variant: str) -> tuple[Any, Any, list[Any]]:
    import torch

    from scorer.tasks.load import build_model, load_module, make_inputs
    from scorer.tasks.suites import load_suite

    task = load_suite("kernelbench").tasks[task_id]
    ref = load_module(task.path, f"probe_ref_{task_id}")
    model, init = build_model(ref, 0)
    assert task.solution is not None
    sol = load_module(task.solution, f"probe_sol_{task_id}")
    new, _ = build_model(sol, 0, "ModelNew", init)
    new = new.cuda().eval()
    if variant == "sync":
        inner = new

        class Syncing(torch.nn.Module):
            def forward(self, *args: Any) -> Any:
                out = inner(*args)
                float(out.float().abs().amax())  # reads a value on the host: a synchronization
                return out
        new = Syncing()
    elif variant == "many":
        class Many(torch.nn.Module):
            def forward(self, x: Any, *rest: Any) -> Any:
                y = x.clone()
                for _ in range(40):
                    y.mul_(1.0000001)
                return y
        new = Many()
    return new, model.cuda().eval(), make_inputs(ref, 1, "cuda")


def _event_median(forward: Any, args: list[Any], reps: int = 50) -> float:
    import torch

    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(400_000)  # a hold: the host enqueues forward before the start event runs
        start.record()
        forward(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def solution_process(task_id: str, variant: str, conn: Any) -> None:
    import torch

    try:
        forward, _, args = _load(task_id, variant)
        gate = _gate_kernel()
        tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        with torch.no_grad():
            for _ in range(5):
                out = forward(*args)
            torch.cuda.synchronize()
            event_ms = _event_median(forward, args)
            calls = max(3, min(256, int(TARGET_MS / max(event_ms, 1e-3))))
            if variant == "many":
                calls = 128
            t0 = time.perf_counter()
            for _ in range(calls):
                forward(*args)
            torch.cuda.synchronize()
            wall_ms = (time.perf_counter() - t0) * 1e3 / calls
            outs = out if isinstance(out, (list, tuple)) else [out]
            in_slabs = [torch.empty((calls, *args[i].shape), dtype=args[i].dtype, device="cuda") for i in tensors]
            out_slabs = [torch.full((calls, *o.shape), float("nan"), dtype=o.dtype, device="cuda") for o in outs]
            flag = torch.zeros(2, dtype=torch.int32, device="cuda")
            done = torch.cuda.Event(interprocess=True)
            conn.send({"event_ms": event_ms, "wall_ms": wall_ms, "calls": calls, "tensors": tensors,
                       "in_slabs": in_slabs, "out_slabs": out_slabs, "flag": flag, "done": done.ipc_handle(),
                       "args": [None if i in tensors else a for i, a in enumerate(args)]})
            for trial in range(1, 4):
                conn.recv()  # "arm"
                t0 = time.perf_counter()
                gate[(1,)](flag, trial, GATE_TIMEOUT_NS)
                launch_s = []
                for c in range(calls):
                    tc = time.perf_counter()
                    call_args = list(args)
                    for k, i in enumerate(tensors):
                        call_args[i] = in_slabs[k][c]
                    got = forward(*call_args)
                    for slab, o in zip(out_slabs, got if isinstance(got, (list, tuple)) else [got], strict=False):
                        slab[c].copy_(o)
                    launch_s.append(time.perf_counter() - tc)
                done.record()
                conn.send({"enqueue_ms": (time.perf_counter() - t0) * 1e3, "slowest_call_ms": max(launch_s) * 1e3})
                conn.recv()  # "finished"
                torch.cuda.synchronize()
                conn.send({"timed_out": int(flag[1].item())})
    except Exception as exc:  # the parent prints it
        conn.send({"error": f"{type(exc).__name__}: {exc}"})


def probe(task_id: str, variant: str, ctx: Any) -> dict[str, Any]:
    import torch

    parent, child = ctx.Pipe()
    proc = ctx.Process(target=solution_process, args=(task_id, variant, child), daemon=True)
    proc.start()
    row: dict[str, Any] = {"task": task_id, "variant": variant}
    try:
        if not parent.poll(300):
            return {**row, "error": "no reply in 300 s"}
        info = parent.recv()
        if "error" in info:
            return {**row, **info}
        forward, _, _ = _load(task_id, "plain" if variant == "sync" else variant)
        done = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), info["done"])
        calls, tensors = info["calls"], info["tensors"]
        in_slabs, out_slabs, flag = info["in_slabs"], info["out_slabs"], info["flag"]
        stream = torch.cuda.Stream()
        spans, copies, rights, timeouts, enqueues, slowest = [], [], [], [], [], []
        for trial in range(1, 4):
            fresh = [torch.randn_like(s) if s.is_floating_point() else s.clone() for s in in_slabs]
            # The copy alone, timed the same way, into the same slabs, before the solution is armed.
            with torch.cuda.stream(stream):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for slab, src in zip(in_slabs, fresh, strict=True):
                    slab.copy_(src)
                b.record()
            b.synchronize()
            copies.append(a.elapsed_time(b))
            torch.cuda.synchronize()
            parent.send("arm")
            if not parent.poll(60):
                return {**row, "error": f"trial {trial}: no 'enqueued' in 60 s"}
            enq = parent.recv()
            if "error" in enq:
                return {**row, **enq}
            enqueues.append(enq["enqueue_ms"])
            slowest.append(enq["slowest_call_ms"])
            fresh = [torch.randn_like(s) if s.is_floating_point() else s.clone() for s in in_slabs]
            torch.cuda.synchronize()
            with torch.cuda.stream(stream):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for slab, src in zip(in_slabs, fresh, strict=True):
                    slab.copy_(src)
                flag[0].fill_(trial)
                stream.wait_event(done)
                b.record()
            b.synchronize()
            spans.append(a.elapsed_time(b))
            with torch.no_grad():
                ok = True
                for c in sorted({0, calls // 2, calls - 1}):
                    call_args = list(info["args"])
                    for k, i in enumerate(tensors):
                        call_args[i] = fresh[k][c]
                    want = forward(*call_args)
                    want = want if isinstance(want, (list, tuple)) else [want]
                    for slab, w in zip(out_slabs, want, strict=False):
                        ok = ok and bool(torch.allclose(slab[c].float(), w.float(), rtol=1e-2, atol=1e-2))
            rights.append(ok)
            parent.send("finished")
            timeouts.append(parent.recv()["timed_out"])
        span, copy = min(spans), statistics.median(copies)
        return {**row, "event_ms": info["event_ms"], "wall_ms": info["wall_ms"], "calls": calls,
                "span_ms": spans, "copy_ms": copy, "gated_ms": (span - copy) / calls, "right": rights,
                "timed_out": timeouts, "enqueue_ms": enqueues, "slowest_call_ms": slowest}
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()


def main() -> None:
    import torch.multiprocessing as mp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    rows = [probe(t, "plain", ctx) for t in args.tasks.split(",")]
    rows.append(probe("level1_5_gelu", "sync", ctx))
    rows.append(probe("level1_5_gelu", "many", ctx))
    print("| task | variant | calls | event ms | wall ms a call | gated ms a call | gated / event | wall / event | "
          "copy ms | gate timed out | rows right | enqueue ms | slowest call ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['task']} | {r['variant']} | error: {r['error']} |")
            continue
        ev = r["event_ms"]
        print(f"| {r['task']} | {r['variant']} | {r['calls']} | {ev:.4f} | {r['wall_ms']:.4f} | {r['gated_ms']:.4f} | "
              f"{r['gated_ms'] / ev:.2f} | {r['wall_ms'] / ev:.2f} | {r['copy_ms']:.3f} | {r['timed_out']} | {r['right']} | "
              f"{', '.join(f'{e:.1f}' for e in r['enqueue_ms'])} | {max(r['slowest_call_ms']):.1f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
