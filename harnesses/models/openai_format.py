"""Neutral messages <-> the OpenAI Chat Completions format (shared by the openai and litellm adapters)."""

from __future__ import annotations

from typing import Any

from harnesses.models._common import dump_arguments, parse_arguments, text_content, tool_calls_of
from harnesses.models.base import (
    STOP_CONTENT_FILTER,
    STOP_END_TURN,
    STOP_MAX_TOKENS,
    STOP_TOOL_USE,
    ToolCall,
    ToolSpec,
    Usage,
)

_STOP_REASONS = {
    "stop": STOP_END_TURN,
    "tool_calls": STOP_TOOL_USE,
    "function_call": STOP_TOOL_USE,
    "length": STOP_MAX_TOKENS,
    "content_filter": STOP_CONTENT_FILTER,
}


def to_openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message["tool_call_id"], "content": text_content(message)}
            )
        elif role == "assistant":
            calls = tool_calls_of(message)
            entry: dict[str, Any] = {"role": "assistant", "content": text_content(message) or None}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": dump_arguments(call)},
                    }
                    for call in calls
                ]
            out.append(entry)
        elif role in ("system", "user"):
            out.append({"role": role, "content": text_content(message)})
        else:
            raise ValueError(f"unknown message role {role!r}")
    return out


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def from_openai_choice(message: Any, finish_reason: str | None) -> tuple[str, list[ToolCall], str]:
    """(text, tool calls, neutral stop reason) from a response message object (SDK or litellm)."""
    calls = [
        parse_arguments(call.id, call.function.name, call.function.arguments)
        for call in (getattr(message, "tool_calls", None) or [])
    ]
    reason = _STOP_REASONS.get(finish_reason or "", finish_reason or "")
    return getattr(message, "content", None) or "", calls, reason


def usage_from_openai(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", 0)
    return Usage(
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cache_read_tokens=int(cached or 0),
    )
