"""A local server speaking Anthropic's Messages API wire protocol (``POST /v1/messages``).

Use it like ``FakeOpenAIServer`` (see openai_server.py): ``base_url`` is the server root (the SDK
appends ``/v1/messages``); the key must arrive in ``x-api-key`` or as ``Authorization: Bearer``
(anthropic>=2 sends the latter) and ``anthropic-version`` must be sent. Replies are ``message``
objects with ``text`` and ``tool_use`` content blocks, ``stop_reason`` and ``usage``; errors use
``{"type": "error", "error": {type, message}}``. Requests the real API rejects get a 400: a
``system`` role among the messages, a ``tool_use`` whose ``tool_result`` is not in the next user
message, results placed after text, empty text.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakeproviders.script import Reply
from tests.fakeproviders.server import FakeProviderServer, ProviderError, RecordedRequest

_ERRORS = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "Not found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}

_STOP = {"max_tokens": "max_tokens", "content_filter": "refusal"}


class FakeAnthropicServer(FakeProviderServer):
    provider = "anthropic"

    def routes(self) -> list[web.RouteDef]:
        async def messages(request: web.Request) -> web.StreamResponse:
            try:
                body = await request.json()
            except ValueError:
                body = {}
            return await self.handle(request, str(body.get("model", "")) if isinstance(body, dict) else "")

        async def count_tokens(request: web.Request) -> web.StreamResponse:
            # Claude Code sizes its context with this endpoint; it costs nothing and is no turn.
            recorded = await self._record(request)
            if self.api_key is not None and self.presented_key(request) != self.api_key:
                return self.auth_failure()
            body = recorded.body if isinstance(recorded.body, dict) else {}
            return web.json_response({"input_tokens": self.input_estimate(Reply(), body)})

        async def hello(request: web.Request) -> web.StreamResponse:
            # Claude Code's connectivity probe: HEAD {base_url}/api/hello, no key.
            await self._record(request)
            return web.Response(status=200)

        return [web.post("/v1/messages", messages), web.post("/v1/messages/count_tokens", count_tokens),
                web.head("/api/hello", hello), web.get("/v1/models", self.list_models)]

    def models_listing(self, names: list[str]) -> dict[str, Any]:
        data = [{"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"} for n in names]
        return {"data": data, "has_more": False, "first_id": names[0], "last_id": names[-1]}

    def presented_key(self, request: web.Request) -> str | None:
        # Older SDKs (and LiteLLM) send x-api-key; anthropic>=2 sends the key as a bearer token.
        auth = request.headers.get("Authorization", "")
        return request.headers.get("x-api-key") or (auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None)

    def error_response(self, status: int, message: str | None, retry_after: float | None = None) -> web.Response:
        kind, default = _ERRORS.get(status, ("api_error" if status >= 500 else "invalid_request_error", f"HTTP {status}"))
        headers = {"request-id": f"req_fake{len(self.requests)}"}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        body = {"type": "error", "error": {"type": kind, "message": message or default},
                "request_id": headers["request-id"]}
        return web.json_response(body, status=status, headers=headers)

    def model_not_found(self, model: str) -> str:
        return f"model: {model}"

    def turn_index(self, body: Any) -> int:
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")

    def check_request(self, request: RecordedRequest, model: str) -> None:
        body = request.body
        if not any(k.lower() == "anthropic-version" for k in request.headers):
            raise ProviderError(400, "anthropic-version: header is required")
        if not isinstance(body.get("max_tokens"), int):
            raise ProviderError(400, "max_tokens: Field required")
        if "system" in body and not isinstance(body["system"], (str, list)):
            raise ProviderError(400, "system: Input should be a valid string or list of text blocks")
        for i, tool in enumerate(body.get("tools") or []):
            if not tool.get("name") or not isinstance(tool.get("input_schema"), dict):
                raise ProviderError(400, f"tools.{i}: each tool needs name and input_schema")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ProviderError(400, "messages: at least one message is required")
        if messages[0].get("role") != "user":
            raise ProviderError(400, "messages: first message must use the \"user\" role")
        expected: list[str] = []  # tool_use ids the next message must answer
        for i, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant"):
                raise ProviderError(400, f'messages.{i}.role: Unexpected role "{role}". The Messages API accepts a '
                                         'top-level `system` parameter, not "system" as an input message role.')
            blocks = message.get("content")
            if isinstance(blocks, str):
                blocks = [{"type": "text", "text": blocks}]
            if not isinstance(blocks, list) or not blocks:
                raise ProviderError(400, f"messages.{i}.content: must be a non-empty string or list of blocks")
            answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if expected:
                missing = [x for x in expected if x not in answered]
                if role != "user" or missing:
                    raise ProviderError(400, f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                                             f"immediately after: {', '.join(missing or expected)}. Each `tool_use` "
                                             "block must have a corresponding `tool_result` block in the next message.")
            stray = [x for x in answered if x not in expected]
            if stray:
                raise ProviderError(400, f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                                         f"blocks: {stray[0]}. Each `tool_result` block must have a corresponding "
                                         "`tool_use` block in the previous message.")
            seen_other = False
            for j, block in enumerate(blocks):
                kind = block.get("type")
                if kind == "tool_result":
                    if seen_other:
                        raise ProviderError(400, f"messages.{i}.content.{j}: tool_result blocks must come first in "
                                                 "the content array, before any other content.")
                    if role != "user":
                        raise ProviderError(400, f"messages.{i}.content.{j}: tool_result is only allowed in user turns")
                    continue
                seen_other = True
                if kind == "text" and not block.get("text"):
                    raise ProviderError(400, f"messages.{i}.content.{j}: text content blocks must be non-empty")
                if kind == "tool_use":
                    if role != "assistant" or not block.get("id") or not isinstance(block.get("input"), dict):
                        raise ProviderError(400, f"messages.{i}.content.{j}.input: Input should be a valid dictionary")
                elif kind != "text":
                    raise ProviderError(400, f"messages.{i}.content.{j}.type: unsupported block type {kind!r}")
            expected = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if expected:
            raise ProviderError(400, "the last message's `tool_use` blocks have no `tool_result` after them")

    def tokens_of(self, payload: dict[str, Any]) -> tuple[int, int]:
        usage = payload["usage"]
        cached = usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
        return usage["input_tokens"] + cached, usage["output_tokens"]

    async def stream(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        """The Messages streaming events: message_start (input usage), one start/delta/stop per
        content block (tool input as input_json_delta), message_delta (stop reason, output
        usage), message_stop."""
        usage = payload["usage"]
        start = {**payload, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        events: list[tuple[str | None, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(payload["content"]):
            if block["type"] == "text":
                opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                opened = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": payload["stop_reason"], "stop_sequence": None},
                               "usage": {"output_tokens": usage["output_tokens"]}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return await self.send_events(request, events)

    def render(self, reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            # The real API always sends an object here; a str argument is parsed as the model meant it.
            arguments = call.arguments if isinstance(call.arguments, dict) else {"_unparsed": call.arguments}
            content.append({"type": "tool_use", "id": call.id or f"toolu_fake{request.number}x{i}",
                            "name": call.name, "input": arguments})
        stop = _STOP.get(reply.stop or "", "tool_use" if reply.tool_calls else "end_turn")
        return {
            "id": f"msg_fake{request.number}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": self.input_estimate(reply, request.body),
                "output_tokens": reply.output_estimate(),
                "cache_creation_input_tokens": reply.cache_write_tokens,
                "cache_read_input_tokens": reply.cache_read_tokens,
            },
        }
