"""Small helpers shared by the provider adapters: argument parsing, key look-up, secret scrubbing."""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from harnesses.models.base import ToolCall
from kernelarena.errors import ConfigError


def parse_arguments(call_id: str, name: str, text: str | None) -> ToolCall:
    """A model's JSON argument string -> ToolCall; bad JSON becomes an error the harness can relay."""
    raw = text or ""
    if not raw.strip():
        return ToolCall(id=call_id, name=name, arguments={})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(
            id=call_id,
            name=name,
            arguments={"_raw": raw},
            error=f"tool arguments are not valid JSON ({exc.msg} at char {exc.pos}); "
            "send a JSON object matching the tool's schema",
        )
    if not isinstance(value, dict):
        return ToolCall(
            id=call_id,
            name=name,
            arguments={"_raw": raw},
            error=f"tool arguments must be a JSON object, got {type(value).__name__}",
        )
    return ToolCall(id=call_id, name=name, arguments=value)


def dump_arguments(call: ToolCall) -> str:
    """Inverse of parse_arguments: a call whose JSON was broken goes back exactly as the model wrote it."""
    if call.error is not None and set(call.arguments) == {"_raw"}:
        return str(call.arguments["_raw"])
    return json.dumps(call.arguments)


def require_key(env_names: list[str], option_hint: str = "api_key_env") -> tuple[str, str]:
    """(variable name, key) of the first set variable, or a ConfigError naming them."""
    for name in env_names:
        value = os.environ.get(name)
        if value:
            return name, value
    names = " or ".join(env_names)
    raise ConfigError(
        f"{names} is not set; export it, or point option {option_hint} at the variable holding the key"
    )


def scrubber(secret: str | None):
    """A function that removes the key from any text we hand back (error messages)."""

    def scrub(text: str) -> str:
        if secret and len(secret) >= 4:
            return text.replace(secret, "***")
        return text

    return scrub


def text_content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content)


def tool_calls_of(message: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall.coerce(c) for c in message.get("tool_calls") or []]


def sdk_kwargs(method: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for a Stainless-generated SDK method: parameters the installed SDK
    version does not declare (a newer API field, or one an SDK release dropped, such as
    anthropic>=2's ``temperature``) travel in ``extra_body`` instead of raising TypeError."""
    declared = inspect.signature(method).parameters
    kwargs = {k: v for k, v in body.items() if k in declared}
    extra = {k: v for k, v in body.items() if k not in declared}
    if extra:
        kwargs["extra_body"] = {**extra, **(kwargs.get("extra_body") or {})}
    return kwargs
