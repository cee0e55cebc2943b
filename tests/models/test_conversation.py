"""Each adapter, through its real SDK, holds a multi-turn tool-using conversation with a local
server that speaks the provider's wire protocol and rejects (400) anything the real API would."""

from __future__ import annotations

import json
from typing import Any

from harnesses.models import ToolCall
from harnesses.models.base import STOP_END_TURN, STOP_MAX_TOKENS, STOP_TOOL_USE
from tests.fakeproviders import Reply, ToolUse
from tests.models.conftest import KEY, TOOLS, Adapter, serve

KERNEL = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"

SCRIPT = [
    Reply.tool("bash", {"command": "ls -la"}, text="Let me look around.", input_tokens=101, output_tokens=11),
    Reply.tool("write_file", {"path": "kernel.py", "content": KERNEL}, input_tokens=202, output_tokens=22),
    Reply.say("The kernel is written.", input_tokens=303, output_tokens=33),
]


async def converse(client: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You write GPU kernels."},
        {"role": "user", "content": "Write kernel.py."},
    ]
    turns = []
    for _ in range(len(SCRIPT)):
        turn = await client.complete(messages, TOOLS)
        turns.append(turn)
        messages.append(turn.as_message())
        for call in turn.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"ran {call.name}: ok"})
    return messages, turns


async def test_multi_turn_tool_conversation(adapter: Adapter) -> None:
    with serve(adapter, SCRIPT) as server:
        client = adapter.client(server)
        try:
            _, turns = await converse(client)
        finally:
            await client.aclose()

    first, second, last = turns
    assert [c.name for c in first.tool_calls] == ["bash"]
    assert first.tool_calls[0].arguments == {"command": "ls -la"}
    assert first.text == "Let me look around."
    assert first.stop_reason == STOP_TOOL_USE
    assert second.tool_calls[0].name == "write_file"
    assert second.tool_calls[0].arguments == {"path": "kernel.py", "content": KERNEL}
    assert last.tool_calls == [] and last.text == "The kernel is written."
    assert last.stop_reason == STOP_END_TURN
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in turns] == [(101, 11), (202, 22), (303, 33)]
    assert all(t.latency_s >= 0 for t in turns)
    assert len({c.id for t in turns for c in t.tool_calls}) == 2  # every call has its own id

    assert len(server.requests) == 3  # no request was rejected and retried
    for request in server.requests:
        assert request.headers.get(adapter.auth_header) == adapter.auth_value
    for turn in turns:
        assert turn.raw is not None
        dumped = json.dumps(turn.raw)
        assert KEY not in dumped
        assert "headers" not in dumped.lower() and "authorization" not in dumped.lower()

    check_final_request_format(adapter.name, server.requests[-1].body)


def check_final_request_format(provider: str, body: dict[str, Any]) -> None:
    """The tool results went back in this provider's own format, after the calls they answer."""
    if provider in ("openai", "litellm"):
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
        calls = [m["tool_calls"][0] for m in body["messages"] if m["role"] == "assistant"]
        results = [m for m in body["messages"] if m["role"] == "tool"]
        assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
        assert results[0]["content"] == "ran bash: ok"
        assert json.loads(calls[1]["function"]["arguments"]) == {"path": "kernel.py", "content": KERNEL}
        assert body["tools"][0]["function"]["name"] == "bash"
    elif provider == "anthropic":
        assert body["system"] == "You write GPU kernels."
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
        tool_use = body["messages"][1]["content"][-1]
        result = body["messages"][2]["content"][0]
        assert tool_use["type"] == "tool_use" and tool_use["input"] == {"command": "ls -la"}
        assert result == {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "ran bash: ok"}
        assert body["tools"][1]["input_schema"]["required"] == ["path", "content"]
    elif provider == "google":
        assert body["systemInstruction"]["parts"][0]["text"] == "You write GPU kernels."
        assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model", "user"]
        call_part = body["contents"][1]["parts"][-1]
        assert call_part["functionCall"]["name"] == "bash"
        assert call_part["thoughtSignature"]  # returned as Gemini 3 requires
        response = body["contents"][2]["parts"][0]["functionResponse"]
        assert response == {"name": "bash", "response": {"output": "ran bash: ok"}}
        decls = body["tools"][0]["functionDeclarations"]
        assert [d["name"] for d in decls] == ["bash", "write_file"]
    else:
        raise AssertionError(provider)


async def test_parallel_tool_calls_answered_together(adapter: Adapter) -> None:
    script = [
        Reply(tool_calls=[ToolUse("bash", {"command": "nvidia-smi"}), ToolUse("bash", {"command": "ls"})]),
        Reply.say("done"),
    ]
    with serve(adapter, script) as server:
        client = adapter.client(server)
        try:
            messages = [{"role": "user", "content": "go"}]
            turn = await client.complete(messages, TOOLS)
            assert [c.arguments["command"] for c in turn.tool_calls] == ["nvidia-smi", "ls"]
            messages.append(turn.as_message())
            for call in turn.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": call.arguments["command"]})
            final = await client.complete(messages, TOOLS)
        finally:
            await client.aclose()
    assert final.text == "done"
    assert len(server.requests) == 2  # the second request passed the server's pairing checks


async def test_replayed_dict_tool_calls_convert_like_objects(adapter: Adapter) -> None:
    """A conversation read back from transcript.jsonl has tool calls as dicts; they must work too."""
    script = [Reply.tool("bash", {"command": "ls"}), Reply.say("ok")]
    with serve(adapter, script) as server:
        client = adapter.client(server)
        try:
            turn = await client.complete([{"role": "user", "content": "go"}], TOOLS)
            as_dicts = [c.to_dict() for c in turn.tool_calls]
            messages = [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": turn.text, "tool_calls": json.loads(json.dumps(as_dicts))},
                {"role": "tool", "tool_call_id": as_dicts[0]["id"], "content": "out"},
            ]
            final = await client.complete(messages, TOOLS)
        finally:
            await client.aclose()
    assert final.text == "ok"
    assert isinstance(turn.tool_calls[0], ToolCall)


async def test_max_tokens_stop_reason_and_options_sent(adapter: Adapter) -> None:
    with serve(adapter, [Reply.say("trunc", stop="max_tokens")]) as server:
        client = adapter.client(server, max_tokens=123, temperature=0.25)
        try:
            turn = await client.complete([{"role": "user", "content": "go"}], [])
        finally:
            await client.aclose()
    assert turn.stop_reason == STOP_MAX_TOKENS
    body = server.requests[0].body
    if adapter.name == "google":
        assert body["generationConfig"]["maxOutputTokens"] == 123
        assert body["generationConfig"]["temperature"] == 0.25
        assert "tools" not in body
    else:
        assert body["max_tokens"] == 123
        assert body["temperature"] == 0.25
        assert "tools" not in body


async def test_litellm_native_anthropic_route() -> None:
    """LiteLLM's own provider route (not the OpenAI-compatible one), pointed by api_base at a
    Messages-API server: the conversion chain neutral -> OpenAI format -> LiteLLM -> Anthropic holds."""
    from tests.fakeproviders import Failure, FakeAnthropicServer
    from tests.models.conftest import KEY_ENV

    script = [Reply.tool("bash", {"command": "ls"}), Reply.say("ok", input_tokens=7, output_tokens=3)]
    events: list[dict[str, Any]] = []
    with FakeAnthropicServer(script=script, api_key=KEY, failures=[None, Failure.server_error(529)]) as server:
        from harnesses.models import create_model

        client = create_model("litellm:anthropic/claude-fake", base_url=server.base_url, api_key_env=KEY_ENV,
                              retry_base_s=0.01)
        client.on_retry = events.append
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
        turn = await client.complete(messages, TOOLS)
        messages += [turn.as_message(), {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "out"}]
        final = await client.complete(messages, TOOLS)
    assert turn.tool_calls[0].arguments == {"command": "ls"}
    assert (final.text, final.usage.input_tokens, final.usage.output_tokens) == ("ok", 7, 3)
    assert [e["status"] for e in events] == [529]  # Anthropic's "overloaded" is retried
    last = server.requests[-1]
    assert last.path == "/v1/messages" and last.headers.get("x-api-key") == KEY
    assert last.body["system"] == [{"type": "text", "text": "sys"}]  # LiteLLM sends system as blocks
    assert last.body["messages"][2]["content"][0]["type"] == "tool_result"


async def test_user_note_after_tool_results_and_two_system_messages(adapter: Adapter) -> None:
    """A harness may add a system note and a user message (e.g. a budget warning) after the tool
    results; every provider format must still be valid, with results kept first."""
    with serve(adapter, [Reply.tool("bash", {"command": "ls"}), Reply.say("ok")]) as server:
        client = adapter.client(server)
        try:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": "rule one"},
                {"role": "system", "content": "rule two"},
                {"role": "user", "content": "go"},
            ]
            turn = await client.complete(messages, TOOLS)
            messages += [
                turn.as_message(),
                {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "out"},
                {"role": "user", "content": "2 turns left"},
            ]
            final = await client.complete(messages, TOOLS)
        finally:
            await client.aclose()
    assert final.text == "ok" and len(server.requests) == 2
    body = server.requests[1].body
    if adapter.name == "anthropic":
        assert body["system"] == "rule one\n\nrule two"
        assert [b["type"] for b in body["messages"][-1]["content"]] == ["tool_result", "text"]
    elif adapter.name == "google":
        assert [list(p) for p in body["contents"][-1]["parts"]] == [["functionResponse"], ["text"]]
    else:
        assert [m["role"] for m in body["messages"]][-3:] == ["assistant", "tool", "user"]
