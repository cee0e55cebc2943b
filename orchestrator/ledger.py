"""The sweep's durable record: one SQLite row per trial, in WAL mode inside the sweep folder.

Every state change is its own committed transaction, so a `kill -9` at any moment loses nothing
already recorded. A trial still `running` when a sweep starts was interrupted; `reset_interrupted`
returns it to `pending` so it is run again, never twice at once.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from orchestrator.planner import PlannedTrial

State = Literal["pending", "running", "done", "failed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
    trial_id      TEXT PRIMARY KEY,
    suite         TEXT NOT NULL,
    task          TEXT NOT NULL,
    model         TEXT NOT NULL,
    model_id      TEXT NOT NULL,
    sample        INTEGER NOT NULL,
    rel_dir       TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    state         TEXT NOT NULL DEFAULT 'pending',
    attempts      INTEGER NOT NULL DEFAULT 0,
    started_at    REAL,
    finished_at   REAL,
    verdict       TEXT,
    speedup       REAL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    dollars       REAL NOT NULL DEFAULT 0,
    exit_reason   TEXT,
    error         TEXT,
    hacks         TEXT NOT NULL DEFAULT '[]',
    flags         TEXT NOT NULL DEFAULT '[]',
    contended     INTEGER NOT NULL DEFAULT 0
);
"""

# Columns added after a ledger format was published: a sweep folder written before them gets
# them on open, so that resuming it keeps every row already recorded.
_ADDED_COLUMNS = {"contended": "INTEGER NOT NULL DEFAULT 0"}


class TrialRow(BaseModel):
    trial_id: str
    suite: str
    task: str
    model: str
    model_id: str
    sample: int
    rel_dir: str
    seq: int
    state: State
    attempts: int
    started_at: float | None
    finished_at: float | None
    verdict: str | None
    speedup: float | None
    input_tokens: int
    output_tokens: int
    dollars: float
    exit_reason: str | None
    error: str | None
    hacks: list[str]
    flags: list[str]
    contended: bool = False
    """The kept timing was taken while foreign compute ran on the device (score.json `contended`)."""

    @classmethod
    def from_db(cls, row: sqlite3.Row) -> TrialRow:
        data = dict(row)
        data["hacks"] = json.loads(data["hacks"])
        data["flags"] = json.loads(data["flags"])
        return cls(**data)


class TrialResult(BaseModel):
    """What a finished attempt contributes to its row."""

    verdict: str | None = None
    speedup: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0
    exit_reason: str | None = None
    error: str | None = None
    hacks: list[str] = []
    """Pattern ids of rejecting anti-hack findings."""
    flags: list[str] = []
    """Pattern ids of audit-only findings."""
    contended: bool = False


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        # isolation_level=None: autocommit, so each statement below is durable on return.
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against a killed process (the WAL survives it); only a power
        # loss could drop the last commits, which a resume then simply re-runs.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        known = {r["name"] for r in self._db.execute("PRAGMA table_info(trials)")}
        for name, decl in _ADDED_COLUMNS.items():
            if name not in known:
                self._db.execute(f"ALTER TABLE trials ADD COLUMN {name} {decl}")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_planned(self, trials: Iterable[PlannedTrial]) -> int:
        """Insert trials not yet known; returns how many were new."""
        before = self._count()
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO trials (trial_id, suite, task, model, model_id, sample, rel_dir, seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(t.trial_id, t.suite, t.task, t.model, t.model_id, t.sample, t.rel_dir, i)
                 for i, t in enumerate(trials)],
            )
        return self._count() - before

    def _count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]

    def reset_interrupted(self) -> list[TrialRow]:
        """Rows left `running` by a killed sweep go back to `pending`; returns them as they were."""
        rows = [TrialRow.from_db(r) for r in self._db.execute("SELECT * FROM trials WHERE state = 'running'")]
        self._db.execute("UPDATE trials SET state = 'pending', started_at = NULL WHERE state = 'running'")
        return rows

    def retry_failed(self, max_attempts: int) -> int:
        """Failed rows with attempts left become pending again (a resume after e.g. an outage)."""
        cur = self._db.execute(
            "UPDATE trials SET state = 'pending' WHERE state = 'failed' AND attempts < ?", (max_attempts,)
        )
        return cur.rowcount

    def mark_running(self, trial_id: str) -> int:
        """Returns the attempt number now starting (1 for the first)."""
        self._db.execute(
            "UPDATE trials SET state = 'running', attempts = attempts + 1, started_at = ?, "
            "finished_at = NULL, error = NULL WHERE trial_id = ?",
            (time.time(), trial_id),
        )
        return self.row(trial_id).attempts

    def finish(self, trial_id: str, state: Literal["done", "failed", "pending"], result: TrialResult) -> None:
        """Record an attempt's outcome. `pending` means it failed but will be tried again."""
        self._db.execute(
            "UPDATE trials SET state = ?, finished_at = ?, verdict = ?, speedup = ?, "
            "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, dollars = dollars + ?, "
            "exit_reason = ?, error = ?, hacks = ?, flags = ?, contended = ? WHERE trial_id = ?",
            (state, time.time(), result.verdict, result.speedup, result.input_tokens,
             result.output_tokens, result.dollars, result.exit_reason, result.error,
             json.dumps(result.hacks), json.dumps(result.flags), int(result.contended), trial_id),
        )

    def row(self, trial_id: str) -> TrialRow:
        found = self._db.execute("SELECT * FROM trials WHERE trial_id = ?", (trial_id,)).fetchone()
        if found is None:
            raise KeyError(trial_id)
        return TrialRow.from_db(found)

    def rows(self, state: State | None = None) -> list[TrialRow]:
        if state is None:
            cur = self._db.execute("SELECT * FROM trials ORDER BY seq")
        else:
            cur = self._db.execute("SELECT * FROM trials WHERE state = ? ORDER BY seq", (state,))
        return [TrialRow.from_db(r) for r in cur]

    def rows_json(self) -> list[dict[str, Any]]:
        """Rows as JSON-ready dicts, skipping validation: the index is rebuilt after every trial
        and this keeps that rebuild cheap for sweeps of thousands of trials."""
        out = []
        for r in self._db.execute("SELECT * FROM trials ORDER BY seq"):
            data = dict(r)
            data["hacks"] = json.loads(data["hacks"])
            data["flags"] = json.loads(data["flags"])
            out.append(data)
        return out

    def counts(self) -> dict[str, int]:
        out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
        for state, n in self._db.execute("SELECT state, COUNT(*) FROM trials GROUP BY state"):
            out[state] = n
        return out
