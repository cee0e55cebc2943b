"""The model proxy: the one door between an agent CLI in its sandbox and the model provider.

It listens on a unix socket (bind-mounted into the `--network none` container, where a small
forwarder puts it on loopback), checks the per-trial dummy token the CLI was given, and
forwards to the real provider with the real key, which never enters the container. Around each
model turn it does what the `minimal` loop does around `ModelClient.complete`:

- `Budget.check()` before forwarding, `Budget.record_turn()` with the provider's usage after;
  a budget that is spent refuses the request and sets `exit`, which tells the harness to cut
  the CLI off;
- the one retry policy (harnesses.models.retry) for 429/5xx/transport failures before the reply
  starts; a provider that still fails ends the trial like `ModelFailed`. A status that cannot
  heal (400, 404, 413; 401/403 as `CredentialsRejected`) ends it at once, with the provider's
  own error text, so the CLI does not retry it for minutes. A reply that breaks off after it
  started cannot be retried here: the CLI's connection is cut too, the CLI asks again, and
  after `max_retries` broken replies in a row the trial ends;
- on close, turns still waiting on the provider are cancelled and recorded as abandoned;
- `model_request` / `model_response` events (and `retry`, `budget`, `error`) in the transcript.
  Requests repeat the whole conversation each turn: only the messages new since the previous
  request are recorded (`first_index`), and system prompt and tools only when they change.

Replies are relayed as they arrive (server-sent events included) while `wire.ReplyAssembler`
reads them. Other calls (count_tokens, model lists) are forwarded and noted as harness events.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from harnesses.budget import Budget
from harnesses.exits import BudgetExhausted, LoopExit, ModelFailed, model_failure
from harnesses.models.base import ModelError, ModelOptions
from harnesses.models.retry import call_with_retries, credentials_refused, retryable_status
from harnesses.proxy.wire import ANTHROPIC, ReplyAssembler, RequestView, protocol_of, view_request
from harnesses.transcript import Transcript
from kernelarena.logs import get_logger

log = get_logger("kernelarena.proxy")

# Hop-by-hop headers, the client's credentials and what httpx sets itself never travel on.
_DROP_REQUEST = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "x-api-key",
                 "authorization", "accept-encoding", "proxy-authorization", "te", "upgrade"}
# The body is relayed decoded, so its encoding and length headers no longer apply.
_DROP_RESPONSE = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}


class UpstreamStatus(Exception):
    """A retryable HTTP status from the provider; `classify` reads status_code and response."""

    def __init__(self, response: httpx.Response, body: bytes) -> None:
        self.status_code = response.status_code
        self.response = response
        try:
            self.body: Any = json.loads(body)
        except ValueError:
            self.body = None
        self.message = body.decode("utf-8", errors="replace")[:500] or f"HTTP {response.status_code}"
        super().__init__(self.message)


class ModelProxy:
    """One trial's proxy; `async with` it, or start()/close()."""

    def __init__(
        self, *, socket_path: Path, upstream: str, provider: str, api_key: str, token: str,
        budget: Budget, transcript: Transcript, options: ModelOptions, strip_prefix: str = "",
    ) -> None:
        self.socket_path = Path(socket_path)
        self.upstream = upstream.rstrip("/")
        self.provider = provider
        self.strip_prefix = strip_prefix
        self._api_key = api_key
        self._token = token
        self.budget = budget
        self.transcript = transcript
        self.options = options
        self.exit: LoopExit | None = None
        """Set when the trial must end (budget spent, provider gone); the harness then cuts the CLI off."""
        self.cut_off = asyncio.Event()
        self.requests = 0
        self.overhead_s: list[float] = []
        """Per model turn: the handler's time outside the upstream exchange (reading and checking
        the request, transcript events, retry wrapper, usage)."""
        self._runner: web.AppRunner | None = None
        self._client: httpx.AsyncClient | None = None
        self._sent: list[Any] = []
        self._system_digest = ""
        self._tools_digest = ""
        self._lock = asyncio.Lock()
        self._broken_replies = 0
        self._in_flight: set[asyncio.Task[Any]] = set()
        self._closing = False

    async def __aenter__(self) -> ModelProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.options.timeout_s, connect=30.0))
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        self.socket_path.unlink(missing_ok=True)
        await web.UnixSite(self._runner, str(self.socket_path)).start()
        # The CLI runs as the sandbox's unprivileged user; the token, not the mode, guards it.
        os.chmod(self.socket_path, 0o666)

    async def close(self) -> None:
        # Requests still waiting on the provider are cancelled first, while the transcript is
        # open: each abandoned turn records so, and a read that fails because the client is
        # closing can never be mistaken for a provider failure worth a retry.
        self._closing = True
        pending = [t for t in self._in_flight if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self.socket_path.unlink(missing_ok=True)

    def end(self, exit: LoopExit) -> None:
        if self.exit is None:
            self.exit = exit
        self.cut_off.set()

    # -- requests ------------------------------------------------------------------------------
    def _authorized(self, request: web.Request) -> bool:
        return hmac.compare_digest(_credentials(request).encode(), self._token.encode())

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        task = asyncio.current_task()
        if self._closing or task is None:
            return _error(self.provider, 503, "the trial has ended")
        self._in_flight.add(task)
        try:
            return await self._dispatch(request)
        finally:
            self._in_flight.discard(task)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        if request.method == "HEAD" and not _credentials(request):
            # Claude Code probes the base URL (HEAD /api/hello) without a key: forwarded bare.
            return await self._forward_other(request, b"", with_key=False)
        if not self._authorized(request):
            self.transcript.event("error", source="proxy", message=f"refused {request.method} {request.path}: wrong token")
            return _error(self.provider, 401, "the proxy refused this request: wrong or missing trial token")
        body = await request.read()
        protocol = protocol_of(request.path) if request.method == "POST" else None
        if protocol is None:
            return await self._forward_other(request, body)
        try:
            parsed = json.loads(body)
        except ValueError:  # e.g. a compressed body: still a turn, forwarded as it came
            parsed = None
        if not isinstance(parsed, dict):
            parsed = {}
        return await self._model_turn(request, body, protocol, view_request(protocol, parsed), arrived)

    async def _model_turn(self, request: web.Request, body: bytes, protocol: str, view: RequestView,
                          arrived: float) -> web.StreamResponse:
        if self.exit is not None:
            return _error(self.provider, 400, f"the trial has ended: {self.exit.detail}")
        try:
            self.budget.check()
        except BudgetExhausted as exit:
            self.transcript.event("budget", kind=exit.kind, limit=exit.limit, used=exit.used, enforced_by="proxy")
            self.end(exit)
            return _error(self.provider, 400, f"the trial's {exit.detail}")
        async with self._lock:
            self.requests += 1
            number = self.requests
            self._record_request(number, request.path, protocol, view)
        try:
            return await self._exchange(request, body, protocol, view, arrived, number)
        except asyncio.CancelledError:
            # The trial ended (wall time, a cut-off) while this turn waited on the provider.
            self.transcript.event("error", source="proxy", turn=number, abandoned=True,
                                  message=f"turn {number} abandoned: the trial ended before the provider's reply was complete")
            raise

    async def _exchange(self, request: web.Request, body: bytes, protocol: str, view: RequestView,
                        arrived: float, number: int) -> web.StreamResponse:
        started = time.monotonic()
        try:
            upstream = await call_with_retries(
                lambda: self._send(request, body), self.options, self._on_retry,
                model_id=f"{self.provider}:{view.model}", scrub=self._scrub,
            )
        except ModelError as exc:
            exit = model_failure(f"{self.provider}:{view.model}", self.options.api_key_env, str(exc), exc.credentials)
            self.transcript.event("error", source="model", turn=number, message=exit.detail, status=exc.status,
                                  retryable=exc.retryable)
            self.end(exit)
            return _error(self.provider, 502, f"the model provider failed: {self._scrub(str(exc))}")
        if upstream.status_code >= 400:
            return await self._refused(upstream, view, number)
        response = web.StreamResponse(status=upstream.status_code, headers=_response_headers(upstream))
        assembler = ReplyAssembler(protocol, "text/event-stream" in upstream.headers.get("content-type", ""))
        broken = ""
        try:
            await response.prepare(request)
            async for chunk in upstream.aiter_bytes():
                assembler.feed(chunk)
                await response.write(chunk)
            await response.write_eof()
        except httpx.TransportError as exc:  # the provider's side: a cut stream, a stall mid-reply
            broken = f"{type(exc).__name__}: {self._scrub(str(exc)) or 'the connection broke'}"
        except ConnectionError as exc:  # the CLI's side went away
            self.transcript.event(
                "error", source="proxy", turn=number, message=f"reply relay to the CLI broke: {type(exc).__name__}: {exc}"
            )
        finally:
            await upstream.aclose()
        reply = assembler.finish()
        if broken and request.transport is not None:
            # The CLI must not take a reply cut short for a whole one: its connection is cut too.
            request.transport.close()
        elif reply.undecodable and not broken:
            broken = f"{reply.undecodable} part(s) of the reply are not valid JSON"
        latency = time.monotonic() - started
        if reply.has_usage:
            self.budget.record_turn(reply.usage, f"{self.provider}:{reply.model or view.model}")
        self.transcript.event(
            "model_response", turn=number, status=upstream.status_code, model=reply.model or view.model,
            text=reply.text, thinking=reply.thinking, tool_calls=reply.tool_calls, usage=reply.usage,
            stop_reason=reply.stop_reason,
            latency_s=round(latency, 4), budget_used=self.budget.usage(), **({"broken": True} if broken else {}),
        )
        if broken:
            self._broken_reply(number, broken)
        else:
            self._broken_replies = 0
        # httpx's elapsed runs from sending to closing the reply, relay writes included.
        self.overhead_s.append(max(0.0, time.monotonic() - arrived - upstream.elapsed.total_seconds()))
        return response

    async def _refused(self, upstream: httpx.Response, view: RequestView, number: int) -> web.Response:
        """A status the retry policy does not retry (400, 401, 403, 404, 413): it cannot heal by
        asking again, so the trial ends now (the CLI would otherwise retry it for minutes). The
        provider's own error text is recorded and relayed."""
        try:
            data = await upstream.aread()
        except httpx.TransportError:
            data = b""
        finally:
            await upstream.aclose()
        status = upstream.status_code
        text = self._scrub(_error_text(data) or f"HTTP {status}")
        model_id = f"{self.provider}:{view.model}"
        exit = model_failure(model_id, self.options.api_key_env, f"{model_id}: {status}: {text}"[:2000],
                             credentials_refused(status, text))
        self.transcript.event("error", source="model", turn=number, message=exit.detail, status=status, retryable=False)
        self.end(exit)
        return web.Response(status=status, body=data, headers=_response_headers(upstream))

    def _broken_reply(self, number: int, reason: str) -> None:
        """A reply that broke off after it started cannot be retried here (the CLI has seen part
        of it); the CLI retries the turn itself. The retry policy's bound still holds: after
        max_retries broken replies in a row the trial ends."""
        self._broken_replies += 1
        gave_up = self._broken_replies > self.options.max_retries
        self.transcript.event("error", source="model", turn=number, message=f"the provider's reply broke off: {reason}",
                              status=None, retryable=not gave_up, broken_in_a_row=self._broken_replies)
        if gave_up:
            self.end(ModelFailed(f"{self.provider}: the reply broke off {self._broken_replies} times in a row ({reason})"))

    def _record_request(self, number: int, path: str, protocol: str, view: RequestView) -> None:
        # A request that continues the previous one records only its new messages.
        # Claude Code moves its cache_control marks to the newest message each turn; they do
        # not make an older message new.
        conversation = _without_cache_marks(view.conversation)
        first = len(self._sent) if self._sent and conversation[: len(self._sent)] == self._sent else 0
        self._sent = conversation
        extra: dict[str, Any] = {}
        system_digest = _digest(view.system)
        if system_digest != self._system_digest:
            extra["system"] = view.system
            self._system_digest = system_digest
        tools_digest = _digest(view.tools)
        if tools_digest != self._tools_digest:
            extra["tools"] = view.tools
            self._tools_digest = tools_digest
        self.transcript.event(
            "model_request", turn=number, protocol=protocol, path=path, model=view.model, stream=view.stream,
            max_tokens=view.max_tokens, message_count=len(view.conversation), first_index=first,
            messages=view.conversation[first:], tool_names=[_tool_name(t) for t in view.tools], **extra,
        )

    async def _send(self, request: web.Request, body: bytes) -> httpx.Response:
        assert self._client is not None
        upstream = self._client.build_request(
            request.method, self._url(request), headers=self._headers(request), content=body,
            params=list(request.query.items()),
        )
        response = await self._client.send(upstream, stream=True)
        if retryable_status(response.status_code):
            data = await response.aread()
            await response.aclose()
            raise UpstreamStatus(response, data)
        return response

    async def _forward_other(self, request: web.Request, body: bytes, with_key: bool = True) -> web.StreamResponse:
        assert self._client is not None
        started = time.monotonic()
        try:
            upstream = await self._client.request(
                request.method, self._url(request), headers=self._headers(request, with_key), content=body or None,
                params=list(request.query.items()),
            )
        except httpx.TransportError as exc:
            self.transcript.event("error", source="proxy", message=f"{request.method} {request.path}: {type(exc).__name__}")
            return _error(self.provider, 502, "the model provider could not be reached")
        self.transcript.event(
            "harness_event", kind="proxy_call", method=request.method, path=request.path, status=upstream.status_code,
            request_bytes=len(body), response=_short_json(upstream.content), latency_s=round(time.monotonic() - started, 4),
        )
        return web.Response(status=upstream.status_code, body=upstream.content, headers=_response_headers(upstream))

    def _url(self, request: web.Request) -> str:
        path = request.path
        if self.strip_prefix and path.startswith(self.strip_prefix):
            path = path[len(self.strip_prefix):]
        return self.upstream + path

    def _headers(self, request: web.Request, with_key: bool = True) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST}
        if not with_key:
            return headers
        if self.provider == ANTHROPIC:
            headers["x-api-key"] = self._api_key
        else:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _on_retry(self, info: dict[str, Any]) -> None:
        if not self._closing:
            self.transcript.event("retry", source="proxy", **info)

    def _scrub(self, text: str) -> str:
        for secret in (self._api_key, self._token):
            if secret:
                text = text.replace(secret, "***")
        return text


def _credentials(request: web.Request) -> str:
    auth = request.headers.get("Authorization", "")
    return request.headers.get("x-api-key") or (auth[7:] if auth.startswith("Bearer ") else "")


def _response_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower() not in _DROP_RESPONSE}


def _error(provider: str, status: int, message: str) -> web.Response:
    """An error in the provider's own format, so the CLI reports it as it would the provider's."""
    if provider == ANTHROPIC:
        kind = "authentication_error" if status == 401 else "api_error" if status >= 500 else "invalid_request_error"
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                          "param": None, "code": None}}
    return web.json_response(body, status=status)


def _error_text(data: bytes) -> str:
    """The provider's own error message: ``error.message`` of its JSON body (Anthropic, OpenAI
    and Gemini all put it there), else the body's text."""
    try:
        body = json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace").strip()[:2000]
    inner = body.get("error") if isinstance(body, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        kind = inner.get("type") or inner.get("status") or inner.get("code")
        return f"{inner['message']} ({kind})" if isinstance(kind, str) and kind else inner["message"]
    return json.dumps(body)[:2000]


def _without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return str(tool)
    return str(tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type", ""))


def _short_json(data: bytes, limit: int = 2000) -> Any:
    try:
        value = json.loads(data)
    except ValueError:
        return data[:limit].decode("utf-8", errors="replace")
    text = json.dumps(value)
    return value if len(text) <= limit else text[:limit]
