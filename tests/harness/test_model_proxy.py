"""The model proxy on its own (no container): the official SDKs, pointed at its unix socket with a
dummy token, reach the fake providers with the real key, streamed or not, in all three
protocols; usage lands in the budget exactly as the fake counted it, and the transcript has
every turn. A wrong token, a spent budget and a provider that keeps failing are refused."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from harnesses.budget import Budget, BudgetConfig
from harnesses.models.base import ModelOptions
from harnesses.proxy.server import ModelProxy
from harnesses.transcript import Transcript, read_events
from tests.fakeproviders import Failure, FakeAnthropicServer, FakeOpenAIServer, Reply
from tests.fakeproviders.openai_responses_server import FakeOpenAIResponsesServer
from tests.shared.waiting import wait_until_async

KEY = "sk-real-upstream-key-0123456789"
TOKEN = "ka-trial-dummy-token-0123"
SCRIPT = [Reply.tool("bash", {"command": "ls"}, text="Looking."), Reply.say("Done.")]


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    # Short: a unix socket path must fit in 108 bytes, which pytest's tmp_path may not.
    folder = Path(tempfile.mkdtemp(prefix="ka-proxy-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def make_proxy(socket_dir: Path, server: Any, provider: str, tmp_path: Path, *, strip: str = "",
               budget: BudgetConfig | None = None, model: str = "m") -> ModelProxy:
    return ModelProxy(
        socket_path=socket_dir / "proxy.sock", upstream=server.base_url, provider=provider, api_key=KEY, token=TOKEN,
        budget=Budget(budget or BudgetConfig(), f"{provider}:{model}"), transcript=Transcript(tmp_path / "t.jsonl"),
        options=ModelOptions(max_retries=2, retry_base_s=0.01, retry_max_wait_s=0.02), strip_prefix=strip,
    )


def http_client(proxy: ModelProxy, http: Any = httpx) -> Any:
    """An httpx (or, for SDKs built on it, httpx2) client that connects to the proxy's socket."""
    return http.AsyncClient(transport=http.AsyncHTTPTransport(uds=str(proxy.socket_path)))


def types(tmp_path: Path) -> list[str]:
    return [e["type"] for e in read_events(tmp_path / "t.jsonl")]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_anthropic_sdk_through_the_proxy(tmp_path: Path, socket_dir: Path, stream: bool) -> None:
    with FakeAnthropicServer(script=SCRIPT, api_key=KEY) as server:
        async with make_proxy(socket_dir, server, "anthropic", tmp_path) as proxy:
            client = anthropic.AsyncAnthropic(api_key=TOKEN, base_url="http://proxy",
                                            http_client=http_client(proxy, httpx2), max_retries=0)
            request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"name": "bash", "input_schema": {"type": "object"}}]}
            if stream:
                async with client.messages.stream(**request) as events:
                    message = await events.get_final_message()
            else:
                message = await client.messages.create(**request)
            await client.close()
    assert message.content[0].text == "Looking." and message.content[1].input == {"command": "ls"}
    assert server.requests[0].headers["x-api-key"] == KEY  # the real key, added by the proxy
    (_, served_in, served_out), = server.served
    assert (proxy.budget.turns, proxy.budget.input_tokens, proxy.budget.output_tokens) == (1, served_in, served_out)
    evs = list(read_events(tmp_path / "t.jsonl"))
    response = next(e["payload"] for e in evs if e["type"] == "model_response")
    assert response["text"] == "Looking." and response["tool_calls"][0]["arguments"] == {"command": "ls"}
    assert response["stop_reason"] == "tool_use"
    assert KEY not in (tmp_path / "t.jsonl").read_text()


async def test_openai_chat_streaming_through_the_proxy(tmp_path: Path, socket_dir: Path) -> None:
    with FakeOpenAIServer(script=SCRIPT, api_key=KEY) as server:
        async with make_proxy(socket_dir, server, "openai", tmp_path, strip="/v1") as proxy:
            client = openai.AsyncOpenAI(api_key=TOKEN, base_url="http://proxy/v1", http_client=http_client(proxy), max_retries=0)
            chunks = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True},
                tools=[{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}])
            text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
            await client.close()
    assert text == "Looking."
    (_, served_in, served_out), = server.served
    assert (proxy.budget.input_tokens, proxy.budget.output_tokens) == (served_in, served_out)
    response = next(e["payload"] for e in read_events(tmp_path / "t.jsonl") if e["type"] == "model_response")
    assert response["tool_calls"] == [{"id": "call_1x0", "name": "bash", "arguments": json.dumps({"command": "ls"})}]


async def test_openai_responses_through_the_proxy_are_priced_by_the_answering_model(tmp_path: Path, socket_dir: Path) -> None:
    with FakeOpenAIResponsesServer(script=SCRIPT, api_key=KEY) as server:
        async with make_proxy(socket_dir, server, "openai", tmp_path, strip="/v1", model="gpt-5.4") as proxy:
            client = openai.AsyncOpenAI(api_key=TOKEN, base_url="http://proxy/v1", http_client=http_client(proxy), max_retries=0)
            await client.responses.create(model="gpt-5-mini", input="hi")
            await client.close()
    (_, served_in, served_out), = server.served
    # Priced as openai:gpt-5-mini ($0.25 / $2 per Mtok), the model that answered.
    assert proxy.budget.dollars == pytest.approx((served_in * 0.25 + served_out * 2.0) / 1e6)


async def test_wrong_token_spent_budget_and_failing_provider_are_refused(tmp_path: Path, socket_dir: Path) -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": TOKEN, "anthropic-version": "2023-06-01"}
    failures = {3: Failure.server_error(500), 4: Failure.server_error(500), 5: Failure.server_error(500)}
    with FakeAnthropicServer(script=SCRIPT, api_key=KEY, failures=failures) as server:
        async with make_proxy(socket_dir, server, "anthropic", tmp_path, budget=BudgetConfig(max_turns=2)) as proxy:
            async with http_client(proxy) as client:
                wrong = await client.post("http://proxy/v1/messages", json=body, headers={**headers, "x-api-key": "nope"})
                assert wrong.status_code == 401 and not server.requests
                for _ in range(2):
                    assert (await client.post("http://proxy/v1/messages", json=body, headers=headers)).status_code == 200
                spent = await client.post("http://proxy/v1/messages", json=body, headers=headers)
                assert spent.status_code == 400 and "turns budget exhausted" in spent.json()["error"]["message"]
                assert proxy.cut_off.is_set() and proxy.exit is not None and proxy.exit.exit_reason == "budget:turns"
                assert len(server.requests) == 2  # the refused turn never left the host
            proxy.budget.config = BudgetConfig(max_turns=10)
            proxy.exit = None
            async with http_client(proxy) as client:
                gone = await client.post("http://proxy/v1/messages", json=body, headers=headers)
            assert gone.status_code == 502 and proxy.exit is not None and proxy.exit.exit_reason == "error"
    assert len(server.requests) == 5  # 1 attempt + 2 retries of the last turn
    seen = types(tmp_path)
    assert seen.count("retry") == 2 and seen.count("budget") == 1
    errors = [e["payload"] for e in read_events(tmp_path / "t.jsonl") if e["type"] == "error"]
    assert [e["source"] for e in errors] == ["proxy", "model"] and "wrong" in errors[0]["message"]


def test_reply_assembler_reads_anthropic_events_split_anywhere() -> None:
    from harnesses.proxy.wire import ANTHROPIC, ReplyAssembler

    events = [
        {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 10, "cache_read_input_tokens": 90,
                                                                      "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Plan: tile it."}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "t1", "name": "Write", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"file_path": "k'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'ernel.py"}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}},
        {"type": "message_stop"},
    ]
    data = "".join(f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n" for e in events).encode()
    assembler = ReplyAssembler(ANTHROPIC, streaming=True)
    for i in range(0, len(data), 7):  # chunk borders fall inside lines and CRLFs
        assembler.feed(data[i:i + 7])
    reply = assembler.finish()
    assert reply.thinking == "Plan: tile it." and reply.text == ""
    assert reply.tool_calls == [{"id": "t1", "name": "Write", "arguments": {"file_path": "kernel.py"}}]
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.stop_reason) == (100, 42, "tool_use")
    assert (reply.usage.cache_read_tokens, reply.usage.cache_write_tokens) == (90, 0)


async def test_a_refusal_ends_the_trial_with_the_providers_own_words(tmp_path: Path, socket_dir: Path) -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": TOKEN, "anthropic-version": "2023-06-01"}
    failures = {1: Failure.http(400, "messages.0: the provider's own reason"), 2: Failure.http(401, "invalid x-api-key")}
    with FakeAnthropicServer(script=SCRIPT, api_key=KEY, failures=failures) as server:
        async with make_proxy(socket_dir, server, "anthropic", tmp_path) as proxy:
            async with http_client(proxy) as client:
                refused = await client.post("http://proxy/v1/messages", json=body, headers=headers)
                # The CLI gets the provider's answer as it was, and is cut off.
                assert refused.status_code == 400 and "the provider's own reason" in refused.text
                assert proxy.cut_off.is_set() and proxy.exit is not None and proxy.exit.exit_reason == "error"
                proxy.exit = None
                await client.post("http://proxy/v1/messages", json=body, headers=headers)
                assert proxy.exit is not None and proxy.exit.exit_reason == "credentials"
    assert len(server.requests) == 2  # neither was retried
    errors = [e["payload"] for e in read_events(tmp_path / "t.jsonl") if e["type"] == "error"]
    assert errors[0]["message"] == "anthropic:m: 400: messages.0: the provider's own reason (invalid_request_error)"
    assert "invalid x-api-key" in errors[1]["message"] and "ANTHROPIC_API_KEY" in errors[1]["message"]
    assert "retry" not in types(tmp_path)


def _other_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_closing_abandons_a_waiting_turn_without_a_false_retry(tmp_path: Path, socket_dir: Path) -> None:
    """A wall-time cut: the trial records its budget event and closes the proxy while a turn
    still waits on a provider that hangs. The turn is abandoned, said so, and not retried."""
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": TOKEN, "anthropic-version": "2023-06-01"}
    with FakeAnthropicServer(script=SCRIPT, api_key=KEY, failures=lambda n: Failure.hang(30)) as server:
        proxy = make_proxy(socket_dir, server, "anthropic", tmp_path)
        await proxy.start()
        client = http_client(proxy)
        waiting = asyncio.ensure_future(client.post("http://proxy/v1/messages", json=body, headers=headers))
        await wait_until_async(lambda: server.requests, 30, "the provider to get the turn")
        proxy.transcript.event("budget", kind="wall_time", limit=1, used=1)
        started = time.monotonic()
        await proxy.close()
        assert time.monotonic() - started < 3
        with pytest.raises(httpx.HTTPError):
            await waiting
        await client.aclose()
        # Nothing is left running in this loop that could retry the turn after its backoff or write
        # to the transcript.
        await wait_until_async(lambda: not _other_tasks(), 10, "every task but the test's to end")
    evs = list(read_events(tmp_path / "t.jsonl"))
    after = [e for e in evs[[e["type"] for e in evs].index("budget"):]]
    assert [e["type"] for e in after] == ["budget", "error"]
    assert after[1]["payload"]["abandoned"] is True and after[1]["payload"]["turn"] == 1
    assert len(server.requests) == 1
