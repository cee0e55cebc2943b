"""Choosing a backend and opening a sandbox so that it is closed on every exit path."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import lru_cache

from kernelarena.logs import get_logger
from kernelarena.registry import Registry
from sandbox.base import Sandbox
from sandbox.config import SandboxConfig

log = get_logger("kernelarena.sandbox")

# A backend is anything that makes an unstarted sandbox from its config (in practice its class).
SandboxBackend = Callable[[SandboxConfig], Sandbox]
BACKENDS: Registry[SandboxBackend] = Registry("sandbox", group="kernelarena.sandboxes")


def _docker() -> SandboxBackend:
    from sandbox.docker_sandbox import DockerSandbox

    return DockerSandbox


def _process() -> SandboxBackend:
    from sandbox.process_sandbox import ProcessSandbox

    return ProcessSandbox


BACKENDS.register("docker", _docker, install_hint="pip install 'docker>=7'")
BACKENDS.register("process", _process)


@lru_cache(maxsize=1)
def _docker_answers() -> bool:
    from sandbox.docker_client import daemon_answers

    return daemon_answers()


def resolve_backend(backend: str) -> str:
    """'auto' becomes docker when a daemon answers (checked once per process), else process."""
    if backend != "auto":
        return backend
    chosen = "docker" if _docker_answers() else "process"
    log.debug("sandbox_backend_chosen", backend=chosen)
    return chosen


def create_sandbox(cfg: SandboxConfig) -> Sandbox:
    """An unstarted sandbox; prefer `open_sandbox`, which also guarantees `close()`."""
    return BACKENDS.get(resolve_backend(cfg.backend))(cfg)


@asynccontextmanager
async def open_sandbox(cfg: SandboxConfig) -> AsyncIterator[Sandbox]:
    """`async with open_sandbox(cfg) as sb:`; the sandbox is closed however the block ends
    (return, exception, cancellation by Ctrl-C or SIGTERM), also when start() half-succeeded."""
    sandbox = await asyncio.to_thread(create_sandbox, cfg)
    try:
        await sandbox.start()
        yield sandbox
    finally:
        await sandbox.close()


def prune_leaked(sweep: str | None = None) -> list[str]:
    """What an orchestrator calls at start: removes sandbox containers whose owner died (of
    one sweep, or all), returning their names; nothing to do where no daemon answers."""
    from sandbox.docker_client import daemon_answers, prune

    if not daemon_answers():
        return []
    return prune(sweep)
