"""`kernelarena hacks [--json] [ID]`: the anti-hack catalog (what each pattern is, how it is caught)."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from kernelarena.errors import UserError
from scorer.checks.catalog import PATTERNS, Pattern, get_pattern


def _selected(pattern_id: Optional[str]) -> list[Pattern]:
    if pattern_id is None:
        return list(PATTERNS)
    try:
        return [get_pattern(pattern_id)]
    except KeyError:
        known = ", ".join(p.id for p in PATTERNS)
        raise UserError(f"no anti-hack pattern '{pattern_id}'; known ids: {known}") from None


def hacks(
    pattern_id: Optional[str] = typer.Argument(None, help="Show one pattern only."),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the anti-hack catalog: id, category, severity (reject|flag), checks, description, detection."""
    selected = _selected(pattern_id)
    if as_json:
        typer.echo(json.dumps([p.to_dict() for p in selected], indent=2))
        return
    table = Table(show_lines=True)
    for column in ("id", "category", "severity", "checks", "description", "detection"):
        table.add_column(column, overflow="fold")
    for p in selected:
        table.add_row(p.id, p.category, p.severity, "+".join(p.checks), p.description, p.detection)
    Console(width=200).print(table)


def register(app: typer.Typer) -> None:
    app.command("hacks")(hacks)
