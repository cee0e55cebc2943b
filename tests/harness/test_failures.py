"""How a trial ends when something other than the kernel goes wrong: the model, the scorer, the
harness, the user (Ctrl-C / SIGTERM). Each leaves a complete transcript."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from harnesses.base import Harness, HarnessResult, TrialContext
from harnesses.registry import HARNESSES
from harnesses.trial import TrialBroken, run_trial
from scorer.tasks.suites import load_suite
from tests.fakeproviders.openai_server import FakeOpenAIServer
from tests.fakeproviders.script import Reply
from tests.harness.helpers import assert_complete_transcript, craft_transcript, events, spec, trial
from tests.shared.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
SWISH = load_suite("demo").task("swish").solution


# The command announces itself, so the interruption lands while it runs (not while the sandbox
# is still spawning it, which is the sandbox's own race to handle).
SLEEPER = "touch running.flag; sleep 60"


def wait_until_running(transcript: Path, timeout_s: float = 120) -> None:
    wait_until(lambda: _running(transcript), timeout_s, f"the command to start ({transcript})", poll_s=0.1)


def _running(transcript: Path) -> bool:
    """Whether the trial's sandbox is open and the command in it has announced itself."""
    if not transcript.is_file():
        return False
    return any(e["type"] == "harness_event" and e["payload"]["kind"] == "sandbox_opened"
               and (Path(e["payload"]["workdir"]) / "running.flag").exists() for e in events(transcript.parent))


async def test_a_refused_key_ends_the_loop_as_a_credentials_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "not-the-servers-key")
    with FakeOpenAIServer(script=[Reply.say("unreachable")]) as server:
        outcome = await trial(tmp_path, "openai:test-model",
                              model_options={"base_url": server.base_url, "api_key_env": "FAKE_OPENAI_KEY", "max_retries": 0})
    assert (outcome.exit_reason, outcome.verdict) == ("credentials", "no_kernel")
    evs = assert_complete_transcript(tmp_path)
    error = next(e["payload"] for e in evs if e["type"] == "error")
    assert error["source"] == "model" and error["status"] == 401 and error["retryable"] is False
    assert "Incorrect API key provided" in error["message"]  # the provider's own words
    exit = next(e["payload"] for e in evs if e["type"] == "harness_event" and e["payload"]["kind"] == "harness_exit")
    assert exit["detail"].startswith("the provider refused the key in FAKE_OPENAI_KEY for openai:test-model (")
    assert "not-the-servers-key" not in (tmp_path / "transcript.jsonl").read_text()


async def test_a_broken_scorer_is_a_runtime_error_outcome_not_a_crash(tmp_path: Path) -> None:
    script = craft_transcript(tmp_path / "script.jsonl",
                              [("", [("write_file", {"path": "kernel.py", "content": SWISH.read_text()})])])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", score_timeout_s=0.5)
    assert outcome.verdict == "runtime_error"
    assert outcome.error.startswith("scoring failed") and "timed out" in outcome.error
    evs = assert_complete_transcript(out)
    assert any(e["type"] == "error" and e["payload"]["source"] == "scorer" for e in evs)
    assert json.loads((out / "score.json").read_text())["verdict"] == "runtime_error"


_FLAKY_REFERENCE = """
from pathlib import Path

import torch
import torch.nn as nn

MARKER = Path({marker!r})


class Model(nn.Module):
    def forward(self, x):
        if x.device.type != "meta" and not MARKER.exists():
            MARKER.touch() if {recovers} else None
            raise RuntimeError("the reference failed (a scorer fault, not the kernel's)")
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(64, 257)]


def get_init_inputs():
    return []
"""


def _flaky_suite(root: Path, recovers: bool) -> Path:
    root.mkdir()
    (root / "suite.toml").write_text('name = "flaky"\ndescription = "a reference that fails"\ntargets = ["cpu"]\n'
                                     '[tasks.swish]\nlevel = 1\ncategory = "elementwise"\ndtype = "float32"\n')
    (root / "swish.py").write_text(_FLAKY_REFERENCE.format(marker=str(root / "failed_once"), recovers=recovers))
    return root


@pytest.mark.parametrize("recovers", [True, False])
async def test_a_scorer_that_broke_scores_the_kernel_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           recovers: bool) -> None:
    """`python -m scorer` exits 1 ("scorer broke:") when its reference fails: not the kernel's
    verdict. The trial scores the same kernel.py again after a wait; only a scorer still broken
    after every wait gives runtime_error, its reason recorded."""
    from harnesses import trial as trial_module

    monkeypatch.setattr(trial_module, "SCORER_RETRY_WAITS_S", (0.2, 0.2))
    suite = _flaky_suite(tmp_path / "suite", recovers)
    script = craft_transcript(tmp_path / "script.jsonl",
                              [("", [("write_file", {"path": "kernel.py", "content": SWISH.read_text()})])])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", suite=str(suite), trial_id="flaky/swish/replay/0")
    evs = assert_complete_transcript(out)
    retried = [e["payload"] for e in evs if e["type"] == "error" and e["payload"].get("retry_in_s") is not None]
    scorings = [e for e in evs if e["type"] == "harness_event" and e["payload"]["kind"] == "sandbox_opened"
                and e["payload"]["role"] == "scorer"]
    assert all("scorer broke: reference" in r["message"] for r in retried)
    if recovers:
        assert outcome.verdict == "passed", outcome.error
        assert len(retried) == 1 and len(scorings) == 2
    else:
        assert outcome.verdict == "runtime_error" and "scorer broke: reference" in outcome.error
        assert len(retried) == 2 and len(scorings) == 3


class CrashingHarness(Harness):
    name = "crashing-test"

    async def run(self, ctx: TrialContext) -> HarnessResult:
        await ctx.sandbox.write_file("kernel.py", "# half-written")
        raise RuntimeError("bug in a plug-in")


async def test_a_crashing_harness_is_recorded_then_raised_as_trial_broken(tmp_path: Path) -> None:
    HARNESSES.register("crashing-test", lambda: CrashingHarness)
    with pytest.raises(TrialBroken, match="harness 'crashing-test' crashed: RuntimeError: bug in a plug-in"):
        await trial(tmp_path, "scripted:reference", harness="crashing-test")
    evs = events(tmp_path)
    assert [e["seq"] for e in evs] == list(range(len(evs)))
    error = next(e["payload"] for e in evs if e["type"] == "error")
    assert error["source"] == "harness" and "Traceback" in error["traceback"]
    end = evs[-1]
    assert end["type"] == "trial_end" and "TrialBroken" in end["payload"]["error"]


async def test_cancellation_closes_the_sandbox_and_records_the_interruption(tmp_path: Path) -> None:
    script = craft_transcript(tmp_path / "script.jsonl", [("", [("bash", {"command": SLEEPER})])])
    out = tmp_path / "trial"
    task = asyncio.create_task(run_trial(spec(f"replay:{script}"), out))
    await asyncio.to_thread(wait_until_running, out / "transcript.jsonl")
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < 20, "cancellation waited for the command instead of killing it"
    evs = events(out)
    end = evs[-1]["payload"]
    assert evs[-1]["type"] == "trial_end" and end["interrupted"] is True and end["exit_reason"] == "interrupted"
    workdir = next(e["payload"]["workdir"] for e in evs
                   if e["type"] == "harness_event" and e["payload"]["kind"] == "sandbox_opened")
    assert not Path(workdir).exists()


def test_sigterm_to_kernelarena_run_ends_the_trial_cleanly(tmp_path: Path) -> None:
    script = craft_transcript(tmp_path / "script.jsonl", [("", [("bash", {"command": SLEEPER})])])
    out = tmp_path / "trial"
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator.cli", "run", "--suite", "demo", "--task", "swish", "--model", f"replay:{script}",
         "--sandbox", "process", "--device", "cpu", "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ},
    )
    try:
        wait_until_running(out / "transcript.jsonl")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM" in stderr
    end = events(out)[-1]
    assert end["type"] == "trial_end" and end["payload"]["interrupted"] is True


async def test_score_slot_is_held_only_around_scoring(tmp_path: Path) -> None:
    held: list[str] = []

    @asynccontextmanager
    async def slot() -> AsyncIterator[str]:
        held.append("enter")
        # The agent is done and kernel.py is already out when the slot is taken.
        assert (tmp_path / "kernel.py").is_file()
        yield "cpu"
        held.append("exit")

    outcome = await run_trial(spec("scripted:broken"), tmp_path, score_slot=slot)
    assert outcome.verdict == "compile_error"
    assert held == ["enter", "exit"]
    evs = assert_complete_transcript(tmp_path)
    assert any(e["type"] == "harness_event" and e["payload"] == {"kind": "score_slot", "device": "cpu"} for e in evs)


async def test_a_scorer_that_refuses_its_input_stops_with_the_fix_instead_of_a_verdict(tmp_path: Path) -> None:
    """The scorer's exit 2 (here: the task's reference imports a package the host lacks; on a GPU
    host, a wall it could not build) is not the model's runtime_error: every trial would meet it,
    so the sweep stops with the one-line fix."""
    from harnesses.trial import ScoringRefused

    suite = tmp_path / "needs_pkg"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "needs_pkg"\ntargets = ["cpu"]\nbaseline = "eager"\n'
                                      '[tasks.swish]\nlevel = 1\ncategory = "activation"\ndtype = "float32"\n')
    (suite / "swish.py").write_text("import kernelarena_no_such_package  # noqa\n"
                                    + (REPO / "suites" / "demo" / "swish.py").read_text())
    script = craft_transcript(tmp_path / "script.jsonl",
                              [("", [("write_file", {"path": "kernel.py", "content": SWISH.read_text()})])])
    out = tmp_path / "trial"
    with pytest.raises(ScoringRefused, match="imports 'kernelarena_no_such_package'.*pip install"):
        await run_trial(spec(f"replay:{script}", suite=str(suite), trial_id="needs_pkg/swish/replay/0"), out)
    assert (out / "kernel.py").read_text() == SWISH.read_text()  # what the agent wrote is kept
