"""Transcript events from an agent CLI's JSON-lines stdout, recorded as each line arrives.

The proxy records the model's side (model_request / model_response); the CLI's own stream says
what it did with the replies. Its tool calls and their results become `tool_call` /
`tool_result` events like the `minimal` harness's, its messages `harness_event`s
(`agent_message`, `cli_init`, `cli_result`, ...), so `kernelarena replay` shows both harnesses
the same way. A line that is not JSON is kept as `cli_output`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from harnesses.transcript import Transcript
from kernelarena.text import truncate


class StreamRecorder:
    """Fed stdout chunks (from any thread); `close()` flushes a last unterminated line."""

    def __init__(self, transcript: Transcript, max_chars: int = 20_000) -> None:
        self.transcript = transcript
        self.max_chars = max_chars
        self.lines = 0
        self._buffer = b""
        self._lock = threading.Lock()
        self._tool_names: dict[str, str] = {}

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self._buffer += chunk
            *complete, self._buffer = self._buffer.split(b"\n")
            for raw in complete:
                self._line(raw)

    def close(self) -> None:
        with self._lock:
            if self._buffer.strip():
                self._line(self._buffer)
            self._buffer = b""

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            return
        self.lines += 1
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            message = None
        if not isinstance(message, dict):
            self.transcript.event("harness_event", kind="cli_output", text=truncate(text, self.max_chars))
            return
        self.message(message)

    def message(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    def call(self, call_id: str, name: str, arguments: Any) -> None:
        self._tool_names[call_id] = name
        self.transcript.event("tool_call", id=call_id, name=name, arguments=arguments, source="cli")

    def result(self, call_id: str, output: str, name: str | None = None, **meta: Any) -> None:
        name = name or self._tool_names.get(call_id, "")
        self.transcript.event("tool_result", id=call_id, name=name, output=truncate(output, self.max_chars),
                              source="cli", **meta)

    def note(self, kind: str, **payload: Any) -> None:
        self.transcript.event("harness_event", kind=kind, **payload)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return json.dumps(content)


class ClaudeStream(StreamRecorder):
    """`claude -p --output-format stream-json --verbose`: system/init, assistant and user
    messages in the Messages API's block form, and a final `result`."""

    def message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind in ("assistant", "user"):
            for block in (message.get("message") or {}).get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    self.note("agent_message", role=kind, text=truncate(block["text"], self.max_chars))
                elif block.get("type") == "tool_use":
                    self.call(str(block.get("id")), str(block.get("name")), block.get("input"))
                elif block.get("type") == "tool_result":
                    self.result(str(block.get("tool_use_id")), _text_of(block.get("content")),
                                is_error=bool(block.get("is_error")))
        elif kind == "system" and message.get("subtype") == "init":
            self.note("cli_init", **{k: message.get(k) for k in ("session_id", "model", "cwd", "tools", "claude_code_version",
                                                                 "permissionMode") if k in message})
        elif kind == "result":
            self.note("cli_result", **{k: message.get(k) for k in ("subtype", "is_error", "num_turns", "result", "stop_reason",
                                                                   "duration_ms", "total_cost_usd", "usage", "session_id",
                                                                   "terminal_reason", "api_error_status") if k in message})
        else:
            self.note("cli_message", message=_clip(message, self.max_chars))


class CodexStream(StreamRecorder):
    """`codex exec --json`: thread/turn events and items (command_execution, file_change,
    agent_message, reasoning, mcp_tool_call, ...) started and completed."""

    def message(self, message: dict[str, Any]) -> None:
        kind = str(message.get("type", ""))
        item = message.get("item") if isinstance(message.get("item"), dict) else None
        if item is None:
            self.note("cli_" + kind.replace(".", "_") if kind else "cli_message", message=_clip(message, self.max_chars))
            return
        item_id, item_type = str(item.get("id", "")), str(item.get("type", ""))
        if item_type == "command_execution":
            if kind == "item.started" or item_id not in self._tool_names:
                self.call(item_id, "shell", {"command": item.get("command")})
            if kind == "item.completed":
                self.result(item_id, str(item.get("aggregated_output", "")), exit_code=item.get("exit_code"),
                            status=item.get("status"))
        elif item_type == "file_change" and kind == "item.completed":
            self.call(item_id, "apply_patch", {"changes": item.get("changes")})
            self.result(item_id, str(item.get("status", "")))
        elif item_type == "mcp_tool_call":
            if kind == "item.started" or item_id not in self._tool_names:
                self.call(item_id, f"{item.get('server')}/{item.get('tool')}", item.get("arguments"))
            if kind == "item.completed":
                self.result(item_id, json.dumps(item.get("result") or item.get("error")), status=item.get("status"))
        elif item_type == "agent_message" and kind == "item.completed":
            self.note("agent_message", role="assistant", text=truncate(str(item.get("text", "")), self.max_chars))
        elif kind == "item.completed":
            self.note("cli_item", item=_clip(item, self.max_chars))


def _clip(value: dict[str, Any], limit: int) -> Any:
    text = json.dumps(value)
    return value if len(text) <= limit else truncate(text, limit)
