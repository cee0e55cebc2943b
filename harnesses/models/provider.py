"""What a model provider registers, and the one registry that decides which id prefixes exist.

A provider is a ``ModelProvider``: how to build a client, which environment variables hold its
key, and what its tokens cost. The built-ins register in ``builtin_providers.py``; an outside
package registers one under the entry-point group ``kernelarena.models`` (the entry point's name
is the prefix), and spec validation, credential checks and pricing all ask this registry, so a
plug-in needs no edit anywhere else.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harnesses.models.base import ModelClient
from kernelarena.errors import UserError
from kernelarena.registry import Registry

GROUP = "kernelarena.models"

ModelFactory = Callable[..., ModelClient]
"""``create(name, task, **options) -> ModelClient``: ``name`` is the id without its prefix."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float | None = None
    """None: the provider's ``cache_ratios`` applied to the input rate."""
    cache_write_per_mtok: float | None = None


@dataclass(frozen=True)
class ModelProvider:
    """One provider's registration (the object its entry point names)."""

    create: ModelFactory
    """Builds a client; called as ``create(name, task, **options)``."""
    key_envs: Sequence[str] | Callable[[str], Sequence[str]] = ()
    """Variables that may hold the key, in order (the first one set is used), or a function of the
    model name giving them. Empty: the provider needs no key, and none is checked."""
    prices: Mapping[str, Price] | Callable[[str], Price | None] = field(default_factory=dict)
    """Price by model name (the id without its prefix), or a function of the name; a model
    without one costs nothing known (budgets then skip dollars). A price file overrides it."""
    cache_ratios: tuple[float, float] = (1.0, 1.0)
    """(cache read, cache write) as multiples of the input rate, for prices that give no cache
    rate of their own."""
    priced_as: Callable[[str], str | None] | None = None
    """For a router (LiteLLM): the model id whose price and cache ratios a model name takes when
    neither a price file nor ``prices`` lists it."""
    model_options: bool = False
    """True: ``create`` takes the options of ``ModelOptions`` (validated before it sees them) and
    needs no task, so a sweep builds each client once more to call ``check_access()`` before
    the first trial. False: ``create`` gets the options as the spec gives them."""

    def key_variables(self, name: str) -> list[str]:
        return list(self.key_envs(name) if callable(self.key_envs) else self.key_envs)

    def listed_price(self, name: str) -> Price | None:
        return self.prices(name) if callable(self.prices) else self.prices.get(name)


def lazy_create(module: str, install_hint: str = "") -> ModelFactory:
    """A factory that imports ``module`` (and so its SDK) only when the first client is built;
    a missing SDK is a one-line error naming what to install."""

    def create(name: str, task: Any = None, **options: Any) -> ModelClient:
        try:
            factory = importlib.import_module(module).create
        except ImportError as exc:
            raise UserError(
                f"model provider module {module} needs a package that is not installed ({exc.name}); "
                f"{install_hint or 'install it with pip'}"
            ) from None
        return factory(name, task, **options)

    return create


PROVIDERS: Registry[ModelProvider | ModelFactory] = Registry("model", group=GROUP)


def known_prefixes() -> list[str]:
    """Every prefix a model id may have: the built-ins and the installed plug-ins."""
    return PROVIDERS.names()


def unknown_prefix_message(prefix: str, model_id: str = "") -> str:
    where = f" in '{model_id}'" if model_id else ""
    return (f"unknown model prefix '{prefix}:'{where}; known: {', '.join(p + ':' for p in known_prefixes())} "
            f"(a provider plug-in is a package registering its prefix under the entry-point group "
            f"'{GROUP}': pip install it)")


# Registrations already looked up: pricing asks on every model turn, and scanning the installed
# distributions' entry points takes a good fraction of a second in a large environment.
_FOUND: dict[str, ModelProvider] = {}


def find_provider(prefix: str) -> ModelProvider | None:
    """The registration behind ``prefix``, or None; a bare factory registered under the group
    counts as a provider that needs no key and lists no prices."""
    if prefix not in _FOUND:
        if prefix not in PROVIDERS:
            return None
        found = PROVIDERS.get(prefix)
        _FOUND[prefix] = found if isinstance(found, ModelProvider) else ModelProvider(create=found)
    return _FOUND[prefix]


def provider_of(prefix: str) -> ModelProvider:
    """``find_provider``, with a UserError naming the known prefixes for an unknown one."""
    provider = find_provider(prefix)
    if provider is None:
        raise UserError(unknown_prefix_message(prefix))
    return provider
