"""ExternalCLIHarness with a small script standing in for an external coding agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnesses.external import ExternalCLIHarness
from kernelarena.errors import ConfigError
from scorer.tasks.suites import load_suite
from tests.harness.helpers import assert_complete_transcript, trial


def fake_agent_setup() -> str:
    """A setup command that installs `fake_agent.py`: it checks the prompt file, prints a
    stream-json style log and some plain lines, and writes the swish reference as kernel.py."""
    kernel = load_suite("demo").task("swish").solution.read_text()
    agent = (
        "import json, pathlib, sys\n"
        "prompt = pathlib.Path(sys.argv[1]).read_text()\n"
        "assert 'class Model' in prompt and 'kernel.py' in prompt\n"
        "print(json.dumps({'type': 'system', 'model': sys.argv[2]}))\n"
        "print('thinking about the kernel')\n"
        f"pathlib.Path('kernel.py').write_text({kernel!r})\n"
        "print(json.dumps({'type': 'result', 'subtype': 'success'}))\n"
        "print('a warning', file=sys.stderr)\n"
    )
    return f"cat > fake_agent.py <<'AGENT_EOF'\n{agent}AGENT_EOF"


async def test_external_cli_writes_the_kernel_and_its_output_is_recorded(tmp_path: Path) -> None:
    outcome = await trial(
        tmp_path, "scripted:reference", harness="external",
        harness_options={"setup": fake_agent_setup(), "command": "python3 fake_agent.py {prompt_file} {model}"},
    )
    assert outcome.verdict == "passed", outcome.error
    assert outcome.exit_reason == "done"
    evs = assert_complete_transcript(tmp_path)
    assert evs[0]["payload"]["prompt"]["file"] == "generic_v1.md"
    harness_events = [e["payload"] for e in evs if e["type"] == "harness_event" and e["payload"]["kind"].startswith("cli_")]
    kinds = [h["kind"] for h in harness_events]
    assert kinds[0] == "cli_start" and kinds[-1] == "cli_exit"
    assert "fake_agent.py" in harness_events[0]["command"] and "PROMPT.md" in harness_events[0]["command"]
    messages = [h["message"] for h in harness_events if h["kind"] == "cli_message"]
    assert messages == [{"type": "system", "model": "scripted:reference"}, {"type": "result", "subtype": "success"}]
    plain = [h for h in harness_events if h["kind"] == "cli_output" and h["phase"] == "run"]
    assert {p["stream"]: p["text"] for p in plain} == {"stdout": "thinking about the kernel", "stderr": "a warning\n"}


async def test_failing_cli_is_an_error_exit_and_timeout_is_a_wall_time_budget(tmp_path: Path) -> None:
    failed = await trial(tmp_path / "fail", "scripted:reference", harness="external",
                         harness_options={"command": "echo oops; exit 7"})
    assert (failed.exit_reason, failed.verdict) == ("error", "no_kernel")
    slow = await trial(tmp_path / "slow", "scripted:reference", harness="external",
                       harness_options={"command": "sleep 30"}, budget={"wall_time_s": 1})
    assert slow.exit_reason == "budget:wall_time"
    evs = assert_complete_transcript(tmp_path / "slow")
    assert any(e["type"] == "budget" and e["payload"]["kind"] == "wall_time" for e in evs)


def test_bad_templates_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="needs a command template"):
        ExternalCLIHarness()
    with pytest.raises(ConfigError, match="unknown field"):
        ExternalCLIHarness(command="agent {promt_file}")
    with pytest.raises(ConfigError, match="bad option"):
        ExternalCLIHarness(command="agent", colour="red")
    assert "claude -p" in ExternalCLIHarness(preset="claude-code").template
