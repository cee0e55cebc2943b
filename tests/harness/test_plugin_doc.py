"""The third-party harness example in docs/PLUGIN_HARNESS.md runs as written."""

from __future__ import annotations

import re
import types
from pathlib import Path

from harnesses.base import Harness
from harnesses.registry import HARNESSES
from scorer.tasks.suites import load_suite
from tests.harness.helpers import assert_complete_transcript, craft_transcript, trial

DOC = Path(__file__).resolve().parents[2] / "docs" / "PLUGIN_HARNESS.md"


def load_example() -> type[Harness]:
    code = re.search(r"`critic_harness/__init__.py`:\n\n```python\n(.*?)```", DOC.read_text(), re.DOTALL).group(1)
    module = types.ModuleType("critic_harness")
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    return module.CriticHarness


async def test_documented_plugin_harness_runs_a_trial(tmp_path: Path) -> None:
    critic = load_example()
    assert 'critic = "critic_harness:CriticHarness"' in DOC.read_text()
    HARNESSES.register("critic", lambda: critic)
    kernel = load_suite("demo").task("swish").solution.read_text()
    script = craft_transcript(tmp_path / "script.jsonl", [("", [("write_file", {"path": "kernel.py", "content": kernel})])])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", harness="critic", harness_options={"rounds": 3})
    assert (outcome.exit_reason, outcome.verdict) == ("done", "passed")
    evs = assert_complete_transcript(out)
    assert any(e["type"] == "harness_event" and e["payload"].get("kind") == "self_test" and e["payload"]["exit_code"] == 0
               for e in evs)
    assert evs[0]["payload"]["prompt"]["file"] == "generic_v1.md"
