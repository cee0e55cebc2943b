"""The fake servers' own promises that other tests (harness, sweep) rely on."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any

from tests.fakeproviders import Failure, FakeOpenAIServer, Reply
from tests.models.conftest import ADAPTERS, KEY, TOOLS

OPENAI = ADAPTERS[0]


async def test_concurrent_conversations_each_follow_the_script_and_delay_applies() -> None:
    script = [Reply.tool("bash", {"command": "ls"}), Reply.say("done")]
    with FakeOpenAIServer(script=script, api_key=KEY, delay_s=0.2) as server:
        clients = [OPENAI.client(server) for _ in range(3)]

        async def conversation(client: Any) -> list[str]:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            first = await client.complete(messages, TOOLS)
            messages += [first.as_message(),
                         {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "x"}]
            second = await client.complete(messages, TOOLS)
            await client.aclose()
            return [first.tool_calls[0].name, second.text]

        start = time.monotonic()
        results = await asyncio.gather(*(conversation(c) for c in clients))
        elapsed = time.monotonic() - start
    assert results == [["bash", "done"]] * 3
    assert 0.4 <= elapsed < 1.5  # two slow turns each, the three conversations in parallel
    assert len(server.requests) == 6


def test_sync_use_and_failures_by_request_number() -> None:
    """From plain sync code (a CLI test would do this around a subprocess)."""
    with FakeOpenAIServer(script=[Reply.say("hi")], failures={2: Failure.http(503)}, api_key=KEY) as server:

        def post() -> tuple[int, dict[str, Any]]:
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
            request = urllib.request.Request(f"{server.base_url}/chat/completions", data=body, headers={
                "Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        statuses = [post() for _ in range(3)]
    assert [s for s, _ in statuses] == [200, 503, 200]
    assert statuses[0][1]["choices"][0]["message"]["content"] == "hi"
    assert statuses[1][1]["error"]["type"] == "server_error"
