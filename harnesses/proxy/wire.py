"""What the model proxy reads off the wire: which requests are model turns, and what a reply said.

Three protocols pass through the proxy: Anthropic Messages (Claude Code), OpenAI Responses
(Codex) and OpenAI Chat Completions. A reply arrives as one JSON body or as server-sent events;
`ReplyAssembler` is fed the bytes as they are relayed and rebuilds the same neutral summary
either way: text, tool calls, stop reason and usage. Usage follows the model clients'
convention: Anthropic's input counts cache reads and writes, OpenAI's input is its prompt total;
the cached parts are kept beside it so they are priced at their own rates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harnesses.models.base import Usage

ANTHROPIC = "anthropic"
RESPONSES = "responses"
CHAT = "chat"


def protocol_of(path: str) -> str | None:
    """The protocol of a model-turn request path, or None for any other call (count_tokens,
    model lists), which the proxy forwards without counting a turn."""
    if path.endswith("/messages"):
        return ANTHROPIC
    if path.endswith("/responses") or path.endswith("/responses/compact"):  # Codex compacts remotely
        return RESPONSES
    if path.endswith("/chat/completions"):
        return CHAT
    return None


@dataclass
class RequestView:
    """The parts of a model request the transcript keeps."""

    model: str
    conversation: list[Any]
    system: Any
    tools: list[Any]
    stream: bool
    max_tokens: int | None


def view_request(protocol: str, body: dict[str, Any]) -> RequestView:
    if protocol == RESPONSES:
        raw_input = body.get("input")
        conversation = raw_input if isinstance(raw_input, list) else [{"role": "user", "content": raw_input}]
        system = body.get("instructions")
        max_tokens = body.get("max_output_tokens")
    else:
        conversation = list(body.get("messages") or [])
        system = body.get("system")
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    return RequestView(
        model=str(body.get("model", "")),
        conversation=conversation,
        system=system,
        tools=list(body.get("tools") or []),
        stream=bool(body.get("stream")),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
    )


@dataclass
class Reply:
    text: str = ""
    thinking: str = ""
    """Visible reasoning: Anthropic thinking blocks, Responses reasoning summaries."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    has_usage: bool = False
    model: str = ""
    undecodable: int = 0
    """Payloads that were not JSON (a whole body, or a streamed event's data other than [DONE])."""


class SSEDecoder:
    """Splits a server-sent-event byte stream into (event name, data text) pairs."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        # Normalised on the whole buffer: a CRLF may be split across two chunks.
        self._buffer = (self._buffer + chunk).replace(b"\r\n", b"\n")
        events: list[tuple[str | None, str]] = []
        while b"\n\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n\n", 1)
            name: str | None = None
            data: list[str] = []
            for line in raw.decode("utf-8", errors="replace").split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
            if data:
                events.append((name, "\n".join(data)))
        return events


class ReplyAssembler:
    """Fed the reply's bytes in order (`feed`), then `finish()` gives the Reply."""

    def __init__(self, protocol: str, streaming: bool) -> None:
        self.protocol = protocol
        self.streaming = streaming
        self.reply = Reply()
        self._sse = SSEDecoder()
        self._body = bytearray()
        self._blocks: dict[int, dict[str, Any]] = {}  # Anthropic content blocks / chat tool calls by index
        self._input_parts = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def feed(self, chunk: bytes) -> None:
        if not self.streaming:
            self._body += chunk
            return
        for _, data in self._sse.feed(chunk):
            try:
                event = json.loads(data)
            except json.JSONDecodeError:
                if data.strip() not in ("", "[DONE]"):  # OpenAI's end marker, keep-alives
                    self.reply.undecodable += 1
                continue
            if isinstance(event, dict):
                self._event(event)

    def finish(self) -> Reply:
        if not self.streaming:
            try:
                body = json.loads(bytes(self._body) or b"null")
            except json.JSONDecodeError:
                body = None
                self.reply.undecodable += 1
            if isinstance(body, dict):
                self._whole(body)
        elif self._blocks:
            self._close_blocks()
        return self.reply

    # -- whole JSON bodies ---------------------------------------------------------------------
    def _whole(self, body: dict[str, Any]) -> None:
        if self.protocol == ANTHROPIC:
            self.reply.model = str(body.get("model", ""))
            for index, block in enumerate(body.get("content") or []):
                self._blocks[index] = dict(block)
            self._close_blocks()
            self.reply.stop_reason = body.get("stop_reason")
            self._anthropic_usage(body.get("usage"))
        elif self.protocol == RESPONSES:
            self._response_object(body)
        else:
            self.reply.model = str(body.get("model", ""))
            choice = (body.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            self.reply.text = message.get("content") or ""
            self.reply.tool_calls = [
                {"id": c.get("id"), "name": (c.get("function") or {}).get("name"),
                 "arguments": (c.get("function") or {}).get("arguments")}
                for c in message.get("tool_calls") or []
            ]
            self.reply.stop_reason = choice.get("finish_reason")
            self._chat_usage(body.get("usage"))

    # -- streamed events -----------------------------------------------------------------------
    def _event(self, event: dict[str, Any]) -> None:
        if self.protocol == ANTHROPIC:
            self._anthropic_event(event)
        elif self.protocol == RESPONSES:
            if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                self._response_object(event.get("response") or {})
        else:
            self._chat_chunk(event)

    def _anthropic_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.reply.model = str(message.get("model", ""))
            self._anthropic_usage(message.get("usage"))
        elif kind == "content_block_start":
            self._blocks[int(event.get("index", 0))] = {**(event.get("content_block") or {}), "_json": ""}
        elif kind == "content_block_delta":
            block = self._blocks.setdefault(int(event.get("index", 0)), {"type": "text", "text": "", "_json": ""})
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                block["_json"] += str(delta.get("partial_json", ""))
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "message_delta":
            self.reply.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.reply.stop_reason
            self._anthropic_usage(event.get("usage"))

    def _close_blocks(self) -> None:
        texts: list[str] = []
        for _, block in sorted(self._blocks.items()):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "thinking":
                self.reply.thinking += str(block.get("thinking", ""))
            elif block.get("type") in ("tool_use", "server_tool_use"):
                arguments: Any = block.get("input") or {}
                if block.get("_json"):
                    try:
                        arguments = json.loads(block["_json"])
                    except json.JSONDecodeError:
                        arguments = {"_raw": block["_json"]}
                self.reply.tool_calls.append({"id": block.get("id"), "name": block.get("name"), "arguments": arguments})
            elif block.get("type") == "function":  # a chat-completions tool call being assembled
                self.reply.tool_calls.append({"id": block.get("id"), "name": block.get("name"), "arguments": block.get("_json")})
        if texts:
            self.reply.text += "".join(texts)
        self._blocks.clear()

    def _anthropic_usage(self, usage: Any) -> None:
        """message_start carries the input counts; message_delta's counts are cumulative and
        final, and its input fields, when present, replace message_start's."""
        if not isinstance(usage, dict):
            return
        for key in self._input_parts:
            if isinstance(usage.get(key), int):
                self._input_parts[key] = usage[key]
        output = usage.get("output_tokens")
        self.reply.usage = Usage(
            input_tokens=sum(self._input_parts.values()),
            output_tokens=output if isinstance(output, int) else self.reply.usage.output_tokens,
            cache_read_tokens=self._input_parts["cache_read_input_tokens"],
            cache_write_tokens=self._input_parts["cache_creation_input_tokens"],
        )
        self.reply.has_usage = True

    def _response_object(self, response: dict[str, Any]) -> None:
        self.reply.model = str(response.get("model", ""))
        texts: list[str] = []
        for item in response.get("output") or []:
            kind = item.get("type")
            if kind == "message":
                texts += [str(c.get("text", "")) for c in item.get("content") or [] if c.get("type") == "output_text"]
            elif kind == "reasoning":
                self.reply.thinking += "".join(str(p.get("text", "")) for p in item.get("summary") or [])
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                arguments = item.get("arguments", item.get("input", item.get("action")))
                self.reply.tool_calls.append({"id": item.get("call_id") or item.get("id"), "name": item.get("name", kind),
                                              "arguments": arguments})
        self.reply.text = "".join(texts)
        status = response.get("status")
        incomplete = (response.get("incomplete_details") or {}).get("reason")
        self.reply.stop_reason = incomplete or ("tool_use" if self.reply.tool_calls else status)
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.reply.usage = Usage(input_tokens=int(usage.get("input_tokens") or 0),
                                     output_tokens=int(usage.get("output_tokens") or 0),
                                     cache_read_tokens=_cached(usage.get("input_tokens_details")))
            self.reply.has_usage = True

    def _chat_chunk(self, chunk: dict[str, Any]) -> None:
        self.reply.model = str(chunk.get("model", self.reply.model))
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            self.reply.text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                block = self._blocks.setdefault(int(call.get("index", 0)), {"type": "function", "_json": ""})
                function = call.get("function") or {}
                block["id"] = call.get("id") or block.get("id")
                block["name"] = function.get("name") or block.get("name")
                block["_json"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                self.reply.stop_reason = choice["finish_reason"]
        self._chat_usage(chunk.get("usage"))

    def _chat_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.reply.usage = Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                                     output_tokens=int(usage.get("completion_tokens") or 0),
                                     cache_read_tokens=_cached(usage.get("prompt_tokens_details")))
            self.reply.has_usage = True


def _cached(details: Any) -> int:
    """OpenAI's cached part of the prompt (``*_tokens_details.cached_tokens``)."""
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) else 0
