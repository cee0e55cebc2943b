"""Planner ids and folders, ledger state machine and its durability across SIGKILL."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelarena.errors import ConfigError
from orchestrator.ledger import Ledger, TrialResult
from orchestrator.planner import plan, resolve_tasks, safe_names
from orchestrator.spec import parse_spec


def _spec(**over: object):
    data = {"name": "t", "models": [{"id": "scripted:reference"}, {"id": "scripted:hacker"}],
            "suites": [{"name": "demo"}], **over}
    return parse_spec(data, "test.toml")


def test_plan_is_models_x_tasks_x_samples_with_stable_ids() -> None:
    spec = _spec(samples=2)
    tasks = resolve_tasks(spec)
    trials = plan(spec, tasks)
    assert len(trials) == 2 * 4 * 2
    ids = [t.trial_id for t in trials]
    assert len(set(ids)) == len(ids)
    assert "demo/softmax/scripted:hacker/1" in ids
    t = next(t for t in trials if t.trial_id == "demo/softmax/scripted:hacker/1")
    assert t.rel_dir == "solutions/softmax/scripted_hacker/1"
    assert [x.trial_id for x in plan(spec, tasks)] == ids  # deterministic


def test_single_sample_uses_published_layout_and_filters_apply() -> None:
    spec = _spec(suites=[{"name": "demo", "include": ["s*", "row_sum"], "exclude": ["softmax"], "levels": [1]}])
    trials = plan(spec, resolve_tasks(spec))
    assert sorted({t.task for t in trials}) == ["row_sum", "swish"]
    assert {t.rel_dir for t in trials if t.task == "swish"} == {
        "solutions/swish/scripted_reference", "solutions/swish/scripted_hacker"}


def test_filters_that_match_nothing_are_user_errors() -> None:
    with pytest.raises(ConfigError, match="no task"):
        resolve_tasks(_spec(suites=[{"name": "demo", "levels": [9]}]))
    with pytest.raises(ConfigError, match="matches no task"):
        resolve_tasks(_spec(suites=[{"name": "demo", "exclude": ["nope"]}]))


def test_safe_names_are_filesystem_safe_and_distinct() -> None:
    names = safe_names(["anthropic:claude-opus-4-6", "replay:/tmp/a b.jsonl", "x:y", "x/y"])
    assert names["anthropic:claude-opus-4-6"] == "anthropic_claude-opus-4-6"
    assert "/" not in names["replay:/tmp/a b.jsonl"] and " " not in names["replay:/tmp/a b.jsonl"]
    assert len(set(names.values())) == 4


def test_ledger_state_machine(tmp_path: Path) -> None:
    spec = _spec()
    trials = plan(spec, resolve_tasks(spec))
    with Ledger(tmp_path / "l.sqlite") as ledger:
        assert ledger.add_planned(trials) == 8
        assert ledger.add_planned(trials) == 0  # a resume re-plans without duplicating
        tid = trials[0].trial_id
        assert ledger.mark_running(tid) == 1
        ledger.finish(tid, "pending", TrialResult(error="boom", input_tokens=5))
        assert ledger.mark_running(tid) == 2
        ledger.finish(tid, "done", TrialResult(verdict="passed", speedup=1.5, input_tokens=7, hacks=["x"]))
        row = ledger.row(tid)
        assert (row.state, row.attempts, row.verdict, row.input_tokens, row.hacks, row.error) == (
            "done", 2, "passed", 12, ["x"], None)
        ledger.mark_running(trials[1].trial_id)
        ledger.mark_running(trials[2].trial_id)
        ledger.finish(trials[2].trial_id, "failed", TrialResult(error="broken"))
        assert ledger.counts() == {"pending": 5, "running": 1, "done": 1, "failed": 1}
        assert [r.trial_id for r in ledger.reset_interrupted()] == [trials[1].trial_id]
        assert ledger.retry_failed(max_attempts=2) == 1
        assert ledger.retry_failed(max_attempts=1) == 0
        assert ledger.counts() == {"pending": 7, "running": 0, "done": 1, "failed": 0}


def test_ledger_survives_sigkill_of_its_writer(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    child = textwrap.dedent(f"""
        import os, signal
        from orchestrator.ledger import Ledger, TrialResult
        from orchestrator.planner import plan, resolve_tasks
        from orchestrator.spec import parse_spec
        spec = parse_spec({{"name": "t", "models": [{{"id": "scripted:reference"}}], "suites": [{{"name": "demo"}}]}}, "x")
        trials = plan(spec, resolve_tasks(spec))
        ledger = Ledger({str(db)!r})
        ledger.add_planned(trials)
        ledger.mark_running(trials[0].trial_id)
        ledger.finish(trials[0].trial_id, "done", TrialResult(verdict="passed", speedup=2.0))
        ledger.mark_running(trials[1].trial_id)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    with Ledger(db) as ledger:
        rows = {r.trial_id: r for r in ledger.rows()}
        assert len(rows) == 4
        done = [r for r in rows.values() if r.state == "done"]
        assert len(done) == 1 and done[0].speedup == 2.0
        assert len(ledger.reset_interrupted()) == 1
        assert ledger.counts()["pending"] == 3


def test_a_ledger_written_before_the_contended_column_opens_and_keeps_its_rows(tmp_path: Path) -> None:
    """A sweep folder from before `contended` existed: opening its ledger adds the column, every
    recorded row survives, and a finished attempt can record a contended timing."""
    import sqlite3

    from orchestrator.ledger import _SCHEMA, Ledger, TrialResult

    path = tmp_path / "ledger.sqlite"
    old = sqlite3.connect(path)
    old.executescript(_SCHEMA.replace(",\n    contended     INTEGER NOT NULL DEFAULT 0", ""))
    old.execute("INSERT INTO trials (trial_id, suite, task, model, model_id, sample, rel_dir, seq, state, verdict, speedup) "
                "VALUES ('demo/swish/m/0', 'demo', 'swish', 'm', 'scripted:reference', 0, 'x', 0, 'done', 'passed', 1.5)")
    old.execute("INSERT INTO trials (trial_id, suite, task, model, model_id, sample, rel_dir, seq) "
                "VALUES ('demo/relu/m/0', 'demo', 'relu', 'm', 'scripted:reference', 0, 'y', 1)")
    old.commit()
    assert "contended" not in {r[1] for r in old.execute("PRAGMA table_info(trials)")}
    old.close()
    with Ledger(path) as ledger:
        kept = ledger.row("demo/swish/m/0")
        assert (kept.state, kept.verdict, kept.speedup, kept.contended) == ("done", "passed", 1.5, False)
        ledger.mark_running("demo/relu/m/0")
        ledger.finish("demo/relu/m/0", "done", TrialResult(verdict="passed", speedup=2.0, contended=True))
        assert ledger.row("demo/relu/m/0").contended
    with Ledger(path) as again:  # opening a second time adds nothing twice
        assert again.row("demo/relu/m/0").contended and len(again.rows()) == 2
