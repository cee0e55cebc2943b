"""``anthropic:<model>``: the Messages API with tool use, through the official AsyncAnthropic client.

Format notes: system messages become the top-level ``system`` parameter; an assistant's tool
calls are ``tool_use`` blocks; the neutral ``tool`` messages that answer them are folded into
one following user message of ``tool_result`` blocks (the API wants results together, in a
user turn). ``input_tokens`` in our Usage includes cache reads and writes.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic

from harnesses.models._common import scrubber, sdk_kwargs, text_content, tool_calls_of
from harnesses.models.base import (
    STOP_CONTENT_FILTER,
    STOP_END_TURN,
    STOP_MAX_TOKENS,
    STOP_TOOL_USE,
    ModelClient,
    ModelOptions,
    ModelTurn,
    ToolCall,
    ToolSpec,
    Usage,
)
from harnesses.models.credentials import check_key
from harnesses.models.retry import call_with_retries, probe

_STOP_REASONS = {
    "end_turn": STOP_END_TURN,
    "stop_sequence": STOP_END_TURN,
    "tool_use": STOP_TOOL_USE,
    "max_tokens": STOP_MAX_TOKENS,
    "refusal": STOP_CONTENT_FILTER,
}


def to_anthropic(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, messages) in Messages API form."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def user_blocks() -> list[dict[str, Any]]:
        # Tool results and a user message right after them share one user turn.
        if out and out[-1]["role"] == "user":
            return out[-1]["content"]
        out.append({"role": "user", "content": []})
        return out[-1]["content"]

    for message in messages:
        role = message["role"]
        if role == "system":
            system.append(text_content(message))
        elif role == "user":
            user_blocks().append({"type": "text", "text": text_content(message)})
        elif role == "tool":
            user_blocks().append(
                {
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": text_content(message),
                }
            )
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if text_content(message):
                blocks.append({"type": "text", "text": text_content(message)})
            for call in tool_calls_of(message):
                blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
            # The API rejects an empty assistant turn; keep the turn so roles still alternate.
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no output)"}]})
        else:
            raise ValueError(f"unknown message role {role!r}")
    return "\n\n".join(system), out


def from_anthropic(response: Any) -> tuple[str, list[ToolCall], str, Usage]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in response.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {"_raw": block.input}
            error = None if isinstance(block.input, dict) else "tool input must be a JSON object"
            calls.append(ToolCall(id=block.id, name=block.name, arguments=arguments, error=error))
    usage = response.usage
    cache_write = getattr(usage, "cache_creation_input_tokens", 0) or 0
    cache_read = getattr(usage, "cache_read_input_tokens", 0) or 0
    input_tokens = (usage.input_tokens or 0) + cache_write + cache_read
    reason = response.stop_reason or ""
    return (
        "".join(texts),
        calls,
        _STOP_REASONS.get(reason, reason),
        Usage(input_tokens=input_tokens, output_tokens=usage.output_tokens or 0,
              cache_read_tokens=cache_read, cache_write_tokens=cache_write),
    )


class AnthropicClient(ModelClient):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.model_id = f"anthropic:{name}"
        self.name = name
        self.options = options
        key = check_key("anthropic", name, options.api_key_env) or ""
        self._scrub = scrubber(key)
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=options.base_url, max_retries=0, timeout=options.timeout_s
        )

    def _request(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> dict[str, Any]:
        system, converted = to_anthropic(messages)
        body: dict[str, Any] = {
            "model": self.name,
            "messages": converted,
            "max_tokens": self.options.max_tokens,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body.update(self.options.extra)
        return body

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        kwargs = sdk_kwargs(self._client.messages.create, self._request(messages, tools))
        start = time.monotonic()
        response = await call_with_retries(
            lambda: self._client.messages.create(**kwargs),
            self.options,
            self.on_retry,
            model_id=self.model_id,
            scrub=self._scrub,
        )
        text, calls, stop, usage = from_anthropic(response)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage,
            stop_reason=stop,
            latency_s=time.monotonic() - start,
            raw=response.model_dump(mode="json"),
        )

    async def check_access(self) -> None:
        await probe(lambda: self._client.models.list(limit=1), self.options, model_id=self.model_id, scrub=self._scrub)

    async def aclose(self) -> None:
        await self._client.close()


def create(name: str, task: object = None, **options: Any) -> AnthropicClient:
    return AnthropicClient(name, ModelOptions(**options))
