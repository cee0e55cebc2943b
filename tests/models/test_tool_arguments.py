"""Tool-call arguments that are not a JSON object come back as an error the harness can relay,
and travel back to the provider exactly as the model wrote them."""

from __future__ import annotations

import pytest

from tests.fakeproviders import Reply
from tests.models.conftest import ADAPTERS, TOOLS, Adapter, serve

OPENAI_STYLE = [a for a in ADAPTERS if a.name in ("openai", "litellm")]


@pytest.mark.parametrize("adapter", OPENAI_STYLE, ids=lambda a: a.name)
@pytest.mark.parametrize("raw,why", [('{"command": "ls"', "not valid JSON"), ('["ls"]', "must be a JSON object")])
async def test_bad_arguments_become_an_error_not_a_crash(adapter: Adapter, raw: str, why: str) -> None:
    script = [Reply.tool("bash", raw), Reply.say("fixed it")]
    with serve(adapter, script) as server:
        client = adapter.client(server)
        try:
            turn = await client.complete([{"role": "user", "content": "go"}], TOOLS)
            call = turn.tool_calls[0]
            assert call.name == "bash"
            assert call.arguments == {"_raw": raw}
            assert call.error is not None and why in call.error
            messages = [
                {"role": "user", "content": "go"},
                turn.as_message(),
                {"role": "tool", "tool_call_id": call.id, "content": f"error: {call.error}"},
            ]
            final = await client.complete(messages, TOOLS)
        finally:
            await client.aclose()
    assert final.text == "fixed it"
    sent_back = server.requests[1].body["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert sent_back == raw


@pytest.mark.parametrize("adapter", OPENAI_STYLE, ids=lambda a: a.name)
async def test_empty_arguments_are_an_empty_object(adapter: Adapter) -> None:
    with serve(adapter, [Reply.tool("bash", "")]) as server:
        client = adapter.client(server)
        try:
            turn = await client.complete([{"role": "user", "content": "go"}], TOOLS)
        finally:
            await client.aclose()
    assert turn.tool_calls[0].arguments == {} and turn.tool_calls[0].error is None
