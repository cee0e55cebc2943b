"""Fixtures for the sandbox tests: a real Docker daemon (required in CI), host-side TCP
services for the network checks, and a short config."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest

from sandbox import SandboxConfig

DEFAULT_TAG = SandboxConfig().image


def _docker_problem() -> str | None:
    from sandbox.docker_client import daemon_answers

    if not daemon_answers():
        return "no Docker daemon answers (start one: bash scripts/docker_up.sh)"
    import docker

    client = docker.from_env()
    try:
        client.images.get(DEFAULT_TAG)
    except docker.errors.ImageNotFound:
        return f"image {DEFAULT_TAG} missing (build it: kernelarena sandbox build-image)"
    finally:
        client.close()
    return None


@pytest.fixture(scope="session")
def docker_ready() -> None:
    """Docker tests skip on a developer machine without a daemon, but in CI (CI set) a
    missing daemon or image is a failure: those tests must really run there."""
    problem = _docker_problem()
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but Docker is unusable: {problem}")
    pytest.skip(problem)


class TcpService:
    """Accepts connections and answers each with a fixed line, on a thread."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.sendall(b"hello-from-host\n")

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


@pytest.fixture
def tcp_service() -> Iterator[TcpService]:
    service = TcpService("0.0.0.0")
    yield service
    service.close()


def connect_probe(python: str, host: str, port: int) -> list[str]:
    """A command that prints the host service's greeting, or exits non-zero."""
    code = (
        "import socket\n"
        f"s = socket.create_connection(({host!r}, {port}), timeout=3)\n"
        "print(s.recv(100).decode().strip())\n"
    )
    return [python, "-c", code]


def small_config(**overrides) -> SandboxConfig:
    base = dict(memory="512m", pids=128, cpus=1, output_limit_bytes=100_000, workspace_size="256m")
    base.update(overrides)
    return SandboxConfig(**base)
