"""A local server speaking OpenAI's Responses API (``POST {base_url}/responses``), as Codex uses it.

Like ``FakeOpenAIServer`` (base_url ends in ``/v1``, key as ``Authorization: Bearer``, OpenAI's
error bodies), but the request is ``instructions`` + ``input`` items and the reply a
``response`` object whose ``output`` holds a ``message`` and ``function_call`` items. With
``stream: true`` the reply is the Responses event stream: ``response.created``, per item
``response.output_item.added`` / ``response.output_text.delta`` / ``response.output_item.done``,
then ``response.completed`` carrying the usage. The turn is the number of tool outputs already
in ``input``. Requests the real API rejects get a 400: a tool output whose ``call_id`` no
earlier call has, an input that is neither a string nor a list.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from tests.fakeproviders.openai_server import FakeOpenAIServer, _model_of
from tests.fakeproviders.script import Reply
from tests.fakeproviders.server import ProviderError, RecordedRequest

_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_CALLS = ("function_call", "custom_tool_call")


class FakeOpenAIResponsesServer(FakeOpenAIServer):
    provider = "openai-responses"

    def routes(self) -> list[web.RouteDef]:
        async def responses(request: web.Request) -> web.StreamResponse:
            return await self.handle(request, await _model_of(request))

        return [web.post("/v1/responses", responses), web.get("/v1/models", self.list_models)]

    def turn_index(self, body: Any) -> int:
        items = body.get("input")
        return sum(1 for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS) if isinstance(items, list) else 0

    def check_request(self, request: RecordedRequest, model: str) -> None:
        body = request.body
        items = body.get("input")
        if not model or not isinstance(items, (str, list)):
            raise ProviderError(400, "Missing required parameter: 'model', and 'input' must be a string or a list.")
        called: set[str] = set()
        for i, item in enumerate(items if isinstance(items, list) else []):
            kind = item.get("type")
            if kind in _CALLS:
                called.add(str(item.get("call_id")))
            elif kind in _OUTPUTS and item.get("call_id") not in called:
                raise ProviderError(400, f"No tool call found for {kind} with call_id {item.get('call_id')} (input[{i}]).")

    def tokens_of(self, payload: dict[str, Any]) -> tuple[int, int]:
        return payload["usage"]["input_tokens"], payload["usage"]["output_tokens"]

    def render(self, reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
        number = request.number
        output: list[dict[str, Any]] = []
        if reply.text:
            output.append({"type": "message", "id": f"msg_fake{number}", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
        for i, call in enumerate(reply.tool_calls):
            output.append({"type": "function_call", "id": f"fc_fake{number}x{i}", "call_id": call.id or f"call_{number}x{i}",
                           "name": call.name, "arguments": call.arguments_text(), "status": "completed"})
        prompt, completion = self.input_estimate(reply, request.body) + reply.cache_read_tokens, reply.output_estimate()
        incomplete = {"reason": "max_output_tokens"} if reply.stop == "max_tokens" else None
        return {
            "id": f"resp_fake{number}", "object": "response", "created_at": int(time.time()),
            "status": "incomplete" if incomplete else "completed", "incomplete_details": incomplete,
            "model": model, "output": output, "error": None,
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": reply.cache_read_tokens},
                      "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": prompt + completion},
        }

    async def stream(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        created = {**payload, "status": "in_progress", "output": [], "usage": None}
        events: list[tuple[str | None, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": created})]
        for index, item in enumerate(payload["output"]):
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                          "item": {**item, "status": "in_progress"}}))
            if item["type"] == "message":
                events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": index,
                                                              "item_id": item["id"], "content_index": 0,
                                                              "delta": item["content"][0]["text"]}))
            else:
                events.append(("response.function_call_arguments.delta", {
                    "type": "response.function_call_arguments.delta", "output_index": index, "item_id": item["id"],
                    "delta": item["arguments"]}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                         "item": item}))
        done = "response.incomplete" if payload["status"] == "incomplete" else "response.completed"
        events.append((done, {"type": done, "response": payload}))
        for n, (_, data) in enumerate(events):
            data["sequence_number"] = n
        return await self.send_events(request, events)
