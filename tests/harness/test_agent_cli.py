"""The real Claude Code and Codex CLIs in the agents image, run by harnesses `claude-code` and
`codex` in a `--network none` container whose one route is our model proxy, against the fake
providers (which speak the CLIs' streaming protocols). Scripted replies make each CLI run a
command, write the demo suite's reference kernel and stop; the kernel is scored for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnesses.trial import TrialOutcome
from kernelarena.errors import UserError
from orchestrator.replay import load_events, reexec_trial, rescore_trial, resolve_transcript
from tests.fakeproviders import Failure, FakeAnthropicServer, Reply
from tests.fakeproviders.openai_responses_server import FakeOpenAIResponsesServer
from tests.harness.helpers import SOLUTION, agents_image, assert_complete_transcript, events, tool_calls, trial  # noqa: F401

KEY = "sk-real-provider-key-0123456789"
KEY_ENV = "KA_AGENT_CLI_TEST_KEY"
# A command run by the agent that tries two other hosts: a public address and the Docker host.
ESCAPE = ("env; python3 -c \"import socket\nfor host in ('1.1.1.1', '172.17.0.1'):\n    try:\n"
          "        socket.create_connection((host, 443), timeout=5); print(host, 'CONNECTED')\n"
          "    except OSError as exc:\n        print(host, 'failed:', exc)\"")


def _turn(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def claude_script(first_command: str):
    steps = [
        Reply.tool("Bash", {"command": first_command, "description": "look around"}, text="Looking around."),
        Reply.tool("Write", {"file_path": "/workspace/kernel.py", "content": SOLUTION}),
        Reply.say("kernel.py is written."),
    ]
    return lambda request: steps[min(_turn(request.body), len(steps) - 1)]


async def run_claude(tmp_path: Path, monkeypatch, server: FakeAnthropicServer, **overrides: Any) -> TrialOutcome:
    monkeypatch.setenv(KEY_ENV, KEY)
    return await trial(
        tmp_path, "anthropic:claude-sonnet-4-5", harness="claude-code", backend="docker",
        model_options={"base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 1, "retry_base_s": 0.01},
        **overrides,
    )


def model_turns(server: FakeAnthropicServer) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/messages"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_claude_code_writes_a_passing_kernel_through_the_proxy(tmp_path: Path, monkeypatch) -> None:
    with FakeAnthropicServer(script=claude_script("ls"), api_key=KEY) as server:
        # The first model turn is overloaded once: our retry policy answers it, not the CLI's.
        first = lambda n: Failure.server_error(529) if [r.path for r in server.requests].index("/v1/messages") == n - 1 else None  # noqa: E731
        server.failures = first
        outcome = await run_claude(tmp_path, monkeypatch, server)
    assert outcome.verdict == "passed", outcome.error
    assert outcome.exit_reason == "done"
    evs = assert_complete_transcript(tmp_path)
    retries = [e["payload"] for e in evs if e["type"] == "retry"]
    assert len(retries) == 1 and retries[0]["status"] == 529 and retries[0]["source"] == "proxy"
    assert len(model_turns(server)) == 4  # three turns, one of them sent twice
    assert [name for name, _ in tool_calls(evs)] == ["Bash", "Write"]
    listing = next(e["payload"]["output"] for e in evs if e["type"] == "tool_result")
    assert "reference.py" in listing and "PROMPT.md" in listing  # the CLI ran in the workspace
    # Every model turn went through the proxy, and its count is the fake's own, exactly.
    served_in = sum(s[1] for s in server.served)
    served_out = sum(s[2] for s in server.served)
    assert (outcome.turns, outcome.input_tokens, outcome.output_tokens) == (len(server.served), served_in, served_out)
    assert sum(1 for e in evs if e["type"] == "model_response") == 3
    # The provider got the real key; the container only ever had the dummy token.
    assert all(r.headers.get("x-api-key") == KEY for r in model_turns(server))
    assert all(r.headers.get("x-api-key") != KEY for r in server.requests if r.method == "HEAD")
    text = (tmp_path / "transcript.jsonl").read_text()
    assert KEY not in text
    start = next(e["payload"] for e in evs if e.get("payload", {}).get("kind") == "cli_start")
    assert start["base_url"].startswith("http://127.0.0.1:")
    # Requests after the first record only what is new in the conversation.
    requests = [e["payload"] for e in evs if e["type"] == "model_request"]
    assert [r["first_index"] for r in requests] == [0, 1, 3]
    assert "tools" in requests[0] and "tools" not in requests[1]
    # The CLI's own session log is kept beside the transcript.
    session = list((tmp_path / "cli_session").rglob("*.jsonl"))
    assert session and any('"Write"' in p.read_text() for p in session)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_claude_code_is_cut_off_by_the_token_budget_and_its_kernel_scored(tmp_path: Path, monkeypatch) -> None:
    # Each request is ~22k input tokens: the third one finds 30k spent and is refused.
    with FakeAnthropicServer(script=claude_script("ls"), api_key=KEY) as server:
        outcome = await run_claude(tmp_path, monkeypatch, server, budget={"max_input_tokens": 30_000})
    assert outcome.exit_reason == "budget:input_tokens"
    assert outcome.verdict == "passed", outcome.error  # the kernel it had written is scored
    assert len(model_turns(server)) == 2
    evs = events(tmp_path)
    budget = [e["payload"] for e in evs if e["type"] == "budget"]
    assert budget and budget[0]["kind"] == "input_tokens" and budget[0]["enforced_by"] == "proxy"
    assert budget[0]["used"] >= 30_000
    end = evs[-1]["payload"]
    assert end["exit_reason"] == "budget:input_tokens" and end["usage"]["input_tokens"] == sum(s[1] for s in server.served)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_claude_code_is_cut_off_by_the_wall_time_budget(tmp_path: Path, monkeypatch) -> None:
    with FakeAnthropicServer(script=claude_script("ls"), api_key=KEY) as server:
        # The second model turn hangs; the CLI is stopped when the trial's 10 s are up.
        server.failures = lambda n: (
            Failure.slow(60) if len(model_turns(server)) == 2 and server.requests[n - 1].path == "/v1/messages" else None
        )
        outcome = await run_claude(tmp_path, monkeypatch, server, budget={"wall_time_s": 10})
    assert outcome.exit_reason == "budget:wall_time"
    assert outcome.verdict == "no_kernel"  # it had not written one yet
    evs = events(tmp_path)
    budget = [e["payload"] for e in evs if e["type"] == "budget"]
    assert [b["kind"] for b in budget] == ["wall_time"] and 9 <= budget[0]["used"] < 30
    end = next(e["payload"] for e in evs if e.get("payload", {}).get("kind") == "cli_exit")
    assert end["ended_by"] == "timeout"
    # The hanging turn is abandoned when the proxy closes: said so, never taken for a retry.
    after = [e for e in evs if e["seq"] > next(b["seq"] for b in evs if b["type"] == "budget")]
    assert "retry" not in [e["type"] for e in after]
    assert any(e["type"] == "error" and e["payload"].get("abandoned") for e in after)
    assert [e["type"] for e in evs].count("trial_end") == 1 and evs[-1]["type"] == "trial_end"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_agent_cannot_reach_any_other_host(tmp_path: Path, monkeypatch) -> None:
    with FakeAnthropicServer(script=claude_script(ESCAPE), api_key=KEY) as server:
        outcome = await run_claude(tmp_path, monkeypatch, server)
    assert outcome.verdict == "passed", outcome.error
    evs = events(tmp_path)
    output = next(e["payload"]["output"] for e in evs if e["type"] == "tool_result")
    assert "CONNECTED" not in output
    assert output.count("failed:") == 2, output  # both attempts recorded, with the OS's reason
    assert "unreachable" in output.lower()
    opened = next(e["payload"] for e in evs if e.get("payload", {}).get("role") == "agent")
    assert opened["info"]["network_isolated"] is True
    # The command's output went back to the provider unredacted: the container's environment
    # holds the dummy token, never the real key.
    sent = json.dumps([r.body for r in model_turns(server)])
    assert "ANTHROPIC_API_KEY=ka-trial-" in sent and KEY not in sent
    # `kernelarena replay --rescore` scores the CLI's kernel again; --reexec says why it cannot.
    path = resolve_transcript(tmp_path)
    comparison = await rescore_trial(path, load_events(path))
    assert comparison.agrees and comparison.new_verdict == "passed"
    with pytest.raises(UserError, match="use --rescore"):
        await reexec_trial(path, load_events(path), tmp_path / "reexec")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_codex_writes_a_passing_kernel_through_the_proxy(tmp_path: Path, monkeypatch) -> None:
    write = f"cat > kernel.py <<'KERNEL_EOF'\n{SOLUTION}KERNEL_EOF\n"
    steps = [Reply.tool("exec_command", {"cmd": "ls"}, text="Looking around."),
             Reply.tool("exec_command", {"cmd": write}), Reply.say("kernel.py is written.")]
    monkeypatch.setenv(KEY_ENV, KEY)
    outputs = lambda body: sum(1 for item in body["input"] if item.get("type") == "function_call_output")  # noqa: E731
    with FakeOpenAIResponsesServer(script=lambda r: steps[min(outputs(r.body), 2)], api_key=KEY) as server:
        outcome = await trial(
            tmp_path, "openai:gpt-5.4", harness="codex", backend="docker",
            model_options={"base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 0},
        )
    assert outcome.verdict == "passed", outcome.error
    assert outcome.exit_reason == "done"
    evs = assert_complete_transcript(tmp_path)
    calls = tool_calls(evs)
    assert [name for name, _ in calls] == ["shell", "shell"] and "KERNEL_EOF" in calls[1][1]["command"]
    turns = [r for r in server.requests if r.path == "/v1/responses"]
    assert len(turns) == 3 and all(r.headers.get("Authorization") == f"Bearer {KEY}" for r in turns)
    served_in = sum(s[1] for s in server.served)
    served_out = sum(s[2] for s in server.served)
    assert (outcome.turns, outcome.input_tokens, outcome.output_tokens) == (3, served_in, served_out)
    assert outcome.dollars is not None and outcome.dollars > 0  # priced as openai:gpt-5.4
    assert KEY not in (tmp_path / "transcript.jsonl").read_text()
    assert list((tmp_path / "cli_session").rglob("rollout-*.jsonl"))


def test_cli_stream_events_render_in_replay(tmp_path: Path) -> None:
    """What the replay command shows of an agent CLI's transcript: its tool calls and results."""
    from rich.console import Console

    from harnesses.cli_streams import ClaudeStream
    from harnesses.transcript import Transcript
    from orchestrator.replay import render

    with Transcript(tmp_path / "t.jsonl") as transcript:
        transcript.event("trial_start", trial_id="t", spec={"model": "anthropic:x"}, harness="claude-code")
        stream = ClaudeStream(transcript)
        lines = [
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                                            "input": {"command": "nvidia-smi"}}]}},
            {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                       "content": "no GPU here", "is_error": True}]}},
        ]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        stream.feed(data[:37])  # a line split across chunks is put back together
        stream.feed(data[37:])
        stream.close()
        transcript.event("trial_end", exit_reason="done")
    console = Console(record=True, width=120)
    render(_read(tmp_path / "t.jsonl"), console)
    shown = console.export_text()
    assert "tool call · Bash · toolu_1" in shown and "nvidia-smi" in shown
    assert "tool result · Bash" in shown and "no GPU here" in shown


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_model_the_cli_cannot_drive_is_refused_before_any_trial() -> None:
    from kernelarena.errors import ConfigError
    from orchestrator.prepare import check_harness
    from orchestrator.spec import parse_spec

    spec = parse_spec({"name": "s", "suites": [{"name": "demo"}],
                       "models": [{"id": "openai:gpt-5.4"}, {"id": "openai:gpt-5.4", "harness": "claude-code"}]}, "spec.toml")
    assert [spec.harness_of(m) for m in spec.models] == ["minimal", "claude-code"]
    with pytest.raises(ConfigError, match="model 'openai:gpt-5.4\\+claude-code': harness 'claude-code' speaks the anthropic API"):
        check_harness(spec)


# Claude Code's turns as Anthropic reports them with prompt caching on: the first writes the
# cache, the later ones read it back and add a little.
CACHED_TURNS = [
    dict(input_tokens=3_000, cache_write_tokens=18_000, output_tokens=300),
    dict(input_tokens=1_000, cache_read_tokens=18_000, cache_write_tokens=1_500, output_tokens=1_200),
    dict(input_tokens=800, cache_read_tokens=19_500, cache_write_tokens=600, output_tokens=50),
]
COST_DOC = Path(__file__).resolve().parents[2] / "docs" / "MODELS.md"
COST_BEGIN, COST_END = "<!-- cli-cost:begin -->", "<!-- cli-cost:end -->"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_claude_code_cost_matches_the_clis_own(tmp_path: Path, monkeypatch) -> None:
    """Cache reads and writes priced at their own rates: our dollars for a Claude Code trial
    equal the CLI's own total_cost_usd; pricing every input token at the full rate did not."""
    import os

    from harnesses.models.base import Usage
    from harnesses.models.pricing import load_prices, price_of

    steps = [Reply.tool("Bash", {"command": "ls", "description": "look around"}, **CACHED_TURNS[0]),
             Reply.tool("Write", {"file_path": "/workspace/kernel.py", "content": SOLUTION}, **CACHED_TURNS[1]),
             Reply.say("kernel.py is written.", **CACHED_TURNS[2])]
    with FakeAnthropicServer(script=lambda r: steps[min(_turn(r.body), 2)], api_key=KEY) as server:
        outcome = await run_claude(tmp_path, monkeypatch, server)
    assert outcome.verdict == "passed", outcome.error
    evs = events(tmp_path)
    cli_cost = next(e["payload"]["total_cost_usd"] for e in evs if e.get("payload", {}).get("kind") == "cli_result")
    end = evs[-1]["payload"]["usage"]
    assert (end["cache_read_tokens"], end["cache_write_tokens"]) == (37_500, 20_100)
    price = price_of("anthropic:claude-sonnet-4-5", load_prices())
    assert price is not None
    usage = Usage(end["input_tokens"], end["output_tokens"])
    before = (usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok) / 1e6
    after = outcome.dollars
    assert after == pytest.approx(cli_cost, rel=0.01), (after, cli_cost)
    assert before > after * 1.2
    block = (f"{COST_BEGIN}\n| priced as | dollars |\n|---|---|\n"
             f"| every input token at the full input rate | ${before:.4f} |\n"
             f"| cache reads and writes at their own rates (KernelArena's price) | ${after:.4f} |\n"
             f"| Claude Code's own `total_cost_usd` | ${cli_cost:.4f} |\n"
             f"\n{end['input_tokens']:,} input tokens ({end['cache_read_tokens']:,} cache reads, "
             f"{end['cache_write_tokens']:,} cache writes), {end['output_tokens']:,} output tokens, three turns.\n{COST_END}")
    text = COST_DOC.read_text(encoding="utf-8")
    head, rest = text.split(COST_BEGIN, 1)
    tail = rest.split(COST_END, 1)[1]
    if os.environ.get("KA_WRITE_FAULT_MATRIX"):
        COST_DOC.write_text(head + block + tail, encoding="utf-8")
    else:
        assert COST_BEGIN + rest.split(COST_END, 1)[0] + COST_END == block, "rerun with KA_WRITE_FAULT_MATRIX=1"
