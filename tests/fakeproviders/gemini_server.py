"""A local server speaking the Gemini API wire protocol (``POST /v1beta/models/{model}:generateContent``).

Use it like ``FakeOpenAIServer`` (see openai_server.py): ``base_url`` is the server root (the
google-genai SDK appends ``v1beta/models/...``); the key must arrive in ``x-goog-api-key`` (or
``?key=``); a wrong key gets Gemini's real answer, a 400 ``API_KEY_INVALID``. Replies carry
``functionCall`` parts without ids (as the Gemini API sends them) and with a
``thoughtSignature`` that the client must return on its next request, as Gemini 3 demands;
usage is in ``usageMetadata``. Errors use ``{"error": {code, message, status, details}}``; a
429 with ``retry_after`` states it as ``google.rpc.RetryInfo`` in the body, like Gemini does,
not as a header. Requests Gemini rejects get a 400: function responses that do not match the
previous turn's calls by name and number, a missing thought signature, empty parts, bad roles.
"""

from __future__ import annotations

import base64
from typing import Any

from aiohttp import web

from tests.fakeproviders.script import Reply
from tests.fakeproviders.server import FakeProviderServer, ProviderError, RecordedRequest

_ERRORS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: ("RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."),
    500: ("INTERNAL", "An internal error has occurred. Please retry or report in "
                      "https://developers.generativeai.google/guide/troubleshooting"),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}

_FINISH = {"max_tokens": "MAX_TOKENS", "content_filter": "SAFETY"}


class FakeGeminiServer(FakeProviderServer):
    provider = "google"

    def __init__(self, *args: Any, thought_signatures: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.thought_signatures = thought_signatures
        self.issued_signatures: set[str] = set()

    def routes(self) -> list[web.RouteDef]:
        async def generate(request: web.Request) -> web.StreamResponse:
            return await self.handle(request, request.match_info["model"])

        return [web.post("/{version}/models/{model:[^/:]+}:generateContent", generate),
                web.get("/{version}/models", self.list_models)]

    def models_listing(self, names: list[str]) -> dict[str, Any]:
        return {"models": [{"name": f"models/{n}", "displayName": n, "supportedGenerationMethods": ["generateContent"]}
                           for n in names]}

    def presented_key(self, request: web.Request) -> str | None:
        return request.headers.get("x-goog-api-key") or request.query.get("key")

    def auth_failure(self) -> web.Response:
        return self.error_response(
            400,
            "API key not valid. Please pass a valid API key.",
            details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                      "domain": "googleapis.com"}],
        )

    def error_response(self, status: int, message: str | None, retry_after: float | None = None,
                       details: list[dict[str, Any]] | None = None) -> web.Response:
        code, default = _ERRORS.get(status, ("INTERNAL" if status >= 500 else "INVALID_ARGUMENT", f"HTTP {status}"))
        details = list(details or [])
        if retry_after is not None:
            details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"})
        error: dict[str, Any] = {"code": status, "message": message or default, "status": code}
        if details:
            error["details"] = details
        return web.json_response({"error": error}, status=status)

    def model_not_found(self, model: str) -> str:
        return (f"models/{model} is not found for API version v1beta, or is not supported for generateContent. "
                "Call ListModels to see the list of available models and their supported methods.")

    def turn_index(self, body: Any) -> int:
        return sum(1 for c in body.get("contents", []) if c.get("role") == "model")

    def check_request(self, request: RecordedRequest, model: str) -> None:
        body = request.body
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise ProviderError(400, "* GenerateContentRequest.contents: contents is not specified")
        for tool in body.get("tools") or []:
            for decl in tool.get("functionDeclarations") or []:
                if not decl.get("name"):
                    raise ProviderError(400, "* GenerateContentRequest.tools[0].function_declarations: name is required")
        calls: list[str] = []  # names the previous model turn called
        previous = ""
        for i, content in enumerate(contents):
            role = content.get("role")
            parts = content.get("parts") or []
            if role not in ("user", "model"):
                raise ProviderError(400, "Please use a valid role: user, model.")
            if not parts:
                raise ProviderError(400, f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
            responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
            if calls:
                if role != "user" or len(responses) != len(calls):
                    raise ProviderError(400, "Please ensure that the number of function response parts is equal to "
                                             "the number of function call parts of the function call turn.")
                if sorted(r.get("name", "") for r in responses) != sorted(calls):
                    raise ProviderError(400, "Please ensure that function response turn comes immediately after a "
                                             "function call turn, and names match the function calls.")
            elif responses:
                raise ProviderError(400, "Please ensure that function response turn comes immediately after a "
                                         "function call turn.")
            for r in responses:
                if not isinstance(r.get("response"), dict):
                    raise ProviderError(400, f"* contents[{i}]: function_response.response must be an object")
            calls = []
            if role == "model":
                for part in parts:
                    if "functionCall" not in part:
                        continue
                    if previous != "user":
                        raise ProviderError(400, "Please ensure that function call turn comes immediately after a "
                                                 "user turn or after a function response turn.")
                    if self.thought_signatures and part.get("thoughtSignature") not in self.issued_signatures:
                        raise ProviderError(400, f"Function call is missing a thought_signature in functionCall parts. "
                                                 f"This is required for tools to work correctly (contents[{i}]).")
                    calls.append(part["functionCall"].get("name", ""))
            previous = role
        if calls:
            raise ProviderError(400, "the last function call turn has no function response after it")

    def tokens_of(self, payload: dict[str, Any]) -> tuple[int, int]:
        usage = payload["usageMetadata"]
        return usage["promptTokenCount"], usage["candidatesTokenCount"]

    def render(self, reply: Reply, request: RecordedRequest, model: str) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if reply.text:
            parts.append({"text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            function_call: dict[str, Any] = {"name": call.name,
                                             "args": call.arguments if isinstance(call.arguments, dict) else {}}
            if call.id:
                function_call["id"] = call.id
            part: dict[str, Any] = {"functionCall": function_call}
            if self.thought_signatures:
                signature = base64.b64encode(f"sig-{request.number}-{i}".encode()).decode()
                self.issued_signatures.add(signature)
                part["thoughtSignature"] = signature
            parts.append(part)
        prompt, output = self.input_estimate(reply, request.body) + reply.cache_read_tokens, reply.output_estimate()
        return {
            "candidates": [{"content": {"parts": parts, "role": "model"},
                            "finishReason": _FINISH.get(reply.stop or "", "STOP"), "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
                              "totalTokenCount": prompt + output, "cachedContentTokenCount": reply.cache_read_tokens},
            "modelVersion": model,
            "responseId": f"fake{request.number}",
        }
