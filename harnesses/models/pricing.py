"""USD per million tokens, per model id, so a budget can be set in dollars and runs report cost.

The built-in figures are ILLUSTRATIVE DEFAULTS, not quotes: check your provider's price page
and override them. Extend or override with a TOML file named by ``KERNELARENA_PRICES`` or the
``prices_path`` option (later sources win)::

    [prices."openai:gpt-5.4"]
    input_per_mtok = 1.25
    output_per_mtok = 10.0
    cache_read_per_mtok = 0.125    # optional: cached input (OpenAI, Gemini) / cache reads (Anthropic)
    cache_write_per_mtok = 1.25    # optional: Anthropic's cache writes

Cached prompt tokens are priced at their own rates: a prompt served from the cache costs a
tenth or so of a fresh one, and Anthropic charges a premium for writing the cache. A missing
cache rate falls back to the provider's usual ratio to the input rate (``CACHE_RATIOS``). A
model with no price at all still runs; its cost is unknown and budgets then skip dollars.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harnesses.models.base import Usage
from kernelarena.errors import ConfigError

PRICES_ENV = "KERNELARENA_PRICES"


# (cache read, cache write) per provider as multiples of the input rate, as the providers
# publish them: Anthropic reads at 0.1x and writes (5-minute cache) at 1.25x; OpenAI's and
# Gemini's cached input is 0.1x and writing the cache costs nothing extra.
CACHE_RATIOS: dict[str, tuple[float, float]] = {
    "anthropic": (0.1, 1.25),
    "openai": (0.1, 1.0),
    "google": (0.1, 1.0),
}
_DEFAULT_CACHE_RATIOS = (1.0, 1.0)  # a provider we know nothing about: cached tokens at full price


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float | None = None
    """None: the provider's CACHE_RATIOS applied to the input rate."""
    cache_write_per_mtok: float | None = None


# Illustrative defaults (see module docstring).
BUILTIN_PRICES: dict[str, Price] = {
    "anthropic:claude-opus-4-6": Price(5.0, 25.0),
    "anthropic:claude-sonnet-4-5": Price(3.0, 15.0),
    "anthropic:claude-haiku-4-5": Price(1.0, 5.0),
    "openai:gpt-5.4": Price(1.25, 10.0),
    "openai:gpt-5-mini": Price(0.25, 2.0),
    "google:gemini-3.1-pro": Price(2.0, 12.0),
    "google:gemini-2.5-flash": Price(0.3, 2.5),
    "litellm:xai/grok-4": Price(3.0, 15.0, cache_read_per_mtok=0.75),
}

# litellm:<route>/<name> costs what the provider's own id costs, unless listed itself.
_LITELLM_ROUTES = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    prices = dict(BUILTIN_PRICES)
    for source in (os.environ.get(PRICES_ENV), path):
        if source:
            prices.update(_read_table(Path(source)))
    return prices


def _read_table(path: Path) -> dict[str, Price]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"price file {path} does not exist; fix {PRICES_ENV} or the prices_path option") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"price file {path} is not valid TOML ({exc}); fix the file") from None
    table: dict[str, Price] = {}
    for model_id, entry in (data.get("prices") or {}).items():
        try:
            table[model_id] = Price(
                float(entry["input_per_mtok"]), float(entry["output_per_mtok"]),
                *(None if entry.get(k) is None else float(entry[k]) for k in ("cache_read_per_mtok", "cache_write_per_mtok")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ConfigError(
                f'price file {path}: [prices."{model_id}"] needs numeric input_per_mtok and output_per_mtok '
                "(and, if given, numeric cache_read_per_mtok and cache_write_per_mtok)"
            ) from None
    return table


def price_of(model_id: str, prices: dict[str, Price] | None = None) -> Price | None:
    table = prices if prices is not None else load_prices()
    if model_id in table:
        return table[model_id]
    provider, _, name = model_id.partition(":")
    if provider == "litellm" and "/" in name:
        route, _, rest = name.partition("/")
        if route in _LITELLM_ROUTES:
            return table.get(f"{_LITELLM_ROUTES[route]}:{rest}")
    return None


def cache_rates(model_id: str, price: Price) -> tuple[float, float]:
    """(cache read, cache write) USD per million tokens for this model."""
    provider, _, name = model_id.partition(":")
    if provider == "litellm" and "/" in name:
        provider = _LITELLM_ROUTES.get(name.split("/", 1)[0], provider)
    read_ratio, write_ratio = CACHE_RATIOS.get(provider, _DEFAULT_CACHE_RATIOS)
    read = price.cache_read_per_mtok if price.cache_read_per_mtok is not None else price.input_per_mtok * read_ratio
    write = price.cache_write_per_mtok if price.cache_write_per_mtok is not None else price.input_per_mtok * write_ratio
    return read, write


def cost(model_id: str, usage: Usage, *, prices_path: str | Path | None = None) -> float | None:
    """Dollars for this usage, or None when the model has no known price (budgets then skip
    dollars). ``input_tokens`` includes the cached parts; those are priced at the cache rates."""
    price = price_of(model_id, load_prices(prices_path))
    if price is None:
        return None
    read = int(getattr(usage, "cache_read_tokens", 0) or 0)
    write = int(getattr(usage, "cache_write_tokens", 0) or 0)
    fresh = max(0, usage.input_tokens - read - write)
    read_rate, write_rate = cache_rates(model_id, price)
    return (fresh * price.input_per_mtok + read * read_rate + write * write_rate
            + usage.output_tokens * price.output_per_mtok) / 1e6
