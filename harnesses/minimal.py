"""The `minimal` harness: the published methodology's loop, two tools and nothing else.

The model gets the rendered task prompt and exactly `bash` and `write_file`. Each step queries
the model, executes its tool calls in the trial's sandbox and records everything; the loop ends
when the model answers without a tool call, the model client gives up, or a budget runs out.
Every ending is a `LoopExit` raised from inside the step, caught in one place.
"""

from __future__ import annotations

import asyncio
import posixpath
import time
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harnesses.base import Harness, HarnessResult, TrialContext, parse_options
from harnesses.exits import BudgetExhausted, Finished, LoopExit, NoToolCalls, model_failure
from harnesses.models.base import STOP_END_TURN, ModelError, ModelTurn, ToolCall, ToolSpec
from kernelarena.logs import get_logger
from kernelarena.text import truncate

log = get_logger(__name__)

BASH = ToolSpec(
    name="bash",
    description="Run a bash command in the working directory and return its exit code and output.",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command to run."}},
        "required": ["command"],
    },
)
WRITE_FILE = ToolSpec(
    name="write_file",
    description="Write a text file (created or overwritten); the path is relative to the working directory.",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Relative path, e.g. kernel.py."},
            "content": {"type": "string", "description": "The complete file content."},
        },
        "required": ["path", "content"],
    },
)
TOOLS = [BASH, WRITE_FILE]


class MinimalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    bash_timeout_s: float = Field(default=300.0, gt=0)
    """Timeout of one bash command (further capped by the wall-time budget left)."""
    max_output_chars: int = Field(default=20_000, ge=200)
    """Tool output longer than this is cut in the middle and marked, to spare the context."""


class MinimalHarness(Harness):
    name = "minimal"
    prompt_template = "minimal_v1"

    def __init__(self, **options: Any) -> None:
        self.config = parse_options(MinimalConfig, self.name, options)

    def prompt_values(self) -> dict[str, Any]:
        return {"bash_timeout_s": f"{self.config.bash_timeout_s:g}"}

    async def run(self, ctx: TrialContext) -> HarnessResult:
        messages: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        sent = 0  # messages already recorded in an earlier model_request
        ctx.budget.start()
        while True:
            try:
                sent = await self._step(ctx, messages, sent)
            except LoopExit as exit:
                if isinstance(exit, BudgetExhausted):
                    ctx.transcript.event("budget", kind=exit.kind, limit=exit.limit, used=exit.used)
                return HarnessResult(exit_reason=exit.exit_reason, detail=exit.detail)

    async def _step(self, ctx: TrialContext, messages: list[dict[str, Any]], sent: int) -> int:
        turn = await self._query(ctx, messages, sent)
        messages.append(turn.as_message())
        # The assistant message is in the model_response event; the next request records
        # only what follows it (the tool results).
        recorded = len(messages)
        if not turn.tool_calls:
            if turn.text.strip() and turn.stop_reason == STOP_END_TURN:
                raise Finished(turn.text.strip()[:500])
            raise NoToolCalls(f"stop_reason={turn.stop_reason}")
        for call in turn.tool_calls:
            output = await self._execute(ctx, call)
            messages.append({"role": "tool", "content": output, "tool_call_id": call.id})
        return recorded

    async def _query(self, ctx: TrialContext, messages: list[dict[str, Any]], sent: int) -> ModelTurn:
        ctx.budget.check()
        # Only the messages new since the previous request are recorded (the conversation is
        # their concatenation), so a long trial does not write quadratic bytes.
        ctx.transcript.event(
            "model_request",
            turn=ctx.budget.turns + 1,
            message_count=len(messages),
            first_index=sent,
            messages=messages[sent:],
            tools=[asdict(t) for t in TOOLS],
        )
        try:
            turn = await asyncio.wait_for(ctx.model.complete(messages, TOOLS), timeout=ctx.budget.remaining_s())
        except TimeoutError:
            raise BudgetExhausted("wall_time", ctx.budget.config.wall_time_s or 0, ctx.budget.elapsed_s) from None
        except ModelError as exc:
            api_key_env = getattr(getattr(ctx.model, "options", None), "api_key_env", None)
            exit = model_failure(ctx.model.model_id, api_key_env, str(exc), exc.credentials)
            ctx.transcript.event("error", source="model", message=exit.detail, status=exc.status, retryable=exc.retryable)
            raise exit from None
        ctx.budget.record_turn(turn.usage)
        ctx.transcript.event(
            "model_response",
            turn=ctx.budget.turns,
            text=turn.text,
            tool_calls=[c.to_dict() for c in turn.tool_calls],
            usage=turn.usage,
            latency_s=turn.latency_s,
            stop_reason=turn.stop_reason,
            budget_used=ctx.budget.usage(),
        )
        return turn

    async def _execute(self, ctx: TrialContext, call: ToolCall) -> str:
        ctx.transcript.event("tool_call", id=call.id, name=call.name, arguments=call.arguments)
        started = time.monotonic()
        meta: dict[str, Any] = {}
        if call.error:
            output = f"error: {call.error}"
        elif call.name == "bash":
            output, meta = await self._bash(ctx, call.arguments)
        elif call.name == "write_file":
            output = await self._write_file(ctx, call.arguments)
        else:
            output = f"error: unknown tool '{call.name}'; the tools are bash and write_file"
        output = truncate(output, self.config.max_output_chars)
        ctx.transcript.event(
            "tool_result", id=call.id, name=call.name, output=output,
            duration_s=round(time.monotonic() - started, 3), **meta,
        )
        return output

    async def _bash(self, ctx: TrialContext, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return "error: bash needs a non-empty string argument 'command'", {}
        timeout = self.config.bash_timeout_s
        remaining = ctx.budget.remaining_s()
        if remaining is not None:
            timeout = max(0.5, min(timeout, remaining))
        result = await ctx.sandbox.exec(command, timeout=timeout)
        parts = [result.stdout]
        if result.stderr:
            parts.append(result.stderr)
        if result.stdout_bytes > len(result.stdout.encode()) or result.stderr_bytes > len(result.stderr.encode()):
            parts.append(f"[output truncated by the sandbox: {result.stdout_bytes + result.stderr_bytes} bytes in all]")
        if result.timed_out:
            parts.append(f"[command timed out after {timeout:g} s]")
        elif result.oom_killed:
            parts.append("[command killed: out of memory]")
        parts.append(f"[exit code {result.exit_code}]")
        meta = {"exit_code": result.exit_code, "timed_out": result.timed_out, "oom_killed": result.oom_killed}
        return "\n".join(p.rstrip("\n") for p in parts if p), meta

    async def _write_file(self, ctx: TrialContext, args: dict[str, Any]) -> str:
        path, content = args.get("path"), args.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            return "error: write_file needs string arguments 'path' and 'content'"
        normal = posixpath.normpath(path)
        if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
            return f"error: path '{path}' is outside the working directory; give a relative path"
        await ctx.sandbox.write_file(normal, content)
        return f"wrote {len(content.encode())} bytes to {normal}"
