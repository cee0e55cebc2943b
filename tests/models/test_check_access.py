"""The credentials check a sweep makes before it starts: one cheap authenticated call per model,
through each adapter's real SDK against its fake server."""

from __future__ import annotations

import time

import pytest

from harnesses.models import ModelError, create_model
from tests.models.conftest import KEY_ENV, Adapter, serve


async def test_a_good_key_passes(adapter: Adapter) -> None:
    with serve(adapter) as server:
        client = adapter.client(server)
        try:
            await client.check_access()
        finally:
            await client.aclose()
    # LiteLLM has no common model list: its check is a one-token turn.
    assert len(server.model_lists) + len(server.requests) == 1


async def test_a_refused_key_is_a_credentials_error_in_one_call(adapter: Adapter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_OTHER_KEY", "sk-wrong-key-0000")
    started = time.monotonic()
    with serve(adapter) as server:
        client = adapter.client(server, api_key_env="KA_OTHER_KEY")
        try:
            with pytest.raises(ModelError) as info:
                await client.check_access()
        finally:
            await client.aclose()
    assert info.value.credentials and not info.value.retryable
    assert len(server.model_lists) + len(server.requests) == 1  # never retried
    assert "sk-wrong-key-0000" not in str(info.value)
    assert time.monotonic() - started < 5


async def test_an_unreachable_provider_is_not_called_a_bad_key(adapter: Adapter) -> None:
    with serve(adapter) as server:
        base = server.base_url
    client = create_model(adapter.model_id, base_url=base, api_key_env=KEY_ENV, timeout_s=2)
    try:
        with pytest.raises(ModelError) as info:
            await client.check_access()
    finally:
        await client.aclose()
    assert not info.value.credentials
