"""The fault matrix's rows and columns: the faults a provider can throw, the harnesses that meet
them, and how one cell's outcome is read off its trial folder and rendered into docs/MODELS.md.

Every fault hits every model turn of the trial (it does not heal), so a cell shows the whole
policy: a retryable fault is retried `max_retries` times and then ends the trial, one that cannot
heal ends it at once. Timeouts and waits are short (MATRIX_OPTIONS) so the matrix stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakeproviders import Failure, FakeAnthropicServer, FakeGeminiServer, FakeOpenAIServer, FakeProviderServer
from tests.fakeproviders.openai_responses_server import FakeOpenAIResponsesServer
from tests.harness.helpers import events

KEY = "sk-fault-matrix-0123456789"
KEY_ENV = "KA_FAULT_MATRIX_KEY"
HANG_S = 20.0
"""How long a hanging provider stalls: far past MATRIX_OPTIONS' timeout_s."""
MATRIX_OPTIONS: dict[str, Any] = {
    "api_key_env": KEY_ENV, "max_retries": 2, "retry_base_s": 0.01, "retry_max_wait_s": 0.05,
    "retry_after_max_s": 1.0, "timeout_s": 1.0,
}
MODEL_TURN_PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions", ":generateContent")


@dataclass(frozen=True)
class Fault:
    id: str
    failure: Callable[[], Failure]
    exit_reason: str
    attempts: int
    """Requests the provider sees for the turn: 1 when it cannot heal, 1 + max_retries otherwise."""
    evidence: str
    """A pattern the transcript's error event must hold: the provider's own words, or what broke."""


def _http(status: int, retry_after: float | None = None) -> Callable[[], Failure]:
    return lambda: Failure(status=status, message=f"the fake provider says {status}", retry_after=retry_after)


FAULTS = [
    Fault("400", _http(400), "error", 1, "the fake provider says 400"),
    Fault("401", _http(401), "credentials", 1, "the fake provider says 401"),
    Fault("403", _http(403), "credentials", 1, "the fake provider says 403"),
    Fault("404 unknown model", _http(404), "error", 1, "the fake provider says 404"),
    Fault("413 context too long", _http(413), "error", 1, "the fake provider says 413"),
    Fault("429 Retry-After 0.2 s", _http(429, 0.2), "error", 3, "the fake provider says 429"),
    Fault("429", _http(429), "error", 3, "the fake provider says 429"),
    Fault("500", _http(500), "error", 3, "the fake provider says 500"),
    Fault("503", _http(503), "error", 3, "the fake provider says 503"),
    Fault("529", _http(529), "error", 3, "the fake provider says 529"),
    Fault("malformed JSON body", Failure.malformed_body, "error", 3, r"JSON|[Pp]ars|[Dd]ecod|Expecting value"),
    Fault("stream cut after first event", Failure.cut_stream, "error", 3,
          r"broke|[Pp]rotocol|[Cc]onnection|incomplete|closed|[Pp]ayload"),
    Fault("hang before first byte", lambda: Failure.hang(HANG_S), "error", 3, r"[Tt]ime(d )?out"),
    Fault("hang mid-stream", lambda: Failure.hang_mid_stream(HANG_S), "error", 3, r"[Tt]ime(d )?out|broke"),
]


@dataclass(frozen=True)
class HarnessCase:
    id: str
    harness: str
    model: str
    server: type[FakeProviderServer]
    docker: bool = False


HARNESS_CASES = [
    HarnessCase("minimal + openai (chat)", "minimal", "openai:gpt-fake", FakeOpenAIServer),
    HarnessCase("minimal + anthropic", "minimal", "anthropic:claude-fake", FakeAnthropicServer),
    HarnessCase("minimal + google", "minimal", "google:gemini-fake", FakeGeminiServer),
    HarnessCase("minimal + litellm", "minimal", "litellm:openai/gpt-fake", FakeOpenAIServer),
    HarnessCase("claude-code", "claude-code", "anthropic:claude-sonnet-4-5", FakeAnthropicServer, docker=True),
    HarnessCase("codex (openai responses)", "codex", "openai:gpt-5.4", FakeOpenAIResponsesServer, docker=True),
]

SWEEP_EFFECT = {
    "credentials": "provider stopped; its trials stay pending for --resume",
    "error": "failed attempt; N in a row pause the provider",
}
"""What a sweep does with a trial that ended so (orchestrator/sweep.py; tests/harness/test_fault_sweep.py
runs both for real)."""


def fault_on_model_turns(server: FakeProviderServer, fault: Fault) -> None:
    """Every model turn meets the fault; side calls (a CLI's probes, token counts) pass."""
    server.requests.clear()
    server.served.clear()
    server.failures = lambda n: fault.failure() if server.requests[n - 1].path.endswith(MODEL_TURN_PATHS) else None


def model_turns(server: FakeProviderServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith(MODEL_TURN_PATHS))


@dataclass
class Cell:
    harness: str
    fault: str
    exit_reason: str
    attempts: int
    retry_events: int
    evidence: str
    seconds: float

    def row(self) -> str:
        return (f"| {self.harness} | {self.fault} | {self.exit_reason} | {self.attempts} | {self.retry_events} | "
                f"{self.evidence} | {SWEEP_EFFECT.get(self.exit_reason, '-')} | {self.seconds:.1f} |")


def read_cell(case: HarnessCase, fault: Fault, out: Path, attempts: int, seconds: float) -> tuple[Cell, list[dict[str, Any]]]:
    evs = events(out)
    errors = [e["payload"].get("message", "") for e in evs if e["type"] == "error"]
    found = next((m for m in errors if re.search(fault.evidence, m)), None)
    evidence = "-" if found is None else _shown(re.search(fault.evidence, found).group(0))  # type: ignore[union-attr]
    end = evs[-1]["payload"] if evs and evs[-1]["type"] == "trial_end" else {}
    cell = Cell(case.id, fault.id, str(end.get("exit_reason")), attempts,
                sum(1 for e in evs if e["type"] == "retry"), evidence, seconds)
    return cell, evs


def _shown(text: str) -> str:
    return f"`{text}`".replace("|", "\\|")


TABLE_HEAD = ("| harness | fault | exit reason | requests for the turn | retry events | provider's text / cause in "
              "the transcript | sweep effect | seconds to end |\n|---|---|---|---|---|---|---|---|")
BEGIN, END = "<!-- fault-matrix:begin -->", "<!-- fault-matrix:end -->"


def render(cells: list[Cell]) -> str:
    return "\n".join([BEGIN, TABLE_HEAD, *(c.row() for c in cells), END])


def outcome_columns(row: str) -> list[str]:
    """A table row without its time, which differs from run to run."""
    return [c.strip() for c in row.strip().strip("|").split("|")][:-1]
