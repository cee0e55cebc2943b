"""Shared helpers of the harness tests: run a trial, check a transcript's completeness, craft a
transcript of model responses for `replay:`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harnesses.models.base import ToolCall, Usage
from harnesses.transcript import Transcript, read_events
from harnesses.trial import TrialOutcome, TrialSpec, run_trial

SOLUTION = (Path(__file__).resolve().parents[2] / "suites/demo/solutions/swish/kernel.py").read_text()
"""The demo suite's reference kernel for swish: what scripted agents write."""

# Fast CPU scoring: one input seed, no timed loop (the verdict does not depend on timing).
FAST_SCORE = {"seeds": 1, "skip_timing": True}


def spec(model: str, tmp: Path | None = None, *, task: str = "swish", backend: str = "process", **overrides: Any) -> TrialSpec:
    values: dict[str, Any] = {
        "trial_id": f"demo/{task}/{model}/0",
        "suite": "demo",
        "task": task,
        "model": model,
        "sandbox": {"backend": backend},
        "device": "cpu",
        "score_options": FAST_SCORE,
    }
    values.update(overrides)
    return TrialSpec.model_validate(values)


async def trial(tmp: Path, model: str, **overrides: Any) -> TrialOutcome:
    return await run_trial(spec(model, **overrides), tmp)


def events(out_dir: Path) -> list[dict[str, Any]]:
    return list(read_events(out_dir / "transcript.jsonl"))


def assert_complete_transcript(out_dir: Path) -> list[dict[str, Any]]:
    """trial_start ... trial_end, seq contiguous, every tool_call answered by a tool_result,
    the prompt's version and hash recorded, a score event before trial_end."""
    evs = events(out_dir)
    assert evs, "empty transcript"
    assert [e["seq"] for e in evs] == list(range(len(evs)))
    assert all(e["v"] == 1 for e in evs)
    assert evs[0]["type"] == "trial_start"
    assert evs[-1]["type"] == "trial_end"
    prompt = evs[0]["payload"]["prompt"]
    assert prompt["version"] and len(prompt["sha256"]) == 64
    calls = [e["payload"]["id"] for e in evs if e["type"] == "tool_call"]
    results = [e["payload"]["id"] for e in evs if e["type"] == "tool_result"]
    assert calls == results
    types = [e["type"] for e in evs]
    assert types.count("score") == 1 and types.index("score") < len(types) - 1
    return evs


def tool_calls(evs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(e["payload"]["name"], e["payload"]["arguments"]) for e in evs if e["type"] == "tool_call"]


def craft_transcript(path: Path, turns: list[tuple[str, list[tuple[str, dict[str, Any]]]]]) -> Path:
    """A transcript holding only model_response events, for `replay:PATH`."""
    with Transcript(path) as transcript:
        for i, (text, calls) in enumerate(turns):
            transcript.event(
                "model_response",
                text=text,
                tool_calls=[ToolCall(f"c{i}_{j}", name, args).to_dict() for j, (name, args) in enumerate(calls)],
                usage=Usage(10, 10),
                stop_reason="tool_use" if calls else "end_turn",
                latency_s=0.0,
            )
    return path


def docker_ready() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "image", "inspect", "kernelarena-sandbox:latest"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def skip_without_docker() -> None:
    if not docker_ready() and not os.environ.get("CI"):
        pytest.skip("no Docker daemon or no kernelarena-sandbox image (run `make image`); CI runs this")


def score_of(out_dir: Path) -> dict[str, Any]:
    return json.loads((out_dir / "score.json").read_text())


@pytest.fixture(scope="session")
def agents_image() -> None:
    from sandbox.docker_client import daemon_answers
    from sandbox.image import AGENTS_TAG, image_recipe

    problem = None
    if not daemon_answers():
        problem = "no Docker daemon answers (start one: bash scripts/docker_up.sh)"
    elif image_recipe(AGENTS_TAG) is None:
        problem = f"image {AGENTS_TAG} missing (build it: kernelarena sandbox build-image --with claude-code,codex)"
    if problem and os.environ.get("CI"):
        pytest.fail(f"CI is set but the agent CLI tests cannot run: {problem}")
    if problem:
        pytest.skip(problem)
