"""create_model / check_credentials: ids, options, keys, and the lazily loaded prefixes."""

from __future__ import annotations

import pytest

from harnesses.models import check_credentials, create_model, known_prefixes, provider_of
from harnesses.models.anthropic_client import AnthropicClient
from harnesses.models.google_client import GoogleClient
from harnesses.models.openai_client import OpenAIClient
from kernelarena.errors import ConfigError, UserError

ALL_KEY_VARS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY"]


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ALL_KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    "model_id,variable",
    [
        ("openai:gpt-5.4", "OPENAI_API_KEY"),
        ("anthropic:claude-opus-4-6", "ANTHROPIC_API_KEY"),
        ("google:gemini-3.1-pro", "GEMINI_API_KEY or GOOGLE_API_KEY"),
        ("litellm:xai/grok-4", "XAI_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(no_keys: pytest.MonkeyPatch, model_id: str, variable: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_credentials(model_id)
    message = str(info.value)
    assert variable in message and "\n" not in message
    with pytest.raises(ConfigError):
        create_model(model_id)  # the same check guards construction


def test_keys_present_pass(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("GOOGLE_API_KEY", "g")  # the second of Gemini's two variables is enough
    check_credentials("google:gemini-3.1-pro")
    no_keys.setenv("XAI_API_KEY", "x")
    check_credentials("litellm:xai/grok-4")


def test_api_key_env_overrides_the_default_variable(no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="MY_GATEWAY_KEY"):
        check_credentials("openai:gpt-5.4", api_key_env="MY_GATEWAY_KEY")
    no_keys.setenv("MY_GATEWAY_KEY", "k")
    check_credentials("openai:gpt-5.4", api_key_env="MY_GATEWAY_KEY")
    client = create_model("openai:my-local-llama", api_key_env="MY_GATEWAY_KEY", base_url="http://127.0.0.1:1/v1")
    assert isinstance(client, OpenAIClient) and client.model_id == "openai:my-local-llama"


def test_litellm_route_without_a_known_key_is_not_checked(no_keys: pytest.MonkeyPatch) -> None:
    check_credentials("litellm:ollama/llama3")
    check_credentials("litellm:hosted_vllm/qwen")


def test_clients_of_each_provider(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("ANTHROPIC_API_KEY", "a")
    no_keys.setenv("GEMINI_API_KEY", "g")
    assert isinstance(create_model("anthropic:claude-opus-4-6"), AnthropicClient)
    assert isinstance(create_model("google:gemini-3.1-pro"), GoogleClient)


@pytest.mark.parametrize("bad", ["gpt-5.4", "openai:", ":gpt"])
def test_malformed_id_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="provider:name"):
        create_model(bad)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as info:
        check_credentials("mistery:model")
    assert "openai" in str(info.value) and "kernelarena.models" in str(info.value)


def test_unknown_or_invalid_option_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ConfigError, match="tempurature"):
        create_model("openai:gpt-5.4", tempurature=0.2)
    with pytest.raises(ConfigError, match="max_retries"):
        create_model("openai:gpt-5.4", max_retries=-1)


def test_builtins_are_registrations_that_import_their_client_when_first_built() -> None:
    assert {"openai", "anthropic", "google", "litellm", "scripted", "replay"} <= set(known_prefixes())
    for prefix in ("scripted", "replay"):
        provider = provider_of(prefix)
        assert provider.key_variables("x") == [] and not provider.model_options
    assert provider_of("google").key_variables("gemini-3.1-pro") == ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    assert provider_of("litellm").key_variables("xai/grok-4") == ["XAI_API_KEY"]
    with pytest.raises(ConfigError, match="plays a specific task"):  # scripted's own create answered
        create_model("scripted:reference")
