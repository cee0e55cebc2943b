"""``openai:<model>``: the Chat Completions API with tools, through the official AsyncOpenAI client.

With ``base_url`` it drives any OpenAI-compatible server (vLLM, SGLang, Ollama). Such servers
get ``max_tokens``; api.openai.com gets ``max_completion_tokens``, which its reasoning models
require. No streaming: one request, one complete response.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from harnesses.models._common import scrubber, sdk_kwargs
from harnesses.models.base import ModelClient, ModelOptions, ModelTurn, ToolSpec
from harnesses.models.credentials import check_key
from harnesses.models.openai_format import (
    from_openai_choice,
    to_openai_messages,
    to_openai_tools,
    usage_from_openai,
)
from harnesses.models.retry import call_with_retries, probe


class OpenAIClient(ModelClient):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.model_id = f"openai:{name}"
        self.name = name
        self.options = options
        key = check_key("openai", name, options.api_key_env) or ""
        self._scrub = scrubber(key)
        # max_retries=0: our retry policy is the only one, so every retry is reported.
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=options.base_url, max_retries=0, timeout=options.timeout_s
        )

    def _request(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.name, "messages": to_openai_messages(messages)}
        if tools:
            body["tools"] = to_openai_tools(tools)
        token_field = "max_tokens" if self.options.base_url else "max_completion_tokens"
        body[token_field] = self.options.max_tokens
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body.update(self.options.extra)
        return body

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        kwargs = sdk_kwargs(self._client.chat.completions.create, self._request(messages, tools))
        start = time.monotonic()
        response = await call_with_retries(
            lambda: self._client.chat.completions.create(**kwargs),
            self.options,
            self.on_retry,
            model_id=self.model_id,
            scrub=self._scrub,
        )
        latency = time.monotonic() - start
        choice = response.choices[0]
        text, calls, stop = from_openai_choice(choice.message, choice.finish_reason)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage_from_openai(response.usage),
            stop_reason=stop,
            latency_s=latency,
            raw=response.model_dump(mode="json"),
        )

    async def check_access(self) -> None:
        await probe(lambda: self._client.models.list(), self.options, model_id=self.model_id, scrub=self._scrub)

    async def aclose(self) -> None:
        await self._client.close()


def create(name: str, task: object = None, **options: Any) -> OpenAIClient:
    return OpenAIClient(name, ModelOptions(**options))
