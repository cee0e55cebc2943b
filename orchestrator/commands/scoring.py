"""`kernelarena score`: score one kernel, or a tree of solutions per model, with the shared scorer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import structlog
import typer
from rich.console import Console
from rich.table import Table

from kernelarena.errors import UserError
from kernelarena.logs import configure, get_logger
from scorer.aggregate import KernelResult, SuiteSummary, summarize
from scorer.errors import ScorerBroken
from scorer.options import ScoreOptions
from scorer.score import Score
from scorer.tasks.suites import Suite, load_suite

log = get_logger("kernelarena.score")


def _options(device: str, seeds: int, repetitions: int | None, warmup: int | None, skip_timing: bool) -> ScoreOptions:
    if seeds < 1:
        raise UserError("--seeds must be at least 1")
    return ScoreOptions(device=device, seeds=seeds, repetitions=repetitions, warmup=warmup, skip_timing=skip_timing)


def _score_line(score: Score) -> str:
    parts = [f"{score.suite}/{score.task}: {score.verdict}"]
    if score.timing and score.timing.speedup is not None:
        t = score.timing
        parts.append(f"speedup {t.speedup:.3g}x (kernel {t.kernel_ms:.4g} ms vs baseline {t.baseline_ms:.4g} ms, {t.timer})")
    if score.correctness:
        parts.append(f"correct {score.correctness.passed}/{score.correctness.trials}")
    return "  ".join(parts)


def score_one(suite: Suite, task: str, kernel: Path, options: ScoreOptions, as_json: bool, out: Path | None) -> None:
    from scorer.judge.scoring import score_kernel  # torch: only where a kernel is scored

    score = score_kernel(suite, task, kernel, device=options.device, options=options)
    if out is not None:
        score.write(out)
    if as_json:
        typer.echo(score.to_json())
        return
    typer.echo(_score_line(score))
    for hack in score.hacks:
        typer.echo(f"  hack {hack['pattern']}: {hack['evidence']}")
    for flag in score.flags:
        typer.echo(f"  flag {flag['pattern']}: {flag['evidence']}")
    if score.error and score.verdict != "hack_detected":
        typer.echo("  " + score.error.strip().splitlines()[0][:300])


def collect_solutions(suite: Suite, root: Path) -> dict[str, dict[str, Path]]:
    """DIR/<task>/<model>/kernel.py -> {model: {task: path}}; a model missing a task gets its
    (missing) path, which scores no_kernel and so counts 0."""
    if not root.is_dir():
        raise UserError(f"--solutions {root} is not a folder; give DIR laid out as DIR/<task>/<model>/kernel.py")
    task_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    unknown = [p.name for p in task_dirs if p.name not in suite.tasks]
    if unknown:
        raise UserError(f"{root}: {', '.join(unknown)} not a task of suite '{suite.name}'; "
                        f"folders must be named after tasks (`kernelarena tasks {suite.name}`)")
    models = sorted({m.name for t in task_dirs for m in t.iterdir() if m.is_dir()})
    if not models:
        raise UserError(f"{root} holds no DIR/<task>/<model>/kernel.py; lay the solutions out that way")
    return {m: {t.name: t / m / "kernel.py" for t in task_dirs} for m in models}


def score_tree(suite: Suite, root: Path, options: ScoreOptions, as_json: bool) -> None:
    tree = collect_solutions(suite, root)
    results: dict[str, list[KernelResult]] = {m: [] for m in tree}
    scores: dict[str, list[dict[str, object]]] = {m: [] for m in tree}
    tasks = sorted({t for kernels in tree.values() for t in kernels})
    from scorer.judge.session import ScoringSession  # torch: only where a kernel is scored

    # Task by task, so every model's kernel of a task is scored against one prepared reference.
    with ScoringSession(options) as session:
        for task in tasks:
            for model, kernels in tree.items():
                path = kernels[task]
                score = session.score(suite, task, path, device=options.device)
                if path.parent.is_dir():
                    score.write(path.parent / "score.json")
                log.info("scored", model=model, task=task, verdict=score.verdict, speedup=score.speedup)
                if not as_json:
                    typer.echo(f"{model}  {_score_line(score)}", err=True)
                results[model].append(KernelResult(task, score.verdict, score.speedup))
                scores[model].append(score.to_dict())
    summaries: dict[str, SuiteSummary] = {m: summarize(r) for m, r in results.items()}
    if as_json:
        table = {m: {"summary": s.to_dict(), "scores": scores[m]} for m, s in summaries.items()}
        typer.echo(json.dumps(table, indent=2, default=str))
        return
    Console().print(_summary_table(suite, summaries))


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _summary_table(suite: Suite, summaries: dict[str, SuiteSummary]) -> Table:
    table = Table(title=f"{suite.name}: score = mean x median x pass@1 (mean and median over correct kernels)")
    for col in ("model", "solved", "pass rate", "mean", "median", "geomean", "fast_1", "score"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for model, s in sorted(summaries.items(), key=lambda kv: -kv[1].score):
        table.add_row(model, f"{s.solved}/{s.tasks}", _fmt(s.pass_rate, ".0%"), _fmt(s.mean_speedup), _fmt(s.median_speedup),
                      _fmt(s.geomean_speedup), _fmt(s.fast_p, ".0%"), _fmt(s.score, ".4f"))
    return table


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score_cmd(
        suite: str = typer.Option(..., "--suite", help="Suite name (`kernelarena suites`) or folder."),
        task: str | None = typer.Option(None, "--task", help="Task id; with --kernel."),
        kernel: Annotated[Path | None, typer.Option("--kernel", help="The solution's kernel.py.")] = None,
        solutions: Annotated[Path | None, typer.Option(
            "--solutions", help="Folder DIR/<task>/<model>/kernel.py to score as a table.")] = None,
        device: str = typer.Option("auto", "--device", help="auto, cuda or cpu."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
        out: Annotated[Path | None, typer.Option("--out", help="Also write score.json here (single kernel).")] = None,
        seeds: int = typer.Option(5, "--seeds", help="Random input sets for correctness."),
        repetitions: int | None = typer.Option(None, "--repetitions", help="Override the suite's timed repetitions."),
        warmup: int | None = typer.Option(None, "--warmup", help="Override the suite's warm-up repetitions."),
        skip_timing: bool = typer.Option(False, "--skip-timing", help="Correctness and anti-hack checks only."),
    ) -> None:
        """Score one kernel (--task, --kernel) or a tree of solutions (--solutions). Exits 0 whatever the verdict."""
        if not structlog.is_configured():
            configure()  # unconfigured structlog prints to stdout and would corrupt --json output
        if device not in ("auto", "cuda", "cpu"):
            raise UserError(f"--device {device}: use auto, cuda or cpu")
        options = _options(device, seeds, repetitions, warmup, skip_timing)
        loaded = load_suite(suite)
        if solutions is not None and (task or kernel):
            raise UserError("give either --solutions DIR or --task and --kernel, not both")
        if solutions is None and (not task or kernel is None):
            raise UserError("give --task TASK and --kernel PATH (or --solutions DIR)")
        if task and kernel is not None and not kernel.is_file():
            loaded.task(task)  # an unknown task is named first
            # A typo, not a verdict: a sweep's missing kernel.py still scores no_kernel (python -m scorer).
            raise UserError(f"--kernel {kernel}: no such file; give the path of the solution's kernel.py")
        try:
            if solutions is not None:
                score_tree(loaded, solutions, options, as_json)
            else:
                score_one(loaded, task or "", kernel or Path(), options, as_json, out)
        except ScorerBroken as exc:
            # Not the kernel's fault and not the user's: say so, exit 1 (a verdict would be a lie).
            typer.echo(f"error: the scorer broke: {exc}", err=True)
            raise typer.Exit(1) from None
