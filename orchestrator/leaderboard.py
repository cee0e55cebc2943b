"""Leaderboard arithmetic over a sweep's index, and its table / JSON / Markdown renderings.

The figures come from `scorer.aggregate` (KernelArena's published convention lives there:
an incorrect kernel counts speedup 0 in the mean and median, the geometric mean is over correct
kernels, score = mean x median x pass@1, fast_p = share correct with speedup > p). This module
only decides what goes in:
- a model's finished trials, each one result (with k samples per task every task weighs k, so
  pass@1 is the share of correct samples: the unbiased pass@1 estimate);
- a failed trial (no verdict) is an incorrect kernel; pending or running trials are left out
  (the summary says how many finished of how many planned);
- `solved` counts tasks with at least one correct sample.

Confidence intervals (`orchestrator.bootstrap`): a paired bootstrap over tasks, and over samples
within a task, of the same results; `score_ci`, `geomean_ci` (95 % percentile intervals) and
`order_confidence` (share of resamples in which a row ranks above the row below it).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel
from rich.table import Table

from orchestrator.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL, bootstrap
from orchestrator.index import Index
from orchestrator.ledger import TrialRow
from scorer.aggregate import KernelResult, summarize

FAST_P = (1.0, 1.5)


class ModelSummary(BaseModel):
    model: str
    model_id: str
    harness: str
    planned: int
    finished: int
    tasks: int
    solved: int
    """Distinct tasks with at least one correct sample."""
    pass_at_1: float
    mean_speedup: float | None
    median_speedup: float | None
    geomean_speedup: float | None
    fast_p: dict[str, float]
    """Keyed by p as text ('1.0', '1.5')."""
    score: float
    hacks: int
    """Trials rejected by the anti-hack checks."""
    tokens: int
    dollars: float
    tokens_per_solved: float | None
    dollars_per_solved: float | None
    score_ci: tuple[float, float] | None = None
    """95 % bootstrap percentile interval of `score` (None without finished trials or bootstrap)."""
    geomean_ci: tuple[float, float] | None = None
    order_confidence: float | None = None
    """Share of bootstrap resamples in which this row ranks above the next one (None for the last)."""


class BootstrapInfo(BaseModel):
    resamples: int
    seed: int
    level: float
    method: str = "paired percentile bootstrap over tasks, and over samples within a task"


class TrialCell(BaseModel):
    model: str
    sample: int
    state: str
    verdict: str | None
    speedup: float | None
    hacks: list[str]
    flags: list[str]
    rel_dir: str
    error: str | None


class KernelEntry(BaseModel):
    suite: str
    task: str
    cells: list[TrialCell]


class Leaderboard(BaseModel):
    name: str
    models: list[ModelSummary]
    kernels: list[KernelEntry]
    bootstrap: BootstrapInfo | None = None


def _finished(row: TrialRow) -> bool:
    return row.state in ("done", "failed")


def _correct(row: TrialRow) -> bool:
    return row.state == "done" and row.verdict == "passed"


def _kernel_result(row: TrialRow) -> KernelResult:
    verdict = row.verdict if row.state == "done" and row.verdict else "failed"
    return KernelResult(task=f"{row.suite}/{row.task}#{row.sample}", verdict=verdict, speedup=row.speedup)


def summarize_model(model: str, model_id: str, harness: str, rows: list[TrialRow]) -> ModelSummary:
    finished = [r for r in rows if _finished(r)]
    results = [_kernel_result(r) for r in finished]
    figures = {p: summarize(results, p=p) for p in FAST_P}
    main = figures[FAST_P[0]]
    tasks = {(r.suite, r.task) for r in finished}
    solved = len({(r.suite, r.task) for r in finished if _correct(r)})
    tokens = sum(r.input_tokens + r.output_tokens for r in rows)
    dollars = sum(r.dollars for r in rows)
    return ModelSummary(
        model=model,
        model_id=model_id,
        harness=harness,
        planned=len(rows),
        finished=len(finished),
        tasks=len(tasks),
        solved=solved,
        pass_at_1=main.pass_rate,
        mean_speedup=main.mean_speedup if results else None,
        median_speedup=main.median_speedup if results else None,
        geomean_speedup=main.geomean_speedup,
        fast_p={str(p): f.fast_p for p, f in figures.items()},
        score=main.score,
        hacks=sum(r.verdict == "hack_detected" for r in finished),
        tokens=tokens,
        dollars=dollars,
        tokens_per_solved=tokens / solved if solved else None,
        dollars_per_solved=dollars / solved if solved else None,
    )


def task_results(rows: list[TrialRow]) -> dict[tuple[str, str], list[KernelResult]]:
    """A model's finished trials as the bootstrap's input: (suite, task) -> its samples' results,
    the same results (failed trials as incorrect kernels) that `summarize_model` scores."""
    out: dict[tuple[str, str], list[KernelResult]] = defaultdict(list)
    for r in sorted((r for r in rows if _finished(r)), key=lambda r: (r.suite, r.task, r.sample)):
        out[(r.suite, r.task)].append(_kernel_result(r))
    return dict(out)


def add_intervals(summaries: list[ModelSummary], rows_by_model: dict[str, list[TrialRow]],
                  resamples: int, seed: int) -> None:
    """Fill in the ranked summaries' intervals and adjacent-rank order confidences."""
    result = bootstrap([task_results(rows_by_model.get(s.model, [])) for s in summaries], resamples, seed)
    for i, s in enumerate(summaries):
        if s.finished:
            s.score_ci = result.score_ci(i)
            s.geomean_ci = result.geomean_ci(i)
        if i + 1 < len(summaries):
            s.order_confidence = result.order_confidence(i, i + 1)


def build_leaderboard(index: Index, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Leaderboard:
    """`resamples=0` leaves the bootstrap out."""
    rows_by_model: dict[str, list[TrialRow]] = defaultdict(list)
    kernels: dict[tuple[str, str], list[TrialCell]] = {}
    for row in index.trials:
        rows_by_model[row.model].append(row)
        kernels.setdefault((row.suite, row.task), []).append(
            TrialCell(model=row.model, sample=row.sample, state=row.state, verdict=row.verdict,
                      speedup=row.speedup, hacks=row.hacks, flags=row.flags, rel_dir=row.rel_dir,
                      error=row.error)
        )
    summaries = [
        summarize_model(name, entry.id, entry.harness, rows_by_model.get(name, []))
        for name, entry in index.models.items()
    ]
    summaries.sort(key=lambda s: (-s.score, -s.pass_at_1, s.model))
    if resamples:
        add_intervals(summaries, rows_by_model, resamples, seed)
    return Leaderboard(
        name=index.name,
        bootstrap=BootstrapInfo(resamples=resamples, seed=seed, level=LEVEL) if resamples else None,
        models=summaries,
        kernels=[KernelEntry(suite=s, task=t, cells=sorted(c, key=lambda c: (c.model, c.sample)))
                 for (s, t), c in kernels.items()],
    )


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def fmt_speedup(value: float | None, digits: int = 2) -> str:
    """Fixed decimals, but significant digits for small values (CPU-interpreted kernels run at
    0.001x, which two decimals would show as a misleading 0.00)."""
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if value == 0 or abs(value) >= 10 ** (1 - digits) else f"{value:.2g}"


def fmt_interval(ci: tuple[float, float] | None, digits: int = 2) -> str:
    return "-" if ci is None else f"[{fmt_speedup(ci[0], digits)}, {fmt_speedup(ci[1], digits)}]"


SUMMARY_COLUMNS = ("model", "harness", "solved", "pass@1", "mean x", "median x", "geomean x",
                   "geomean 95% CI", "fast_1.0", "fast_1.5", "score", "score 95% CI", "P(rank holds)",
                   "hacks", "tokens/solved", "$/solved", "finished")


def summary_cells(s: ModelSummary) -> list[str]:
    return [
        s.model, s.harness, f"{s.solved}/{s.tasks}", fmt(s.pass_at_1), fmt_speedup(s.mean_speedup),
        fmt_speedup(s.median_speedup), fmt_speedup(s.geomean_speedup), fmt_interval(s.geomean_ci),
        fmt(s.fast_p["1.0"]), fmt(s.fast_p["1.5"]), fmt_speedup(s.score, 3), fmt_interval(s.score_ci, 3),
        fmt(s.order_confidence), str(s.hacks), fmt(s.tokens_per_solved, 0), fmt(s.dollars_per_solved, 4),
        f"{s.finished}/{s.planned}",
    ]


def cell_text(cell: TrialCell) -> str:
    if cell.state not in ("done", "failed"):
        return cell.state
    text = cell.verdict or "failed"
    if cell.speedup is not None and cell.verdict == "passed":
        text += f" x{fmt_speedup(cell.speedup)}"
    if cell.hacks:
        text += " [" + ", ".join(dict.fromkeys(cell.hacks)) + "]"
    if cell.flags:
        text += " (flags: " + ", ".join(dict.fromkeys(cell.flags)) + ")"
    return text


def render_markdown(board: Leaderboard) -> str:
    lines = [f"# Leaderboard: {board.name}", "", "| " + " | ".join(SUMMARY_COLUMNS) + " |",
             "|" + "---|" * len(SUMMARY_COLUMNS)]
    lines += ["| " + " | ".join(summary_cells(s)) + " |" for s in board.models]
    models = [s.model for s in board.models]
    lines += ["", "## Per kernel", "", "| kernel | " + " | ".join(models) + " |", "|" + "---|" * (len(models) + 1)]
    for kernel in board.kernels:
        by_model: dict[str, list[str]] = defaultdict(list)
        for cell in kernel.cells:
            by_model[cell.model].append(cell_text(cell))
        lines.append(f"| {kernel.suite}/{kernel.task} | " + " | ".join("; ".join(by_model[m]) or "-" for m in models) + " |")
    return "\n".join(lines) + "\n"


def render_json(board: Leaderboard) -> str:
    return json.dumps(board.model_dump(mode="json"), indent=1) + "\n"


COMPACT_COLUMNS = ("model", "solved", "pass@1", "mean x", "median x", "score", "score 95% CI",
                   "P(rank holds)", "hacks", "finished")
# Below this many terminal columns the full table is squeezed into unreadable ellipses.
FULL_TABLE_WIDTH = 210


def render_rich_table(board: Leaderboard, width: int | None = None) -> Table:
    """The full summary, or its most important columns on a narrow terminal (the other formats
    always carry everything)."""
    columns = SUMMARY_COLUMNS if width is None or width >= FULL_TABLE_WIDTH else COMPACT_COLUMNS
    keep = [SUMMARY_COLUMNS.index(c) for c in columns]
    table = Table(title=f"Leaderboard: {board.name}")
    for col in columns:
        table.add_column(col, justify="left" if col in ("model", "harness") else "right", no_wrap="CI" in col)
    for s in board.models:
        cells = summary_cells(s)
        table.add_row(*(cells[i] for i in keep))
    return table


def relative_link(rel_dir: str, out_file: Path | None, sweep_dir: Path) -> str:
    """Link from where the report is written to a trial folder."""
    base = out_file.parent if out_file is not None else sweep_dir
    return Path(os.path.relpath((sweep_dir / rel_dir).resolve(), base.resolve())).as_posix()
