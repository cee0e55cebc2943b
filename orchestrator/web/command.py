"""The `serve` command: the web app on a local port over the given sweep folders (default `runs/`)."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from typing import Annotated

import typer

from kernelarena.errors import UserError

WEB_PACKAGES = ("starlette", "uvicorn", "plotly")


def require_web_extra() -> None:
    missing = [name for name in WEB_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(f"`kernelarena serve` needs {', '.join(missing)}; install them with: pip install 'kernelarena[web]'")


def serve(
    sweeps: Annotated[list[Path] | None, typer.Argument(help="Sweep folders, or folders of them (default: runs/).")] = None,
    host: Annotated[str, typer.Option(
        "--host", help="Address to listen on (loopback by default: the app has no login).",
    )] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    resamples: Annotated[int, typer.Option(
        "--bootstrap", help="Bootstrap resamples for the 95% intervals and rank confidences (0: none).",
    )] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap's random draws.")] = 0,
) -> None:
    """Live leaderboard, per-kernel pages, transcripts and plots of sweeps, in the browser."""
    require_web_extra()
    import uvicorn

    from orchestrator.web.app import create_app
    from orchestrator.web.catalog import Catalog

    roots = sweeps or [Path("runs")]
    for root in roots:
        if not root.is_dir():
            raise UserError(f"{root} is not a folder; pass sweep folders (or runs/) written by `kernelarena sweep`")
    if resamples < 0:
        raise UserError(f"--bootstrap must be 0 (no intervals) or a positive number of resamples, not {resamples}")
    # Bound here rather than by uvicorn, which would log a port in use and exit 1 with no hint.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port or --host") from None
    server: uvicorn.Server | None = None
    app = create_app(Catalog(roots, resamples=resamples, seed=seed),
                     stopping=lambda: server is not None and server.should_exit)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    typer.echo(f"KernelArena: http://{host}:{port}/ ({', '.join(map(str, roots))}); Ctrl-C stops")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
