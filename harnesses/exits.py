"""Small exceptions that end an agent loop, each carrying its exit reason (mini-swe-agent style).

The loop body raises; `run()` catches `LoopExit` once and turns it into the harness result, so
every way out of the loop is visible in one place.
"""

from __future__ import annotations

from harnesses.models.credentials import rejected_key_message


class LoopExit(Exception):
    """Ends the agent loop; not an error."""

    exit_reason: str = "done"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail


class Finished(LoopExit):
    """The model said it is done: a final text and no tool calls."""

    exit_reason = "done"


class NoToolCalls(LoopExit):
    """The model stopped calling tools without a final text (empty reply, length cut-off)."""

    exit_reason = "no_tool_calls"


class ModelFailed(LoopExit):
    """The model client gave up (retries exhausted, bad request); the kernel so far is scored."""

    exit_reason = "error"


class CredentialsRejected(ModelFailed):
    """The provider refused the key (401/403): no retry and no later trial can heal that, so the
    trial ends at once and a sweep stops that provider; the detail names the key's variable."""

    exit_reason = "credentials"


class BudgetExhausted(LoopExit):
    """A budget limit was reached; `kind` is one of Budget.KINDS."""

    def __init__(self, kind: str, limit: float, used: float) -> None:
        super().__init__(f"{kind} budget exhausted: used {used:g} of {limit:g}")
        self.kind = kind
        self.limit = limit
        self.used = used
        self.exit_reason = f"budget:{kind}"


def model_failure(model_id: str, api_key_env: str | None, message: str, credentials: bool) -> ModelFailed:
    """The exit for a provider failure: a refused key names its variable, anything else is as it came."""
    if credentials:
        return CredentialsRejected(rejected_key_message(model_id, api_key_env, message))
    return ModelFailed(message)
