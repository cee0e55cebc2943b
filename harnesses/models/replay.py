"""``replay:PATH``: a model that answers with the responses recorded in a transcript, in order.

Re-running a trial with it reproduces the recorded tool calls against a fresh sandbox, so a
surprising score can be audited (and re-scored) without calling the provider. When the recorded
responses run out it answers with an empty turn, which ends the minimal harness's loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harnesses.models.base import ModelClient, ModelTurn, TaskContext, ToolCall, ToolSpec, Usage
from harnesses.transcript import read_events
from kernelarena.errors import ConfigError

STOP_REPLAY_EXHAUSTED = "replay_exhausted"


def recorded_turns(path: Path) -> list[ModelTurn]:
    turns = []
    for event in read_events(path):
        if event.get("type") != "model_response":
            continue
        payload = event.get("payload", {})
        usage = payload.get("usage") or {}
        turns.append(
            ModelTurn(
                text=str(payload.get("text", "")),
                tool_calls=[ToolCall.coerce(c) for c in payload.get("tool_calls", [])],
                usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
                stop_reason=str(payload.get("stop_reason", "")),
                latency_s=0.0,
                raw=None,
            )
        )
    return turns


class ReplayModel(ModelClient):
    def __init__(self, path: Path, turns: list[ModelTurn]) -> None:
        self.model_id = f"replay:{path}"
        self.on_retry = None
        self.path = path
        self._turns = turns
        self._next = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        if self._next >= len(self._turns):
            return ModelTurn(text="", tool_calls=[], usage=Usage(), stop_reason=STOP_REPLAY_EXHAUSTED, latency_s=0.0, raw=None)
        turn = self._turns[self._next]
        self._next += 1
        return turn


def create(name: str, task: TaskContext | None = None, **options: Any) -> ModelClient:
    """``name`` is the transcript path (the part after ``replay:``); a trial folder works too."""
    path = Path(name).expanduser()
    if path.is_dir():
        path = path / "transcript.jsonl"
    if not path.is_file():
        raise ConfigError(f"replay: no transcript at {path}; give replay:PATH/transcript.jsonl of a finished trial")
    turns = recorded_turns(path)
    if not turns:
        raise ConfigError(f"replay: {path} holds no model_response events; nothing to replay")
    return ReplayModel(path, turns)
