"""How far below an honest kernel's own time the judge's floor lies (scorer/judge/clock.py): each
clean corpus kernel scored, with its reported median, the judge's batch bound, the kernel thread's
CPU time a batch call (CPU only) and the floor those give. An honest kernel whose median is below
its floor is `floored`: its speedup comes from the judge's figure. The margin column is median /
floor; a forged clock gains at most that over the honest kernel it wraps (benchmarks/forged_clock_gain.py
measures the forgeries themselves).

    TRITON_INTERPRET=1 .venv/bin/python benchmarks/judge_floor.py --device cpu [--only swish,row_sum]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hacks.corpus import clean_entries, score_entry  # noqa: E402


def _f(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, (int, float)) else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--only", default="", help="comma list: entries whose name contains one of these")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    only = [o for o in args.only.split(",") if o]
    rows = []
    print("| kernel | verdict | median ms | judge bound ms | CPU a call ms | floor ms | median / floor | floored |")
    print("|---|---|---|---|---|---|---|---|")
    for entry in clean_entries():
        if (entry.gpu_only and args.device == "cpu") or (only and not any(o in entry.name for o in only)):
            continue
        score = score_entry(entry, args.device)
        t = score.timing
        row = {"kernel": entry.name, "verdict": score.verdict, "median_ms": t and t.kernel_ms,
               "bound_ms": t and t.judge_bound_ms, "cpu_ms": t and t.judge_cpu_ms, "floor_ms": t and t.judge_floor_ms,
               "floored": bool(t and t.floored)}
        margin = row["median_ms"] / row["floor_ms"] if row["median_ms"] and row["floor_ms"] else None
        row["margin"] = margin
        rows.append(row)
        print(f"| {entry.name} | {score.verdict} | {_f(row['median_ms'])} | {_f(row['bound_ms'])} | {_f(row['cpu_ms'])} "
              f"| {_f(row['floor_ms'])} | {_f(margin)} | {'yes' if row['floored'] else 'no'} |", flush=True)
    margins = sorted(r["margin"] for r in rows if r["margin"])
    if margins:
        print(f"\n{len(rows)} kernels, {sum(r['floored'] for r in rows)} floored; median / floor: "
              f"least {margins[0]:.3g}, median {margins[len(margins) // 2]:.3g}, most {margins[-1]:.3g}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
