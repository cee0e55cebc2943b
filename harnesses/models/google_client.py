"""``google:<model>``: the Gemini API (generateContent) with function declarations, via google-genai.

Format notes: system messages become ``system_instruction``; assistant turns are role ``model``
with ``function_call`` parts; tool results are ``function_response`` parts (which need the
function's name, recovered from the call they answer), grouped in one user turn. Gemini may
omit call ids, so we make our own and send back only ids Gemini gave. Gemini 3 attaches a
``thought_signature`` to function calls that must be returned with them; it rides in
``ToolCall.extra``. Output tokens include thinking tokens (billed as output).
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

from google import genai
from google.genai import types

from harnesses.models._common import scrubber, text_content, tool_calls_of
from harnesses.models.base import (
    STOP_CONTENT_FILTER,
    STOP_END_TURN,
    STOP_MAX_TOKENS,
    STOP_TOOL_USE,
    ModelClient,
    ModelOptions,
    ModelTurn,
    ToolCall,
    ToolSpec,
    Usage,
)
from harnesses.models.credentials import check_key
from harnesses.models.retry import call_with_retries, probe

_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def to_gemini(messages: list[dict[str, Any]]) -> tuple[str, list[types.Content]]:
    """(system instruction, contents)."""
    system: list[str] = []
    contents: list[types.Content] = []
    names_by_id: dict[str, str] = {}
    gemini_ids: dict[str, str | None] = {}

    def user_parts() -> list[types.Part]:
        if not contents or contents[-1].role != "user":
            contents.append(types.Content(role="user", parts=[]))
        last = contents[-1]
        if last.parts is None:  # never for the user turns made here; narrows the SDK's Optional
            last.parts = []
        return last.parts

    for message in messages:
        role = message["role"]
        if role == "system":
            system.append(text_content(message))
        elif role == "user":
            user_parts().append(types.Part(text=text_content(message)))
        elif role == "assistant":
            parts: list[types.Part] = []
            if text_content(message):
                parts.append(types.Part(text=text_content(message)))
            for call in tool_calls_of(message):
                names_by_id[call.id] = call.name
                gemini_ids[call.id] = call.extra.get("gemini_id")
                signature = call.extra.get("thought_signature")
                parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            id=gemini_ids[call.id], name=call.name, args=call.arguments
                        ),
                        thought_signature=base64.b64decode(signature) if signature else None,
                    )
                )
            contents.append(types.Content(role="model", parts=parts or [types.Part(text="(no output)")]))
        elif role == "tool":
            call_id = message["tool_call_id"]
            if call_id not in names_by_id:
                raise ValueError(f"tool result {call_id!r} answers no earlier tool call")
            user_parts().append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=gemini_ids.get(call_id),
                        name=names_by_id[call_id],
                        response={"output": text_content(message)},
                    )
                )
            )
        else:
            raise ValueError(f"unknown message role {role!r}")
    return "\n\n".join(system), contents


def from_gemini(response: types.GenerateContentResponse) -> tuple[str, list[ToolCall], str, Usage]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    reason = ""
    if response.candidates:
        candidate = response.candidates[0]
        reason = candidate.finish_reason.value if candidate.finish_reason else ""
        for part in (candidate.content.parts if candidate.content else None) or []:
            if part.function_call is not None:
                fc = part.function_call
                extra: dict[str, Any] = {}
                if fc.id:
                    extra["gemini_id"] = fc.id
                if part.thought_signature:
                    extra["thought_signature"] = base64.b64encode(part.thought_signature).decode()
                calls.append(
                    ToolCall(
                        id=fc.id or f"call_{uuid.uuid4().hex[:12]}",
                        name=fc.name or "",
                        arguments=dict(fc.args or {}),
                        extra=extra,
                    )
                )
            elif part.text and not part.thought:
                texts.append(part.text)
    elif response.prompt_feedback and response.prompt_feedback.block_reason:
        reason = "SAFETY"
    if calls:
        stop = STOP_TOOL_USE
    elif reason in ("STOP", ""):
        stop = STOP_END_TURN
    elif reason == "MAX_TOKENS":
        stop = STOP_MAX_TOKENS
    elif reason in _FILTERED:
        stop = STOP_CONTENT_FILTER
    else:
        stop = reason
    meta = response.usage_metadata
    usage = Usage(
        input_tokens=(meta.prompt_token_count or 0) if meta else 0,
        output_tokens=((meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)) if meta else 0,
        cache_read_tokens=(meta.cached_content_token_count or 0) if meta else 0,
    )
    return "".join(texts), calls, stop, usage


class GoogleClient(ModelClient):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.model_id = f"google:{name}"
        self.name = name
        self.options = options
        key = check_key("google", name, options.api_key_env) or ""
        self._scrub = scrubber(key)
        # attempts=1: no SDK retries. Leaving retry_options unset is not enough: the SDK's aiohttp
        # path then silently retries dropped connections after 1-10 s. Timeout is in milliseconds.
        http = types.HttpOptions(
            base_url=options.base_url,
            timeout=int(options.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(api_key=key, vertexai=False, http_options=http)

    def _config(self, system: str, tools: list[ToolSpec]) -> types.GenerateContentConfig:
        config: dict[str, Any] = {"max_output_tokens": self.options.max_tokens}
        if system:
            config["system_instruction"] = system
        if tools:
            config["tools"] = [
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name=t.name, description=t.description, parameters_json_schema=t.parameters
                        )
                        for t in tools
                    ]
                )
            ]
            # We run the tools ourselves, in the sandbox; the SDK must never call anything.
            config["automatic_function_calling"] = types.AutomaticFunctionCallingConfig(disable=True)
        if self.options.temperature is not None:
            config["temperature"] = self.options.temperature
        config.update(self.options.extra)
        return types.GenerateContentConfig(**config)

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        system, contents = to_gemini(messages)
        config = self._config(system, tools)
        start = time.monotonic()
        response = await call_with_retries(
            lambda: self._client.aio.models.generate_content(
                model=self.name, contents=contents, config=config
            ),
            self.options,
            self.on_retry,
            model_id=self.model_id,
            scrub=self._scrub,
        )
        text, calls, stop, usage = from_gemini(response)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage,
            stop_reason=stop,
            latency_s=time.monotonic() - start,
            # sdk_http_response carries the HTTP headers; raw is the body only.
            raw=response.model_dump(
                mode="json",
                exclude_none=True,
                exclude={"sdk_http_response", "automatic_function_calling_history"},
            ),
        )

    async def check_access(self) -> None:
        await probe(lambda: self._client.aio.models.list(config={"page_size": 1}), self.options,
                    model_id=self.model_id, scrub=self._scrub)

    async def aclose(self) -> None:
        await self._client.aio.aclose()


def create(name: str, task: object = None, **options: Any) -> GoogleClient:
    return GoogleClient(name, ModelOptions(**options))
