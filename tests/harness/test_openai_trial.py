"""A multi-turn trial through the real openai SDK adapter, against the local OpenAI-protocol server."""

from __future__ import annotations

from pathlib import Path

from scorer.tasks.suites import load_suite
from tests.fakeproviders.openai_server import FakeOpenAIServer
from tests.fakeproviders.script import Reply
from tests.harness.helpers import assert_complete_transcript, tool_calls, trial


async def test_openai_adapter_drives_a_tool_using_trial_to_a_scored_kernel(tmp_path: Path, monkeypatch) -> None:
    task = load_suite("demo").task("softmax")
    script = [
        Reply.tool("bash", {"command": "ls"}, text="Looking around."),
        Reply.tool("write_file", {"path": "kernel.py", "content": task.solution.read_text()}),
        Reply.say("kernel.py is done."),
    ]
    monkeypatch.setenv("FAKE_OPENAI_KEY", "test-key")
    with FakeOpenAIServer(script=script) as server:
        outcome = await trial(
            tmp_path, "openai:test-model", task="softmax",
            model_options={"base_url": server.base_url, "api_key_env": "FAKE_OPENAI_KEY", "max_retries": 0},
        )
        requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert outcome.verdict == "passed", outcome.error
    assert outcome.exit_reason == "done" and outcome.turns == 3
    evs = assert_complete_transcript(tmp_path)
    assert [name for name, _ in tool_calls(evs)] == ["bash", "write_file"]
    assert len(requests) == 3
    # The sandbox's answers travelled back to the model as tool messages.
    second = requests[1].body["messages"]
    assert second[-1]["role"] == "tool" and "reference.py" in second[-1]["content"]
    assert requests[2].body["messages"][-1]["content"].startswith("wrote ")
    assert {t["function"]["name"] for t in requests[0].body["tools"]} == {"bash", "write_file"}
    assert "test-key" not in (tmp_path / "transcript.jsonl").read_text()
