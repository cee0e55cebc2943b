"""Leaderboard arithmetic on a hand-made sweep folder whose numbers are worked out by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from orchestrator.index import INDEX_VERSION, load_index
from orchestrator.leaderboard import build_leaderboard, compare_models, sig
from scorer.aggregate import KernelResult, summarize

A, B, C = "scripted:alpha", "scripted:beta", "scripted:gamma"
D, E = "scripted:delta", "scripted:idle"


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
        # delta: finished, nothing correct; idle: nothing finished
        _row(D, "t1", "done", "incorrect", None), _row(D, "t2", "done", "compile_error", None),
        _row(E, "t1", "running", None, None),
    ]
    for i, r in enumerate(rows):
        r["seq"] = i
    index = {
        "schema_version": INDEX_VERSION, "name": "hand", "harness": "minimal", "updated_at": 0.0,
        "counts": {"pending": 1, "running": 1, "done": 12, "failed": 1},
        "models": {m: {"id": m, "folder": m.replace(":", "_"), "harness": "minimal"} for m in (A, B, C, D, E)},
        "trials": rows,
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    return tmp_path


def test_hand_worked_six_tasks_five_correct() -> None:
    """The published method on 6 tasks, 5 correct (speedups 1.0, 2.0, 0.5, 4.0, 1.5) and one
    incorrect: mean 9/5 = 1.8 and median 1.5 over the 5 correct, pass@1 5/6, score 1.8 x 1.5 x 5/6
    = 2.25. The strict variant counts the failure as 0: mean 9/6 = 1.5, median (1.0 + 1.5) / 2 =
    1.25, score 1.5 x 1.25 x 5/6 = 1.5625."""
    results = [KernelResult(t, "passed", x) for t, x in zip("abcde", (1.0, 2.0, 0.5, 4.0, 1.5), strict=True)]
    results.append(KernelResult("f", "incorrect", 7.0))  # its speedup is never counted
    s = summarize(results)
    assert s.method == "published"
    assert s.mean_speedup == pytest.approx(1.8) and s.median_speedup == pytest.approx(1.5)
    assert s.pass_rate == pytest.approx(5 / 6) and s.score == pytest.approx(2.25)
    assert s.geomean_speedup == pytest.approx(6 ** (1 / 5)) and s.fast_p == pytest.approx(3 / 6)
    strict = summarize(results, method="strict")
    assert strict.mean_speedup == pytest.approx(1.5) and strict.median_speedup == pytest.approx(1.25)
    assert strict.score == pytest.approx(1.5625) and strict.pass_rate == pytest.approx(5 / 6)
    none = summarize([KernelResult("a", "incorrect"), KernelResult("b", "passed", None)])  # passed, untimed
    assert none.mean_speedup is None and none.median_speedup is None and none.score == 0.0
    assert none.pass_rate == 0.5 and none.solved == 1
    with pytest.raises(ValueError, match="published, strict"):
        summarize(results, method="lenient")


def test_model_summaries_match_hand_arithmetic(sweep_dir: Path) -> None:
    """The published method (scorer.aggregate): mean and median over correct kernels only, the
    geometric mean over correct kernels, score = mean x median x pass@1."""
    board = build_leaderboard(load_index(sweep_dir), resamples=0)
    by = {m.model: m for m in board.models}
    assert board.method == "published"

    a = by[A]  # correct 1.2, 0.5, 4.0; one incorrect
    assert a.pass_at_1 == pytest.approx(0.75)
    assert a.mean_speedup == pytest.approx(5.7 / 3)
    assert a.median_speedup == pytest.approx(1.2)
    assert a.geomean_speedup == pytest.approx(2.4 ** (1 / 3))
    assert a.score == pytest.approx(1.9 * 1.2 * 0.75)  # 1.71
    assert a.fast_p == pytest.approx({"1.0": 0.5, "1.5": 0.25})
    assert (a.solved, a.tasks, a.finished, a.planned) == (3, 4, 4, 4)
    assert a.tokens == 6000 and a.tokens_per_solved == pytest.approx(2000)
    assert a.dollars_per_solved == pytest.approx(0.4 / 3)

    b = by[B]  # hack, failed, passed 1.0; the pending trial is left out
    assert (b.finished, b.planned, b.tasks, b.solved, b.hacks) == (3, 4, 3, 1, 1)
    assert b.pass_at_1 == pytest.approx(1 / 3)
    assert b.mean_speedup == pytest.approx(1.0) and b.median_speedup == pytest.approx(1.0)
    assert b.score == pytest.approx(1 / 3) and b.geomean_speedup == pytest.approx(1.0)
    assert b.fast_p == pytest.approx({"1.0": 0.0, "1.5": 0.0})  # 1.0 is not faster than 1.0

    c = by[C]  # two samples a task, each one result: 3.0, incorrect, 1.0, 2.0
    assert c.pass_at_1 == pytest.approx(0.75)
    assert c.mean_speedup == pytest.approx(2.0) and c.median_speedup == pytest.approx(2.0)
    assert c.score == pytest.approx(2.0 * 2.0 * 0.75)  # 3.0
    assert c.geomean_speedup == pytest.approx(6 ** (1 / 3))
    assert c.fast_p == pytest.approx({"1.0": 0.5, "1.5": 0.5})
    assert (c.solved, c.tasks, c.finished) == (2, 2, 4)

    d = by[D]  # finished, nothing correct: no mean or median ("-"), score 0, ranked after the scored
    assert d.mean_speedup is None and d.median_speedup is None and d.geomean_speedup is None
    assert d.score == 0.0 and d.pass_at_1 == 0.0 and d.rank == 4

    e = by[E]  # nothing finished: no score, sharing the last rank with the model that solved nothing
    assert e.score is None and e.rank == 4 and e.finished == 0

    assert [m.model for m in board.models] == [C, A, B, D, E]  # ranked by score
    assert [m.rank for m in board.models] == [1, 2, 3, 4, 4]  # no bootstrap: each score its own interval
    assert [m.rank_strict for m in board.models] == [1, 2, 3, 4, 5]
    assert [m.rank_range for m in board.models] == [(1, 1), (2, 2), (3, 3), (4, 5), (4, 5)]
    assert board.rank_note.startswith("rank = the order by score, exact ties shared")


def test_strict_method_counts_failures_inside_mean_and_median(sweep_dir: Path) -> None:
    board = build_leaderboard(load_index(sweep_dir), resamples=200, method="strict")
    by = {m.model: m for m in board.models}
    assert board.method == "strict"
    assert by[A].mean_speedup == pytest.approx(5.7 / 4) and by[A].median_speedup == pytest.approx(0.85)
    assert by[A].score == pytest.approx(1.425 * 0.85 * 0.75)  # 0.9084375
    assert by[B].median_speedup == 0.0 and by[B].score == 0.0  # under half passing: a 0 median
    assert by[C].score == pytest.approx(1.5 * 1.5 * 0.75)
    assert by[D].mean_speedup == 0.0 and by[D].score == 0.0
    # B and D tie at 0 with different pass@1, so they do not share a rank; the interval is strict's
    assert [m.model for m in board.models] == [C, A, B, D, E]
    assert by[C].score_ci[0] <= by[C].score <= by[C].score_ci[1]


def test_tied_models_share_a_rank(sweep_dir: Path) -> None:
    index = load_index(sweep_dir)
    twin = "scripted:twin"
    index.models[twin] = index.models[A].model_copy(update={"id": twin})
    index.trials += [r.model_copy(update={"model": twin, "model_id": twin}) for r in index.trials if r.model == A]
    point = {m.model: m for m in build_leaderboard(index, resamples=0).models}
    assert point[A].rank == point[twin].rank == 2 and point[B].rank == 4  # equal scores share a rank
    assert {point[A].rank_strict, point[twin].rank_strict} == {2, 3}
    board = build_leaderboard(index, resamples=300)
    by = {m.model: m for m in board.models}
    assert by[A].score_ci == by[twin].score_ci and by[A].rank == by[twin].rank
    for m in board.models:  # four tasks: wide intervals, and the rank is LMArena's count of those wholly above
        if m.score:
            assert m.rank == 1 + sum(o.score_ci[0] > m.score_ci[1] for o in board.models if o.score)
            assert m.rank_range[0] == m.rank <= m.rank_range[1] <= 6
    assert by[C].rank == 1 and by[A].rank == 1  # 3.0 and 1.71 on four tasks are not told apart
    assert by[D].rank == by[E].rank == 5 and by[E].rank_range == (5, 6)  # no correct kernel: after all others
    assert sorted(m.rank_strict for m in board.models) == [1, 2, 3, 4, 5, 6]


def test_two_models_side_by_side(sweep_dir: Path) -> None:
    """alpha (score 1.71) against gamma (3.0): gamma's best kernel is the faster on both tasks both
    solved (t1: 3.0 against 1.2, t2: 2.0 against 0.5); the paired bootstrap's difference is gamma's way."""
    index = load_index(sweep_dir)
    cmp = compare_models(index, A, C, resamples=400, seed=0)
    assert cmp.score_diff == pytest.approx(1.71 - 3.0)
    assert (cmp.a_faster, cmp.b_faster) == (0, 2)
    lo, hi = cmp.score_diff_ci
    assert lo <= cmp.score_diff <= hi and lo < 0
    assert cmp.p_a_above < 0.5
    assert compare_models(index, C, A, resamples=400, seed=0).p_a_above == pytest.approx(1 - cmp.p_a_above)
    t1 = next(t for t in cmp.tasks if t["task"] == "t1")
    assert t1["best"] == {A: 1.2, C: 3.0} and [c["verdict"] for c in t1[C]] == ["passed", "incorrect"]
    idle = compare_models(index, A, E, resamples=100)
    assert idle.score_diff is None and idle.p_a_above is None


def test_significant_digits() -> None:
    assert [sig(x) for x in (8.838821999972879, 0.0064, 123.4, 1.0, 9.996, 4e-06, 0.0, None)] == \
        ["8.84", "0.00640", "123", "1.00", "10.0", "4.00e-06", "0", "-"]


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
    header = summary[0]
    rows = {r[header.index("model")]: r for r in summary[1:]}
    assert header[:4] == ["rank", "model", "harness", "solved"]
    assert rows[A][header.index("score")] == "1.71"
    assert rows[C][header.index("mean x")] == "2.00"
    assert rows[D][header.index("mean x")] == "-" and rows[D][header.index("score")] == "0"
    assert rows[E][header.index("rank")] == rows[D][header.index("rank")] and rows[E][header.index("score")] == "-"
    assert rows[B][header.index("finished")] == "3/4"
    assert rows[C][header.index("pass@1")] == "0.75"
    for task in ("t1", "t2", "t3", "t4"):
        assert f"#k-demo-{task}" in parser.hrefs and f"k-demo-{task}" in parser.ids
    t1 = parser.tables["t-k-demo-t1"]
    beta = next(r for r in t1[1:] if r[0] == B)
    assert beta[2] == "hack_detected" and beta[4] == "timer-patching"
    assert f"solutions/t1/{A.replace(':', '_')}/0/transcript.jsonl" in parser.hrefs
    t2 = parser.tables["t-k-demo-t2"]
    assert next(r for r in t2[1:] if r[0] == B)[6] == "TrialBroken: sandbox died"  # the error column
    kernels = parser.tables["kernels"]
    assert kernels[1][kernels[0].index(B)] == "hack"  # a short mark in the matrix, its hack names on hover
    text = out.read_text()
    assert 'title="hack_detected [timer-patching]"' in text
    assert "Hardware: <b>unknown</b>" in text and "published method" in text
    assert 'title="Share of first tries' in text  # headers explain themselves


def test_html_of_a_cpu_board_says_its_speedups_mean_nothing(tmp_path: Path) -> None:
    from tests.web.factory import ledger_board

    sweep = ledger_board(tmp_path / "cpu", models=2, samples=1, tasks=["level1_5_gelu", "level1_6_layernorm"])
    proc = _cli("leaderboard", str(sweep), "--format", "html", "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    assert "Hardware: <b>CPU</b>" in proc.stdout and "say nothing about speed on a GPU" in proc.stdout


def test_json_and_markdown_formats(sweep_dir: Path) -> None:
    proc = _cli("leaderboard", str(sweep_dir), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by = {m["model"]: m for m in data["models"]}
    assert data["method"] == "published" and by[C]["score"] == pytest.approx(3.0)
    assert by[D]["mean_speedup"] is None and by[D]["median_speedup"] is None and by[E]["score"] is None
    lo, hi = by[C]["score_ci"]
    assert lo <= 3.0 <= hi
    md = _cli("leaderboard", str(sweep_dir), "--format", "md", "--bootstrap", "0")
    assert md.returncode == 0 and f"| 2 | {A} | minimal | 3/4 | 0.75 | 1.90 | 1.20 |" in md.stdout
    assert "published method" in md.stdout
    strict = json.loads(_cli("leaderboard", str(sweep_dir), "--format", "json", "--method", "strict").stdout)
    assert strict["method"] == "strict"
    assert {m["model"]: m["score"] for m in strict["models"]}[C] == pytest.approx(1.6875)


def test_bad_leaderboard_input_is_one_line_exit_2(tmp_path: Path, sweep_dir: Path) -> None:
    proc = _cli("leaderboard", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "index.json" in proc.stderr
    typo = _cli("leaderboard", str(sweep_dir.parent / (sweep_dir.name + "x")))  # a typo beside a real sweep
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1
    assert typo.stderr.startswith(f"error: no folder {sweep_dir}x;") and f"e.g. {sweep_dir}" in typo.stderr
    assert _cli("leaderboard", str(sweep_dir / "index.json"), "--format", "json", "--bootstrap", "0").returncode == 0
    proc = _cli("leaderboard", str(sweep_dir), "--format", "pdf")
    assert proc.returncode == 2 and "table, json, md, html" in proc.stderr
    proc = _cli("leaderboard", str(sweep_dir), "--method", "lenient")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "published, strict" in proc.stderr
