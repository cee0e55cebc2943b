"""`kernelarena suites`, `kernelarena suites check`, `kernelarena tasks`: what can be run, and
whether each task is a real test (the suite linter)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kernelarena.errors import UserError
from scorer.tasks.suites import Suite, list_suites, load_suite

if TYPE_CHECKING:
    from scorer.tasks.lint import LintIssue

suites_app = typer.Typer(
    help="List benchmark suites; `suites check` lints them.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _si(value: float | None, unit: str) -> str:
    """137438953472 -> '137.4 G' + unit; the exact figures are in --json."""
    if value is None:
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.1f} {prefix}{unit}"
    return f"{value:g} {unit}"


def _suite_row(suite: Suite) -> dict[str, Any]:
    return {
        "name": suite.name,
        "path": str(suite.root),
        "tasks": len(suite.tasks),
        "targets": list(suite.targets),
        "description": suite.description,
    }


def _task_row(suite: Suite, task_id: str) -> dict[str, Any]:
    task = suite.tasks[task_id]
    return {
        "id": task.id,
        "level": task.level,
        "category": task.category,
        "dtype": task.dtype,
        "flops": task.flops,
        "bytes": task.bytes_moved,
        "rtol": task.tolerance.rtol,
        "atol": task.tolerance.atol,
        "exact": task.tolerance.exact,
        "cuda_only": task.cuda_only,
        "has_solution": task.solution is not None,
    }


@suites_app.callback()
def suites(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List the suites on the search path (built-in ones and KERNELARENA_SUITES_PATH)."""
    if ctx.invoked_subcommand is not None:
        return
    rows = [_suite_row(s) for s in list_suites()]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="Suites")
    table.add_column("name", no_wrap=True)
    table.add_column("tasks", justify="right")
    table.add_column("targets")
    table.add_column("description")
    for row in rows:
        table.add_row(row["name"], str(row["tasks"]), ", ".join(row["targets"]), row["description"])
    Console().print(table)


@suites_app.command("check")
def check(
    names: Annotated[list[str] | None, typer.Argument(help="Suite names or folders; all suites when omitted.")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", "-t", help="Check only this task (repeatable).")] = None,
    full_size: bool = typer.Option(False, "--full-size", help="Also run tasks without test_shapes, at full size (slow)."),
    as_json: bool = typer.Option(False, "--json", help="Print the issues as JSON."),
) -> None:
    """Lint suites: refuse tasks whose reference is near-constant, input-insensitive or
    non-deterministic, or structurally broken. Exit 1 when a task is refused."""
    targets = [load_suite(n) for n in names] if names else list_suites()
    for wanted in task or []:
        if not any(wanted in s.tasks for s in targets):
            if len(targets) == 1:
                targets[0].task(wanted)  # raises the loader's error, which names known tasks
            raise UserError(f"no checked suite has a task '{wanted}'; run `kernelarena tasks SUITE` to list them")
    from scorer.tasks.lint import lint_suite  # torch: it runs each reference

    all_issues: list[tuple[str, LintIssue]] = []
    checked = 0
    for suite in targets:
        selected = [t for t in suite.tasks if not task or t in task]
        issues = lint_suite(suite, tasks=selected, full_size=full_size)
        checked += len(selected)
        all_issues.extend((suite.name, issue) for issue in issues)
    refused = sorted({(s, i.task) for s, i in all_issues if i.refused})
    if as_json:
        typer.echo(json.dumps([{"suite": s, **i.to_dict()} for s, i in all_issues], indent=2))
    else:
        for suite_name, issue in all_issues:
            typer.echo(f"{suite_name}/{issue.line()}")
        warnings = sum(1 for _, i in all_issues if not i.refused)
        typer.echo(f"{checked} task(s) checked: {len(refused)} refused, {warnings} warning(s)")
    if refused:
        raise typer.Exit(1)


def tasks(
    suite: str = typer.Argument(..., help="Suite name or folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List a suite's tasks: level, category, dtype, FLOPs, bytes, whether a solution ships."""
    loaded = load_suite(suite)
    rows = [_task_row(loaded, t) for t in loaded.tasks]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{loaded.name}: {len(rows)} task(s)")
    table.add_column("id", no_wrap=True)
    table.add_column("level", justify="right")
    table.add_column("category")
    table.add_column("dtype")
    table.add_column("flops", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("solution")
    for row in rows:
        table.add_row(
            row["id"],
            "-" if row["level"] is None else str(row["level"]),
            row["category"] or "-",
            row["dtype"] or "-",
            _si(row["flops"], "FLOP"),
            _si(row["bytes"], "B"),
            ("yes" if row["has_solution"] else "no") + (" (cuda only)" if row["cuda_only"] else ""),
        )
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(suites_app, name="suites")
    app.command("tasks")(tasks)
