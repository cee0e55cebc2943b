"""The harnesses by name: the built-ins, and outside ones registered under the entry-point group
``kernelarena.harnesses`` (loaded when first looked up)."""

from __future__ import annotations

from typing import Any

from harnesses.agent_cli import ClaudeCodeHarness, CodexHarness
from harnesses.base import Harness
from harnesses.external import ExternalCLIHarness
from harnesses.minimal import MinimalHarness
from kernelarena.errors import ConfigError
from kernelarena.registry import Registry

HARNESSES: Registry[type[Harness]] = Registry("harness", group="kernelarena.harnesses")
HARNESSES.register("minimal", lambda: MinimalHarness)
HARNESSES.register("external", lambda: ExternalCLIHarness)
HARNESSES.register("claude-code", lambda: ClaudeCodeHarness)
HARNESSES.register("codex", lambda: CodexHarness)


def get_harness(name: str, **options: Any) -> Harness:
    """Instantiate a registered harness; options are its constructor's keyword arguments."""
    cls = HARNESSES.get(name)
    try:
        return cls(**options)
    except TypeError as exc:  # a plug-in's constructor that does not take these options
        raise ConfigError(f"harness '{name}' does not take options {sorted(options)} ({exc}); check --harness-option") from None
