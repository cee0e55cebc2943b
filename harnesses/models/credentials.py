"""Which environment variable holds the key for a model id, checked before any trial starts."""

from __future__ import annotations

import os

from harnesses.models._common import require_key

# The variables each provider's SDK reads by default.
PROVIDER_KEY_ENVS: dict[str, list[str]] = {
    "openai": ["OPENAI_API_KEY"],
    "anthropic": ["ANTHROPIC_API_KEY"],
    "google": ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
}

# LiteLLM routes by the prefix before "/"; these are the variables LiteLLM reads for the common
# routes. A route not listed here (local servers, cloud IAM) is not checked.
LITELLM_KEY_ENVS: dict[str, list[str]] = {
    "openai": ["OPENAI_API_KEY"],
    "anthropic": ["ANTHROPIC_API_KEY"],
    "gemini": ["GEMINI_API_KEY"],
    "xai": ["XAI_API_KEY"],
    "mistral": ["MISTRAL_API_KEY"],
    "groq": ["GROQ_API_KEY"],
    "deepseek": ["DEEPSEEK_API_KEY"],
    "openrouter": ["OPENROUTER_API_KEY"],
    "together_ai": ["TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY"],
    "fireworks_ai": ["FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"],
    "cohere": ["COHERE_API_KEY"],
    "perplexity": ["PERPLEXITYAI_API_KEY"],
    "cerebras": ["CEREBRAS_API_KEY"],
    "moonshot": ["MOONSHOT_API_KEY"],
}


def key_envs(provider: str, name: str, api_key_env: str | None = None) -> list[str]:
    """Variables that may hold the key, in order; empty when we cannot tell (nothing to check)."""
    if api_key_env:
        return [api_key_env]
    if provider == "litellm":
        route = name.split("/", 1)[0] if "/" in name else ""
        return LITELLM_KEY_ENVS.get(route, [])
    return PROVIDER_KEY_ENVS.get(provider, [])


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
