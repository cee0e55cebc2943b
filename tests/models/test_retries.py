"""The one retry policy, exercised through every adapter's real SDK against its fake server."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harnesses.models import ModelError
from tests.fakeproviders import Failure, Reply
from tests.models.conftest import KEY, Adapter, serve

OK = [Reply.say("recovered")]
HELLO = [{"role": "user", "content": "hello"}]


async def complete_with(adapter: Adapter, failures: Any, **options: Any) -> tuple[Any, list[dict], Any]:
    events: list[dict[str, Any]] = []
    with serve(adapter, OK, failures=failures) as server:
        client = adapter.client(server, **options)
        client.on_retry = events.append
        try:
            turn = await client.complete(HELLO, [])
        finally:
            await client.aclose()
    return turn, events, server


async def test_429_with_retry_after_is_honoured(adapter: Adapter) -> None:
    start = time.monotonic()
    turn, events, server = await complete_with(adapter, [Failure.rate_limit(retry_after=1)])
    assert turn.text == "recovered"
    assert len(server.requests) == 2
    assert time.monotonic() - start >= 0.95  # the provider's wait, not our 10 ms back-off
    assert len(events) == 1
    assert events[0]["status"] == 429 and events[0]["attempt"] == 1
    assert events[0]["wait_s"] == pytest.approx(1.0)
    assert events[0]["error"]  # the provider's message


async def test_429_without_retry_after_backs_off(adapter: Adapter) -> None:
    start = time.monotonic()
    turn, events, server = await complete_with(adapter, [Failure.rate_limit(), Failure.rate_limit()])
    assert turn.text == "recovered"
    assert len(server.requests) == 3
    assert [e["attempt"] for e in events] == [1, 2]
    assert all(e["status"] == 429 and 0 < e["wait_s"] <= 0.02 for e in events)  # base 0.01, doubled, jittered
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_retried(adapter: Adapter, status: int) -> None:
    turn, events, server = await complete_with(adapter, [Failure.server_error(status)])
    assert turn.text == "recovered"
    assert len(server.requests) == 2
    assert events[0]["status"] == status


async def test_dropped_connection_is_retried(adapter: Adapter) -> None:
    turn, events, server = await complete_with(adapter, [Failure.drop_connection()])
    assert turn.text == "recovered"
    assert len(server.requests) == 2
    # LiteLLM reports a lost connection as its InternalServerError (status 500).
    assert events[0]["status"] == (500 if adapter.name == "litellm" else None)
    assert events[0]["error"]


async def test_timeout_is_retried(adapter: Adapter) -> None:
    turn, events, server = await complete_with(adapter, [Failure.slow(1.0)], timeout_s=0.3)
    assert turn.text == "recovered"
    assert len(server.requests) == 2
    assert events[0]["status"] == (408 if adapter.name == "litellm" else None)


@pytest.mark.parametrize(
    "status,message",
    [(400, "messages: field is malformed"), (401, "key rejected by provider"), (403, "not allowed here"),
     (404, "model gone")],
)
async def test_client_errors_are_not_retried(adapter: Adapter, status: int, message: str) -> None:
    events: list[dict[str, Any]] = []
    with serve(adapter, OK, failures=[Failure.http(status, message)]) as server:
        client = adapter.client(server)
        client.on_retry = events.append
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert len(server.requests) == 1 and events == []
    assert info.value.retryable is False
    assert info.value.status == status
    assert message in str(info.value)


async def test_wrong_key_is_a_clear_non_retryable_error(adapter: Adapter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_OTHER_KEY", "sk-wrong-key-0000")
    with serve(adapter, OK) as server:
        client = adapter.client(server, api_key_env="KA_OTHER_KEY")
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert len(server.requests) == 1
    assert not info.value.retryable
    # Gemini answers a bad key with 400 API_KEY_INVALID; the others with 401.
    assert info.value.status == (400 if adapter.name == "google" else 401)
    assert "sk-wrong-key-0000" not in str(info.value)


async def test_unknown_model_is_404_with_the_providers_message(adapter: Adapter) -> None:
    with serve(adapter, OK, known_models={"some-other-model"}) as server:
        client = adapter.client(server)
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert info.value.status == 404 and not info.value.retryable
    assert "fake" in str(info.value)  # the provider's message names the model


async def test_retries_give_up_after_max_retries(adapter: Adapter) -> None:
    events: list[dict[str, Any]] = []
    with serve(adapter, OK, failures=lambda n: Failure.server_error()) as server:
        client = adapter.client(server, max_retries=2)
        client.on_retry = events.append
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert len(server.requests) == 3 and len(events) == 2
    assert info.value.retryable is True and info.value.status == 500
    assert "gave up after 3 attempts" in str(info.value)


async def test_retry_after_beyond_the_total_wait_cap_stops(adapter: Adapter) -> None:
    """A Retry-After that would break the total-wait cap is not slept through."""
    start = time.monotonic()
    with serve(adapter, OK, failures=[Failure.rate_limit(retry_after=1)]) as server:
        client = adapter.client(server, retry_total_s=0.5)
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert time.monotonic() - start < 0.9
    assert len(server.requests) == 1 and info.value.status == 429 and info.value.retryable


async def test_error_messages_never_carry_the_key(adapter: Adapter) -> None:
    with serve(adapter, OK, failures=[Failure.http(400, f"bad request from key {KEY}")]) as server:
        client = adapter.client(server)
        try:
            with pytest.raises(ModelError) as info:
                await client.complete(HELLO, [])
        finally:
            await client.aclose()
    assert KEY not in str(info.value)
    assert "***" in str(info.value)
