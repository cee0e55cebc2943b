"""Placeholder until its issue lands: registers no commands yet."""

import typer


def register(app: typer.Typer) -> None:
    return None
