"""Model clients: one interface (base.py) over the official provider SDKs, chosen by id prefix.

``create_model("anthropic:claude-opus-4-6", max_tokens=4096)`` returns a ``ModelClient``. Each
prefix maps to a module-level factory ``create(name, task, **options) -> ModelClient``, loaded
on first use so an SDK is imported only when its provider is used. Third-party providers
register the same kind of factory under the entry-point group ``kernelarena.models``.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

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
from harnesses.models.credentials import check_key
from kernelarena.errors import ConfigError, first_problem
from kernelarena.registry import Registry

__all__ = [
    "ModelClient",
    "ModelError",
    "ModelOptions",
    "ModelTurn",
    "SDK_PROVIDERS",
    "TaskContext",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "check_credentials",
    "create_model",
    "parse_model_id",
    "registry",
]

ModelFactory = Callable[..., ModelClient]

registry: Registry[ModelFactory] = Registry("model", group="kernelarena.models")


def _factory(module: str) -> Callable[[], ModelFactory]:
    return lambda: importlib.import_module(module).create


registry.register("openai", _factory("harnesses.models.openai_client"), "pip install 'kernelarena[openai]'")
registry.register("anthropic", _factory("harnesses.models.anthropic_client"), "pip install 'kernelarena[anthropic]'")
registry.register("google", _factory("harnesses.models.google_client"), "pip install 'kernelarena[google]'")
registry.register("litellm", _factory("harnesses.models.litellm_client"), "pip install 'kernelarena[litellm]'")
registry.register("scripted", _factory("harnesses.models.scripted"))
registry.register("replay", _factory("harnesses.models.replay"))

# Prefixes whose options are the provider options of ModelOptions (the others take their own).
SDK_PROVIDERS = frozenset({"openai", "anthropic", "google", "litellm"})


def parse_model_id(model_id: str) -> tuple[str, str]:
    provider, sep, name = model_id.partition(":")
    if not sep or not provider or not name:
        raise ConfigError(
            f"model id {model_id!r} needs the form provider:name (e.g. anthropic:claude-opus-4-6, "
            f"openai:gpt-5.4); providers: {', '.join(registry.names())}"
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
    provider, name = parse_model_id(model_id)
    if provider in SDK_PROVIDERS:
        options = _options(model_id, options).model_dump(exclude_unset=True)
    factory = registry.get(provider)
    return factory(name, task, **options)


def check_credentials(model_id: str, **options: Any) -> None:
    """Fail fast, before any trial starts, when the key for ``model_id`` is not in the environment.

    Accepts the model's options so ``api_key_env`` is honoured (a compatible extension of
    ``check_credentials(model_id)``). Prefixes without keys (scripted, replay) pass.
    """
    provider, name = parse_model_id(model_id)
    if provider not in SDK_PROVIDERS:
        if provider not in registry.names():
            registry.get(provider)  # raises the "unknown model provider" UserError
        return
    check_key(provider, name, _options(model_id, options).api_key_env)

