"""`kernelarena hacks [--json] [ID]`: the anti-hack catalog (what each pattern is, how it is caught)."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernelarena.errors import UserError
from scorer.checks.catalog import PATTERNS, Pattern, get_pattern
from scorer.checks.record import records


def _selected(pattern_id: str | None) -> list[Pattern]:
    if pattern_id is None:
        return list(PATTERNS)
    try:
        return [get_pattern(pattern_id)]
    except KeyError:
        known = ", ".join(p.id for p in PATTERNS)
        raise UserError(f"no anti-hack pattern '{pattern_id}'; known ids: {known}") from None


def hacks(
    pattern_id: str | None = typer.Argument(None, help="Show one pattern only."),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the anti-hack catalog: id, category, severity (reject|flag), checks, description, detection,
    and each pattern's record on the repository's corpora (attacks caught, false positives)."""
    selected = _selected(pattern_id)
    # Here, not at the top: the checks import torch, and the CLI starts without it.
    import scorer.judge.rulings  # noqa: F401  (registers every check: the layers below are theirs)
    from scorer.judge.registry import checks_of, layers_of

    record = records()
    if as_json:
        typer.echo(json.dumps([{**p.to_dict(), "checks": list(checks_of(p.id)), "layers": list(layers_of(p.id)),
                                **({"record": record[p.id].to_dict()} if p.id in record else {})}
                               for p in selected], indent=2))
        return
    table = Table(show_lines=True)
    for column in ("id", "category", "severity", "checks", "established by", "record", "description", "detection"):
        table.add_column(column, overflow="fold")
    for p in selected:
        table.add_row(p.id, p.category, p.severity, "+".join(checks_of(p.id)), "+".join(layers_of(p.id)),
                      _record_text(record.get(p.id)), escape(p.description), escape(p.detection))
    Console(width=220).print(table)
    typer.echo("established by: judge (the judge or the reference worker, from data they check), outside (read "
               "from /proc, outside the kernel's process), static (the source), in-process (scorer code beside the "
               "kernel: raises an attack's cost, never the only layer) - docs/SCORER.md, 'Who establishes each fact'")
    if record:
        typer.echo("record: attacks caught/tried (tests/hacks/attacks); false positives on the clean corpus "
                   "(tests/hacks/clean) and on the real corpus's clean and rubric kernels (tests/hacks/real), "
                   "as the corpus tests assert them; static FP: honest kernels the static rules alone reject "
                   "in the clean corpus, the suites' reference solutions and the real corpus "
                   "(tests/hacks/static_record.json)")


def _record_text(r) -> str:
    if r is None:
        return "-"
    neutral = f" ({r.neutralized} neutralized)" if r.neutralized else ""
    static = ", ".join(f"{corpus} {rejected}/{total}" for corpus, (rejected, total) in r.static_false_positives.items())
    return (f"attacks {r.attacks_caught}/{r.attacks_tried}{neutral}; FP clean {r.clean_false_positives}/"
            f"{r.clean_kernels}; FP real {r.real_false_positives}/{r.real_honest}"
            + (f"; static FP {static}" if static else ""))


def register(app: typer.Typer) -> None:
    app.command("hacks")(hacks)
