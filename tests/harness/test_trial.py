"""run_trial end to end with the scripted models: real process sandbox, real scorer (CPU)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnesses.trial import TrialOutcome, run_trial
from scorer.errors import ScorerUserError
from scorer.tasks.suites import load_suite
from tests.harness.helpers import (
    assert_complete_transcript,
    craft_transcript,
    score_of,
    skip_without_docker,
    spec,
    tool_calls,
    trial,
)

SWISH = load_suite("demo").task("swish").solution


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TrialOutcome]:
    """One scripted:reference trial shared by the tests that inspect it (trials cost seconds)."""
    out = tmp_path_factory.mktemp("reference")
    return out, asyncio.run(run_trial(spec("scripted:reference"), out))


def test_reference_passes_in_process_sandbox(reference: tuple[Path, TrialOutcome]) -> None:
    out, outcome = reference
    assert outcome.verdict == "passed", outcome.error
    assert (outcome.exit_reason, outcome.turns) == ("done", 4)
    assert (out / "kernel.py").read_text() == SWISH.read_text()
    assert score_of(out)["verdict"] == "passed"
    evs = assert_complete_transcript(out)
    assert [name for name, _ in tool_calls(evs)] == ["bash", "write_file", "bash"]
    results = [e["payload"] for e in evs if e["type"] == "tool_result"]
    assert "[exit code 0]" in results[0]["output"] and "reference.py" in results[0]["output"]
    assert "max abs diff" in results[2]["output"] and results[2]["exit_code"] == 0
    start = evs[0]["payload"]
    assert start["prompt"]["file"] == "minimal_v1.md" and start["device"] == "cpu"
    assert start["spec"]["model"] == "scripted:reference"
    end = evs[-1]["payload"]
    assert (end["exit_reason"], end["verdict"], end["interrupted"]) == ("done", "passed", False)
    assert end["usage"]["turns"] == 4 and end["usage"]["output_tokens"] == outcome.output_tokens > 0
    # model_request records only what is new since the previous request.
    requests = [e["payload"] for e in evs if e["type"] == "model_request"]
    assert requests[0]["first_index"] == 0 and requests[0]["messages"][0]["role"] == "user"
    assert all(m["role"] == "tool" for r in requests[1:] for m in r["messages"])
    assert [r["message_count"] for r in requests] == [1, 3, 5, 7]
    kinds = [e["payload"]["kind"] for e in evs if e["type"] == "harness_event"]
    assert kinds == ["sandbox_opened", "harness_exit", "kernel_collected", "sandbox_opened"]
    opened = [e["payload"] for e in evs if e["type"] == "harness_event" and e["payload"]["kind"] == "sandbox_opened"]
    assert [o["role"] for o in opened] == ["agent", "scorer"] and opened[0]["workdir"] != opened[1]["workdir"]
    assert opened[0]["info"]["backend"] == "process"


async def test_replay_reproduces_the_recorded_tool_calls(reference: tuple[Path, TrialOutcome], tmp_path: Path) -> None:
    first, original = reference
    replayed = await trial(tmp_path, f"replay:{first}")
    assert tool_calls(assert_complete_transcript(tmp_path)) == tool_calls(assert_complete_transcript(first))
    assert (tmp_path / "kernel.py").read_bytes() == (first / "kernel.py").read_bytes()
    assert (original.verdict, replayed.verdict, replayed.exit_reason) == ("passed", "passed", "done")


@pytest.mark.docker
async def test_reference_passes_in_docker_sandbox(tmp_path: Path) -> None:
    skip_without_docker()
    outcome = await trial(tmp_path, "scripted:reference", backend="docker")
    assert outcome.verdict == "passed", outcome.error
    assert_complete_transcript(tmp_path)


async def test_hacker_is_rejected_with_the_pattern_named(tmp_path: Path) -> None:
    outcome = await trial(tmp_path, "scripted:hacker", task="row_sum")
    assert outcome.verdict == "hack_detected"
    assert "baseline-library-call" in outcome.hacks
    evs = assert_complete_transcript(tmp_path)
    score_event = next(e for e in evs if e["type"] == "score")["payload"]
    assert any(h["pattern"] == "baseline-library-call" for h in score_event["hacks"])


async def test_turn_budget_ends_the_loop_and_the_kernel_so_far_is_scored(tmp_path: Path) -> None:
    script = craft_transcript(tmp_path / "script.jsonl", [
        ("", [("write_file", {"path": "kernel.py", "content": SWISH.read_text()})]),
        ("", [("bash", {"command": "echo testing"})]),
        ("never asked", [("bash", {"command": "rm kernel.py"})]),
    ])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", budget={"max_turns": 2})
    assert outcome.exit_reason == "budget:turns"
    assert outcome.verdict == "passed"
    evs = assert_complete_transcript(out)
    assert [e["payload"] for e in evs if e["type"] == "budget"] == [{"kind": "turns", "limit": 2, "used": 2}]
    assert len(tool_calls(evs)) == 2


@pytest.mark.parametrize("field,kind", [("max_input_tokens", "input_tokens"), ("max_output_tokens", "output_tokens")])
async def test_token_budgets(tmp_path: Path, field: str, kind: str) -> None:
    # Each crafted turn reports 10 input and 10 output tokens: the limit of 15 is crossed by the
    # second turn, whose tool call still runs; the third is never asked for.
    script = craft_transcript(tmp_path / "script.jsonl", [
        ("", [("bash", {"command": "echo one"})]),
        ("", [("bash", {"command": "echo two"})]),
        ("", [("bash", {"command": "echo three"})]),
    ])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", budget={field: 15})
    assert outcome.exit_reason == f"budget:{kind}"
    evs = assert_complete_transcript(out)
    assert [e["payload"] for e in evs if e["type"] == "budget"] == [{"kind": kind, "limit": 15, "used": 20}]
    assert [args["command"] for _, args in tool_calls(evs)] == ["echo one", "echo two"]
    assert outcome.verdict == "no_kernel"


async def test_wall_time_budget_caps_bash_and_ends_without_kernel(tmp_path: Path) -> None:
    # Importing torch takes longer than the whole budget: the bash timeout is capped by the
    # time left, the loop ends, and with no kernel.py the score is no_kernel.
    outcome = await trial(tmp_path, "scripted:reference", budget={"wall_time_s": 0.5})
    assert outcome.exit_reason == "budget:wall_time"
    assert outcome.verdict == "no_kernel"
    evs = assert_complete_transcript(tmp_path)
    budget = next(e["payload"] for e in evs if e["type"] == "budget")
    assert budget["kind"] == "wall_time" and budget["limit"] == 0.5
    first_result = next(e["payload"] for e in evs if e["type"] == "tool_result")
    assert first_result["timed_out"] is True and "timed out" in first_result["output"]
    assert not (tmp_path / "kernel.py").exists()


async def test_unknown_task_fails_before_a_transcript_is_started(tmp_path: Path) -> None:
    with pytest.raises(ScorerUserError, match="no task 'nope'"):
        await run_trial(spec("scripted:reference", task="nope"), tmp_path / "out")
    assert not (tmp_path / "out" / "transcript.jsonl").exists()
