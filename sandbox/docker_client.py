"""Docker daemon access shared by the docker backend, `sandbox prune` and `build-image`:
connecting, the labels every sandbox container carries, and pruning what a crash leaked."""

from __future__ import annotations

import os
import socket
from typing import cast

import docker
import docker.errors
import requests.exceptions

from kernelarena.logs import get_logger
from sandbox.base import SandboxSetupError

log = get_logger("kernelarena.sandbox")

MANAGED = "kernelarena.managed"
SWEEP = "kernelarena.sweep"
TRIAL = "kernelarena.trial"
SANDBOX_ID = "kernelarena.sandbox"
OWNER = "kernelarena.owner"  # "<hostname>:<pid>" of the process that opened the sandbox

CONNECT_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


def connect(timeout_s: float = 120) -> docker.DockerClient:
    """A client for the daemon DOCKER_HOST names (or the default socket); raises a setup
    error naming the fix when none answers."""
    try:
        client = docker.from_env(timeout=int(timeout_s))
        client.ping()
    except CONNECT_ERRORS as exc:
        raise SandboxSetupError(
            f"no Docker daemon answers ({short_error(exc)}); start one (as root: bash scripts/docker_up.sh) "
            "or use --backend process"
        ) from None
    return client


def daemon_answers(timeout_s: float = 3) -> bool:
    try:
        client = docker.from_env(timeout=int(max(timeout_s, 1)))
    except CONNECT_ERRORS:
        return False
    try:
        return bool(client.ping())
    except CONNECT_ERRORS:
        return False
    finally:
        client.close()


def owner_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str) -> bool:
    """True when the owner is a live process on this host; owners on another host count as
    alive (their liveness cannot be seen from here)."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prune(sweep: str | None = None, *, include_live: bool = False) -> list[str]:
    """Remove sandbox containers left behind, returning their names.

    By default only containers whose owning process has died are removed, so pruning at the
    start of one sweep never pulls the sandboxes from under a sweep running beside it;
    `include_live` removes every matching container.
    """
    client = connect()
    filters: dict[str, str | list[str] | bool] = {"label": [f"{MANAGED}=1"] + ([f"{SWEEP}={sweep}"] if sweep else [])}
    removed: list[str] = []
    try:
        for container in client.containers.list(all=True, filters=filters, ignore_removed=True):
            owner = container.labels.get(OWNER, "")
            if not include_live and owner and _owner_alive(owner):
                continue
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as exc:
                log.warning("prune_failed", container=container.name, error=short_error(exc))
                continue
            # list() inspects every container it returns, so Name is set (the stubs say optional).
            removed.append(cast(str, container.name))
            log.info("pruned", container=container.name, owner=owner, labels=container.labels)
    finally:
        client.close()
    return removed


def short_error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
