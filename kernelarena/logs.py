"""structlog set-up: JSON lines to a file in the sweep folder, short human lines to stderr."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import structlog


def configure(json_path: Path | None = None, level: str = "INFO", console_level: str | None = None) -> None:
    """Idempotent; call once per process from the CLI (never at import time). ``console_level``
    lets the terminal show less than the JSON file (a sweep keeps INFO in its log only)."""
    handlers: list[logging.Handler] = []
    console = logging.StreamHandler(sys.stderr)
    if console_level is not None:
        console.setLevel(console_level)
    console.setFormatter(
        structlog.stdlib.ProcessorFormatter(processor=structlog.dev.ConsoleRenderer(colors=False))
    )
    handlers.append(console)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(json_path, encoding="utf-8")
        fh.setFormatter(
            structlog.stdlib.ProcessorFormatter(processor=structlog.processors.JSONRenderer())
        )
        handlers.append(fh)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "kernelarena"):
    return structlog.get_logger(name)
