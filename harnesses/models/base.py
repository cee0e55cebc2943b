"""The provider-neutral model interface: message dicts, tool specs, turns, options, errors.

Neutral messages are plain dicts so the harness can write them to the transcript as they are:
``{"role": "system"|"user"|"assistant"|"tool", "content": str, "tool_calls": [ToolCall],
"tool_call_id": str}``. ``tool_calls`` entries may be ``ToolCall`` objects or their ``asdict``
form (a transcript read back from disk), so replayed conversations convert the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Whatever the callback returns is ignored (the trial passes Transcript.event, which returns the record).
RetryCallback = Callable[[dict[str, Any]], object]


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    # Set when the model's arguments were not a JSON object; ``arguments`` is then
    # ``{"_raw": <text>}`` and the harness should send ``error`` back as the tool result.
    error: str | None = None
    # Provider state that must travel back with the call on the next request (Gemini's
    # thought_signature); opaque to the harness, kept so a transcript replays faithfully.
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, value: ToolCall | dict[str, Any]) -> ToolCall:
        if isinstance(value, ToolCall):
            return value
        return cls(
            id=str(value.get("id", "")),
            name=str(value["name"]),
            arguments=dict(value.get("arguments") or {}),
            error=value.get("error"),
            extra=dict(value.get("extra") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Usage:
    """Tokens of one or more turns. ``input_tokens`` is the whole prompt, cached parts included;
    ``cache_read_tokens`` and ``cache_write_tokens`` say how much of it the provider served from,
    or wrote to, its prompt cache (they are priced at their own rates)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


# Neutral stop reasons; an unmapped provider reason is passed through unchanged.
STOP_END_TURN = "end_turn"
STOP_TOOL_USE = "tool_use"
STOP_MAX_TOKENS = "max_tokens"
STOP_CONTENT_FILTER = "content_filter"


@dataclass
class ModelTurn:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str
    latency_s: float
    raw: dict[str, Any] | None  # the provider's response body, never its headers

    def as_message(self) -> dict[str, Any]:
        """The neutral assistant message to append to the conversation."""
        return {"role": "assistant", "content": self.text, "tool_calls": list(self.tool_calls)}


@dataclass
class TaskContext:
    """What a scripted or replaying model may need to know about the task it is playing."""

    suite: Any  # scorer.tasks.suites.Suite
    task: Any  # scorer.tasks.suites.Task
    hack: str | None = None


class ModelError(Exception):
    """A provider call failed for good: either not retryable (400/401/403/404) or retries ran out.
    ``credentials``: the provider refused the key (401, 403, Gemini's API_KEY_INVALID), which no
    retry and no later trial can heal."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None, credentials: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.credentials = credentials


class ModelOptions(BaseModel):
    """Options every provider client accepts (``create_model(id, **options)``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    base_url: str | None = None
    """Endpoint override: an OpenAI-compatible server (vLLM, SGLang, Ollama), a proxy, a test server."""
    api_key_env: str | None = None
    """Environment variable holding the key, instead of the provider's usual one."""
    temperature: float | None = None
    """Sampling temperature; unset means the provider's default."""
    max_tokens: int = Field(default=8192, gt=0)
    """Cap on output tokens per turn (Anthropic requires one; the others receive it too)."""
    max_retries: int = Field(default=6, ge=0)
    """Retries after the first attempt for transient failures (429, 5xx, timeouts, resets)."""
    timeout_s: float = Field(default=600.0, gt=0)
    """Per-request timeout; a timeout counts as a transient failure."""
    retry_base_s: float = Field(default=1.0, gt=0)
    """First back-off wait; doubles per retry, with jitter (tests set it tiny)."""
    retry_max_wait_s: float = Field(default=60.0, gt=0)
    """Cap on any single back-off wait."""
    retry_after_max_s: float = Field(default=120.0, ge=0)
    """Cap on a provider's Retry-After; a longer demand is shortened to this."""
    retry_total_s: float = Field(default=600.0, ge=0)
    """Cap on the summed waits of one call; no retry starts that would exceed it."""
    prices_path: str | None = None
    """TOML price table extending the built-in one (see pricing.py)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Passed through unchanged as extra request parameters (e.g. reasoning_effort, top_p)."""


class ModelClient(ABC):
    """One model behind one provider. ``complete`` is one request; retries happen inside it."""

    model_id: str
    on_retry: RetryCallback | None = None

    @abstractmethod
    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        ...

    async def check_access(self) -> None:
        """One cheap authenticated call (a model list) so a refused key is found before a sweep
        starts; raises ModelError (``credentials`` set when the key was refused). Clients
        without a provider behind them have nothing to check."""
        return None

    async def aclose(self) -> None:
        """Release the SDK's connection pool; safe to call more than once."""
        return None

