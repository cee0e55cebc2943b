"""`kernelarena run`: one trial end to end (agent sandbox, harness, fresh scoring sandbox)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from harnesses.budget import BudgetConfig
from harnesses.models import check_credentials
from harnesses.registry import get_harness
from harnesses.trial import TrialBroken, TrialOutcome, TrialSpec, run_trial
from kernelarena.errors import UserError, first_problem
from kernelarena.logs import configure
from sandbox.cancel import Interrupted, run_cancellable
from sandbox.config import SandboxConfig
from scorer.tasks.suites import load_suite


def parse_options(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """`key=value` pairs; values that parse as JSON (numbers, true/false, lists) keep their type."""
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{flag} '{pair}' is not key=value; write it like {flag} temperature=0.2")
        try:
            options[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            options[key.strip()] = raw
    return options


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:80]


def build_spec(
    suite: str, task: str, model: str, harness: str, sandbox: str, device: str, sample: int,
    budget: dict[str, Any], model_options: dict[str, Any], harness_options: dict[str, Any],
    score_options: dict[str, Any],
) -> TrialSpec:
    # model_validate: the CLI's strings (backend, device) are unchecked until pydantic checks them here.
    try:
        return TrialSpec.model_validate(dict(
            trial_id=f"{suite}/{task}/{model}/{sample}",
            suite=suite, task=task, model=model, model_options=model_options,
            harness=harness, harness_options=harness_options,
            sandbox=SandboxConfig.model_validate({"backend": sandbox}), budget=BudgetConfig(**budget),
            device=device, sample=sample, score_options=score_options,
        ))
    except ValidationError as exc:
        where, msg = first_problem(exc)
        raise UserError(f"bad trial setting {where}: {msg}; see `kernelarena run --help`") from None


def _summary(outcome: TrialOutcome) -> str:
    speedup = f"{outcome.speedup:.3f}x" if outcome.speedup is not None else "-"
    dollars = f"${outcome.dollars:.4f}" if outcome.dollars is not None else "unknown"
    lines = [
        f"verdict      {outcome.verdict}" + (f"  ({', '.join(outcome.hacks)})" if outcome.hacks else ""),
        f"speedup      {speedup}",
        f"exit reason  {outcome.exit_reason}",
        f"turns        {outcome.turns}",
        f"tokens       {outcome.input_tokens} in / {outcome.output_tokens} out  (cost {dollars})",
        f"duration     {outcome.duration_s:.1f} s",
    ]
    if outcome.error:
        first_line = (outcome.error.strip().splitlines() or [""])[0]
        lines.append(f"error        {first_line[:200]}")
    lines += [
        f"transcript   {outcome.transcript_path}",
        f"score        {outcome.score_path}",
        f"kernel       {outcome.kernel_path or '(none written)'}",
    ]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        suite: str = typer.Option(..., "--suite", help="Suite name or folder."),
        task: str = typer.Option(..., "--task", help="Task id in the suite."),
        model: str = typer.Option(..., "--model", help="provider:name, e.g. scripted:reference, openai:gpt-5."),
        harness: str = typer.Option("minimal", "--harness", help="Registered harness name."),
        sandbox: str = typer.Option("auto", "--sandbox", help="auto, docker or process."),
        out: Annotated[Path | None, typer.Option(
            "--out", help="Trial folder (default runs/trials/<suite>-<task>-<model>-<time>).")] = None,
        device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
        sample: int = typer.Option(0, "--sample", help="Sample index (part of the trial id)."),
        max_turns: int | None = typer.Option(None, "--max-turns", help="Model queries allowed."),
        max_input_tokens: int | None = typer.Option(None, "--max-input-tokens"),
        max_output_tokens: int | None = typer.Option(None, "--max-output-tokens"),
        wall_time: float | None = typer.Option(None, "--wall-time", help="Seconds for the agent loop."),
        max_dollars: float | None = typer.Option(None, "--max-dollars"),
        model_option: Annotated[list[str] | None, typer.Option(
            "--model-option", help="key=value for the model client (repeatable).")] = None,
        harness_option: Annotated[list[str] | None, typer.Option(
            "--harness-option", help="key=value for the harness (repeatable).")] = None,
        score_option: Annotated[list[str] | None, typer.Option(
            "--score-option", help="key=value flag for the scorer, e.g. repetitions=5.")] = None,
    ) -> None:
        """Run one trial end to end and print its verdict, speedup, usage and file paths."""
        if sandbox not in ("auto", "docker", "process"):
            raise UserError(f"--sandbox '{sandbox}' is not one of auto, docker, process")
        if device not in ("auto", "cpu", "cuda"):
            raise UserError(f"--device '{device}' is not one of auto, cpu, cuda")
        model_options = parse_options(model_option, "--model-option")
        budget = {k: v for k, v in {
            "max_turns": max_turns, "max_input_tokens": max_input_tokens, "max_output_tokens": max_output_tokens,
            "wall_time_s": wall_time, "max_dollars": max_dollars,
        }.items() if v is not None}
        spec = build_spec(
            suite, task, model, harness, sandbox, device, sample, budget, model_options,
            parse_options(harness_option, "--harness-option"), parse_options(score_option, "--score-option"),
        )
        # Fail before any sandbox starts: a missing key, an unknown suite or task.
        check_credentials(model, **{k: v for k, v in model_options.items() if k == "api_key_env"})
        load_suite(suite).task(task)
        get_harness(harness, **spec.harness_options)
        out_dir = out or Path("runs") / "trials" / f"{_slug(suite)}-{_slug(task)}-{_slug(model)}-{time.strftime('%Y%m%d-%H%M%S')}"
        out_dir.mkdir(parents=True, exist_ok=True)
        configure(out_dir / "log.jsonl", level="WARNING")
        try:
            # SIGTERM cancels the trial like Ctrl-C does, so the sandboxes close and trial_end
            # records the interruption.
            outcome = run_cancellable(run_trial(spec, out_dir))
        except Interrupted as exc:
            typer.echo(f"{exc}; the transcript so far is {out_dir / 'transcript.jsonl'}", err=True)
            sys.exit(exc.exit_code)
        except TrialBroken as exc:
            typer.echo(f"error: {exc} (details in {out_dir / 'transcript.jsonl'})", err=True)
            sys.exit(1)
        typer.echo(_summary(outcome))
