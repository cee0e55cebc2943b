"""What the model proxy adds to one model request: median and p99, JSON and streamed (SSE).

    .venv/bin/python benchmarks/proxy_overhead.py [--requests 300] [--body-kb 86]

Against the local fake Anthropic server, each request is sent twice in turn: straight to the
fake over TCP, and through a ModelProxy on its unix socket (token check, budget, transcript
events, retry wrapper, relay). The conversation grows by one exchange per request, starting
from a body of --body-kb (Claude Code's first request is ~86 KB: its system prompt and tools).
"added" is the paired difference through - direct; "in proxy" is the proxy's own count of its
time (the handler's time outside the upstream exchange).

With --container it also times the whole path an agent CLI takes: a client in the agents
image's container (`--network none`) -> harnesses/proxy/forwarder.py on its loopback -> the
bind-mounted socket -> the proxy -> the fake, against the same client on the host talking to
the socket directly (needs Docker and `kernelarena sandbox build-image --with claude-code`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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
                    {"role": "assistant",
                     "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}]},
                    {"role": "user",
                     "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "kernel.py\n" * 20}]},
                ]
        inside = proxy.overhead_s[5:]
    added = [t - d for t, d in zip(through_s, direct_s, strict=True)]  # one direct and one proxied call per request
    return {
        "direct_ms": statistics.median(direct_s) * 1e3,
        "through_ms": statistics.median(through_s) * 1e3,
        "added_ms": statistics.median(added) * 1e3,
        "added_p99_ms": p99(added) * 1e3,
        "in_proxy_ms": statistics.median(inside) * 1e3,
        "in_proxy_p99_ms": p99(inside) * 1e3,
    }


# One client for both sides of the forwarder comparison (standard library: it runs in the
# container's python3 too): N requests on one keep-alive connection, times as JSON.
CLIENT = r"""
import http.client, json, socket, sys, time
target, n, body_kb, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("proxy")
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.unix_path)

host, _, port = target.rpartition(":")
conn = UnixConnection(target) if target.startswith("/") else http.client.HTTPConnection(host, int(port))
messages = [{"role": "user", "content": "x" * (body_kb * 1024)}]
times = []
for i in range(n + 5):
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": True, "messages": messages}).encode()
    t0 = time.perf_counter()
    conn.request("POST", "/v1/messages", body, {"x-api-key": token, "anthropic-version": "2023-06-01",
                                                 "content-type": "application/json"})
    response = conn.getresponse()
    response.read()
    assert response.status == 200, response.status
    if i >= 5:
        times.append(time.perf_counter() - t0)
    messages = messages + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "kernel.py"}]},
    ]
print(json.dumps(times))
"""


async def measure_container(requests: int, body_kb: int, folder: Path) -> dict[str, float]:
    from harnesses.agent_cli import PROXY_DIR, SOCKET_NAME, start_forwarder
    from sandbox import SandboxConfig, open_sandbox
    from sandbox.config import Mount
    from sandbox.image import AGENTS_TAG

    with fake_server() as base_url:
        socket_dir = folder / "container"
        socket_dir.mkdir(mode=0o755)
        proxy = ModelProxy(
            socket_path=socket_dir / SOCKET_NAME, upstream=base_url, provider="anthropic", api_key=KEY, token=TOKEN,
            budget=Budget(BudgetConfig(max_turns=None, wall_time_s=None), "anthropic:claude-sonnet-4-5"),
            transcript=Transcript(folder / "transcript-container.jsonl"), options=ModelOptions(),
        )
        cfg = SandboxConfig(backend="docker", image=AGENTS_TAG, mounts=[Mount(host=socket_dir, target=PROXY_DIR)])
        args = [str(requests), str(body_kb), TOKEN]
        async with proxy, open_sandbox(cfg) as sb:
            await start_forwarder(sb, 8787)
            await sb.write_file("/tmp/client.py", CLIENT)
            inside = await sb.exec(["python3", "/tmp/client.py", "127.0.0.1:8787", *args], timeout=600)
            assert inside.exit_code == 0, inside.stderr
            host = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, str(proxy.socket_path), *args,
                                                        stdout=subprocess.PIPE)
            out, _ = await host.communicate()
    container_s, host_s = json.loads(inside.stdout), json.loads(out)
    return {
        "host_socket_ms": statistics.median(host_s) * 1e3,
        "host_socket_p99_ms": p99(host_s) * 1e3,
        "container_ms": statistics.median(container_s) * 1e3,
        "container_p99_ms": p99(container_s) * 1e3,
        "forwarder_adds_ms": (statistics.median(container_s) - statistics.median(host_s)) * 1e3,
    }


def print_table(columns: list[str], rows: list[tuple[str, dict[str, float]]]) -> None:
    print("  ".join(f"{c:>18}" for c in columns))
    for mode, row in rows:
        print("  ".join([f"{mode:>18}"] + [f"{row[c]:18.2f}" for c in columns[1:]]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--body-kb", type=int, default=86)
    parser.add_argument("--container", action="store_true", help="also time the path through the container's forwarder")
    args = parser.parse_args()
    configure(level="WARNING")
    folder = Path(tempfile.mkdtemp(prefix="ka-proxy-bench-"))
    try:
        rows = [(mode, asyncio.run(measure(args.requests, args.body_kb, mode == "sse", folder))) for mode in ("json", "sse")]
        container = asyncio.run(measure_container(args.requests, args.body_kb, folder)) if args.container else None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.requests} requests per mode, first body {args.body_kb} KB, growing by one exchange per request")
    print_table(["mode", "direct_ms", "through_ms", "added_ms", "added_p99_ms", "in_proxy_ms", "in_proxy_p99_ms"], rows)
    if container is not None:
        print("\nSSE, the agent's whole path: container -> forwarder -> socket -> proxy -> fake")
        print_table(["path", "host_socket_ms", "host_socket_p99_ms", "container_ms", "container_p99_ms",
                     "forwarder_adds_ms"], [("stdlib client", container)])


if __name__ == "__main__":
    main()
