"""What the web app shows, read from sweep folders: the sweeps under the given roots, one
leaderboard per (sweep, suite) labelled with its hardware and harness, per-kernel detail and plot
data. Everything comes from the files a sweep writes (`index.json`, the ledger, `tasks.json`, trial
folders). The trials' rows are read from the ledger (read-only SQLite; it also knows which trials
are running, which index.json learns only when a trial ends), else from index.json; results are
cached by the stamps (mtime, size) of index.json, the ledger and its WAL, so a change shows at once.

The arithmetic is the leaderboard's own (`orchestrator.leaderboard.build_leaderboard`, with its
bootstrap intervals); this module only chooses which trials go into a board.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelarena.errors import UserError
from orchestrator.hardware import hardware_label, hardware_of
from orchestrator.index import INDEX_FILE, Index, load_index
from orchestrator.leaderboard import Leaderboard, build_leaderboard, compare_models
from orchestrator.ledger import TrialRow
from orchestrator.planner import ResolvedTask
from orchestrator.prepare import FROZEN_TASKS, LEDGER_FILE
from orchestrator.trial_files import KERNEL_FILE, read_score
from scorer.checks.dynamic import roofline_floor_ms
from scorer.errors import ScorerUserError
from scorer.score import TimingResult
from scorer.tasks.suites import Task, load_suite


class NotFound(UserError):
    """An unknown sweep, suite, task or trial in a request (HTTP 404)."""


Stamp = tuple[int, int]
LEDGER_WAL = LEDGER_FILE + "-wal"


def ledger_rows(sweep_dir: Path) -> list[TrialRow] | None:
    """The ledger's rows, read-only: fresher than index.json, which is rebuilt only when a trial
    ends (the ledger also knows which trials are running). None without a readable ledger."""
    db = sweep_dir / LEDGER_FILE
    if not db.is_file():
        return None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    con.row_factory = sqlite3.Row
    try:
        return [TrialRow.from_db(r) for r in con.execute("SELECT * FROM trials ORDER BY seq")]
    except sqlite3.Error:
        return None
    finally:
        con.close()


def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _sweep_stamp(sweep_dir: Path) -> tuple[Stamp | None, ...]:
    """Every ledger commit touches the WAL file; index.json is rewritten after every trial."""
    return tuple(_stamp(sweep_dir / name) for name in (INDEX_FILE, LEDGER_FILE, LEDGER_WAL))


def find_sweeps(roots: list[Path]) -> list[Path]:
    """Each root is a sweep folder (holds index.json) or a folder of sweep folders (like runs/)."""
    found: list[Path] = []
    for root in roots:
        if (root / INDEX_FILE).is_file():
            found.append(root)
        elif root.is_dir():
            found += sorted(p for p in root.iterdir() if (p / INDEX_FILE).is_file())
    return found


def sweep_ids(dirs: list[Path]) -> dict[str, Path]:
    """URL-safe id per sweep folder: its name, with a suffix when two roots hold the same name."""
    out: dict[str, Path] = {}
    for d in dirs:
        base = candidate = d.name
        n = 2
        while candidate in out:
            candidate = f"{base}-{n}"
            n += 1
        out[candidate] = d
    return out


def _names(names: Any, shown: int = 8) -> str:
    """What exists, for a "not found" message: the first few names (natural order) and how many more."""
    unique = sorted(set(names), key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)])
    more = len(unique) - shown
    return (", ".join(unique[:shown]) + (f" and {more} more" if more > 0 else "")) or "none"


RAW_FILES = ("kernel.py", "score.json", "transcript.jsonl")
"""A trial folder's files the app serves as they are (`/api/file`)."""


def score_details(score: dict[str, Any]) -> dict[str, Any]:
    """What score.json holds beyond ms and speedup, for the kernel page: timing spread and
    repetitions, the correctness rule and errors, the environment's versions, stage durations."""
    timing = score.get("timing") or {}
    correctness = score.get("correctness") or {}
    return {
        "timer": timing.get("timer"), "repetitions": timing.get("repetitions"),
        "kernel_spread": timing.get("kernel_spread"), "baseline_spread": timing.get("baseline_spread"),
        "correctness_trials": correctness.get("trials"), "correctness_passed": correctness.get("passed"),
        "tolerance": correctness.get("rule"), "max_abs_error": correctness.get("max_abs_error"),
        "max_rel_error": correctness.get("max_rel_error"),
        "environment": score.get("environment") or {}, "durations_s": score.get("durations_s") or {},
        "contended": bool(score.get("contended")), "contention": score.get("contention") or {},
        "isolation": _isolation_text(score.get("isolation") or {}),
    }


def _isolation_text(isolation: dict[str, Any]) -> str | None:
    """score.json's `isolation` in a few words: the kernel's wall complete, or what was missing."""
    if not isolation:
        return None
    if isolation.get("complete"):
        return "complete"
    return "incomplete: " + (", ".join(str(m) for m in isolation.get("missing") or []) or "unknown")


def roofline_share(task: Task | None, kernel_ms: float | None, device_name: str | None) -> float | None:
    """Share of the device's roofline a kernel reaches: floor_ms / kernel_ms, with the floor the
    scorer's own (`impossible-speed` uses it). None without the task's counts, a timed kernel or a
    device whose peaks are known."""
    if task is None or not kernel_ms or kernel_ms <= 0:
        return None
    floor_ms = roofline_floor_ms(task.flops, task.bytes_moved, device_name)
    return None if floor_ms is None else floor_ms / kernel_ms


def kernel_diff(reference: str | None, source: str | None, task: str) -> str | None:
    if reference is None or source is None:
        return None
    return "".join(difflib.unified_diff(reference.splitlines(keepends=True), source.splitlines(keepends=True),
                                        fromfile=f"{task}/reference solution", tofile=f"{task}/kernel.py", n=3))


def _read_text(path: Path, limit: int = 400_000) -> str | None:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


@dataclass
class _SweepCache:
    stamp: tuple[Stamp | None, ...]
    index: Index
    hardware: str
    boards: dict[str, Leaderboard]
    plots: dict[str, dict[str, Any]]


class Catalog:
    """Thread-safe cache of the sweeps under `roots`; every read checks the sweep's stamps."""

    def __init__(self, roots: list[Path], resamples: int = 1000, seed: int = 0) -> None:
        self.roots = roots
        self.resamples = resamples
        self.seed = seed
        self._lock = threading.Lock()
        self._cache: dict[Path, _SweepCache] = {}
        self._tasks: dict[Path, dict[tuple[str, str], Task | None]] = {}

    def sweeps(self) -> dict[str, Path]:
        return sweep_ids(find_sweeps(self.roots))

    def version(self) -> str:
        """Changes whenever a sweep's index or ledger changes, or a sweep appears or goes."""
        return str(hash(tuple((sid, _sweep_stamp(d)) for sid, d in self.sweeps().items())) & 0xFFFFFFFFFFFF)

    def _dir(self, sweep_id: str) -> Path:
        found = self.sweeps().get(sweep_id)
        if found is None:
            raise NotFound(f"no sweep '{sweep_id}'; sweeps: {', '.join(self.sweeps()) or 'none yet'}")
        return found

    def _load(self, sweep_dir: Path) -> _SweepCache:
        stamp = _sweep_stamp(sweep_dir)
        with self._lock:
            cached = self._cache.get(sweep_dir)
            if cached is not None and cached.stamp == stamp:
                return cached
        index = load_index(sweep_dir)
        rows = ledger_rows(sweep_dir)
        if rows is not None:
            counts = {"pending": 0, "running": 0, "done": 0, "failed": 0}
            for row in rows:
                counts[row.state] += 1
            index = index.model_copy(update={"trials": rows, "counts": counts})
        entry = _SweepCache(stamp=stamp, index=index, hardware=hardware_label(sweep_dir, index), boards={}, plots={})
        with self._lock:
            self._cache[sweep_dir] = entry
        return entry

    def index(self, sweep_id: str) -> Index:
        return self._load(self._dir(sweep_id)).index

    def summary(self) -> list[dict[str, Any]]:
        """One entry per sweep with its suites: what the home page lists."""
        out = []
        for sid, d in self.sweeps().items():
            try:
                entry = self._load(d)
            except UserError:
                continue  # a sweep folder being created has no valid index yet
            index = entry.index
            suites = []
            for suite in dict.fromkeys(t.suite for t in index.trials):
                # The board page's own ranks (shared where intervals overlap): every model at rank 1
                # leads, so the home page never names one leader where the board shows several.
                board, _ = self.board(sid, suite)
                top = [m for m in board.models if m.rank == 1 and m.finished]
                suites.append({"suite": suite, "trials": sum(t.suite == suite for t in index.trials),
                               "leaders": [m.model for m in top], "leader_score": top[0].score if top else None})
            out.append({"id": sid, "name": index.name, "harness": index.harness, "hardware": entry.hardware,
                        "updated_at": index.updated_at, "counts": index.counts, "models": len(index.models),
                        "suites": suites})
        return out

    @staticmethod
    def _suite_index(index: Index, suite: str) -> Index:
        trials = [t for t in index.trials if t.suite == suite]
        models = {t.model for t in trials}
        return index.model_copy(update={"trials": trials, "models": {m: e for m, e in index.models.items() if m in models}})

    def board(self, sweep_id: str, suite: str) -> tuple[Leaderboard, _SweepCache]:
        entry = self._load(self._dir(sweep_id))
        with self._lock:
            board = entry.boards.get(suite)
        if board is None:
            if not any(t.suite == suite for t in entry.index.trials):
                raise NotFound(f"sweep '{sweep_id}' has no suite '{suite}'; "
                               f"suites: {_names(t.suite for t in entry.index.trials)}")
            board = build_leaderboard(self._suite_index(entry.index, suite), resamples=self.resamples, seed=self.seed,
                                      hardware=hardware_of(entry.hardware))
            with self._lock:
                entry.boards[suite] = board
        return board, entry

    def compare(self, sweep_id: str, suite: str, a: str, b: str) -> dict[str, Any]:
        """Two models of a board side by side, with the paired bootstrap's answer."""
        entry = self._load(self._dir(sweep_id))
        index = self._suite_index(entry.index, suite)
        if not index.trials:
            raise NotFound(f"sweep '{sweep_id}' has no suite '{suite}'; suites: {_names(t.suite for t in entry.index.trials)}")
        for name in (a, b):
            if name not in index.models:
                raise NotFound(f"board '{sweep_id}/{suite}' has no model '{name}'; models: {_names(index.models)}")
        result = compare_models(index, a, b, resamples=self.resamples, seed=self.seed)
        ranks = {m.model: m.rank for m in self.board(sweep_id, suite)[0].models}
        result.a.rank, result.b.rank = ranks.get(a), ranks.get(b)
        return {"sweep": sweep_id, "suite": suite, "hardware": entry.hardware, "models": list(index.models),
                **result.model_dump(mode="json")}

    def task(self, sweep_id: str, suite: str, task: str) -> Task | None:
        """The suite's task (for its reference solution and roofline counts), via tasks.json."""
        sweep_dir = self._dir(sweep_id)
        with self._lock:
            known = self._tasks.setdefault(sweep_dir, {})
            if (suite, task) in known:
                return known[(suite, task)]
        found = None
        try:
            frozen = json.loads((sweep_dir / FROZEN_TASKS).read_text(encoding="utf-8"))
            resolved = [ResolvedTask.model_validate(t) for t in frozen]
            entry = next((t for t in resolved if t.suite == suite and t.task == task), None)
            if entry is not None:
                found = load_suite(entry.suite_root).tasks.get(task)
        except (OSError, ValueError, UserError, ScorerUserError):  # a moved suite folder: no reference, no roofline
            found = None
        with self._lock:
            known[(suite, task)] = found
        return found

    def kernel(self, sweep_id: str, suite: str, task: str) -> dict[str, Any]:
        entry = self._load(self._dir(sweep_id))
        sweep_dir = self._dir(sweep_id)
        rows = [t for t in entry.index.trials if t.suite == suite and t.task == task]
        if not rows:
            raise NotFound(f"sweep '{sweep_id}' has no task '{suite}/{task}'; "
                           f"tasks: {_names(t.task for t in entry.index.trials if t.suite == suite)}")
        spec = self.task(sweep_id, suite, task)
        reference = _read_text(spec.solution) if spec is not None and spec.solution is not None else None
        trials = []
        for row in sorted(rows, key=lambda r: (r.model, r.sample)):
            trial_dir = sweep_dir / row.rel_dir
            score = read_score(trial_dir) if row.state in ("done", "failed") else None
            timing = score.timing if score and score.timing else TimingResult()
            env = score.environment if score else {}
            source = _read_text(trial_dir / KERNEL_FILE) if row.state in ("done", "failed") else None
            trials.append({
                "trial_id": row.trial_id, "model": row.model, "sample": row.sample, "state": row.state,
                "verdict": row.verdict, "speedup": row.speedup, "rel_dir": row.rel_dir, "contended": row.contended,
                "baseline_ms": timing.baseline_ms, "kernel_ms": timing.kernel_ms,
                "roofline_share": roofline_share(spec, timing.kernel_ms, env.get("gpu")),
                "device": env.get("gpu") or ("CPU" if env else None),
                # without score.json the ledger still names the findings (no evidence to show)
                "hacks": score.hacks if score else [{"pattern": h, "evidence": ""} for h in row.hacks],
                "flags": score.flags if score else [{"pattern": f, "evidence": ""} for f in row.flags],
                "error": row.error or (score.error if score else None), "exit_reason": row.exit_reason,
                "tokens": row.input_tokens + row.output_tokens, "dollars": row.dollars,
                "source": source, "diff": kernel_diff(reference, source, task),
                "details": score_details(score.to_dict() if score else {}),
                "files": [name for name in RAW_FILES if (trial_dir / name).is_file()],
            })
        board, _ = self.board(sweep_id, suite)
        return {"sweep": sweep_id, "suite": suite, "task": task, "hardware": entry.hardware,
                "ranks": {m.model: m.rank for m in board.models},
                "level": spec.level if spec is not None else None,
                "flops": spec.flops if spec is not None else None,
                "bytes_moved": spec.bytes_moved if spec is not None else None,
                "reference": reference, "trials": trials}

    def plots(self, sweep_id: str, suite: str) -> dict[str, Any]:
        """Plot data: correct kernels' speedups per model, pass@1 against dollars per model, and
        each task's best roofline share per model (tasks with roofline counts on a known device)."""
        board, entry = self.board(sweep_id, suite)
        with self._lock:
            cached = entry.plots.get(suite)
        if cached is not None:
            return cached
        sweep_dir = self._dir(sweep_id)
        speedups: dict[str, list[float]] = defaultdict(list)
        roofline: dict[str, dict[str, float]] = defaultdict(dict)
        for row in entry.index.trials:
            if row.suite != suite or row.state != "done" or row.verdict != "passed" or row.speedup is None:
                continue
            speedups[row.model].append(row.speedup)
            spec = self.task(sweep_id, suite, row.task)
            if spec is None or not (spec.flops or spec.bytes_moved):
                continue
            score = read_score(sweep_dir / row.rel_dir)
            if score is None or score.timing is None:
                continue
            share = roofline_share(spec, score.timing.kernel_ms, score.environment.get("gpu"))
            if share is not None:
                roofline[row.model][row.task] = max(share, roofline[row.model].get(row.task, 0.0))
        data = {
            "speedups": {m.model: speedups.get(m.model, []) for m in board.models},
            "cost": [{"model": m.model, "pass_at_1": m.pass_at_1, "dollars": m.dollars, "finished": m.finished,
                      "score": m.score} for m in board.models],
            "roofline": {m.model: roofline.get(m.model, {}) for m in board.models},
        }
        with self._lock:
            entry.plots[suite] = data
        return data
