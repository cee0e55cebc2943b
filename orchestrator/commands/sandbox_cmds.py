"""`kernelarena sandbox run|prune|build-image|info`: the sandbox layer from the command line."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from kernelarena.errors import UserError
from kernelarena.logs import configure
from sandbox import SandboxConfig, SandboxError, open_sandbox, resolve_backend
from sandbox.cancel import Interrupted, run_cancellable
from sandbox.config import parse_gpus
from sandbox.image import AGENTS_TAG, DEFAULT_TAG, build_agents_image, build_image

sandbox_app = typer.Typer(
    help="Run a command in a fresh sandbox, build the sandbox image, remove leaked containers.",
    no_args_is_help=True,
)

BackendOpt = typer.Option("auto", "--backend", help="docker, process, or auto (docker when a daemon answers).")
GpusOpt = typer.Option("none", "--gpus", help="all, none, or device ids like 0,1.")


def _config(backend: str, gpus: str, image: str, memory: str, network: bool) -> SandboxConfig:
    if backend not in ("auto", "docker", "process"):
        raise UserError(f"--backend '{backend}' is not one of auto, docker, process")
    try:
        return SandboxConfig.model_validate(dict(backend=backend, gpus=parse_gpus(gpus), image=image, memory=memory,
                                                 network=network))
    except ValueError as exc:
        first = str(exc).splitlines()
        raise UserError(f"bad sandbox option: {first[-1].strip() if first else exc}") from None


@sandbox_app.command(
    "run",
    context_settings={"allow_interspersed_args": False},
    help="Run CMD in a fresh sandbox (removed afterwards); prints its output and exits with its exit code. "
         "Put `--` before CMD.",
)
def run_cmd(
    cmd: Annotated[list[str], typer.Argument(help="The command and its arguments.")],
    backend: str = BackendOpt,
    gpus: str = GpusOpt,
    image: str = typer.Option(DEFAULT_TAG, "--image", help="Docker image."),
    memory: str = typer.Option("4g", "--memory", help="Memory limit, e.g. 512m, 4g."),
    timeout: float = typer.Option(600, "--timeout", help="Seconds before the command is killed."),
    network: bool = typer.Option(False, "--network", help="Allow network access from inside."),
    shell: bool = typer.Option(False, "--shell", help="Run CMD as one bash command line."),
) -> None:
    configure(level="WARNING")
    cfg = _config(backend, gpus, image, memory, network)

    async def go():
        async with open_sandbox(cfg) as sb:
            return await sb.exec(" ".join(cmd) if shell else list(cmd), timeout=timeout)

    try:
        result = run_cancellable(go())
    except Interrupted as exc:
        print(f"kernelarena: {exc}; sandbox removed", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    except SandboxError as exc:
        if isinstance(exc, UserError):
            raise
        print(f"error: sandbox failed: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    sys.stdout.write(result.stdout)
    sys.stdout.flush()
    sys.stderr.write(result.stderr)
    if result.ended_by != "exit":
        print(f"kernelarena: command ended by {result.ended_by} after {result.duration_s:.1f}s "
              f"(exit code {result.exit_code})", file=sys.stderr)
    raise typer.Exit(min(max(result.exit_code, 0), 255))


@sandbox_app.command("prune", help="Remove sandbox containers whose owning process has died.")
def prune_cmd(
    sweep: str | None = typer.Option(None, "--sweep", help="Only containers of this sweep id."),
    include_live: bool = typer.Option(False, "--all", help="Also containers of processes still running."),
) -> None:
    configure(level="WARNING")
    from sandbox.docker_client import prune

    removed = prune(sweep, include_live=include_live)
    print(f"removed {len(removed)} sandbox container(s)" + (f": {', '.join(removed)}" if removed else ""))


@sandbox_app.command("build-image", help="Build the sandbox image offline (debootstrap + host pip); "
                                         "a no-op when it exists. --with adds agent CLIs in a second image.")
def build_image_cmd(
    force: bool = typer.Option(False, "--force", help="Rebuild even if the image exists."),
    tag: str = typer.Option(DEFAULT_TAG, "--tag", help="Image tag to build."),
    with_clis: str = typer.Option("", "--with", help=f"Also build {AGENTS_TAG} with these CLIs: claude-code,codex."),
) -> None:
    configure(level="INFO")
    build_image(force=force, tag=tag)
    if with_clis:
        build_agents_image([c.strip() for c in with_clis.split(",") if c.strip()], force=force, base=tag)


@sandbox_app.command("info", help="Show which backend `auto` picks and what it enforces here.")
def info_cmd(backend: str = BackendOpt, gpus: str = GpusOpt) -> None:
    configure(level="WARNING")
    cfg = _config(backend, gpus, DEFAULT_TAG, "4g", False)

    async def go():
        async with open_sandbox(cfg) as sb:
            return sb.info.to_dict()

    print(json.dumps({"backend": resolve_backend(cfg.backend), **run_cancellable(go())}, indent=2))


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
