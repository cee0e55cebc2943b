"""USD per million tokens, per model id, so a budget can be set in dollars and runs report cost.

A model's price comes from a price file, else from its provider's registration
(``ModelProvider.prices``; the built-ins' figures are ILLUSTRATIVE DEFAULTS, not quotes), else
from the id a router's registration says it is priced as (``priced_as``). Price files are TOML,
named by ``KERNELARENA_PRICES`` or the ``prices_path`` option (later sources win)::

    [prices."openai:gpt-5.4"]
    input_per_mtok = 1.25
    output_per_mtok = 10.0
    cache_read_per_mtok = 0.125    # optional: cached input (OpenAI, Gemini) / cache reads (Anthropic)
    cache_write_per_mtok = 1.25    # optional: Anthropic's cache writes

Cached prompt tokens are priced at their own rates: a prompt served from the cache costs a
tenth or so of a fresh one, and Anthropic charges a premium for writing the cache. A missing
cache rate is the provider's registered ratio (``ModelProvider.cache_ratios``) to the input
rate. A model with no price at all still runs; its cost is unknown and budgets then skip dollars.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from harnesses.models.base import Usage
from harnesses.models.provider import ModelProvider, Price, find_provider
from kernelarena.errors import ConfigError

PRICES_ENV = "KERNELARENA_PRICES"

_FULL_PRICE = (1.0, 1.0)  # cached tokens of a provider nobody registered: at the input rate


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The price files' table by model id (``KERNELARENA_PRICES``, then ``path``); the providers'
    registered prices are not in it, ``price_of`` asks them."""
    prices: dict[str, Price] = {}
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


def _registration(model_id: str) -> tuple[ModelProvider | None, str]:
    prefix, _, name = model_id.partition(":")
    return find_provider(prefix), name


def _priced_as(model_id: str) -> str | None:
    provider, name = _registration(model_id)
    return provider.priced_as(name) if provider is not None and provider.priced_as else None


def _listed(model_id: str, table: dict[str, Price]) -> Price | None:
    if model_id in table:
        return table[model_id]
    provider, name = _registration(model_id)
    return provider.listed_price(name) if provider is not None else None


def price_of(model_id: str, prices: dict[str, Price] | None = None) -> Price | None:
    """The price files' entry, else the provider's registered price, else that of the id the
    provider says the model is priced as (one step, so no registration can loop). None: unknown."""
    table = prices if prices is not None else load_prices()
    listed = _listed(model_id, table)
    alias = _priced_as(model_id) if listed is None else None
    return _listed(alias, table) if alias else listed


def cache_rates(model_id: str, price: Price) -> tuple[float, float]:
    """(cache read, cache write) USD per million tokens for this model; a rate the price does not
    give is the registered ratio of the provider (of the id it is priced as, for a router)."""
    provider, _ = _registration(_priced_as(model_id) or model_id)
    read_ratio, write_ratio = provider.cache_ratios if provider is not None else _FULL_PRICE
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
