"""Building the default sandbox image offline (sandbox/image/build_offline.sh)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import docker.errors

from kernelarena.errors import UserError
from kernelarena.logs import get_logger
from sandbox.docker_client import connect

log = get_logger("kernelarena.sandbox")

DEFAULT_TAG = "kernelarena-sandbox:latest"
#: The sandbox image plus the agent CLIs (harnesses claude-code and codex).
AGENTS_TAG = "kernelarena-agents:latest"
AGENT_CLIS = ("claude-code", "codex")
BUILD_SCRIPT = Path(__file__).resolve().parent / "image" / "build_offline.sh"
AGENTS_SCRIPT = Path(__file__).resolve().parent / "image" / "build_agents.sh"


def recipe_hash() -> str:
    """What build_offline.sh stamps into the image as label kernelarena.recipe."""
    return hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()[:16]


def image_recipe(tag: str) -> str | None:
    """The recipe label of an existing image, '' when it has none, None when it is absent."""
    client = connect()
    try:
        labels = client.images.get(tag).labels or {}
    except docker.errors.ImageNotFound:
        return None
    finally:
        client.close()
    return labels.get("kernelarena.recipe", "")


def build_image(*, force: bool = False, tag: str = DEFAULT_TAG) -> None:
    """Runs the offline build (a no-op when `tag` exists and not `force`); its progress goes
    to stderr. Raises UserError with the script's last words when it fails."""
    existing = None if force else image_recipe(tag)
    if existing is not None and existing == recipe_hash():
        log.info("sandbox_image_present", tag=tag)
        return
    if existing is not None:
        # Built by another recipe: the script rebuilds it from the cached rootfs.
        log.info("sandbox_image_outdated", tag=tag)
    _run_script(["bash", str(BUILD_SCRIPT), "--tag", tag] + (["--force"] if force else []), tag)


def build_agents_image(clis: list[str], *, force: bool = False, tag: str = AGENTS_TAG, base: str = DEFAULT_TAG) -> None:
    """The agents image (build_agents.sh): `base` plus the pinned CLIs; a no-op when it exists
    with the same recipe, CLIs and base image."""
    unknown = sorted(set(clis) - set(AGENT_CLIS))
    if unknown or not clis:
        raise UserError(f"--with takes a comma-separated list of {', '.join(AGENT_CLIS)} (got {', '.join(unknown) or 'nothing'})")
    chosen = ",".join(c for c in AGENT_CLIS if c in clis)
    argv = ["bash", str(AGENTS_SCRIPT), "--tag", tag, "--base", base, "--with", chosen] + (["--force"] if force else [])
    _run_script(argv, tag)


def _run_script(argv: list[str], tag: str) -> None:
    last = ""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            last = line.strip().removeprefix("build_offline: ").removeprefix("build_agents: ") or last
            log.info("build_image", step=last)
    if proc.returncode != 0:
        raise UserError(f"building {tag} failed: {last or f'exit {proc.returncode}'}")
