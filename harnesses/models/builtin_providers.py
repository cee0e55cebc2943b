"""The providers that ship with KernelArena, registered the way a plug-in registers its own.

The prices are ILLUSTRATIVE DEFAULTS, not quotes: check your provider's price page and
override them with a price file (see pricing.py). Nothing here imports an SDK; a client module,
and its SDK, is imported when its first client is built.
"""

from __future__ import annotations

from harnesses.models.provider import ModelProvider, Price, lazy_create

# (cache read, cache write) as the providers publish them: Anthropic reads at 0.1x and writes
# (5-minute cache) at 1.25x; OpenAI's and Gemini's cached input is 0.1x and writing is free.
OPENAI = ModelProvider(
    create=lazy_create("harnesses.models.openai_client", "pip install 'kernelarena[openai]'"),
    key_envs=("OPENAI_API_KEY",),
    prices={"gpt-5.4": Price(1.25, 10.0), "gpt-5-mini": Price(0.25, 2.0)},
    cache_ratios=(0.1, 1.0),
    model_options=True,
)

ANTHROPIC = ModelProvider(
    create=lazy_create("harnesses.models.anthropic_client", "pip install 'kernelarena[anthropic]'"),
    key_envs=("ANTHROPIC_API_KEY",),
    prices={"claude-opus-4-6": Price(5.0, 25.0), "claude-sonnet-4-5": Price(3.0, 15.0),
            "claude-haiku-4-5": Price(1.0, 5.0)},
    cache_ratios=(0.1, 1.25),
    model_options=True,
)

GOOGLE = ModelProvider(
    create=lazy_create("harnesses.models.google_client", "pip install 'kernelarena[google]'"),
    key_envs=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    prices={"gemini-3.1-pro": Price(2.0, 12.0), "gemini-2.5-flash": Price(0.3, 2.5)},
    cache_ratios=(0.1, 1.0),
    model_options=True,
)

# LiteLLM routes by the part of the name before "/"; these are the variables LiteLLM reads for
# the common routes. A route not listed (local servers, cloud IAM) is not checked.
LITELLM_KEY_ENVS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "cohere": ("COHERE_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
}

# litellm:<route>/<name> costs what the provider's own id costs, unless listed itself.
LITELLM_PRICED_AS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}


def _litellm_route(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else ""


def _litellm_priced_as(name: str) -> str | None:
    route, _, rest = name.partition("/")
    provider = LITELLM_PRICED_AS.get(route) if rest else None
    return f"{provider}:{rest}" if provider else None


LITELLM = ModelProvider(
    create=lazy_create("harnesses.models.litellm_client", "pip install 'kernelarena[litellm]'"),
    key_envs=lambda name: LITELLM_KEY_ENVS.get(_litellm_route(name), ()),
    prices={"xai/grok-4": Price(3.0, 15.0, cache_read_per_mtok=0.75)},
    priced_as=_litellm_priced_as,
    model_options=True,
)

# Offline agents: no key, no price, options of their own.
SCRIPTED = ModelProvider(create=lazy_create("harnesses.models.scripted"))
REPLAY = ModelProvider(create=lazy_create("harnesses.models.replay"))

BUILTIN_PROVIDERS: dict[str, ModelProvider] = {
    "openai": OPENAI,
    "anthropic": ANTHROPIC,
    "google": GOOGLE,
    "litellm": LITELLM,
    "scripted": SCRIPTED,
    "replay": REPLAY,
}
