"""Every provider adapter, through its real SDK and a local server speaking that provider's wire
protocol, drives a multi-turn tool-using trial to a scored kernel.py (the OpenAI one, with more
detail, is in test_openai_trial.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.tasks.suites import load_suite
from tests.fakeproviders import FakeAnthropicServer, FakeGeminiServer, FakeOpenAIServer
from tests.fakeproviders.script import Reply
from tests.harness.helpers import assert_complete_transcript, tool_calls, trial

KEY = "sk-provider-test-0123456789"

PROVIDERS = [
    ("anthropic:claude-fake", FakeAnthropicServer),
    ("google:gemini-fake", FakeGeminiServer),
    ("litellm:openai/gpt-fake", FakeOpenAIServer),
]


@pytest.mark.parametrize(("model_id", "server_cls"), PROVIDERS, ids=[p[0].split(":")[0] for p in PROVIDERS])
async def test_adapter_drives_a_tool_using_trial_to_a_scored_kernel(tmp_path: Path, monkeypatch, model_id, server_cls) -> None:
    task = load_suite("demo").task("swish")
    script = [
        Reply.tool("bash", {"command": "ls"}, text="Looking around."),
        Reply.tool("write_file", {"path": "kernel.py", "content": task.solution.read_text()}),
        Reply.say("kernel.py is written."),
    ]
    monkeypatch.setenv("KA_PROVIDER_TRIAL_KEY", KEY)
    with server_cls(script=script, api_key=KEY) as server:
        outcome = await trial(
            tmp_path, model_id, task="swish",
            model_options={"base_url": server.base_url, "api_key_env": "KA_PROVIDER_TRIAL_KEY", "max_retries": 0},
        )
        answered = len(server.requests)
    assert outcome.verdict == "passed", outcome.error
    assert outcome.exit_reason == "done" and outcome.turns == 3
    assert answered == 3  # the server accepted every request: tool results went back in its format
    evs = assert_complete_transcript(tmp_path)
    assert [name for name, _ in tool_calls(evs)] == ["bash", "write_file"]
    assert (tmp_path / "kernel.py").read_text() == task.solution.read_text()
    assert KEY not in (tmp_path / "transcript.jsonl").read_text()
