"""Scores the real corpus on a device and tabulates our verdicts against the source's labels.

    python tests/hacks/real/score_real.py --device cpu --out DIR [--only SUBSTRING,...]

Prints one row per kernel and, per class, how many agree with the source's label (a hack
rejected, a clean kernel passed with no finding, a rubric leak passed with no hack); writes
DIR/real_corpus.json with every verdict and its evidence. On CPU set TRITON_INTERPRET=1. Needs
the materialized kernels (materialize.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scorer.judge.pool import judge_pool  # noqa: E402
from tests.hacks.corpus import Entry, clean_ok, score_entry  # noqa: E402

# Verdicts that condemn a kernel; one the CPU cannot run may fail to load or run there, never get these.
CONDEMNING = {"incorrect", "hack_detected"}


def agrees(our_class: str, score) -> bool:
    """A hack is rejected; a clean kernel passes with no finding; a rubric leak passes with no hack."""
    if our_class == "hack":
        return score.verdict in CONDEMNING
    if our_class == "clean":
        return clean_ok(score)
    return score.verdict == "passed" and not score.hacks


def as_expected(entry: dict, score) -> bool | None:
    """Where the manifest says our verdict differs from the source's label and why (`expect`):
    whether it held. A condemning `expect` holds for either condemning verdict, since the devices
    reach it differently (the gemini top-k's bug shows at the CPU's test shape, and only at an
    alternative shape on a GPU, where the task's own shapes pass)."""
    expect = entry.get("expect")
    if expect is None:
        return None
    return score.verdict in CONDEMNING if expect in CONDEMNING else score.verdict == expect


def score(entry: dict, device: str):
    """One manifest entry through the corpus's scoring sessions (references prepared once per task)."""
    kernel = Entry(path=HERE / entry["kernel"], task=entry["task"], suite=str(HERE / "suite"), gpu_only=False,
                   pattern=None)
    return score_entry(kernel, device)


def run(entry: dict, device: str) -> dict:
    start = time.perf_counter()
    row = {k: entry[k] for k in ("id", "task", "model", "source_label", "our_class", "cpu_judgeable")}
    try:
        result = score(entry, device)
    except Exception as exc:  # a scorer failure is a row in the table, not the end of the run
        return {**row, "verdict": "scorer_error", "agrees": False, "error": f"{type(exc).__name__}: {exc}"[:2000],
                "seconds": round(time.perf_counter() - start, 1)}
    return {**row, "verdict": result.verdict, "agrees": agrees(entry["our_class"], result),
            "as_expected": as_expected(entry, result), "hacks": result.hacks,
            "flags": result.flags, "error": (result.error or "")[:2000],
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="", help="comma-separated substrings of entry ids")
    parser.add_argument("--workers", type=int, default=1,
                        help="entries scored at once (each in a judge process with its session)")
    args = parser.parse_args(argv)
    entries = tomllib.loads((HERE / "manifest.toml").read_text(encoding="utf-8"))["entries"]
    wanted = [s for s in args.only.split(",") if s]
    entries = [e for e in entries if not wanted or any(s in e["id"] for s in wanted)]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with judge_pool(args.workers) as pool:  # one judge process per concurrent scoring
        for row in pool.map(run, entries, [args.device] * len(entries)):
            rows.append(row)
            report(row, args.out, args.device, rows)
    per_class = Counter((r["our_class"], r["cpu_judgeable"] or args.device != "cpu", r["agrees"]) for r in rows)
    for cls in ("hack", "clean", "rubric"):
        judged = [per_class[(cls, True, ok)] for ok in (True, False)]
        print(f"{cls:<7} judgeable: {judged[0]}/{sum(judged)} agree with the source")
    expected = [r["as_expected"] for r in rows if r.get("as_expected") is not None]
    print(f"where we differ from the source on purpose (`expect`): {sum(expected)}/{len(expected)} as the manifest says")
    return 0


def report(row: dict, out: Path, device: str, rows: list[dict]) -> None:
    """One printed row per kernel; the JSON is rewritten after each, so a cut-off run keeps its rows."""
    found = ",".join(f["pattern"] for f in row.get("hacks", []) + row.get("flags", []))
    mark = "ok " if row["agrees"] else ("exp" if row.get("as_expected") else "XX ")  # exp: as the manifest's `expect` says
    print(f"{mark} {row['id']:<58} {row['source_label']:<12} {row['verdict']:<14} "
          f"{found} {row['seconds']}s", flush=True)
    (out / "real_corpus.json").write_text(json.dumps({"device": device, "results": rows}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
