"""Scorer speedups against an independent timer: `triton.testing.do_bench` (L2 flushed before every
rep) of the same baseline/kernel pair, built the same way as the scorer builds them.

    python benchmarks/do_bench_agreement.py [--suite kernelbench] [--tasks a,b,...] [--json PATH]

For each task: the scorer's speedup (a full scoring through scorer.judge.session) and do_bench's (baseline
Model and the reference solution's ModelNew in this process, on one input set made on the device),
two ways: each forward replayed from a CUDA graph (one host call a rep, hidden behind do_bench's L2
flush: device time, what the scorer reports) and called plainly (host launch cost included where
the GPU waits for it, which the scorer's GPU-wide hold keeps out of its events). Needs a CUDA GPU.
Prints a table last.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_TASKS = ("level1_1_square_matmul,level1_4_conv2d_3x3,level1_10_qk_softmax,level2_5_causal_scaled_softmax,"
                 "level2_9_layernorm_linear,level3_4_lstm,level3_9_rmsnorm_attention_block,"
                 "level4_2_gqa_causal_attention,level3_6_swiglu_ffn_block,level3_7_causal_mha_block,"
                 "level4_1_mla_attention,level4_6_rope_attention")


def _graphed(fn):
    """`fn` captured once in a CUDA graph, or None where capture fails (then only the plain
    do_bench figure is given). A replay launches the whole forward with one host call, which
    do_bench's L2 flush before it hides: the figure is the device's time, as the scorer's is."""
    import torch

    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        return graph.replay
    except Exception:  # noqa: BLE001 - some forwards cannot be captured; that is a row note
        torch.cuda.synchronize()
        return None


def do_bench_times(task, device: str) -> dict[str, float | None]:
    """do_bench medians (ms) of the baseline and the solution, each called plainly and as a CUDA
    graph replay, with do_bench's L2 flush before every rep."""
    import torch
    import triton.testing

    from scorer.tasks.load import build_model, load_module, make_inputs

    ref_mod = load_module(task.path, "agreement_task")
    model, init_inputs = build_model(ref_mod, 1234)
    sol_mod = load_module(task.solution, "agreement_solution")
    torch.manual_seed(1234)
    kernel = sol_mod.ModelNew(*init_inputs)
    if set(kernel.state_dict()) == set(model.state_dict()):
        kernel.load_state_dict(model.state_dict())
    model, kernel = model.to(device), kernel.to(device)
    inputs = make_inputs(ref_mod, 99, device)
    times: dict[str, float | None] = {}
    with torch.no_grad():
        for name, module in (("baseline", model), ("kernel", kernel)):
            fn = lambda m=module: m(*inputs)  # noqa: E731
            times[name] = triton.testing.do_bench(fn, warmup=100, rep=500, return_mode="median")
            replay = _graphed(fn)
            times[f"{name}_graph"] = (triton.testing.do_bench(replay, warmup=100, rep=500, return_mode="median")
                                      if replay else None)
    return times


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
    from scorer.judge.session import ScoringSession
    from scorer.options import ScoreOptions
    from scorer.tasks.suites import load_suite

    suite = load_suite(args.suite)
    rows = []
    with ScoringSession(ScoreOptions(device="cuda")) as session:
        for task_id in [t for t in args.tasks.split(",") if t]:
            task = suite.tasks[task_id]
            score = session.score(suite, task_id, task.solution, device="cuda")
            d = do_bench_times(task, "cuda")
            t = score.timing
            graph = d["baseline_graph"] / d["kernel_graph"] if d["baseline_graph"] and d["kernel_graph"] else None
            row = {"task": task_id, "verdict": score.verdict,
                   "scorer_baseline_ms": t.baseline_ms if t else None, "scorer_kernel_ms": t.kernel_ms if t else None,
                   "scorer_speedup": t.speedup if t else None, "do_bench_baseline_ms": d["baseline"],
                   "do_bench_kernel_ms": d["kernel"], "do_bench_speedup": d["baseline"] / d["kernel"],
                   "graph_baseline_ms": d["baseline_graph"], "graph_kernel_ms": d["kernel_graph"],
                   "graph_speedup": graph}
            if row["scorer_speedup"]:
                row["difference"] = row["scorer_speedup"] / row["do_bench_speedup"] - 1
                if graph:
                    row["graph_difference"] = row["scorer_speedup"] / graph - 1
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    agree = [r for r in rows if abs(r.get("graph_difference", 1.0)) <= 0.02]
    print(f"{'task':34s} {'scorer':>7s} {'graph':>7s} {'diff':>6s} {'plain':>7s} {'diff':>6s}  "
          "(baseline/kernel ms: scorer | do_bench graph | do_bench plain)")
    def pct(r: dict, key: str) -> str:
        return f"{r[key]:+.1%}" if key in r else "-"

    for r in rows:
        print(f"{r['task']:34s} {r['scorer_speedup'] or 0:7.3f} {r['graph_speedup'] or 0:7.3f} "
              f"{pct(r, 'graph_difference'):>6s} {r['do_bench_speedup']:7.3f} {pct(r, 'difference'):>6s}  "
              f"{r['scorer_baseline_ms'] or 0:.4f}/{r['scorer_kernel_ms'] or 0:.4f} | "
              f"{r['graph_baseline_ms'] or 0:.4f}/{r['graph_kernel_ms'] or 0:.4f} | "
              f"{r['do_bench_baseline_ms']:.4f}/{r['do_bench_kernel_ms']:.4f}")
    print(f"within 2% of do_bench (graph replay, L2 flushed): {len(agree)} of {len(rows)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
