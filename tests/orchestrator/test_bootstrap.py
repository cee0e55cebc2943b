"""Bootstrap confidence intervals of the leaderboard (orchestrator.bootstrap) on data whose answer
is known: dominance, symmetric coin flips, a single task, failures counting as in the point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestrator.bootstrap import bootstrap, observed
from orchestrator.index import INDEX_VERSION, load_index
from orchestrator.leaderboard import build_leaderboard, sig, task_results
from scorer.aggregate import KernelResult, summarize


def _model(speedups: list[float | None], verdicts: list[str] | None = None) -> dict[str, list[KernelResult]]:
    """One sample per task; None -> an incorrect kernel."""
    verdicts = verdicts or ["passed" if s is not None else "incorrect" for s in speedups]
    return {f"t{i}": [KernelResult(f"t{i}", v, s)] for i, (s, v) in enumerate(zip(speedups, verdicts, strict=True))}


def _flat(model: dict[str, list[KernelResult]]) -> list[KernelResult]:
    return [r for rs in model.values() for r in rs]


def _random_model(rng: np.random.Generator, tasks: int, samples: int = 1, p_fail: float = 0.3) -> dict:
    out = {}
    for t in range(tasks):
        out[f"t{t}"] = [KernelResult(f"t{t}", "incorrect") if rng.random() < p_fail
                        else KernelResult(f"t{t}", "passed", float(rng.lognormal(0, 0.7)))
                        for _ in range(samples)]
    return out


@pytest.mark.parametrize("method", ["published", "strict"])
@pytest.mark.parametrize("samples", [1, 3])
def test_observed_figures_are_aggregate_summarize(samples: int, method: str) -> None:
    """The vectorised arithmetic on the unresampled results is scorer.aggregate's."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        model = _random_model(rng, 25, samples)
        model["t0"] = [KernelResult("t0", "passed", None)] * samples  # passed, not timed
        point = summarize(_flat(model), method=method)
        got = observed(model, method)
        assert got["score"] == pytest.approx(point.score, rel=1e-12)
        assert got["pass_at_1"] == pytest.approx(point.pass_rate)
        assert got["mean"] == pytest.approx(point.mean_speedup, rel=1e-12)
        assert got["median"] == pytest.approx(point.median_speedup)
        assert got["geomean"] == pytest.approx(point.geomean_speedup, rel=1e-12)


def test_intervals_contain_the_point_estimate() -> None:
    rng = np.random.default_rng(3)
    models = [_random_model(rng, 60, samples) for samples in (1, 1, 2, 4)]
    result = bootstrap(models, resamples=1000, seed=0)
    for i, model in enumerate(models):
        point = summarize(_flat(model))
        lo, hi = result.score_ci(i)
        assert lo <= point.score <= hi and lo < hi
        glo, ghi = result.geomean_ci(i)
        assert glo <= point.geomean_speedup <= ghi and glo < ghi
        # a 95 % interval: about 5 % of resamples fall outside it
        outside = np.mean((result.score[i] < lo) | (result.score[i] > hi))
        assert 0.03 <= outside <= 0.07


def test_dominating_model_has_order_confidence_one() -> None:
    """Better on every task, even by a hair: the paired bootstrap never reverses the order (an
    unpaired one, drawing tasks separately per model, would be near 0.5 here)."""
    rng = np.random.default_rng(1)
    base = rng.lognormal(0, 1, size=80)
    better = _model(list(base * 1.01))
    worse = _model(list(base))
    result = bootstrap([better, worse], resamples=500, seed=0)
    assert result.order_confidence(0, 1) == 1.0
    assert result.order_confidence(1, 0) == 0.0


def test_coin_flip_order_confidence_is_about_one_half() -> None:
    """Tasks in pairs with the same two speedups, one model getting the first and the other the
    second: both models hold the same results, so neither ranks above the other more often."""
    rng = np.random.default_rng(2)
    a, b = [], []
    for _ in range(100):
        x, y = rng.lognormal(0, 1, size=2)
        a += [x, y]
        b += [y, x]
    result = bootstrap([_model(a), _model(b)], resamples=2000, seed=0)
    p = result.order_confidence(0, 1)
    assert 0.42 <= p <= 0.58
    assert p + result.order_confidence(1, 0) == pytest.approx(1.0)


def test_same_seed_same_numbers_other_seed_other_numbers() -> None:
    rng = np.random.default_rng(4)
    models = [_random_model(rng, 30, 2) for _ in range(3)]
    one, two = bootstrap(models, 300, seed=11), bootstrap(models, 300, seed=11)
    assert np.array_equal(one.score, two.score) and np.array_equal(one.geomean, two.geomean, equal_nan=True)
    assert one.score_ci(1) == two.score_ci(1) and one.order_confidence(0, 1) == two.order_confidence(0, 1)
    assert not np.array_equal(one.score, bootstrap(models, 300, seed=12).score)


def test_one_task_gives_a_degenerate_interval_at_the_point() -> None:
    model = _model([2.5])
    result = bootstrap([model], resamples=200, seed=0)
    point = summarize(_flat(model))
    assert result.score_ci(0) == (point.score, point.score) == (6.25, 6.25)
    assert result.geomean_ci(0) == (2.5, 2.5)


def test_failed_and_missing_kernels_count_as_in_the_point_estimate() -> None:
    """Half the tasks failed (no verdict, no kernel, a hack). Published: mean 2 x median 2 over the
    correct, x pass@1 0.5 = 2; were the failures dropped from pass@1 too, every resample would score
    2 x 2 x 1 = 4. Strict: mean 1 x median 1 x 0.5 = 0.5, and the resamples' median score too."""
    verdicts = ["passed"] * 10 + ["failed"] * 4 + ["no_kernel"] * 3 + ["hack_detected"] * 3
    model = _model([2.0] * 10 + [None] * 10, verdicts)
    point = summarize(_flat(model))
    assert point.score == pytest.approx(2.0)
    result = bootstrap([model], resamples=1000, seed=0)
    lo, hi = result.score_ci(0)
    assert lo <= point.score <= hi < 4.0 and lo < hi  # pass@1 varies with the draw
    assert np.median(result.score) == pytest.approx(2.0, abs=0.3)
    assert result.geomean_ci(0) == pytest.approx((2.0, 2.0))  # over correct kernels only
    strict = bootstrap([model], resamples=1000, seed=0, method="strict")
    assert summarize(_flat(model), method="strict").score == pytest.approx(0.5)
    assert np.median(strict.score) == pytest.approx(0.5, abs=0.15)
    assert np.all(strict.score <= result.score + 1e-12)  # never above the published one on the same draw
    assert np.mean(strict.score < result.score) > 0.99


def test_a_model_missing_tasks_is_scored_on_its_own() -> None:
    """Tasks a model has no finished trial on are left out of its figures, as in the point."""
    full = _model([1.0, 2.0, 3.0, 4.0])
    part = {t: full[t] for t in ("t0", "t1")}
    result = bootstrap([full, part], resamples=400, seed=0)
    assert result.score[1].max() <= 2.0 * 2.0  # only 1.0 and 2.0 can be drawn for it
    assert result.score_ci(0)[1] > 4.0


# --- through the leaderboard and the CLI -----------------------------------------------------------

def _row(model: str, task: str, state: str, verdict: str | None, speedup: float | None, sample: int = 0) -> dict:
    return {
        "trial_id": f"demo/{task}/{model}/{sample}", "suite": "demo", "task": task, "model": model,
        "model_id": model, "sample": sample, "rel_dir": f"solutions/{task}/{model.replace(':', '_')}/{sample}",
        "seq": 0, "state": state, "attempts": 1, "started_at": 1.0, "finished_at": 2.0,
        "verdict": verdict, "speedup": speedup, "input_tokens": 10, "output_tokens": 5,
        "dollars": 0.0, "exit_reason": "done", "error": None, "hacks": [], "flags": [],
    }


@pytest.fixture()
def sweep_dir(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    rows = []
    for t in range(40):
        base = float(rng.lognormal(0, 0.8))
        rows.append(_row("scripted:strong", f"t{t}", "done", "passed", base * 1.5))
        rows.append(_row("scripted:weak", f"t{t}", "done", "passed", base))
        for s in range(2):
            if rng.random() < 0.3:
                rows.append(_row("scripted:mixed", f"t{t}", "failed", None, None, sample=s))
            else:
                rows.append(_row("scripted:mixed", f"t{t}", "done", "passed", float(rng.lognormal(0, 0.8)), sample=s))
    rows.append(_row("scripted:idle", "t0", "pending", None, None))
    for i, r in enumerate(rows):
        r["seq"] = i
    models = ("scripted:strong", "scripted:weak", "scripted:mixed", "scripted:idle")
    index = {
        "schema_version": INDEX_VERSION, "name": "ci", "harness": "minimal", "updated_at": 0.0,
        "counts": {"pending": 1, "running": 0, "done": len(rows) - 1, "failed": 0},
        "models": {m: {"id": m, "folder": m.replace(":", "_"), "harness": "minimal"} for m in models},
        "trials": rows,
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    return tmp_path


def test_leaderboard_rows_carry_intervals_and_rank_confidence(sweep_dir: Path) -> None:
    index = load_index(sweep_dir)
    board = build_leaderboard(index, resamples=500, seed=0)
    by = {m.model: m for m in board.models}
    for m in board.models:
        if m.finished:
            assert m.score_ci[0] <= m.score <= m.score_ci[1]
            assert m.geomean_ci[0] <= m.geomean_speedup <= m.geomean_ci[1]
    assert by["scripted:idle"].score_ci is None and by["scripted:idle"].order_confidence is None
    assert by["scripted:idle"].rank == len(board.models)  # nothing finished: ranked after all others
    assert board.models[-1].order_confidence is None
    scored = [m for m in board.models if m.score is not None]
    assert scored[-1].order_confidence is None  # the last scored row has no row below to beat
    for m in board.models:
        assert 1 <= m.rank == m.rank_range[0] <= m.rank_range[1] <= len(board.models)
    strong_rank = [m.model for m in board.models].index("scripted:strong")
    below = board.models[strong_rank + 1].model
    if below == "scripted:weak":  # strong is weak x 1.5 on every task
        assert board.models[strong_rank].order_confidence == 1.0
    # the bootstrap sees the same results (failed trials as incorrect) the point estimate does
    rows = [r for r in index.trials if r.model == "scripted:mixed"]
    assert observed(task_results(rows))["score"] == pytest.approx(by["scripted:mixed"].score, rel=1e-12)
    assert build_leaderboard(index, resamples=0).models[0].score_ci is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_json_and_markdown_carry_the_same_numbers(sweep_dir: Path) -> None:
    args = ("leaderboard", str(sweep_dir), "--bootstrap", "300", "--seed", "9")
    js = _cli(*args, "--format", "json")
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    assert data["bootstrap"]["resamples"] == 300 and data["bootstrap"]["seed"] == 9
    board = build_leaderboard(load_index(sweep_dir), resamples=300, seed=9)
    for row, m in zip(data["models"], board.models, strict=True):
        assert row["model"] == m.model
        assert row["score_ci"] == (list(m.score_ci) if m.score_ci else None)
        assert row["order_confidence"] == m.order_confidence
    assert json.loads(_cli(*args, "--format", "json").stdout) == data  # deterministic
    md = _cli(*args, "--format", "md")
    assert md.returncode == 0, md.stderr
    header = next(line for line in md.stdout.splitlines() if line.startswith("| rank"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert "score 95% CI" in cols and "P(rank holds)" in cols
    top = board.models[0]
    line = next(line for line in md.stdout.splitlines() if f"| {top.model} |" in line)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[cols.index("score 95% CI")] == f"[{sig(top.score_ci[0])}, {sig(top.score_ci[1])}]"
    assert cells[cols.index("rank")] == "1" and cells[cols.index("strict rank")] == str(top.rank_strict)
    best, worst = top.rank_range
    assert cells[cols.index("rank range")] == (f"{best}-{worst}" if best != worst else "1")
    assert cells[cols.index("P(rank holds)")] == f"{top.order_confidence:.2f}"
    bad = _cli("leaderboard", str(sweep_dir), "--bootstrap", "-1")
    assert bad.returncode == 2 and "--bootstrap" in bad.stderr


def test_no_finished_trial_yet() -> None:
    """A sweep that has just started (every trial pending) has no results: no interval, no crash."""
    result = bootstrap([{}, {}], resamples=50, seed=0)
    assert result.score_ci(0) == (0.0, 0.0) and result.geomean_ci(0) is None
    assert result.order_confidence(0, 1) == 0.5
