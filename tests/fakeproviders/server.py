"""The shared machinery of the fake providers: an aiohttp server on 127.0.0.1 in its own thread.

Subclasses supply the wire format (routes, auth header, error JSON, reply JSON, request
checks). The thread makes a server usable from sync tests, async tests, and around a CLI run
in a subprocess alike.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakeproviders.script import Failure, Failures, Reply, Script, failure_for, pick_reply


@dataclass
class RecordedRequest:
    number: int  # 1-based, server-wide
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON


FAULT = web.RequestKey("fault", Failure)
"""A wire fault for this request's reply, set by `handle`."""


class ProviderError(Exception):
    """Raised by a subclass's checks: answer with this status in the provider's error format."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class FakeProviderServer:
    provider = "fake"

    def __init__(
        self,
        script: Script = (),
        *,
        failures: Failures = None,
        api_key: str | None = "test-key",
        delay_s: float = 0.0,
        known_models: set[str] | None = None,
    ) -> None:
        self.script = script
        self.failures = failures
        self.api_key = api_key  # None: accept any key
        self.delay_s = delay_s  # every answer waits this long: a slow model
        self.known_models = known_models  # None: any model name is served
        self.requests: list[RecordedRequest] = []
        self.model_lists: list[str] = []
        """The key (or auth header) each model-list request presented."""
        self.served: list[tuple[str, int, int]] = []
        """(model, input tokens, output tokens) of every reply sent: the fake's own count."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- to be provided by each protocol ------------------------------------------------------
    def routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    def presented_key(self, request: web.Request) -> str | None:
        raise NotImplementedError

    def error_response(self, status: int, message: str | None, retry_after: float | None = None) -> web.Response:
        raise NotImplementedError

    def turn_index(self, body: Any) -> int:
        raise NotImplementedError

    def check_request(self, request: RecordedRequest, model: str) -> None:
        """Raise ProviderError(400, ...) where the real API would reject the request."""

    def render(self, reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
        raise NotImplementedError

    def tokens_of(self, payload: dict[str, Any]) -> tuple[int, int]:
        """(input, output) tokens a rendered reply reports."""
        raise NotImplementedError

    async def stream(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        """Send a rendered reply as the provider's server-sent events (bodies with stream: true)."""
        raise ProviderError(400, f"the fake {self.provider} server does not stream")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> FakeProviderServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeProviderServer:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())  # type: ignore[union-attr]
            # Handlers still stalling (Failure.slow) are cancelled, not left to warn at close.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=serve, name=f"fake-{self.provider}", daemon=True)
        self._thread.start()
        ready.wait(timeout=10)
        if errors:
            raise errors[0]

    async def _start_site(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(self.routes())
        # A short shutdown: a stalled handler must not hold up the end of a test.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop = None
        self._thread = None

    # -- request handling ---------------------------------------------------------------------
    async def _record(self, request: web.Request) -> RecordedRequest:
        text = await request.text()
        try:
            body: Any = json.loads(text) if text else None
        except json.JSONDecodeError:
            body = text
        with self._lock:
            recorded = RecordedRequest(
                number=len(self.requests) + 1,
                method=request.method,
                path=request.path,
                headers=dict(request.headers),
                body=body,
            )
            self.requests.append(recorded)
        return recorded

    async def handle(self, request: web.Request, model: str) -> web.StreamResponse:
        recorded = await self._record(request)
        failure: Failure | None = failure_for(self.failures, recorded.number)
        if failure is not None:
            if failure.stall_s:
                await asyncio.sleep(failure.stall_s)
            if failure.drop:
                request.transport.close()  # type: ignore[union-attr]
                # The socket is gone: stop aiohttp from writing a response onto it.
                raise asyncio.CancelledError()
            if not failure.answer_after_stall and not failure.on_the_wire:
                return self.error_response(failure.status, failure.message, failure.retry_after)
            if failure.on_the_wire:
                request[FAULT] = failure  # read by send_events / send_json
        if self.api_key is not None and self.presented_key(request) != self.api_key:
            return self.auth_failure()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.known_models is not None and model not in self.known_models:
            return self.error_response(404, self.model_not_found(model))
        try:
            if not isinstance(recorded.body, dict):
                raise ProviderError(400, "request body must be a JSON object")
            self.check_request(recorded, model)
        except ProviderError as exc:
            return self.error_response(exc.status, exc.message)
        reply = pick_reply(self.script, recorded, self.turn_index(recorded.body))
        payload = self.render(reply, recorded, model)
        with self._lock:
            self.served.append((model, *self.tokens_of(payload)))
        if recorded.body.get("stream"):
            try:
                return await self.stream(request, payload)
            except ProviderError as exc:
                return self.error_response(exc.status, exc.message)
        return await self.send_json(request, payload)

    @staticmethod
    async def send_json(request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        data = json.dumps(payload).encode()
        fault: Failure | None = request.get(FAULT)
        if fault is None:
            return web.json_response(payload)
        if fault.malformed:
            return web.Response(body=data[: len(data) // 2], content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = len(data)
        await response.prepare(request)
        await response.write(data[: len(data) // 2])
        await _spoil(request, fault)
        try:
            await response.write(data[len(data) // 2:])
            await response.write_eof()
        except ConnectionError:  # the client gave up waiting: the point of the stall
            pass
        return response

    @staticmethod
    async def send_events(request: web.Request, events: list[tuple[str | None, dict[str, Any] | str]]) -> web.StreamResponse:
        """``text/event-stream`` of (event name or None, data) pairs, one write each; a str
        data (OpenAI's ``[DONE]``) is sent as it is."""
        fault: Failure | None = request.get(FAULT)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        try:
            for n, (name, data) in enumerate(events):
                head = f"event: {name}\n" if name else ""
                text = data if isinstance(data, str) else json.dumps(data)
                if fault is not None and fault.malformed:
                    text = text[: len(text) // 2]
                await response.write(f"{head}data: {text}\n\n".encode())
                if n == 0 and fault is not None and not fault.malformed:
                    await _spoil(request, fault)
            await response.write_eof()
        except ConnectionError:  # the client gave up during a stall
            pass
        return response

    def auth_failure(self) -> web.Response:
        return self.error_response(401, None)

    def models_listing(self, names: list[str]) -> dict[str, Any]:
        """The provider's answer to a model list (what a credentials check asks for)."""
        raise NotImplementedError

    async def list_models(self, request: web.Request) -> web.Response:
        # Kept apart from `requests`, whose numbers the injected failures count: a credentials
        # check before a sweep must not shift a test's failure script.
        self.model_lists.append(request.headers.get("Authorization", "") or self.presented_key(request) or "")
        if self.api_key is not None and self.presented_key(request) != self.api_key:
            return self.auth_failure()
        return web.json_response(self.models_listing(sorted(self.known_models or {f"{self.provider}-fake"})))

    def model_not_found(self, model: str) -> str:
        return f"model {model} not found"

    @staticmethod
    def input_estimate(reply: Reply, body: Any) -> int:
        if reply.input_tokens is not None:
            return reply.input_tokens
        return len(json.dumps(body)) // 4 + 1


async def _spoil(request: web.Request, fault: Failure) -> None:
    """After the first event (or half the body): stall, or break the connection off."""
    if fault.hang_mid_s:
        await asyncio.sleep(fault.hang_mid_s)
    if fault.cut_after_first:
        request.transport.close()  # type: ignore[union-attr]
        raise asyncio.CancelledError()
