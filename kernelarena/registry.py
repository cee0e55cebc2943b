"""One registry mechanism for every plug-in kind (models, harnesses, sandboxes).

Built-ins register by name in code; outside packages register through the entry-point group
``kernelarena.<kind>`` and are loaded only when first looked up, so an optional SDK is
imported only when its plug-in is used.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from kernelarena.errors import UserError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group or f"kernelarena.{kind}"
        self._factories: dict[str, Callable[[], T]] = {}
        self._hints: dict[str, str] = {}

    def register(self, name: str, loader: Callable[[], T], install_hint: str = "") -> None:
        """``loader`` returns the plug-in (a class or factory); it runs on first lookup."""
        self._factories[name] = loader
        if install_hint:
            self._hints[name] = install_hint

    def __contains__(self, name: str) -> bool:
        return name in self._factories or any(ep.name == name for ep in entry_points(group=self.group))

    def names(self) -> list[str]:
        found = set(self._factories)
        found.update(ep.name for ep in entry_points(group=self.group))
        return sorted(found)

    def get(self, name: str) -> T:
        if name in self._factories:
            try:
                return self._factories[name]()
            except ImportError as exc:
                hint = self._hints.get(name, "")
                raise UserError(
                    f"{self.kind} '{name}' needs a package that is not installed ({exc.name}); "
                    f"{hint or 'install it with pip'}"
                ) from None
        for ep in entry_points(group=self.group):
            if ep.name == name:
                try:
                    return ep.load()
                except ImportError as exc:
                    raise UserError(
                        f"{self.kind} '{name}' (entry point {ep.value} of {ep.dist.name if ep.dist else 'a package'}) "
                        f"does not import: {exc}; reinstall that package or its dependencies"
                    ) from None
        raise UserError(
            f"unknown {self.kind} '{name}'; known: {', '.join(self.names()) or 'none'} "
            f"(third-party {self.kind}s register under the entry-point group '{self.group}')"
        )
