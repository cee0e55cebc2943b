"""Leaderboard arithmetic on a hand-made sweep folder whose numbers are worked out by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from orchestrator.index import INDEX_VERSION, load_index
from orchestrator.leaderboard import build_leaderboard

A, B, C = "scripted:alpha", "scripted:beta", "scripted:gamma"


def _row(model: str, task: str, state: str, verdict: str | None, speedup: float | None,
         sample: int = 0, hacks: list[str] | None = None, seq: int = 0) -> dict:
    return {
        "trial_id": f"demo/{task}/{model}/{sample}", "suite": "demo", "task": task, "model": model,
        "model_id": model, "sample": sample, "rel_dir": f"solutions/{task}/{model.replace(':', '_')}/{sample}",
        "seq": seq, "state": state, "attempts": 1, "started_at": 1.0, "finished_at": 2.0,
        "verdict": verdict, "speedup": speedup, "input_tokens": 1000, "output_tokens": 500,
        "dollars": 0.1, "exit_reason": "done", "error": None if state != "failed" else "TrialBroken: sandbox died",
        "hacks": hacks or [], "flags": [],
    }


@pytest.fixture()
def sweep_dir(tmp_path: Path) -> Path:
    rows = [
        # alpha: t1..t4 -> passed 1.2, passed 0.5, incorrect, passed 4.0
        _row(A, "t1", "done", "passed", 1.2), _row(A, "t2", "done", "passed", 0.5),
        _row(A, "t3", "done", "incorrect", None), _row(A, "t4", "done", "passed", 4.0),
        # beta: hack, failed (no verdict), passed at exactly 1.0, still pending
        _row(B, "t1", "done", "hack_detected", None, hacks=["timer-patching"]),
        _row(B, "t2", "failed", None, None), _row(B, "t3", "done", "passed", 1.0),
        _row(B, "t4", "pending", None, None),
        # gamma: two samples per task: t1 -> passed 3.0 / incorrect, t2 -> passed 1.0 / passed 2.0
        _row(C, "t1", "done", "passed", 3.0, sample=0), _row(C, "t1", "done", "incorrect", None, sample=1),
        _row(C, "t2", "done", "passed", 1.0, sample=0), _row(C, "t2", "done", "passed", 2.0, sample=1),
    ]
    for i, r in enumerate(rows):
        r["seq"] = i
    index = {
        "schema_version": INDEX_VERSION, "name": "hand", "harness": "minimal", "updated_at": 0.0,
        "counts": {"pending": 1, "running": 0, "done": 10, "failed": 1},
        "models": {m: {"id": m, "folder": m.replace(":", "_"), "harness": "minimal"} for m in (A, B, C)},
        "trials": rows,
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    return tmp_path


def test_model_summaries_match_hand_arithmetic(sweep_dir: Path) -> None:
    """The published convention (scorer.aggregate): an incorrect or failed kernel counts speedup 0
    in the mean and median; the geometric mean is over correct kernels."""
    board = build_leaderboard(load_index(sweep_dir))
    by = {m.model: m for m in board.models}

    a = by[A]  # speedups 1.2, 0.5, 0 (incorrect), 4.0
    assert a.pass_at_1 == pytest.approx(0.75)
    assert a.mean_speedup == pytest.approx(5.7 / 4)
    assert a.median_speedup == pytest.approx((0.5 + 1.2) / 2)
    assert a.geomean_speedup == pytest.approx(2.4 ** (1 / 3))
    assert a.score == pytest.approx(1.425 * 0.85 * 0.75)  # 0.9084375
    assert a.fast_p == pytest.approx({"1.0": 0.5, "1.5": 0.25})
    assert (a.solved, a.tasks, a.finished, a.planned) == (3, 4, 4, 4)
    assert a.tokens == 6000 and a.tokens_per_solved == pytest.approx(2000)
    assert a.dollars_per_solved == pytest.approx(0.4 / 3)

    b = by[B]  # hack 0, failed 0, passed 1.0; the pending trial is left out
    assert (b.finished, b.planned, b.tasks, b.solved, b.hacks) == (3, 4, 3, 1, 1)
    assert b.pass_at_1 == pytest.approx(1 / 3)
    assert b.mean_speedup == pytest.approx(1 / 3) and b.median_speedup == 0.0
    assert b.score == 0.0 and b.geomean_speedup == pytest.approx(1.0)
    assert b.fast_p == pytest.approx({"1.0": 0.0, "1.5": 0.0})  # 1.0 is not faster than 1.0

    c = by[C]  # two samples a task, each one result: 3.0, 0 (incorrect), 1.0, 2.0
    assert c.pass_at_1 == pytest.approx(0.75)
    assert c.mean_speedup == pytest.approx(1.5) and c.median_speedup == pytest.approx(1.5)
    assert c.score == pytest.approx(1.5 * 1.5 * 0.75)  # 1.6875
    assert c.geomean_speedup == pytest.approx(6 ** (1 / 3))
    assert c.fast_p == pytest.approx({"1.0": 0.5, "1.5": 0.5})
    assert (c.solved, c.tasks, c.finished) == (2, 2, 4)

    assert [m.model for m in board.models] == [C, A, B]  # ranked by score


def test_per_kernel_cells_carry_verdicts_and_hacks(sweep_dir: Path) -> None:
    board = build_leaderboard(load_index(sweep_dir))
    t1 = next(k for k in board.kernels if k.task == "t1")
    beta = next(c for c in t1.cells if c.model == B)
    assert (beta.verdict, beta.hacks) == ("hack_detected", ["timer-patching"])
    assert len([c for c in t1.cells if c.model == C]) == 2


class _Tables(HTMLParser):
    """Collects every table as rows of cell texts, plus anchors and hrefs."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.external: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"] or "")
        if tag == "table":
            self._table = a.get("id") or str(len(self.tables))
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")
        elif tag in ("link", "script", "img") and (a.get("src") or a.get("href")):
            self.external.append(a.get("src") or a.get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_html_is_self_contained_with_summary_and_kernel_sections(sweep_dir: Path, tmp_path: Path) -> None:
    out = sweep_dir / "board.html"
    proc = _cli("leaderboard", str(sweep_dir), "--format", "html", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    parser = _Tables()
    parser.feed(out.read_text())
    assert parser.external == []  # no external assets
    summary = parser.tables["summary"]
    header, rows = summary[0], {r[0]: r for r in summary[1:]}
    assert header[:3] == ["model", "harness", "solved"]
    assert rows[A][header.index("score")] == "0.908"
    assert rows[C][header.index("mean x")] == "1.50"
    assert rows[B][header.index("finished")] == "3/4"
    assert rows[C][header.index("pass@1")] == "0.75"
    for task in ("t1", "t2", "t3", "t4"):
        assert f"#k-demo-{task}" in parser.hrefs and f"k-demo-{task}" in parser.ids
    t1 = parser.tables["t-k-demo-t1"]
    beta = next(r for r in t1[1:] if r[0] == B)
    assert beta[2] == "hack_detected" and beta[4] == "timer-patching"
    assert f"solutions/t1/{A.replace(':', '_')}/0/transcript.jsonl" in parser.hrefs


def test_json_and_markdown_formats(sweep_dir: Path) -> None:
    proc = _cli("leaderboard", str(sweep_dir), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {m["model"]: m["score"] for m in data["models"]}[C] == pytest.approx(1.6875)
    md = _cli("leaderboard", str(sweep_dir), "--format", "md")
    assert md.returncode == 0 and f"| {A} | minimal | 3/4 | 0.75 |" in md.stdout


def test_bad_leaderboard_input_is_one_line_exit_2(tmp_path: Path, sweep_dir: Path) -> None:
    proc = _cli("leaderboard", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "index.json" in proc.stderr
    proc = _cli("leaderboard", str(sweep_dir), "--format", "pdf")
    assert proc.returncode == 2 and "table, json, md, html" in proc.stderr
