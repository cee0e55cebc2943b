"""``litellm:<route>/<model>``: anything LiteLLM routes (xai/, mistral/, groq/, openrouter/, ...).

LiteLLM speaks the OpenAI message format on our side and translates per provider; ``base_url``
is passed as its ``api_base``. Both LiteLLM's retry layer (``num_retries``) and the underlying
SDK's (``max_retries``) are set to 0 so our policy is the only one.
"""

from __future__ import annotations

import os
import time
from typing import Any

from harnesses.models._common import scrubber
from harnesses.models.base import ModelClient, ModelOptions, ModelTurn, ToolSpec
from harnesses.models.credentials import check_key
from harnesses.models.openai_format import (
    from_openai_choice,
    to_openai_messages,
    to_openai_tools,
    usage_from_openai,
)
from harnesses.models.retry import call_with_retries, probe

# Without this LiteLLM fetches its price map from GitHub at import; sandboxed hosts have no
# network and the fetch stalls the import by seconds. Our own pricing.py prices runs.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

# LiteLLM prints help banners to stdout on errors; ours go through structlog.
litellm.suppress_debug_info = True


class LiteLLMClient(ModelClient):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.model_id = f"litellm:{name}"
        self.name = name
        self.options = options
        key = check_key("litellm", name, options.api_key_env)
        # Pass the key only when the user named its variable; otherwise LiteLLM reads its own.
        self._api_key = key if options.api_key_env else None
        self._scrub = scrubber(key)

    def _request(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": to_openai_messages(messages),
            "max_tokens": self.options.max_tokens,
            "timeout": self.options.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
        }
        if tools:
            body["tools"] = to_openai_tools(tools)
        if self.options.base_url:
            body["api_base"] = self.options.base_url
        if self._api_key:
            body["api_key"] = self._api_key
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body.update(self.options.extra)
        return body

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        body = self._request(messages, tools)
        start = time.monotonic()
        response = await call_with_retries(
            lambda: litellm.acompletion(**body),
            self.options,
            self.on_retry,
            model_id=self.model_id,
            scrub=self._scrub,
        )
        choice = response.choices[0]
        text, calls, stop = from_openai_choice(choice.message, choice.finish_reason)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage_from_openai(getattr(response, "usage", None)),
            stop_reason=stop,
            latency_s=time.monotonic() - start,
            raw=response.model_dump(mode="json"),
        )

    async def check_access(self) -> None:
        # LiteLLM has no model list that works across its routes: a one-token request is the
        # cheapest call every route answers.
        body = {**self._request([{"role": "user", "content": "ping"}], []), "max_tokens": 1}
        await probe(lambda: litellm.acompletion(**body), self.options, model_id=self.model_id, scrub=self._scrub)


def create(name: str, task: object = None, **options: Any) -> LiteLLMClient:
    return LiteLLMClient(name, ModelOptions(**options))
