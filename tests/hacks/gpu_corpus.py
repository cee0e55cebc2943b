"""Scores every attack and clean kernel of tests/hacks on a GPU and tabulates the catalog's hit rate.

    python tests/hacks/gpu_corpus.py --out DIR [--device cuda] [--only SUBSTRING,...]

Prints, per pattern, how many attacks were tried and caught, and how many clean kernels were
wrongly rejected or flagged; writes DIR/gpu_corpus.json with every verdict and its evidence.
Runs on CPU too (`--device cpu`, GPU-only files skipped), which is how it is smoke-tested.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scorer.checks.catalog import PATTERNS  # noqa: E402
from scorer.judge.pool import judge_pool  # noqa: E402
from tests.hacks.corpus import Entry, attack_entries, caught, clean_entries, clean_ok, score_entry  # noqa: E402


def clip(text: str, keep: int = 3000) -> str:
    # A traceback's last lines name the error: keep its head and its tail.
    return text if len(text) <= keep else text[:keep // 3] + "\n[...]\n" + text[-2 * keep // 3:]


def _run(entry: Entry, device: str) -> dict:
    start = time.perf_counter()
    try:
        score = score_entry(entry, device)
    except Exception as exc:  # a scorer failure is a row in the table, not the end of the run
        return {"name": entry.name, "pattern": entry.pattern, "task": entry.task, "ok": False,
                "verdict": "scorer_error", "error": clip(f"{type(exc).__name__}: {exc}"),
                "seconds": round(time.perf_counter() - start, 2)}
    ok = caught(entry, score) if entry.pattern else clean_ok(score)
    return {"name": entry.name, "pattern": entry.pattern, "task": entry.task, "ok": ok, "verdict": score.verdict,
            "hacks": score.hacks, "flags": score.flags, "error": clip(score.error or ""),
            "known_gap": entry.xfail, "seconds": round(time.perf_counter() - start, 2),
            "kernel_ms": score.timing.kernel_ms if score.timing else None,
            "judge_bound_ms": score.timing.judge_bound_ms if score.timing else None,
            "baseline_ms": score.timing.baseline_ms if score.timing else None,
            "baseline_judge_bound_ms": score.timing.baseline_judge_bound_ms if score.timing else None,
            "speedup": score.timing.speedup if score.timing else None,
            "durations_s": score.durations_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_corpus.json")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--only", default="", help="comma list: score only entries whose name contains one of these")
    parser.add_argument("--kind", default="all", choices=("all", "attacks", "clean"))
    parser.add_argument("--workers", type=int, default=4, help="entries scored at once (timing still takes the GPU alone)")
    parser.add_argument("--budget-s", type=float, default=0, help="start no new entry after this many seconds (0: no limit)")
    args = parser.parse_args(argv)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("error: no CUDA device visible; run on a GPU machine or pass --device cpu", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    pool = {"all": attack_entries() + clean_entries(), "attacks": attack_entries(), "clean": clean_entries()}[args.kind]
    wanted = [w for w in args.only.split(",") if w] or [""]
    entries = [e for e in pool
               if any(w in e.name for w in wanted) and (args.device == "cuda" or not e.gpu_only)]
    deadline = time.monotonic() + args.budget_s if args.budget_s else None

    judges = judge_pool(args.workers)  # one judge process per concurrent scoring

    def run_one(entry: Entry) -> dict | None:
        if deadline is not None and time.monotonic() > deadline:
            return None
        try:
            row = judges.submit(_run, entry, args.device).result()
        except Exception as exc:  # a judge process that died is a row, not the end of the run
            row = {"name": entry.name, "pattern": entry.pattern, "task": entry.task, "ok": False,
                   "verdict": "scorer_error", "hacks": [], "flags": [], "error": clip(f"{type(exc).__name__}: {exc}"),
                   "known_gap": entry.xfail, "seconds": 0.0}
        mark = "ok " if row["ok"] else ("gap" if row.get("known_gap") else "BAD")
        print(f"[{mark}] {row['name']:55s} {row['verdict']:14s} {row['seconds']:6.1f}s", flush=True)
        if not row["ok"] and row.get("error"):
            # Printed now and kept line by line: a call cut off by its time limit still shows why.
            print("      " + row["error"][-600:].replace("\n", "\n      "), flush=True)
        with open(args.out / "gpu_corpus_rows.jsonl", "a") as rows_file:
            rows_file.write(json.dumps(row) + "\n")
        return row

    with judges, ThreadPoolExecutor(max(1, args.workers)) as pool:
        finished = list(pool.map(run_one, entries))
    rows = [r for r in finished if r is not None]
    skipped = [e.name for e, r in zip(entries, finished, strict=True) if r is None]

    table = []
    for p in PATTERNS:
        tried = [r for r in rows if r["pattern"] == p.id]
        table.append({"pattern": p.id, "severity": p.severity, "tried": len(tried),
                      "caught": sum(r["ok"] for r in tried),
                      "missed": [r["name"] for r in tried if not r["ok"]],
                      "false_positives": sum(1 for r in rows if r["pattern"] is None and any(
                          h["pattern"] == p.id for h in r.get("hacks", []) + r.get("flags", [])))})
    clean_rows = [r for r in rows if r["pattern"] is None]
    print()
    print(f"{'pattern':24s} {'severity':8s} {'tried':>5s} {'caught':>6s} {'false+':>6s}")
    for t in table:
        print(f"{t['pattern']:24s} {t['severity']:8s} {t['tried']:5d} {t['caught']:6d} {t['false_positives']:6d}")
    print(f"clean kernels: {len(clean_rows)} scored, {sum(r['ok'] for r in clean_rows)} passed without hack or flag")
    ratios = sorted(r["judge_bound_ms"] / r["kernel_ms"] for r in clean_rows if r.get("judge_bound_ms") and r.get("kernel_ms"))
    if ratios:
        print(f"judge bound / reported median (clean): min {ratios[0]:.3f} median {ratios[len(ratios) // 2]:.3f} "
              f"max {ratios[-1]:.3f} over {len(ratios)}")
    for r in rows:
        if r["pattern"] == "timer-patching":
            print(f"  timer-patching/{r['name']}: verdict {r['verdict']} speedup {r.get('speedup')} "
                  f"bound {r.get('judge_bound_ms')} reported {r.get('kernel_ms')} {[h['pattern'] for h in r.get('hacks', [])]}")
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        print(f"  {'gap' if r.get('known_gap') else 'BAD'} {r['name']}: {r['verdict']} {(r.get('error') or '')[:160]}")
    if skipped:
        print(f"not run (budget): {len(skipped)}: {' '.join(skipped)}")
    result = {"device": args.device, "environment": _environment(), "patterns": table, "results": rows,
              "not_run": skipped}
    tmp = args.out / "gpu_corpus.json.tmp"
    tmp.write_text(json.dumps(result, indent=2))
    os.replace(tmp, args.out / "gpu_corpus.json")
    print(f"wrote {args.out / 'gpu_corpus.json'}")
    return 0


def _environment() -> dict:
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda}
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


if __name__ == "__main__":
    sys.exit(main())
