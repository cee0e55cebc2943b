"""What a fake provider says: scripted replies and injected failures, independent of the wire format.

A script is either a list of ``Reply`` picked by the conversation's turn number (the number of
assistant turns already in the request, so concurrent conversations each follow the script
from the start; past the end the last reply repeats) or a callable ``(RecordedRequest) ->
Reply`` for anything cleverer. Failures are keyed by the server-wide request number (1-based):
a list (entry i for request i+1, ``None`` to pass), a dict, or a callable ``(n) -> Failure | None``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolUse:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim: use it to script invalid JSON
    id: str | None = None  # None: the server makes one in its provider's style

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolUse] = field(default_factory=list)
    input_tokens: int | None = None  # None: about a token per 4 characters of the request body
    output_tokens: int | None = None  # None: about a token per 4 characters of the reply
    cache_read_tokens: int = 0  # prompt tokens served from the cache (on top of input_tokens)
    cache_write_tokens: int = 0  # prompt tokens written to the cache (Anthropic reports them apart)
    stop: str | None = None  # neutral override: "max_tokens" or "content_filter"

    @classmethod
    def say(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | str, *, text: str = "", id: str | None = None,
             **kw: Any) -> Reply:
        return cls(text=text, tool_calls=[ToolUse(name, arguments, id)], **kw)

    def output_estimate(self) -> int:
        size = len(self.text) + sum(len(c.name) + len(c.arguments_text()) for c in self.tool_calls)
        return self.output_tokens if self.output_tokens is not None else size // 4 + 1


@dataclass
class Failure:
    """One injected fault: an HTTP error in the provider's format, a dropped socket, a stall, or
    a reply that goes wrong on the wire (a body that is not JSON, a stream that breaks off or
    stalls after its first event)."""

    status: int = 500
    message: str | None = None  # None: the provider's usual message for the status
    retry_after: float | None = None  # sent as the Retry-After header (and in Gemini's RetryInfo)
    drop: bool = False  # close the socket without any response
    stall_s: float = 0.0  # sleep this long first (then answer normally unless status/drop apply)
    answer_after_stall: bool = False
    malformed: bool = False  # a 200 whose JSON body is cut in half (a complete HTTP response)
    cut_after_first: bool = False  # send the first event (or half the body), then close the socket
    hang_mid_s: float = 0.0  # send the first event (or half the body), then stall this long

    @property
    def on_the_wire(self) -> bool:
        """The reply itself is rendered, then spoiled while it is sent."""
        return self.malformed or self.cut_after_first or self.hang_mid_s > 0

    @classmethod
    def malformed_body(cls) -> Failure:
        return cls(malformed=True)

    @classmethod
    def cut_stream(cls) -> Failure:
        return cls(cut_after_first=True)

    @classmethod
    def hang_mid_stream(cls, hang_s: float) -> Failure:
        return cls(hang_mid_s=hang_s)

    @classmethod
    def hang(cls, hang_s: float) -> Failure:
        """No byte of the reply for ``hang_s`` (then the normal answer, if anyone still waits)."""
        return cls.slow(hang_s)

    @classmethod
    def rate_limit(cls, retry_after: float | None = None) -> Failure:
        return cls(status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Failure:
        return cls(status=status)

    @classmethod
    def http(cls, status: int, message: str | None = None) -> Failure:
        return cls(status=status, message=message)

    @classmethod
    def drop_connection(cls) -> Failure:
        return cls(drop=True)

    @classmethod
    def slow(cls, stall_s: float) -> Failure:
        """Answer normally, but only after ``stall_s`` (to exercise client timeouts)."""
        return cls(stall_s=stall_s, answer_after_stall=True)


Script = Sequence[Reply] | Callable[[Any], Reply]
Failures = Sequence[Failure | None] | Mapping[int, Failure] | Callable[[int], Failure | None] | None


def failure_for(failures: Failures, number: int) -> Failure | None:
    if failures is None:
        return None
    if callable(failures):
        return failures(number)
    if isinstance(failures, Mapping):
        return failures.get(number)
    return failures[number - 1] if number - 1 < len(failures) else None


def pick_reply(script: Script, request: Any, turn: int) -> Reply:
    if callable(script):
        return script(request)
    if not script:
        return Reply(text="(the fake provider has no script)")
    return script[min(turn, len(script) - 1)]
