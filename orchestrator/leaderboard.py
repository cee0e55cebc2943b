"""Leaderboard arithmetic over a sweep's index, and its table / JSON / Markdown renderings.

The figures come from `scorer.aggregate` (KernelArena's published method lives there: the mean
and the median speedup over the correct timed kernels only, pass@1 = share of first tries correct,
score = mean x median x pass@1, the geometric mean over correct kernels, fast_p = share correct
with speedup > p; `method="strict"` is the named stricter variant, failures as speedup 0 inside
the mean and the median). This module only decides what goes in:
- a model's finished trials, each one result (with k samples per task every task weighs k, so
  pass@1 is the share of correct samples: the unbiased pass@1 estimate);
- a failed trial (no verdict) is an incorrect kernel; pending or running trials are left out
  (the summary says how many finished of how many planned);
- `solved` counts tasks with at least one correct sample;
- ranks (`orchestrator.ranking`): `rank` is shared where the score intervals overlap (LMArena's
  rule: 1 + the models wholly above), `rank_range` the best and worst rank the intervals allow,
  `rank_strict` the order by score; rows are listed by rank, then score. Without the bootstrap,
  rank is the order by score with exact ties shared.

Confidence intervals (`orchestrator.bootstrap`): a paired bootstrap over tasks, and over samples
within a task, of the same results; `score_ci`, `geomean_ci` (95 % percentile intervals) and
`order_confidence` (share of resamples in which a row ranks above the row below it).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from orchestrator.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL, bootstrap
from orchestrator.hardware import CPU_NOTE as CPU_NOTE  # CPU_NOTE: the web app imports it from here
from orchestrator.hardware import Hardware, hardware_line
from orchestrator.index import Index
from orchestrator.ledger import TrialRow
from orchestrator.ranking import confidence_ranks, rank_note
from scorer.aggregate import DEFAULT_METHOD, KernelResult, check_method, summarize

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
    """Over the correct timed kernels (published); None ("-") where there is none."""
    median_speedup: float | None
    geomean_speedup: float | None
    fast_p: dict[str, float]
    """Keyed by p as text ('1.0', '1.5')."""
    score: float | None
    """mean x median x pass@1; 0 where no kernel is correct, None where no trial finished."""
    rank: int | None = None
    """1 + the models whose score interval lies wholly above this one's (`orchestrator.ranking`)."""
    rank_strict: int | None = None
    """1..N in the order by score, then pass@1, then name."""
    rank_range: tuple[int, int] | None = None
    """The best and the worst rank the score intervals allow."""
    hacks: int
    """Trials rejected by the anti-hack checks."""
    flagged: int = 0
    """Finished trials with an audit flag (impossible-speed, shape-specialization, ...): kept, but worth a look."""
    contended: int = 0
    """Passed trials whose timing was taken while foreign compute ran on the device, twice: kept, marked."""
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
    contended: bool = False


class KernelEntry(BaseModel):
    suite: str
    task: str
    cells: list[TrialCell]


class Leaderboard(BaseModel):
    name: str
    method: str = DEFAULT_METHOD
    """How the score is computed: scorer.aggregate's "published" (default) or "strict"."""
    method_note: str = ""
    """`method` in one sentence, with its formula."""
    rank_note: str = ""
    """How `rank` is set, in one line (`orchestrator.ranking.rank_note`)."""
    hardware: Hardware | None = None
    """The scoring device (and the CPU caveat); None where the caller did not say."""
    models: list[ModelSummary]
    kernels: list[KernelEntry]
    bootstrap: BootstrapInfo | None = None


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """Sorts names as people read them: level1_2 before level1_10 (digit runs as numbers)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part]


def _finished(row: TrialRow) -> bool:
    return row.state in ("done", "failed")


def _correct(row: TrialRow) -> bool:
    return row.state == "done" and row.verdict == "passed"


def _kernel_result(row: TrialRow) -> KernelResult:
    verdict = row.verdict if row.state == "done" and row.verdict else "failed"
    return KernelResult(task=f"{row.suite}/{row.task}#{row.sample}", verdict=verdict, speedup=row.speedup)


def summarize_model(model: str, model_id: str, harness: str, rows: list[TrialRow],
                    method: str = DEFAULT_METHOD) -> ModelSummary:
    finished = [r for r in rows if _finished(r)]
    results = [_kernel_result(r) for r in finished]
    figures = {p: summarize(results, p=p, method=method) for p in FAST_P}
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
        mean_speedup=main.mean_speedup,
        median_speedup=main.median_speedup,
        geomean_speedup=main.geomean_speedup,
        fast_p={str(p): f.fast_p for p, f in figures.items()},
        score=main.score if results else None,
        hacks=sum(r.verdict == "hack_detected" for r in finished),
        flagged=sum(bool(r.flags) for r in finished),
        contended=sum(r.contended for r in finished if _correct(r)),
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


def _sort_key(s: ModelSummary) -> tuple:
    return (s.score is None, -(s.score or 0.0), -s.pass_at_1, s.model)


def assign_ranks(summaries: list[ModelSummary]) -> list[ModelSummary]:
    """Summaries sorted by score -> their strict ranks, their ranks by confidence (the score
    intervals, or the scores themselves without the bootstrap) and rank ranges; returned in the
    order the boards list them: by rank, then by strict rank."""
    intervals = [s.score_ci if s.score_ci is not None else (None if s.score is None else (s.score, s.score))
                 for s in summaries]
    for strict, (s, (rank, rank_range)) in enumerate(zip(summaries, confidence_ranks(intervals), strict=True), start=1):
        s.rank_strict, s.rank, s.rank_range = strict, rank, rank_range
    return sorted(summaries, key=lambda s: (s.rank, s.rank_strict))


def add_intervals(summaries: list[ModelSummary], rows_by_model: dict[str, list[TrialRow]],
                  resamples: int, seed: int, method: str = DEFAULT_METHOD) -> list[ModelSummary]:
    """The summaries (sorted by score) with their intervals, ranked, and each row's confidence of
    ranking above the row listed below it."""
    result = bootstrap([task_results(rows_by_model.get(s.model, [])) for s in summaries], resamples, seed, method)
    position = {s.model: i for i, s in enumerate(summaries)}
    for i, s in enumerate(summaries):
        if s.score is not None:
            s.score_ci = result.score_ci(i)
            s.geomean_ci = result.geomean_ci(i)
    listed = assign_ranks(summaries)
    scored = [s for s in listed if s.score is not None]
    for s, below in pairwise(scored):
        s.order_confidence = result.order_confidence(position[s.model], position[below.model])
    return listed


def build_leaderboard(index: Index, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      method: str = DEFAULT_METHOD, hardware: Hardware | None = None) -> Leaderboard:
    """`resamples=0` leaves the bootstrap out; `method` is scorer.aggregate's ("published" or "strict");
    `hardware` is carried into every output (`orchestrator.hardware`)."""
    check_method(method)
    rows_by_model: dict[str, list[TrialRow]] = defaultdict(list)
    kernels: dict[tuple[str, str], list[TrialCell]] = {}
    for row in index.trials:
        rows_by_model[row.model].append(row)
        kernels.setdefault((row.suite, row.task), []).append(
            TrialCell(model=row.model, sample=row.sample, state=row.state, verdict=row.verdict,
                      speedup=row.speedup, hacks=row.hacks, flags=row.flags, rel_dir=row.rel_dir,
                      error=row.error, contended=row.contended)
        )
    summaries = [
        summarize_model(name, entry.id, entry.harness, rows_by_model.get(name, []), method)
        for name, entry in index.models.items()
    ]
    summaries.sort(key=_sort_key)
    if resamples:
        summaries = add_intervals(summaries, rows_by_model, resamples, seed, method)
    else:
        summaries = assign_ranks(summaries)
    return Leaderboard(
        name=index.name,
        method=method,
        method_note=method_note(method),
        rank_note=rank_note(bool(resamples)),
        hardware=hardware,
        bootstrap=BootstrapInfo(resamples=resamples, seed=seed, level=LEVEL) if resamples else None,
        models=summaries,
        kernels=[KernelEntry(suite=s, task=t, cells=sorted(c, key=lambda c: (c.model, c.sample)))
                 for (s, t), c in sorted(kernels.items(), key=lambda kv: (natural_key(kv[0][0]), natural_key(kv[0][1])))],
    )


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def sig(value: float | None, digits: int = 3) -> str:
    """`digits` significant digits, in plain notation from 0.001 up (8.84, 0.0064 -> 0.00640,
    123, 4560), in scientific notation below (4.00e-06); "-" for None."""
    if value is None or not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if exponent < -3:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - exponent)
    text = f"{value:.{decimals}f}"
    if decimals and len(text.replace("-", "").replace(".", "").lstrip("0")) > digits:
        text = f"{value:.{decimals - 1}f}"  # rounding carried into a new digit (9.996 -> 10.0)
    return text


def fmt_speedup(value: float | None, digits: int = 3) -> str:
    """A speedup or a score, with `digits` significant digits (CPU-interpreted kernels run at
    0.001x, which fixed decimals would show as a misleading 0.00)."""
    return sig(value, digits)


def _half_up(value: float, decimals: int) -> Decimal:
    """JavaScript's toFixed and Math.round: the exact binary value, a tie rounded up."""
    return Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def fmt_dollars(value: float | None) -> str:
    """As the web app's `money`: "$1.04" from a dollar up, "$0.0312" below."""
    return "-" if value is None else f"${_half_up(value, 2 if value >= 1 else 4)}"


def fmt_count(value: float | None) -> str:
    """A whole number with thousands separators, as the web app's "12,345"."""
    return "-" if value is None else f"{_half_up(value, 0):,}"


def fmt_interval(ci: tuple[float, float] | None, digits: int = 3) -> str:
    return "-" if ci is None else f"[{fmt_speedup(ci[0], digits)}, {fmt_speedup(ci[1], digits)}]"


def fmt_rank(s: ModelSummary) -> str:
    return "-" if s.rank is None else str(s.rank)


def fmt_rank_range(s: ModelSummary) -> str:
    """"2-6", or "3" where the intervals allow one rank only."""
    if s.rank_range is None:
        return "-"
    best, worst = s.rank_range
    return f"{best}-{worst}" if best != worst else str(best)


CONTENDED_MARK = " (contended)"
"""After a speedup timed while foreign compute ran on the device, in the first timing and its re-time."""


def marked_contended(cell: TrialCell) -> bool:
    """A passed speedup that carries the contended mark (a failed trial shows no speedup to mark)."""
    return cell.contended and cell.state == "done" and cell.verdict == "passed"


def any_contended(board: Leaderboard) -> bool:
    return any(marked_contended(c) for k in board.kernels for c in k.cells)

SUMMARY_COLUMNS = ("rank", "model", "harness", "solved", "pass@1", "mean x", "median x", "geomean x",
                   "geomean 95% CI", "fast_1.0", "fast_1.5", "score", "score 95% CI", "rank range", "strict rank",
                   "P(rank holds)", "hacks", "flagged", "tokens/solved", "$/solved", "finished")

COLUMN_HELP = {
    "rank": "1 + the number of models whose score interval lies wholly above this one's: overlapping intervals share a rank.",
    "model": "The model as the sweep names it.",
    "harness": "The agent harness that drove the model.",
    "solved": "Distinct tasks with at least one correct sample / tasks with a finished trial.",
    "pass@1": "Share of first tries (all finished samples) that passed correctness.",
    "mean x": "Mean speedup over the baseline, over correct timed kernels only (published method).",
    "median x": "Median speedup over the baseline, over correct timed kernels only (published method).",
    "geomean x": "Geometric mean speedup over correct timed kernels.",
    "geomean 95% CI": "95% bootstrap percentile interval of the geometric mean.",
    "fast_1.0": "Share of all finished samples that are correct and faster than the baseline.",
    "fast_1.5": "Share of all finished samples that are correct and at least 1.5x faster than the baseline.",
    "score": "mean x median x pass@1 (0 with no correct kernel).",
    "score 95% CI": "95% bootstrap percentile interval of the score (tasks and samples resampled, paired).",
    "rank range": "The best and the worst rank the score intervals allow.",
    "strict rank": "The order by score alone (then pass@1), no ranks shared.",
    "P(rank holds)": "Share of bootstrap resamples in which this model ranks above the one below it.",
    "hacks": "Trials rejected by the anti-hack checks.",
    "flagged": "Finished trials with an audit flag (impossible-speed, shape-specialization): counted, but worth a look.",
    "tokens/solved": "Input + output tokens per solved task.",
    "$/solved": "Dollars per solved task.",
    "finished": "Finished trials / planned trials.",
}

STRICT_HELP = {
    "mean x": "Mean speedup over all finished samples, a failure counting 0 (strict method).",
    "median x": "Median speedup over all finished samples, a failure counting 0 (strict method).",
}


def column_help(column: str, method: str = DEFAULT_METHOD) -> str:
    return (STRICT_HELP if method == "strict" else {}).get(column, COLUMN_HELP[column])


CONTENDED_NOTE = ("'(contended)': the speedup was timed while foreign compute ran on the scoring device, "
                  "in the first timing and again in its one re-time (score.json `contended` holds the evidence). "
                  "It counts as measured, but may be off in either direction.")


def method_note(method: str) -> str:
    """One sentence saying how the score was computed."""
    if method == "strict":
        return ("score = mean x median x pass@1, STRICT method: every finished sample counts in the mean "
                "and the median, a failed kernel as speedup 0 (not KernelArena's published figure).")
    return ("score = mean x median x pass@1 (KernelArena's published method): the mean and the median "
            "speedup over correct kernels only, pass@1 the share of first tries correct; "
            "the geometric mean is over correct kernels.")


def summary_cells(s: ModelSummary) -> list[str]:
    return [
        fmt_rank(s), s.model, s.harness, f"{s.solved}/{s.tasks}", fmt(s.pass_at_1), fmt_speedup(s.mean_speedup),
        fmt_speedup(s.median_speedup), fmt_speedup(s.geomean_speedup), fmt_interval(s.geomean_ci),
        fmt(s.fast_p["1.0"]), fmt(s.fast_p["1.5"]), fmt_speedup(s.score), fmt_interval(s.score_ci),
        fmt_rank_range(s), fmt(s.rank_strict, 0), fmt(s.order_confidence), str(s.hacks), str(s.flagged),
        fmt_count(s.tokens_per_solved), fmt_dollars(s.dollars_per_solved),
        f"{s.finished}/{s.planned}",
    ]


def cell_text(cell: TrialCell) -> str:
    if cell.state not in ("done", "failed"):
        return cell.state
    text = cell.verdict or "failed"
    if cell.speedup is not None and cell.verdict == "passed":
        text += f" x{fmt_speedup(cell.speedup)}"
        if marked_contended(cell):
            text += CONTENDED_MARK
    if cell.hacks:
        text += " [" + ", ".join(dict.fromkeys(cell.hacks)) + "]"
    if cell.flags:
        text += " (flags: " + ", ".join(dict.fromkeys(cell.flags)) + ")"
    return text


def board_notes(board: Leaderboard) -> list[str]:
    """What every output says above or below the table: the hardware (with the CPU caveat), how
    the score is computed and how the rank is set."""
    hardware = hardware_line(board.hardware)
    return [*([hardware] if hardware else []), board.method_note or method_note(board.method), board.rank_note]


def render_markdown(board: Leaderboard) -> str:
    lines = [f"# Leaderboard: {board.name}", "", *(line for note in board_notes(board) for line in (note, "")),
             "| " + " | ".join(SUMMARY_COLUMNS) + " |",
             "|" + "---|" * len(SUMMARY_COLUMNS)]
    lines += ["| " + " | ".join(summary_cells(s)) + " |" for s in board.models]
    models = [s.model for s in board.models]
    lines += ["", "## Per kernel", "", "| kernel | " + " | ".join(models) + " |", "|" + "---|" * (len(models) + 1)]
    for kernel in board.kernels:
        by_model: dict[str, list[str]] = defaultdict(list)
        for cell in kernel.cells:
            by_model[cell.model].append(cell_text(cell))
        lines.append(f"| {kernel.suite}/{kernel.task} | " + " | ".join("; ".join(by_model[m]) or "-" for m in models) + " |")
    if any_contended(board):
        lines += ["", CONTENDED_NOTE]
    return "\n".join(lines) + "\n"


def render_json(board: Leaderboard) -> str:
    return json.dumps(board.model_dump(mode="json"), indent=1) + "\n"


def relative_link(rel_dir: str, out_file: Path | None, sweep_dir: Path) -> str:
    """Link from where the report is written to a trial folder."""
    base = out_file.parent if out_file is not None else sweep_dir
    return Path(os.path.relpath((sweep_dir / rel_dir).resolve(), base.resolve())).as_posix()


class Comparison(BaseModel):
    """Two models of one board side by side, on the same paired bootstrap draws."""

    a: ModelSummary
    b: ModelSummary
    score_diff: float | None
    """a's score minus b's (None where either has no finished trial)."""
    score_diff_ci: tuple[float, float] | None
    p_a_above: float | None
    """Share of resamples in which a ranks above b (score, then pass@1; ties one half)."""
    tasks: list[dict]
    """Per task: each model's samples (verdict, speedup) and its best correct speedup."""
    a_faster: int
    b_faster: int
    """Tasks both solved on which one model's best correct kernel is the faster."""


def compare_models(index: Index, a: str, b: str, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   method: str = DEFAULT_METHOD) -> Comparison:
    """`a` and `b` name models of `index` (KeyError otherwise)."""
    entries = {name: index.models[name] for name in (a, b)}
    rows = {name: [r for r in index.trials if r.model == name] for name in (a, b)}
    summaries = [summarize_model(n, e.id, e.harness, rows[n], method) for n, e in entries.items()]
    diff = diff_ci = p_above = None
    score_a, score_b = summaries[0].score, summaries[1].score
    if score_a is not None and score_b is not None:
        diff = score_a - score_b
        if resamples:
            result = bootstrap([task_results(rows[a]), task_results(rows[b])], resamples, seed, method)
            d = result.score[0] - result.score[1]
            lo, hi = np.percentile(d, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
            diff_ci, p_above = (float(lo), float(hi)), result.order_confidence(0, 1)
    tasks: dict[tuple[str, str], dict] = {}
    for name in (a, b):
        for r in sorted(rows[name], key=lambda r: r.sample):
            t = tasks.setdefault((r.suite, r.task), {"suite": r.suite, "task": r.task, a: [], b: []})
            t[name].append({"sample": r.sample, "state": r.state, "verdict": r.verdict, "speedup": r.speedup,
                            "hacks": r.hacks, "flags": r.flags, "contended": r.contended})
    a_faster = b_faster = 0
    for t in tasks.values():
        best = {n: max((c["speedup"] for c in t[n] if c["verdict"] == "passed" and c["speedup"]), default=None)
                for n in (a, b)}
        t["best"] = best
        best_a, best_b = best[a], best[b]
        if best_a is not None and best_b is not None and best_a != best_b:
            a_faster += best_a > best_b
            b_faster += best_b > best_a
    return Comparison(a=summaries[0], b=summaries[1], score_diff=diff, score_diff_ci=diff_ci, p_a_above=p_above,
                      tasks=sorted(tasks.values(), key=lambda t: (natural_key(t["suite"]), natural_key(t["task"]))),
                      a_faster=a_faster, b_faster=b_faster)
