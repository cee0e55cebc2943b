"""Model clients: one interface (base.py) over the official provider SDKs, chosen by id prefix.

``create_model("anthropic:claude-opus-4-6", max_tokens=4096)`` returns a ``ModelClient``. Each
prefix is a ``ModelProvider`` registration (provider.py): its client factory, its key variables
and its prices. The built-ins (builtin_providers.py) register below; outside packages register
theirs under the entry-point group ``kernelarena.models``. An SDK is imported only when its
provider's first client is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from harnesses.models.base import (
    ModelClient,
    ModelError,
    ModelOptions,
    ModelTurn,
    TaskContext,
    ToolCall,
    ToolSpec,
    Usage,
)
from harnesses.models.builtin_providers import BUILTIN_PROVIDERS
from harnesses.models.credentials import check_key
from harnesses.models.provider import PROVIDERS, ModelProvider, Price, known_prefixes, provider_of
from kernelarena.errors import ConfigError, first_problem

__all__ = [
    "ModelClient",
    "ModelError",
    "ModelOptions",
    "ModelProvider",
    "ModelTurn",
    "PROVIDERS",
    "Price",
    "TaskContext",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "check_credentials",
    "create_model",
    "known_prefixes",
    "parse_model_id",
    "provider_of",
]


def _loader(provider: ModelProvider) -> Callable[[], ModelProvider]:
    return lambda: provider


for _prefix, _provider in BUILTIN_PROVIDERS.items():
    PROVIDERS.register(_prefix, _loader(_provider))


def parse_model_id(model_id: str) -> tuple[str, str]:
    provider, sep, name = model_id.partition(":")
    if not sep or not provider or not name:
        raise ConfigError(
            f"model id {model_id!r} needs the form provider:name (e.g. anthropic:claude-opus-4-6, "
            f"openai:gpt-5.4); providers: {', '.join(known_prefixes())}"
        )
    return provider, name


def _options(model_id: str, options: dict[str, Any]) -> ModelOptions:
    try:
        return ModelOptions(**options)
    except ValidationError as exc:
        field, msg = first_problem(exc, whole="options")
        known = ", ".join(ModelOptions.model_fields)
        raise ConfigError(f"model {model_id}: option {field!r}: {msg}; valid options: {known}") from None


def create_model(model_id: str, *, task: TaskContext | None = None, **options: Any) -> ModelClient:
    """A ready client; raises ConfigError (a UserError) for a bad id, option or missing key."""
    prefix, name = parse_model_id(model_id)
    provider = provider_of(prefix)
    if provider.model_options:
        options = _options(model_id, options).model_dump(exclude_unset=True)
    return provider.create(name, task, **options)


def check_credentials(model_id: str, **options: Any) -> None:
    """Fail fast, before any trial starts, when the key for ``model_id`` is not in the environment.

    Accepts the model's options so ``api_key_env`` is honoured (for a provider whose clients take
    ``ModelOptions``). A provider that registers no key variable (scripted, replay) passes; an
    unknown prefix is a UserError naming the known ones.
    """
    prefix, name = parse_model_id(model_id)
    provider = provider_of(prefix)
    api_key_env = _options(model_id, options).api_key_env if provider.model_options else None
    check_key(prefix, name, api_key_env)

