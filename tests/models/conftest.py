"""Shared set-up for the model-client tests: one entry per adapter, each with its fake server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from harnesses.models import ToolSpec, create_model
from harnesses.models.base import ModelClient
from tests.fakeproviders import FakeAnthropicServer, FakeGeminiServer, FakeOpenAIServer, FakeProviderServer

KEY_ENV = "KA_TEST_PROVIDER_KEY"
KEY = "sk-test-0123456789abcdef"


@dataclass
class Adapter:
    name: str
    server_cls: type[FakeProviderServer]
    model_id: str
    auth_header: str  # where the key must arrive
    auth_value: str

    def client(self, server: FakeProviderServer, **options: Any) -> ModelClient:
        options = {"base_url": server.base_url, "api_key_env": KEY_ENV, "retry_base_s": 0.01, **options}
        return create_model(self.model_id, **options)


ADAPTERS = [
    Adapter("openai", FakeOpenAIServer, "openai:gpt-fake", "Authorization", f"Bearer {KEY}"),
    # anthropic>=2 sends the key as a bearer token (older SDKs used x-api-key).
    Adapter("anthropic", FakeAnthropicServer, "anthropic:claude-fake", "Authorization", f"Bearer {KEY}"),
    Adapter("google", FakeGeminiServer, "google:gemini-fake", "x-goog-api-key", KEY),
    Adapter("litellm", FakeOpenAIServer, "litellm:openai/gpt-fake", "Authorization", f"Bearer {KEY}"),
]

TOOLS = [
    ToolSpec("bash", "Run a shell command.", {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    ToolSpec("write_file", "Write a file.", {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }),
]


@pytest.fixture(autouse=True)
def provider_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.name)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    return request.param


def serve(adapter: Adapter, script: Any = (), **kwargs: Any) -> FakeProviderServer:
    return adapter.server_cls(script=script, api_key=KEY, **kwargs)

