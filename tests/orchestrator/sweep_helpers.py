"""Shared by the sweep integration tests: small specs, a CLI runner, and consistency checks of
a finished sweep folder that read only the files (never our own in-memory state)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

FAST_SCORE = """
[score]
device = "cpu"
repetitions = 2
warmup = 1
seeds = 1
"""


def write_spec(path: Path, *, name: str, models: list[dict[str, Any]], backend: str, out: Path,
               tasks: list[str] | None = None, total: int = 2, samples: int = 1, extra: str = "") -> Path:
    lines = [f'name = "{name}"', 'gpus = "cpu"', f'out = "{out}"', f"samples = {samples}"]
    for model in models:
        lines.append("[[models]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in model.items()]
    lines += ["[[suites]]", 'name = "demo"']
    if tasks:
        lines.append(f"include = {json.dumps(tasks)}")
    lines += [f'[sandbox]\nbackend = "{backend}"', "[budget]\nmax_turns = 8\nwall_time_s = 240",
              f"[concurrency]\ntotal = {total}", FAST_SCORE, extra]
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})})


def ledger_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    db = sweep_dir / "ledger.sqlite"
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM trials ORDER BY seq")]
    except sqlite3.OperationalError:  # the table may not exist yet
        return []
    finally:
        con.close()


def events(transcript: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]


def assert_sweep_complete(sweep_dir: Path, expected_trials: int) -> list[dict[str, Any]]:
    """Every trial done exactly once, its folder complete, index.json agreeing with the ledger."""
    rows = ledger_rows(sweep_dir)
    assert len(rows) == expected_trials
    assert {r["state"] for r in rows} == {"done"}, [(r["trial_id"], r["state"], r["error"]) for r in rows]
    index = json.loads((sweep_dir / "index.json").read_text())
    assert sorted(t["trial_id"] for t in index["trials"]) == sorted(r["trial_id"] for r in rows)
    assert index["counts"]["done"] == expected_trials
    folders = {r["rel_dir"] for r in rows}
    assert len(folders) == expected_trials
    for row in rows:
        trial_dir = sweep_dir / row["rel_dir"]
        evs = events(trial_dir / "transcript.jsonl")
        kinds = [e["type"] for e in evs]
        assert kinds[0] == "trial_start" and kinds[-1] == "trial_end", (row["trial_id"], kinds)
        assert kinds.count("trial_start") == 1 and kinds.count("trial_end") == 1  # run exactly once
        assert [e["seq"] for e in evs] == list(range(len(evs)))
        assert evs[0]["payload"]["trial_id"] == row["trial_id"]
        score = json.loads((trial_dir / "score.json").read_text())
        assert score["verdict"] == row["verdict"]
        entry = next(t for t in index["trials"] if t["trial_id"] == row["trial_id"])
        assert (entry["state"], entry["verdict"]) == ("done", row["verdict"])
    staging = sweep_dir / ".staging"
    assert not staging.exists() or not any(staging.iterdir())
    return rows


def kill_mid_sweep(args: list[str], sweep_dir: Path, ready: Callable[[], bool] = lambda: True,
                   deadline_s: float = 300) -> dict[str, dict[str, Any]]:
    """Start `kernelarena sweep ARGS`, SIGKILL it once a trial is done while another runs (and
    `ready()` holds); returns the ledger rows as they were at the kill."""
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "sweep", *args], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            states = [r["state"] for r in ledger_rows(sweep_dir)]
            if "done" in states and "running" in states and ready():
                break
            if proc.poll() is not None:
                pytest.fail(f"sweep ended before it could be killed: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
        else:
            pytest.fail("no trial finished in time")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return {r["trial_id"]: r for r in ledger_rows(sweep_dir)}
    finally:
        # Children of the killed sweep (sandboxed commands) are leftovers of the kill, not part of
        # what is tested; end them so they do not compete with the resumed run for the CPU.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        assert proc.stderr is not None
        proc.stderr.close()
