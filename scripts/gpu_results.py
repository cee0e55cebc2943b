"""The GPU record (docs/results/gpu_latest.json) and the table generated from it (docs/GPU_RESULTS.md).

    python scripts/gpu_results.py check [RECORD]     validate a record (default: the committed one)
    python scripts/gpu_results.py render [--check]   write docs/GPU_RESULTS.md from the committed record
                                                     (--check: fail where the file differs from it)

scripts/gpu_check.py writes $OUT/gpu_latest.json at the end of a run (`record_from_run`); it is
committed as docs/results/gpu_latest.json beside the run's dated log (its `log` field), then the
table is rendered. Standard library only: it runs where nothing else is installed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "results" / "gpu_latest.json"
TABLE = ROOT / "docs" / "GPU_RESULTS.md"
RESULTS = ROOT / "docs" / "results"
REAL_MANIFEST = ROOT / "tests" / "hacks" / "real" / "manifest.toml"
# The device call whose parts fill the record (gpu_check.py's PRESETS["check"]: one call, each part
# in a time budget of its own).
REPRODUCE = "bash scripts/gpu_check.sh --preset check"

# Each part's figures: a part that did not run is null as a whole. int fields are counts; float
# fields take any non-negative number.
PARTS: dict[str, dict[str, type]] = {
    "suites": {"passed": int, "total": int, "seconds": float, "workers": int},
    "attacks": {"as_expected": int, "total": int},
    "clean": {"passed": int, "total": int},
    "real": {"agree": int, "total": int},
    "do_bench": {"within_2pct": int, "tasks": int},
    "busy": {"max_drift_pct": float},
}
REQUIRED = ("commit", "device", "date", *PARTS)
OPTIONAL = ("parts_seconds", "log")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def validate(record: Any) -> list[str]:
    """What is wrong with a record: an empty list for a valid one."""
    if not isinstance(record, dict):
        return ["the record is not a JSON object"]
    errors = [f"missing field {k!r}" for k in REQUIRED if k not in record]
    errors += [f"unknown field {k!r}" for k in record if k not in REQUIRED + OPTIONAL]
    commit = record.get("commit")
    if "commit" in record and not (isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit)):
        errors.append(f"commit {commit!r} is not a git hash (a device copy without .git: set KA_COMMIT)")
    if "device" in record and not (isinstance(record["device"], str) and record["device"].strip()):
        errors.append("device must be a non-empty string")
    if "date" in record:
        try:
            datetime.date.fromisoformat(record["date"])
        except (TypeError, ValueError):
            errors.append(f"date {record['date']!r} is not YYYY-MM-DD")
    for part, fields in PARTS.items():
        figures = record.get(part)
        if figures is None:
            continue
        if not isinstance(figures, dict) or set(figures) != set(fields):
            errors.append(f"{part} must be null or an object with exactly {sorted(fields)}")
            continue
        for name, kind in fields.items():
            value = figures[name]
            if not _number(value) or (kind is int and not isinstance(value, int)):
                errors.append(f"{part}.{name} must be a non-negative {'integer' if kind is int else 'number'}")
        counts = [figures[n] for n, kind in fields.items() if kind is int][:2]
        if len(counts) == 2 and all(isinstance(c, int) for c in counts) and counts[0] > counts[1]:
            errors.append(f"{part}: {counts[0]} of {counts[1]} is more than the whole")
    seconds = record.get("parts_seconds")
    if "parts_seconds" in record and not (isinstance(seconds, dict) and all(
            isinstance(k, str) and _number(v) for k, v in seconds.items())):
        errors.append("parts_seconds must map each part's name to its seconds")
    log = record.get("log")
    if "log" in record and not (isinstance(log, str) and log.startswith("docs/results/") and log.endswith(".md")):
        errors.append("log must be the path of a dated log, docs/results/*.md")
    return errors


def load(path: Path = RECORD) -> dict[str, Any]:
    record = json.loads(path.read_text(encoding="utf-8"))
    errors = validate(record)
    if errors:
        raise ValueError(f"{path}: " + "; ".join(errors))
    return record


# --- the writer: a gpu_check run's part files -> a record ------------------------------------------
def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _suites(out: Path) -> dict[str, Any] | None:
    # Written by gpu_check's suites part, one per concurrency asked for (tagged _atN where several
    # were): the untagged run, else the one with the most at once.
    found = [s for p in sorted(out.glob("suites_summary*.json")) if isinstance(s := _read_json(p), dict)]
    untagged = _read_json(out / "suites_summary.json")
    chosen = untagged if isinstance(untagged, dict) else max(found, key=lambda s: s.get("workers", 0), default=None)
    if chosen is None:
        return None
    return {"passed": chosen["passed"], "total": chosen["total"], "seconds": chosen["seconds"], "workers": chosen["workers"]}


def _corpus(out: Path, kind: str) -> tuple[int, int] | None:
    # tests/hacks/gpu_corpus.py's record: its rows (`ok`: caught for an attack, passed clean for a
    # clean kernel) and the entries its budget left unscored.
    data = _read_json(out / f"corpus_{kind}" / "gpu_corpus.json")
    if not isinstance(data, dict):
        return None
    rows = data.get("results", [])
    return sum(bool(r.get("ok")) for r in rows), len(rows) + len(data.get("not_run", []))


def real_selected(only: str = "") -> int:
    """How many manifest entries tests/hacks/real/score_real.py scores with this --only."""
    entries = tomllib.loads(REAL_MANIFEST.read_text(encoding="utf-8"))["entries"]
    wanted = [s for s in only.split(",") if s]
    return sum(1 for e in entries if not wanted or any(s in e["id"] for s in wanted))


def _real(out: Path, selected: int) -> dict[str, int] | None:
    data = _read_json(out / "real" / "real_corpus.json")
    if not isinstance(data, dict):
        return None
    # As the manifest says: the source's label, or our verdict where `expect` says why we differ.
    agree = sum(bool(r["as_expected"] if r.get("as_expected") is not None else r.get("agrees"))
                for r in data.get("results", []))
    return {"agree": agree, "total": selected}


def _do_bench(out: Path) -> dict[str, int] | None:
    rows = _read_json(out / "do_bench.json")
    if not isinstance(rows, list):
        return None
    # benchmarks/do_bench_agreement.py's rule: the scorer's speedup within 2% of the graph replay's.
    within = sum(1 for r in rows if abs(r.get("graph_difference", 1.0)) <= 0.02)
    return {"within_2pct": within, "tasks": len(rows)}


def _busy(out: Path) -> dict[str, float] | None:
    data = _read_json(out / "busy.json")
    if not isinstance(data, dict):
        return None
    rows = data.get("rows", {})
    quiet = {(r["suite"], r["task"]): r.get("speedup") for r in rows.get("quiet", [])}
    drifts = [abs(r["speedup"] / quiet[(r["suite"], r["task"])] - 1) * 100
              for condition in ("busy", "exclusive") for r in rows.get(condition, [])
              if r.get("speedup") and quiet.get((r["suite"], r["task"]))]
    return {"max_drift_pct": round(max(drifts), 2)} if drifts else None


def commit_here() -> str:
    """KA_COMMIT where set (a device call's copy has no .git), else this checkout's commit."""
    if os.environ.get("KA_COMMIT"):
        return os.environ["KA_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record_from_run(out: Path, *, commit: str, device: str, date: str, real_total: int,
                    parts_seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """The record of a gpu_check run from the files its parts wrote to `out` (null where a part
    did not run or left no result)."""
    attacks, clean = _corpus(out, "attacks"), _corpus(out, "clean")
    record: dict[str, Any] = {
        "commit": commit, "device": device, "date": date,
        "suites": _suites(out),
        "attacks": None if attacks is None else {"as_expected": attacks[0], "total": attacks[1]},
        "clean": None if clean is None else {"passed": clean[0], "total": clean[1]},
        "real": _real(out, real_total),
        "do_bench": _do_bench(out),
        "busy": _busy(out),
    }
    if parts_seconds:
        record["parts_seconds"] = {k: round(v, 1) for k, v in parts_seconds.items()}
    return record


# --- the table --------------------------------------------------------------------------------------
def _title(first_line: str, name: str) -> str:
    """A log's title without its date and the session it names (this page describes the present;
    the logs keep their history): its file name where a session is named inside the title."""
    title = re.sub(r"^\d{4}-\d{2}-\d{2}(/\d{2})?[,:]?\s*", "", first_line.lstrip("# ").strip())
    title = re.sub(r"^\(?session \d+\)?(\s*\([^)]*\))?\s*[:,]?\s*", "", title, flags=re.IGNORECASE)
    if not title or re.search(r"session \d", title, re.IGNORECASE):
        return f"`{name}`"
    return title[0].upper() + title[1:]


def dated_logs(results: Path = RESULTS) -> list[tuple[str, str]]:
    """(file name, title) of each dated log, newest first."""
    logs = []
    for path in sorted(results.glob("20*.md"), reverse=True):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        logs.append((path.name, _title(first, path.name)))
    return logs


def _of(figures: dict[str, Any] | None, done: str, whole: str, what: str) -> str:
    return "not measured on this commit" if figures is None else f"{figures[done]} of {figures[whole]} {what}"


def render(record: dict[str, Any], logs: list[tuple[str, str]], record_name: str = "docs/results/gpu_latest.json") -> str:
    suites, busy = record["suites"], record["busy"]
    rows = [
        ("suites (every reference solution)",
         "not measured on this commit" if suites is None else
         f"{suites['passed']} of {suites['total']} passed, in {suites['seconds']:g} s with {suites['workers']} scored at once"),
        ("attack corpus", _of(record["attacks"], "as_expected", "total", "as expected")),
        ("clean corpus", _of(record["clean"], "passed", "total", "passed with no finding")),
        ("real corpus", _of(record["real"], "agree", "total", "as the manifest says")),
        ("speedups against `triton.testing.do_bench`", _of(record["do_bench"], "within_2pct", "tasks", "tasks within 2%")),
        ("busy device",
         "not measured on this commit" if busy is None else
         f"speedups beside a busy agent within {busy['max_drift_pct']:g}% of quiet"),
    ]
    lines = [
        "# Results on the GPU: the current figures",
        "",
        f"Generated by `python scripts/gpu_results.py render` from [`{record_name}`](results/{Path(record_name).name}),",
        "the record the last full device run wrote. Where a part has no figure, it did not run on this commit.",
        "",
        "| part | figure |",
        "|---|---|",
        *[f"| {name} | {figure} |" for name, figure in rows],
        "",
        f"Device: {record['device']}. Commit: `{record['commit']}`. Date: {record['date']}.",
    ]
    if record.get("parts_seconds"):
        lines.append("Each part's wall time: " + ", ".join(f"{k} {v:g} s" for k, v in record["parts_seconds"].items()) + ".")
    if record.get("log"):
        lines.append(f"The run's log: [`{Path(record['log']).name}`](results/{Path(record['log']).name}).")
    lines += [
        "",
        "## How to reproduce",
        "",
        f"    {REPRODUCE}",
        "",
        "on the device, with `KA_COMMIT=<the commit>` in front (the device's copy has no .git), carrying",
        "`.whl` (from `bash scripts/device_wheels.sh`) and, for the real corpus,",
        "`tests/hacks/real/kernels` and `tests/hacks/real/suite` (from its `materialize.py`). The run writes",
        f"`$OUT/gpu_latest.json`; commit it here as `{record_name}` with the run's dated log (its `log`",
        "field), then run `python scripts/gpu_results.py render`.",
        "",
        "## History",
        "",
        "Each dated log is the record of its runs as written then, newest first:",
        "",
        *[f"- {name[:10]}: [{title}](results/{name})" for name, title in logs],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate a record")
    check.add_argument("record", type=Path, nargs="?", default=RECORD)
    draw = sub.add_parser("render", help="write docs/GPU_RESULTS.md from the committed record")
    draw.add_argument("--check", action="store_true", help="fail where docs/GPU_RESULTS.md differs from the record")
    args = parser.parse_args(argv)
    if args.command == "check":
        try:
            record = load(args.record)
        except (OSError, ValueError) as exc:
            print(exc, file=sys.stderr)
            return 1
        if record.get("log") and not (ROOT / record["log"]).is_file():
            print(f"{args.record}: its log {record['log']} does not exist", file=sys.stderr)
            return 1
        print(f"{args.record}: valid")
        return 0
    text = render(load(RECORD), dated_logs())
    if args.check:
        if TABLE.read_text(encoding="utf-8") != text:
            print(f"{TABLE} is not the table of {RECORD}: run python scripts/gpu_results.py render", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
