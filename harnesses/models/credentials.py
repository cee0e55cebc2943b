"""Which environment variable holds the key for a model id, checked before any trial starts.

The variables come from the provider's registration (``ModelProvider.key_envs``); a model's
``api_key_env`` option replaces them."""

from __future__ import annotations

import os

from harnesses.models._common import require_key
from harnesses.models.provider import provider_of


def key_envs(provider: str, name: str, api_key_env: str | None = None) -> list[str]:
    """Variables that may hold the key, in order; empty when the provider needs none (nothing to check)."""
    if api_key_env:
        return [api_key_env]
    return provider_of(provider).key_variables(name)


def check_key(provider: str, name: str, api_key_env: str | None = None) -> str | None:
    """The key (or None when the route needs none we know of); ConfigError naming the variable if unset."""
    envs = key_envs(provider, name, api_key_env)
    if not envs:
        return None
    _, key = require_key(envs)
    return key


def key_variable(model_id: str, api_key_env: str | None = None) -> str:
    """The variable the key of ``model_id`` was read from (the first one set), for messages."""
    provider, _, name = model_id.partition(":")
    envs = key_envs(provider, name, api_key_env)
    return next((e for e in envs if os.environ.get(e)), envs[0] if envs else "the provider's key variable")


def rejected_key_message(model_id: str, api_key_env: str | None, error: str) -> str:
    """One line for a refused key: which variable, what the provider said, what to do."""
    variable = key_variable(model_id, api_key_env)
    return f"the provider refused the key in {variable} for {model_id} ({error}); export a valid key in {variable}"
