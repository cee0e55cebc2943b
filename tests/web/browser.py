"""Headless Debian chromium driven by Playwright (its own browser download is never used), and the
web app served by a real uvicorn server on loopback in a background thread."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def missing_prerequisite() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if not Path(CHROMIUM).is_file():
        return f"no {CHROMIUM}; run scripts/browser_up.sh (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed; run scripts/browser_up.sh and make install"
    return None


@contextmanager
def serve(roots: list[Path], resamples: int = 200, poll_s: float = 0.2) -> Iterator[str]:
    """The app on a free loopback port; yields its base URL."""
    import uvicorn

    from orchestrator.web.app import create_app
    from orchestrator.web.catalog import Catalog

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server: uvicorn.Server | None = None
    app = create_app(Catalog(roots, resamples=resamples), poll_s=poll_s,
                     stopping=lambda: server is not None and server.should_exit)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def chromium() -> Iterator[object]:
    """A Playwright browser context of headless chromium with a fresh user-data-dir."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="kernelarena-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1440, "height": 900})
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def checked_page(context: object) -> Iterator[object]:
    """A new page of `context`; fails the test if a JavaScript error was thrown on it."""
    page = context.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
