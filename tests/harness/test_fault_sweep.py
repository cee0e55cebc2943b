"""The fault matrix's sweep column, run for real: a key refused at the start stops the sweep
before its first trial in one line (exit 2); a key refused mid-sweep stops that provider (its
trials stay pending, the others finish, one progress line says so) and `--resume` with a good
key runs what was left; a provider that keeps failing on retryable faults is paused, not
stopped (tests/orchestrator/test_sweep_fakeprovider.py), and the breaker itself is checked here."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from orchestrator.launch import run_sweep
from orchestrator.limits import CircuitBreaker
from orchestrator.prepare import prepare_sweep
from tests.fakeproviders import Failure, FakeOpenAIServer, Reply
from tests.harness.fault_cells import MODEL_TURN_PATHS
from tests.orchestrator.sweep_helpers import REPO, cli, ledger_rows, write_spec

KEY_ENV = "KA_FAULT_SWEEP_KEY"
KEY = "sk-fault-sweep-0123456789"
SWISH = (REPO / "suites/demo/solutions/swish/kernel.py").read_text()
SCRIPT = [Reply.tool("write_file", {"path": "kernel.py", "content": SWISH}), Reply.say("kernel.py is written.")]


def _model(server: FakeOpenAIServer) -> dict[str, object]:
    return {"id": "openai:gpt-fake", "base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 2,
            "retry_base_s": 0.01}


def test_a_refused_key_stops_the_sweep_before_its_first_trial(tmp_path: Path) -> None:
    with FakeOpenAIServer(script=SCRIPT, api_key=KEY) as server:
        spec = write_spec(tmp_path / "spec.toml", name="badkey", backend="process", out=tmp_path / "sweep",
                          tasks=["swish"], models=[_model(server), {"id": "scripted:reference"}])
        started = time.monotonic()
        done = cli("sweep", str(spec), env={KEY_ENV: "sk-revoked-key-0000"})
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: model 'openai:gpt-fake': the provider refused the key in "
                                                    f"{KEY_ENV}"), done.stderr
    assert "Incorrect API key provided" in lines[0] and "sk-revoked-key-0000" not in done.stderr
    assert len(server.model_lists) == 1 and not server.requests  # one check, no turn
    assert not (tmp_path / "sweep").exists()  # nothing written
    assert time.monotonic() - started < 30


@pytest.mark.slow
async def test_a_key_refused_mid_sweep_stops_its_provider_until_resume(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    refusing = True
    with FakeOpenAIServer(script=SCRIPT, api_key=KEY) as server:
        # The check at the start passes; then the key is revoked: every turn gets a 401.
        server.failures = lambda n: (Failure.http(401, "this key was revoked")
                                     if refusing and server.requests[n - 1].path.endswith(MODEL_TURN_PATHS) else None)
        spec = write_spec(tmp_path / "spec.toml", name="revoked", backend="process", out=tmp_path / "sweep",
                          tasks=["swish"], samples=2, models=[_model(server), {"id": "scripted:reference"}], total=1)
        outcome = await run_sweep(prepare_sweep(spec, False, None), live=False)
        assert outcome.paused_providers == ["openai"]
        rows = ledger_rows(tmp_path / "sweep")
        openai_rows = [r for r in rows if r["model"] == "openai:gpt-fake"]
        assert {r["state"] for r in openai_rows} == {"pending"}
        # The first trial met the refusal once; the other never started.
        assert sorted(r["attempts"] for r in openai_rows) == [0, 1]
        assert len([r for r in server.requests if r.path.endswith(MODEL_TURN_PATHS)]) == 1
        assert {r["state"] for r in rows if r["model"] == "scripted:reference"} == {"done"}
        refused = next(r for r in openai_rows if r["attempts"] == 1)
        assert refused["exit_reason"] == "credentials" and KEY_ENV in refused["error"]
        stderr = capfd.readouterr().err
        stopped = [line for line in stderr.splitlines() if line.startswith("provider openai stopped")]
        assert len(stopped) == 1 and KEY_ENV in stopped[0] and "--resume" in stopped[0], stderr

        refusing = False  # a valid key again
        resumed = await run_sweep(prepare_sweep(tmp_path / "sweep", True, None), live=False)
    assert not resumed.paused_providers
    rows = ledger_rows(tmp_path / "sweep")
    assert {(r["model"], r["state"], r["verdict"]) for r in rows} == {
        ("openai:gpt-fake", "done", "passed"), ("scripted:reference", "done", "passed")}
    assert len(server.model_lists) == 2  # checked at the start and at the resume


async def test_the_breaker_pauses_a_failing_provider_and_stops_a_refused_one() -> None:
    breaker = CircuitBreaker(threshold=2, pause_s=0.2, max_pause_s=1.0)
    assert breaker.failure("openai", "500") == 0.0
    assert breaker.failure("openai", "500") == pytest.approx(0.2)
    started = time.monotonic()
    assert await breaker.wait_ready("openai") is True  # a pause ends
    assert 0.1 < time.monotonic() - started < 1.0
    assert math.isinf(breaker.failure("anthropic", "401", healable=False))
    assert await breaker.wait_ready("anthropic") is False  # a stop does not, and does not block
    assert "anthropic" in breaker.paused() and await breaker.wait_ready("openai") is True
