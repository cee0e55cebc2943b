"""`kernelarena sweep`, `leaderboard` and `replay`.

The orchestrator modules are imported inside the commands so `kernelarena --help` and the other
areas' commands do not pay for (or break on) the sweep machinery's imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from kernelarena.errors import UserError
from scorer.aggregate import METHODS

if TYPE_CHECKING:
    from orchestrator.leaderboard import Leaderboard

FORMATS = ("table", "json", "md", "html")


def print_table(board: Leaderboard, console: Console, wide: bool) -> None:
    """The board's terminal table at the console's width (COLUMNS, else the terminal's, else 80
    when piped); `wide` shows every column, widening the console to fit them."""
    from orchestrator.leaderboard_table import natural_width, render_table

    if wide and console.width < natural_width(board):
        console = Console(file=console.file, width=natural_width(board))
    console.print(render_table(board, width=console.width, wide=wide))


def sweep(
    spec: Annotated[Path | None, typer.Argument(
        help="Sweep spec .toml (default: examples/demo.toml), or a sweep folder with --resume.",
    )] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an earlier sweep: keep finished trials, restart interrupted ones.",
    )] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Sweep folder (default: the spec's `out`, else runs/<name>-<timestamp>).",
    )] = None,
    executor: Annotated[str | None, typer.Option(
        "--executor", help="Where trials run: local or ray (default: the spec's `executor`).",
    )] = None,
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", help="Ray cluster to run trials on (auto, HOST:PORT, ray://...); implies nothing without executor ray.",
    )] = None,
) -> None:
    """Run models x suites x tasks x samples as sandboxed trials, then print the leaderboard."""
    from kernelarena.logs import configure
    from orchestrator.hardware import hardware_label, hardware_of
    from orchestrator.index import load_index
    from orchestrator.leaderboard import build_leaderboard
    from orchestrator.prepare import LOG_FILE, prepare_sweep

    if executor is not None and executor not in ("local", "ray"):
        raise UserError(f"unknown --executor '{executor}'; use local or ray")
    plan = prepare_sweep(spec, resume, out, executor=executor, ray_address=ray_address)
    from orchestrator.launch import run_sweep_blocking  # only once the spec is known good

    plan.sweep_dir.mkdir(parents=True, exist_ok=True)
    # INFO goes to the sweep's JSON log only; the terminal shows progress plus warnings.
    configure(json_path=plan.sweep_dir / LOG_FILE, level="INFO", console_level="WARNING")
    console = Console()
    try:
        outcome = run_sweep_blocking(plan)
    except UserError as exc:
        raise UserError(f"{exc} (then continue with `kernelarena sweep --resume {plan.sweep_dir}`)") from None
    except KeyboardInterrupt:
        Console(stderr=True).print(f"interrupted; continue with: kernelarena sweep --resume {plan.sweep_dir}")
        raise typer.Exit(130) from None
    index = load_index(plan.sweep_dir)
    print_table(build_leaderboard(index, hardware=hardware_of(hardware_label(plan.sweep_dir, index))), console, wide=False)
    c = outcome.counts
    console.print(f"{c['done']} done, {c['failed']} failed, {c['pending'] + c['running']} not run "
                  f"in {outcome.elapsed_s:.0f}s", highlight=False)
    if outcome.paused_providers:
        console.print(f"providers paused after repeated model errors: {', '.join(outcome.paused_providers)}")
    console.print(f"sweep folder: {plan.sweep_dir}", highlight=False, soft_wrap=True)


def leaderboard(
    sweep_dir: Annotated[Path, typer.Argument(help="A sweep folder (holds index.json).")],
    fmt: Annotated[str, typer.Option("--format", help="table, json, md or html.")] = "table",
    out: Annotated[Path | None, typer.Option("--out", help="Write to this file instead of stdout.")] = None,
    resamples: Annotated[int, typer.Option(
        "--bootstrap", help="Bootstrap resamples for the 95% intervals and rank confidences (0: none).",
    )] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap's random draws.")] = 0,
    method: Annotated[str, typer.Option(
        "--method", help="published (default: mean and median over correct kernels) "
                         "or strict (failures count speedup 0 in the mean and median).",
    )] = "published",
    wide: Annotated[bool, typer.Option(
        "--wide", help="table: every column, however wide (default: the compact columns that fit COLUMNS).",
    )] = False,
) -> None:
    """Per-model suite scores (with bootstrap 95% intervals) and per-kernel verdicts of a sweep."""
    from orchestrator.hardware import hardware_label, hardware_of
    from orchestrator.index import load_index, sweep_folder
    from orchestrator.leaderboard import build_leaderboard, render_json, render_markdown
    from orchestrator.leaderboard_html import render_html

    if fmt not in FORMATS:
        raise UserError(f"unknown --format '{fmt}'; use one of {', '.join(FORMATS)}")
    if resamples < 0:
        raise UserError(f"--bootstrap must be 0 (no intervals) or a positive number of resamples, not {resamples}")
    if method not in METHODS:
        raise UserError(f"unknown --method '{method}'; use one of {', '.join(METHODS)}")
    sweep_dir = sweep_folder(sweep_dir)
    index = load_index(sweep_dir)
    board = build_leaderboard(index, resamples=resamples, seed=seed, method=method,
                              hardware=hardware_of(hardware_label(sweep_dir, index)))
    if fmt == "table":
        if out is None:
            print_table(board, Console(), wide)
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            print_table(board, Console(file=fh), wide)
        return
    if fmt == "html":
        text = render_html(board, sweep_dir, out)
    else:
        text = {"json": render_json, "md": render_markdown}[fmt](board)
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


def replay(
    transcript: Annotated[Path, typer.Argument(help="A trial's transcript.jsonl, or its folder.")],
    rescore: Annotated[bool, typer.Option("--rescore", help="Score its kernel.py again in a fresh sandbox and compare.")] = False,
    reexec: Annotated[bool, typer.Option(
        "--reexec", help="Re-run its bash/write_file tool calls in a fresh sandbox and diff the outputs.",
    )] = False,
    full: Annotated[bool, typer.Option("--full", help="Do not truncate long messages and tool outputs.")] = False,
    tolerance: Annotated[float, typer.Option("--tolerance", help="Relative speedup difference --rescore accepts.")] = 0.25,
) -> None:
    """Show a trial's conversation readably; optionally re-score or re-execute it."""
    from kernelarena.logs import configure
    from orchestrator.replay import replay_command

    configure(level="WARNING")
    code = replay_command(transcript, rescore=rescore, reexec=reexec, full=full, console=Console(), tolerance=tolerance)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
    app.command("leaderboard")(leaderboard)
    app.command("replay")(replay)

