"""The `kernelarena` command. Each area registers its commands from `orchestrator/commands/`.

User errors (kernelarena.errors.UserError, scorer.errors.ScorerUserError) become one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys

import typer

from kernelarena.errors import UserError
from kernelarena.logs import configure as configure_logging
from orchestrator.commands import hacks, sandbox_cmds, scoring, suites_cmds, sweep_cmds, trial_cmds
from orchestrator.web import command as web_command
from scorer.errors import ScorerUserError

app = typer.Typer(
    name="kernelarena",
    help="Benchmark AI-written GPU kernels: sandboxed agent trials, one anti-hack scorer, leaderboards.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for module in (scoring, hacks, suites_cmds, sandbox_cmds, trial_cmds, sweep_cmds, web_command):
    module.register(app)


def main() -> None:
    # Before any command runs: unconfigured structlog would print to stdout and corrupt --json.
    configure_logging(level="WARNING")
    try:
        app()
    except (UserError, ScorerUserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
