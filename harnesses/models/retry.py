"""The one retry policy for every provider: ``classify`` decides, one tenacity wrapper acts.

The SDKs' own retries are switched off (``max_retries=0``) so that every retry happens here,
is bounded the same way, and is reported through ``on_retry`` into the transcript.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from harnesses.models.base import ModelError, ModelOptions, RetryCallback
from kernelarena.logs import get_logger

T = TypeVar("T")
log = get_logger("kernelarena.models")

# 408 request timeout, 409 lock conflict (Anthropic retries it), 429 rate limit; 5xx includes
# Anthropic's 529 "overloaded".
_RETRYABLE_4XX = {408, 409, 425, 429}
# A refused key: 401/403, or Gemini's 400 whose body says API_KEY_INVALID.
_CREDENTIAL_STATUSES = {401, 403}
_CREDENTIAL_MARKERS = ("API_KEY_INVALID", "API key not valid")


@dataclass(frozen=True)
class Classified:
    """What a provider failure means for the retry policy."""

    retryable: bool
    status: int | None
    message: str
    retry_after_s: float | None = None
    provider_failure: bool = True  # False: not a provider/transport error (a bug); re-raise it
    credentials: bool = False  # the key was refused: cannot heal


def credentials_refused(status: int | None, text: str) -> bool:
    return status in _CREDENTIAL_STATUSES or (status == 400 and any(m in text for m in _CREDENTIAL_MARKERS))


def retryable_status(status: int) -> bool:
    return status in _RETRYABLE_4XX or status >= 500


def classify(exc: BaseException) -> Classified:
    """The single decision: is this failure transient, and how long does the provider ask us to wait?"""
    if isinstance(exc, ModelError):
        return Classified(exc.retryable, exc.status, exc.message, credentials=exc.credentials)
    status = _status_of(exc)
    if status is not None:
        message = _message_of(exc)
        refused = credentials_refused(status, message + str(getattr(exc, "details", "") or getattr(exc, "body", "") or ""))
        return Classified(retryable_status(status), status, message, _retry_after_of(exc), credentials=refused)
    if isinstance(exc, json.JSONDecodeError):
        # A reply body that is not JSON (cut short, or a proxy's HTML page): transient like a reset.
        return Classified(True, None, f"the provider's reply is not valid JSON: {exc}")
    if isinstance(exc, _transport_errors()):
        return Classified(True, None, f"{type(exc).__name__}: {_message_of(exc) or 'connection failed'}")
    return Classified(False, None, f"{type(exc).__name__}: {exc}", provider_failure=False)


def _status_of(exc: BaseException) -> int | None:
    # LiteLLM folds provider statuses into its own classes (Anthropic's 529 becomes a 500) but
    # keeps the original as provider_status_code; openai/anthropic: status_code; google: code.
    for attr in ("provider_status_code", "status_code", "code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    return None


def _message_of(exc: BaseException) -> str:
    """The provider's own error message, dug out of its error JSON where there is one."""
    body = getattr(exc, "body", None) or getattr(exc, "details", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(exc) or type(exc).__name__


def _retry_after_of(exc: BaseException) -> float | None:
    # LiteLLM's exc.response may be a stand-in; the provider's headers are kept beside it.
    sources = (getattr(getattr(exc, "response", None), "headers", None), getattr(exc, "litellm_response_headers", None))
    for headers in sources:
        if headers is None:
            continue
        try:
            millis = headers.get("retry-after-ms")
            if millis is not None:
                return max(0.0, float(millis) / 1000.0)
            value = headers.get("retry-after")
        except (AttributeError, TypeError, ValueError):
            continue
        parsed = _parse_retry_after(str(value)) if value is not None else None
        if parsed is not None:
            return parsed
    return _google_retry_delay(getattr(exc, "details", None))


def _parse_retry_after(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _google_retry_delay(details: Any) -> float | None:
    """Gemini states the wait in the error body: ``google.rpc.RetryInfo`` with ``retryDelay: "21s"``."""
    if not isinstance(details, dict):
        return None
    entries = details.get("error", {}).get("details", []) if isinstance(details.get("error"), dict) else []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"([0-9.]+)s", str(entry.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection resets, dropped sockets and timeouts of whichever HTTP stack the SDK uses.

    Only modules already imported are consulted: an exception can only come from a library
    that is loaded, and this keeps optional SDKs from being imported here.
    """
    found: list[type[BaseException]] = [ConnectionError, TimeoutError, asyncio.TimeoutError]
    for module, names in (
        ("openai", ("APIConnectionError",)),
        ("anthropic", ("APIConnectionError",)),
        ("httpx", ("TransportError",)),
        ("httpx2", ("TransportError",)),
        ("aiohttp", ("ClientConnectionError", "ClientPayloadError", "ServerTimeoutError")),
    ):
        mod = sys.modules.get(module)
        for name in names:
            cls = getattr(mod, name, None) if mod is not None else None
            if isinstance(cls, type) and issubclass(cls, BaseException):
                found.append(cls)
    return tuple(found)


def _wait_s(options: ModelOptions, attempt: int, exc: BaseException | None) -> float:
    retry_after = classify(exc).retry_after_s if exc is not None else None
    if retry_after is not None:
        return min(retry_after, options.retry_after_max_s)
    ceiling = min(options.retry_max_wait_s, options.retry_base_s * 2 ** (attempt - 1))
    # "Equal jitter": at least half the back-off, so concurrent trials spread out but still wait.
    return ceiling / 2 + random.uniform(0, ceiling / 2)


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    options: ModelOptions,
    on_retry: RetryCallback | None,
    *,
    model_id: str,
    scrub: Callable[[str], str] = lambda s: s,
) -> T:
    """Run ``fn`` under the policy; raise ``ModelError`` for provider failures, anything else as is."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return _wait_s(options, state.attempt_number, exc)

    def stop(state: RetryCallState) -> bool:
        return (
            state.attempt_number > options.max_retries
            or state.idle_for + state.upcoming_sleep > options.retry_total_s
        )

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        info = classify(exc) if exc is not None else None
        event = {
            "attempt": state.attempt_number,
            "error": scrub(info.message if info else ""),
            "status": info.status if info else None,
            "wait_s": round(state.upcoming_sleep, 3),
        }
        log.warning("model_retry", model=model_id, **event)
        if on_retry is not None:
            on_retry(event)

    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda e: classify(e).retryable),
        wait=wait,
        stop=stop,
        before_sleep=before_sleep,
        reraise=True,
    )
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                return await fn()
    except Exception as exc:
        info = classify(exc)
        if not info.provider_failure:
            raise
        message = scrub(info.message)
        if info.retryable:
            message = f"{message} (gave up after {attempts} attempts)"
        raise ModelError(f"{model_id}: {message}", retryable=info.retryable, status=info.status,
                         credentials=info.credentials) from exc
    raise AssertionError("unreachable: tenacity either returns or raises")


PROBE_TIMEOUT_S = 30.0


async def probe(fn: Callable[[], Awaitable[Any]], options: ModelOptions, *, model_id: str,
                scrub: Callable[[str], str] = lambda s: s) -> None:
    """A credentials check: one attempt, no retries, a short timeout; failures as ModelError."""
    once = options.model_copy(update={"max_retries": 0})
    await asyncio.wait_for(call_with_retries(fn, once, None, model_id=model_id, scrub=scrub),
                           min(options.timeout_s, PROBE_TIMEOUT_S))
