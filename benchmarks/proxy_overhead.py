"""What the model proxy adds to one model request: median and p99, JSON and streamed (SSE).

    .venv/bin/python benchmarks/proxy_overhead.py [--requests 300] [--body-kb 86]

Against the local fake Anthropic server, each request is sent twice in turn: straight to the
fake over TCP, and through a ModelProxy on its unix socket (token check, budget, transcript
events, retry wrapper, relay). The conversation grows by one exchange per request, starting
from a body of --body-kb (Claude Code's first request is ~86 KB: its system prompt and tools).
"added" is the paired difference through - direct; "in proxy" is the proxy's own count of its
time (the total minus the upstream's wait, plus the relay writes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from harnesses.budget import Budget, BudgetConfig  # noqa: E402
from harnesses.models.base import ModelOptions  # noqa: E402
from harnesses.proxy.server import ModelProxy  # noqa: E402
from harnesses.transcript import Transcript  # noqa: E402
from kernelarena.logs import configure  # noqa: E402

KEY = "sk-benchmark-upstream-key-0123"
TOKEN = "ka-trial-benchmark"


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


# The fake runs in a process of its own, so its work does not compete for this one's GIL.
FAKE = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from tests.fakeproviders import FakeAnthropicServer, Reply
reply = Reply.tool("Bash", {{"command": "ls -la", "description": "look"}}, text="Looking around.", input_tokens=20_000)
with FakeAnthropicServer(script=[reply], api_key={KEY!r}) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def fake_server() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-c", FAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.communicate("", timeout=30)


async def measure(requests: int, body_kb: int, stream: bool, folder: Path) -> dict[str, float]:
    direct_s, through_s = [], []
    with fake_server() as base_url:
        proxy = ModelProxy(
            socket_path=folder / f"proxy-{int(stream)}.sock", upstream=base_url, provider="anthropic", api_key=KEY,
            token=TOKEN, budget=Budget(BudgetConfig(max_turns=None, wall_time_s=None), "anthropic:claude-sonnet-4-5"),
            transcript=Transcript(folder / f"transcript-{int(stream)}.jsonl"), options=ModelOptions(),
        )
        async with proxy, httpx.AsyncClient() as direct, \
                httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(proxy.socket_path))) as through:
            messages: list[dict] = [{"role": "user", "content": "x" * (body_kb * 1024)}]
            for i in range(requests + 5):
                body = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": stream, "messages": messages,
                        "system": "You are Claude Code.", "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]}
                for client, url, key, sink in ((direct, base_url, KEY, direct_s), (through, "http://proxy", TOKEN, through_s)):
                    t0 = time.perf_counter()
                    response = await client.post(f"{url}/v1/messages", json=body,
                                                 headers={"x-api-key": key, "anthropic-version": "2023-06-01"})
                    await response.aread()
                    assert response.status_code == 200, response.text
                    if i >= 5:  # warm-up: connection pools, first transcript writes
                        sink.append(time.perf_counter() - t0)
                messages = messages + [
                    {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "kernel.py\n" * 20}]},
                ]
        inside = proxy.overhead_s[5:]
    added = [t - d for t, d in zip(through_s, direct_s)]
    return {
        "direct_ms": statistics.median(direct_s) * 1e3,
        "through_ms": statistics.median(through_s) * 1e3,
        "added_ms": statistics.median(added) * 1e3,
        "added_p99_ms": p99(added) * 1e3,
        "in_proxy_ms": statistics.median(inside) * 1e3,
        "in_proxy_p99_ms": p99(inside) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--body-kb", type=int, default=86)
    args = parser.parse_args()
    configure(level="WARNING")
    folder = Path(tempfile.mkdtemp(prefix="ka-proxy-bench-"))
    try:
        rows = [(mode, asyncio.run(measure(args.requests, args.body_kb, mode == "sse", folder))) for mode in ("json", "sse")]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    columns = ["mode", "direct_ms", "through_ms", "added_ms", "added_p99_ms", "in_proxy_ms", "in_proxy_p99_ms"]
    print(f"{args.requests} requests per mode, first body {args.body_kb} KB, growing by one exchange per request")
    print("  ".join(f"{c:>15}" for c in columns))
    for mode, row in rows:
        print("  ".join([f"{mode:>15}"] + [f"{row[c]:15.2f}" for c in columns[1:]]))


if __name__ == "__main__":
    main()
