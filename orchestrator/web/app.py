"""The `kernelarena serve` web app: a JSON API over the sweep folders plus a static single-page
front end (plain HTML/JS/CSS in `static/`, Plotly's own bundle served from the installed `plotly`
package: no build step, nothing fetched from another host).

Live updates: `/api/events` is a server-sent event stream that sends the catalog's version (a
digest of every index.json's mtime and size) whenever it changes; the page then re-reads what it
shows. A sweep rewrites index.json atomically after every trial, so that is the moment to look.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from html import escape
from pathlib import Path
from urllib.parse import quote

import plotly
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kernelarena.errors import UserError
from orchestrator.leaderboard import CPU_NOTE, SUMMARY_COLUMNS, column_help, method_note
from orchestrator.sweep import STAGING_DIR
from orchestrator.trial_files import TRANSCRIPT_FILE
from orchestrator.web.catalog import RAW_FILES, Catalog, NotFound
from orchestrator.web.transcripts import TranscriptPager

STATIC = Path(__file__).parent / "static"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
POLL_S = 0.5
"""How often the event stream looks at the index files (a stat per sweep)."""
KEEPALIVE_S = 15.0


def staged_transcript(sweep_dir: Path, trial_id: str) -> Path | None:
    """A running trial writes into `.staging/<folder>-<attempt>/` until it is moved in place; its
    transcript is the one whose first event names the trial (the latest attempt's, if several)."""
    found = []
    for path in (sweep_dir / STAGING_DIR).glob(f"*/{TRANSCRIPT_FILE}"):
        try:
            with path.open(encoding="utf-8") as fh:
                first = json.loads(fh.readline() or "{}")
        except (OSError, ValueError):
            continue
        if (first.get("payload") or {}).get("trial_id") == trial_id:
            found.append(path)
    return max(found, key=lambda p: p.stat().st_mtime_ns, default=None)


def _json(data: object) -> JSONResponse:
    return JSONResponse(data, headers={"Cache-Control": "no-store"})


_ABS_PATH = re.compile(r"(?<![\w.:])/(?:[\w.+@-]+/)+([\w.+@-]+)")


def public_message(text: str) -> str:
    """An error as a browser may see it: a folder path on the server becomes its last part (a
    reader needs the file's name, not where the server keeps its runs)."""
    return _ABS_PATH.sub(r"\1", text)


def _error(exc: UserError) -> JSONResponse:
    return JSONResponse({"error": public_message(str(exc))}, status_code=404 if isinstance(exc, NotFound) else 400)


def _with_caveat(data: dict) -> dict:
    """A page of a CPU-scored board carries the board's caveat too (its speedups say nothing about a GPU)."""
    return {**data, "cpu_note": CPU_NOTE if data.get("hardware") == "CPU" else None}


def not_found_page(path: str, sweeps: dict[str, list[str]]) -> str:
    """A bad address: what the app serves and which boards exist, as links."""
    boards = "".join(f'<li><a href="/#/board/{quote(s, safe="")}/{quote(su, safe="")}">{escape(s)} / {escape(su)}</a></li>'
                     for s, suites in sweeps.items() for su in suites) or "<li>no sweeps yet</li>"
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Not found · KernelArena</title><link rel="stylesheet" href="/static/app.css"></head>'
            '<body><main class="view">'
            f'<div class="card notfound" id="not-found"><h1>Not found</h1><p>There is no page <code>{escape(path)}</code>. '
            'The app serves the leaderboards at <a href="/">/</a> (every page is an address after <code>#/</code>) '
            'and its JSON under <code>/api/</code>.</p>'
            f'<h2>Boards</h2><ul id="boards">{boards}</ul></div></main></body></html>')


def create_app(catalog: Catalog, poll_s: float = POLL_S, stopping: Callable[[], bool] = lambda: False) -> Starlette:
    """`stopping`: true once the server shuts down; event streams then end, so that Ctrl-C does not
    wait on browsers that keep them open."""
    pager = TranscriptPager()

    async def sweeps(_: Request) -> Response:
        return _json({"version": catalog.version(), "sweeps": await asyncio.to_thread(catalog.summary)})

    async def board(request: Request) -> Response:
        sweep, suite = request.path_params["sweep"], request.path_params["suite"]
        try:
            lb, entry = await asyncio.to_thread(catalog.board, sweep, suite)
        except UserError as exc:
            return _error(exc)
        index = entry.index
        counts: dict[str, int] = {"pending": 0, "running": 0, "done": 0, "failed": 0}
        for t in index.trials:
            if t.suite == suite:
                counts[t.state] += 1
        return _json({"sweep": sweep, "suite": suite, "hardware": entry.hardware, "harness": index.harness,
                      "updated_at": index.updated_at, "counts": counts, "board": lb.model_dump(mode="json"),
                      "method_note": method_note(lb.method), "cpu_note": CPU_NOTE,
                      "column_help": {c: column_help(c, lb.method) for c in SUMMARY_COLUMNS}})

    async def kernel(request: Request) -> Response:
        p = request.path_params
        try:
            return _json(_with_caveat(await asyncio.to_thread(catalog.kernel, p["sweep"], p["suite"], p["task"])))
        except UserError as exc:
            return _error(exc)

    async def compare(request: Request) -> Response:
        p, q = request.path_params, request.query_params
        try:
            compared = await asyncio.to_thread(catalog.compare, p["sweep"], p["suite"], q.get("a", ""), q.get("b", ""))
            return _json(_with_caveat(compared))
        except UserError as exc:
            return _error(exc)

    async def plots(request: Request) -> Response:
        p = request.path_params
        try:
            return _json(await asyncio.to_thread(catalog.plots, p["sweep"], p["suite"]))
        except UserError as exc:
            return _error(exc)

    def _transcript_path(request: Request) -> tuple[Path, dict]:
        sweep, trial = request.query_params.get("sweep", ""), request.query_params.get("trial", "")
        index = catalog.index(sweep)
        row = next((t for t in index.trials if t.trial_id == trial), None)
        if row is None:
            raise NotFound(f"sweep '{sweep}' has no trial '{trial}'")
        sweep_dir = catalog.sweeps()[sweep]
        path = sweep_dir / row.rel_dir / TRANSCRIPT_FILE
        if row.state == "running" or not path.is_file():
            path = staged_transcript(sweep_dir, trial) or path
        if not path.is_file():
            raise NotFound(f"trial '{trial}' has no transcript yet (state {row.state})")
        return path, row.model_dump(mode="json")

    async def transcript(request: Request) -> Response:
        q = request.query_params
        try:
            path, row = await asyncio.to_thread(_transcript_path, request)
            offset, limit = int(q.get("offset", "0")), int(q.get("limit", "200"))
        except UserError as exc:
            return _error(exc)
        except ValueError:
            return JSONResponse({"error": "offset and limit must be integers"}, status_code=400)
        types = {t for t in q.get("types", "").split(",") if t} or None
        page = await asyncio.to_thread(pager.page, path, offset, limit, types)
        if q.get("summary") == "1":
            page["summary"] = await asyncio.to_thread(pager.summary, path)
            page["trial"] = row
        return _json(page)

    def _trial_file(request: Request) -> Path:
        sweep, trial, name = (request.query_params.get(k, "") for k in ("sweep", "trial", "name"))
        if name not in RAW_FILES:
            raise NotFound(f"no file '{name}': one of {', '.join(RAW_FILES)}")
        index = catalog.index(sweep)
        row = next((t for t in index.trials if t.trial_id == trial), None)
        if row is None:
            raise NotFound(f"sweep '{sweep}' has no trial '{trial}'")
        path = catalog.sweeps()[sweep] / row.rel_dir / name
        if not path.is_file():
            raise NotFound(f"trial '{trial}' has no {name}")
        return path

    async def trial_file(request: Request) -> Response:
        """A trial's kernel.py, score.json or transcript.jsonl, as plain text."""
        try:
            path = await asyncio.to_thread(_trial_file, request)
        except UserError as exc:
            return _error(exc)
        return FileResponse(path, media_type="text/plain; charset=utf-8", headers={"Cache-Control": "no-store"})

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            last = None
            idle = 0.0
            while not stopping() and not await request.is_disconnected():
                version = await asyncio.to_thread(catalog.version)
                if version != last:
                    last = version
                    idle = 0.0
                    yield f"event: version\ndata: {version}\n\n"
                elif idle >= KEEPALIVE_S:
                    idle = 0.0
                    yield ": keep-alive\n\n"
                await asyncio.sleep(poll_s)
                idle += poll_s

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def plotly_js(_: Request) -> Response:
        return FileResponse(PLOTLY_JS, media_type="application/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    async def home(_: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    def _boards() -> dict[str, list[str]]:
        boards = {}
        for sid in catalog.sweeps():
            try:
                boards[sid] = list(dict.fromkeys(t.suite for t in catalog.index(sid).trials))
            except UserError:
                continue
        return boards

    async def not_found(request: Request) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": f"no API route {request.url.path}; see /api/sweeps"}, status_code=404)
        return HTMLResponse(not_found_page(request.url.path, await asyncio.to_thread(_boards)), status_code=404)

    return Starlette(routes=[
        Route("/", home),
        Route("/api/sweeps", sweeps),
        Route("/api/board/{sweep}/{suite}", board),
        Route("/api/kernel/{sweep}/{suite}/{task}", kernel),
        Route("/api/plots/{sweep}/{suite}", plots),
        Route("/api/compare/{sweep}/{suite}", compare),
        Route("/api/transcript", transcript),
        Route("/api/file", trial_file),
        Route("/api/events", events),
        Route("/vendor/plotly.min.js", plotly_js),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/{rest:path}", not_found),
    ])
