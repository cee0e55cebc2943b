"""Harnesses that exec an external coding-agent CLI (Claude Code, Codex, ...) inside the sandbox.

The CLI runs in the trial's agent sandbox with the workspace as its working directory; it gets
the prompt as a file (and, if the template asks, as a quoted argument) and must leave
`kernel.py` behind. Its output is recorded as `harness_event`s: each stdout line that is a JSON
object (stream-json modes) becomes one `cli_message` event, other output is kept in `cli_output`
chunks. The wall-time budget is the command's timeout; turn and token budgets are the CLI's own
business (pass them as its flags).

Command templates use str.format fields, each substituted shell-quoted:
``{prompt_file}`` (absolute path of the prompt), ``{prompt}`` (its text), ``{workdir}``,
``{model}`` (the full model id) and ``{model_name}`` (the part after ``provider:``).
"""

from __future__ import annotations

import json
import shlex
import string
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harnesses.base import Harness, HarnessResult, TrialContext, parse_options
from kernelarena.errors import ConfigError
from kernelarena.text import truncate

TEMPLATE_FIELDS = frozenset({"prompt_file", "prompt", "workdir", "model", "model_name"})
# Templates for known CLIs, run without the model proxy (network on, key in the sandbox env);
# harnesses claude-code and codex (harnesses/agent_cli.py) run these CLIs through it instead.
PRESETS: dict[str, str] = {
    "claude-code": "claude -p {prompt} --model {model_name} --output-format stream-json --verbose "
    "--dangerously-skip-permissions",
    "codex": "codex exec --model {model_name} --full-auto --skip-git-repo-check --json {prompt}",
}


class ExternalCLIConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    command: str = ""
    """Command template run with bash in the workspace (see the module docstring for fields)."""
    preset: str | None = None
    """Name of a template in PRESETS, used when `command` is empty."""
    setup: str | None = None
    """Command run before the CLI (e.g. installing it); its failure ends the trial with 'error'."""
    env: dict[str, str] = {}
    """Extra environment for the CLI (keys belong in the sandbox config's env instead)."""
    chunk_lines: int = Field(default=200, ge=1)
    """Plain output lines per cli_output event."""
    max_event_chars: int = Field(default=20_000, ge=200)
    """Longest text one harness_event holds; longer output is cut in the middle and marked."""


class ExternalCLIHarness(Harness):
    name = "external"
    prompt_template = "generic_v1"

    def __init__(self, **options: Any) -> None:
        self.config = parse_options(ExternalCLIConfig, self.name, options)
        self.template = self.config.command or PRESETS.get(self.config.preset or "", "")
        if not self.template:
            raise ConfigError(
                "harness 'external' needs a command template: set harness option command='mycli -p {prompt_file}' "
                f"or preset= one of {sorted(PRESETS)}"
            )
        used = {field for _, field, _, _ in string.Formatter().parse(self.template) if field}
        unknown = used - TEMPLATE_FIELDS
        if unknown:
            raise ConfigError(
                f"external command template uses unknown field(s) {sorted(unknown)}; known: {sorted(TEMPLATE_FIELDS)}"
            )

    def command_for(self, ctx: TrialContext) -> str:
        workdir = ctx.sandbox.workdir
        values = {
            "prompt_file": f"{workdir.rstrip('/')}/{ctx.prompt_file}",
            "prompt": ctx.prompt,
            "workdir": workdir,
            "model": ctx.model.model_id,
            "model_name": ctx.model.model_id.partition(":")[2],
        }
        return self.template.format(**{k: shlex.quote(v) for k, v in values.items()})

    async def run(self, ctx: TrialContext) -> HarnessResult:
        ctx.budget.start()
        if self.config.setup:
            setup = await ctx.sandbox.exec(
                self.config.setup, timeout=ctx.budget.remaining_s() or 600, env=self.config.env or None
            )
            self._record_output(ctx, setup.stdout, setup.stderr, phase="setup")
            if setup.exit_code != 0:
                return HarnessResult(exit_reason="error", detail=f"setup exited {setup.exit_code}")
        command = self.command_for(ctx)
        ctx.transcript.event("harness_event", kind="cli_start", command=command)
        timeout = ctx.budget.remaining_s()
        result = await ctx.sandbox.exec(
            command, timeout=timeout if timeout is not None else 24 * 3600, env=self.config.env or None
        )
        self._record_output(ctx, result.stdout, result.stderr, phase="run")
        ctx.transcript.event(
            "harness_event", kind="cli_exit", exit_code=result.exit_code, timed_out=result.timed_out,
            oom_killed=result.oom_killed, duration_s=round(result.duration_s, 3),
        )
        if result.timed_out:
            ctx.transcript.event(
                "budget", kind="wall_time", limit=ctx.budget.config.wall_time_s, used=round(ctx.budget.elapsed_s, 3)
            )
            return HarnessResult(exit_reason="budget:wall_time", detail="the CLI ran out of wall time")
        if result.exit_code != 0:
            return HarnessResult(exit_reason="error", detail=f"the CLI exited {result.exit_code}")
        return HarnessResult(exit_reason="done")

    def _record_output(self, ctx: TrialContext, stdout: str, stderr: str, phase: str) -> None:
        plain: list[str] = []

        def flush() -> None:
            if plain:
                text = truncate("\n".join(plain), self.config.max_event_chars)
                ctx.transcript.event("harness_event", kind="cli_output", phase=phase, stream="stdout", text=text)
                plain.clear()

        for line in stdout.splitlines():
            message = _json_object(line)
            if message is None:
                plain.append(line)
                if len(plain) >= self.config.chunk_lines:
                    flush()
                continue
            flush()
            ctx.transcript.event("harness_event", kind="cli_message", phase=phase, message=message)
        flush()
        if stderr.strip():
            text = truncate(stderr, self.config.max_event_chars)
            ctx.transcript.event("harness_event", kind="cli_output", phase=phase, stream="stderr", text=text)


def _json_object(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
