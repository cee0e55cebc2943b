"""A local server speaking OpenAI's Chat Completions wire protocol, for tests that drive a real client.

Usage (the harness and sweep tests use it the same way)::

    from tests.fakeproviders import FakeOpenAIServer, Reply, Failure

    script = [Reply.tool("bash", {"command": "ls"}),
              Reply.tool("write_file", {"path": "kernel.py", "content": "..."}),
              Reply.say("done")]
    with FakeOpenAIServer(script=script, failures=[Failure.rate_limit(retry_after=1)]) as srv:
        # create_model("openai:fake-model", base_url=srv.base_url, api_key_env="MY_KEY")
        # with MY_KEY=test-key (srv.api_key) in the environment
        ...
    srv.requests  # every request as received: number, path, headers, parsed JSON body

``POST {base_url}/chat/completions`` answers ``chat.completion`` objects with ``tool_calls``
and ``usage``; errors use OpenAI's ``{"error": {message, type, param, code}}`` body and status
codes; the key must arrive as ``Authorization: Bearer <api_key>`` (401 otherwise). Requests
the real API rejects (tool results not answering the previous assistant's calls, malformed
tool calls) get a 400, so a conversion bug shows up as a failing call. Which reply: see
``tests/fakeproviders/script.py``. ``delay_s`` makes every answer slow; ``known_models``
makes other model names 404. Runs in its own thread: usable from sync and async tests alike.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from tests.fakeproviders.script import Reply
from tests.fakeproviders.server import FakeProviderServer, ProviderError, RecordedRequest

_ERRORS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key",
          "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    429: ("tokens", "rate_limit_exceeded",
          "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}

_FINISH = {"max_tokens": "length", "content_filter": "content_filter"}


class FakeOpenAIServer(FakeProviderServer):
    provider = "openai"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self) -> list[web.RouteDef]:
        async def completions(request: web.Request) -> web.StreamResponse:
            return await self.handle(request, await _model_of(request))

        return [web.post("/v1/chat/completions", completions), web.post("/chat/completions", completions),
                web.get("/v1/models", self.list_models)]

    def models_listing(self, names: list[str]) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "fake"} for n in names]}

    def presented_key(self, request: web.Request) -> str | None:
        auth = request.headers.get("Authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None

    def error_response(self, status: int, message: str | None, retry_after: float | None = None) -> web.Response:
        kind, code, default = _ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None,
                                                   f"HTTP {status}"))
        headers = {"x-request-id": f"req_fake{len(self.requests)}"}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        body = {"error": {"message": message or default, "type": kind, "param": None, "code": code}}
        return web.json_response(body, status=status, headers=headers)

    def model_not_found(self, model: str) -> str:
        return f"The model `{model}` does not exist or you do not have access to it."

    def turn_index(self, body: Any) -> int:
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")

    def check_request(self, request: RecordedRequest, model: str) -> None:
        body = request.body
        messages = body.get("messages")
        if not model or not isinstance(messages, list) or not messages:
            raise ProviderError(400, "you must provide a model parameter and a non-empty messages array")
        for tool in body.get("tools") or []:
            if tool.get("type") != "function" or not tool.get("function", {}).get("name"):
                raise ProviderError(400, "Invalid value for 'tools': each tool needs type 'function' and a function name.")
        pending: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role")
            if role not in ("system", "developer", "user", "assistant", "tool"):
                raise ProviderError(400, f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                                         "'user', 'tool', 'function', and 'developer'.")
            if role == "tool":
                if message.get("tool_call_id") not in pending:
                    raise ProviderError(400, f"Invalid parameter: messages with role 'tool' must be a response to a "
                                             f"preceeding message with 'tool_calls' (messages.[{i}]).")
                pending.remove(message["tool_call_id"])
                if not isinstance(message.get("content"), str):
                    raise ProviderError(400, f"Invalid type for 'messages[{i}].content': expected a string.")
                continue
            if pending:
                raise ProviderError(400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                         "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                         f"response messages: {', '.join(pending)}")
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    function = call.get("function") or {}
                    if call.get("type") != "function" or not call.get("id") or not function.get("name") \
                            or not isinstance(function.get("arguments"), str):
                        raise ProviderError(400, f"Invalid 'messages[{i}].tool_calls': each needs id, type "
                                                 "'function', function.name and function.arguments (a string).")
                    pending.append(call["id"])
            elif not isinstance(message.get("content"), str):
                raise ProviderError(400, f"Invalid type for 'messages[{i}].content': expected a string.")
        if pending:
            raise ProviderError(400, f"tool_call_ids without response messages: {', '.join(pending)}")

    def tokens_of(self, payload: dict[str, Any]) -> tuple[int, int]:
        return payload["usage"]["prompt_tokens"], payload["usage"]["completion_tokens"]

    async def stream(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        """``chat.completion.chunk`` events: the role, the text, each tool call whole, the
        finish reason, the usage (only with ``stream_options.include_usage``), then ``[DONE]``."""
        choice = payload["choices"][0]
        message = choice["message"]
        head = {k: payload[k] for k in ("id", "created", "model", "system_fingerprint")} | {"object": "chat.completion.chunk"}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
            return None, {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events: list[tuple[str | None, dict[str, Any] | str]] = [chunk({"role": "assistant", "content": ""})]
        if message["content"]:
            events.append(chunk({"content": message["content"]}))
        for index, call in enumerate(message.get("tool_calls") or []):
            events.append(chunk({"tool_calls": [{"index": index, **call}]}))
        events.append(chunk({}, choice["finish_reason"]))
        body = await request.json()
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, {**head, "choices": [], "usage": payload["usage"]}))
        events.append((None, "[DONE]"))
        return await self.send_events(request, events)

    def render(self, reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
        number, body = request.number, request.body
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{number}x{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        finish = _FINISH.get(reply.stop or "", "tool_calls" if reply.tool_calls else "stop")
        prompt, completion = self.input_estimate(reply, body) + reply.cache_read_tokens, reply.output_estimate()
        return {
            "id": f"chatcmpl-fake{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens}},
            "system_fingerprint": "fp_fake",
        }


async def _model_of(request: web.Request) -> str:
    try:
        body = await request.json()
    except ValueError:
        return ""
    return str(body.get("model", "")) if isinstance(body, dict) else ""
