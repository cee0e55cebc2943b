"""Sweeps against local servers speaking OpenAI's wire protocol through the real SDK: injected 429s
and 5xx are retried (and recorded), a slow model does not hold up the others, and a provider
that keeps failing is paused while the rest of the sweep finishes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.launch import run_sweep
from orchestrator.prepare import prepare_sweep
from tests.fakeproviders import Failure, FakeOpenAIServer, Reply
from tests.orchestrator.sweep_helpers import REPO, assert_sweep_complete, events, ledger_rows, write_spec

KEY_ENV = "KA_FAKE_OPENAI_KEY"
SWISH = (REPO / "suites/demo/solutions/swish/kernel.py").read_text()
SCRIPT = [Reply.tool("write_file", {"path": "kernel.py", "content": SWISH}), Reply.say("kernel.py is written.")]


def _model(name: str, server: FakeOpenAIServer, **options: object) -> dict:
    return {"id": f"openai:{name}", "base_url": server.base_url, "api_key_env": KEY_ENV,
            "retry_base_s": 0.01, "retry_max_wait_s": 0.05, **options}


@pytest.mark.slow
async def test_sweep_retries_transient_errors_and_tolerates_a_slow_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "test-key")
    failures = {1: Failure.rate_limit(retry_after=0.05), 2: Failure.server_error(500), 4: Failure.server_error(503)}
    with FakeOpenAIServer(script=SCRIPT, failures=failures) as flaky, FakeOpenAIServer(script=SCRIPT, delay_s=1.0) as slow:
        spec = write_spec(tmp_path / "spec.toml", name="fake", backend="process", out=tmp_path / "sweep",
                          tasks=["swish"], total=4, samples=2,
                          models=[_model("flaky", flaky, max_retries=4), _model("slow", slow)])
        outcome = await run_sweep(prepare_sweep(spec, False, None), live=False)
    assert outcome.counts["done"] == 4 and not outcome.paused_providers
    rows = assert_sweep_complete(tmp_path / "sweep", expected_trials=4)
    assert {r["verdict"] for r in rows} == {"passed"}

    retries = []
    for row in rows:
        evs = events(tmp_path / "sweep" / row["rel_dir"] / "transcript.jsonl")
        retries += [(row["model"], e["payload"]) for e in evs if e["type"] == "retry"]
        if row["model"] == "openai:slow":
            latencies = [e["payload"]["latency_s"] for e in evs if e["type"] == "model_response"]
            assert latencies and min(latencies) >= 0.9
    assert len(retries) == 3 and {m for m, _ in retries} == {"openai:flaky"}
    assert any("429" in json.dumps(p) for _, p in retries) and any("50" in json.dumps(p) for _, p in retries)
    assert len([r for r in flaky.requests]) == 4 + 3  # two turns per trial, plus the retried ones


@pytest.mark.slow
async def test_failing_provider_is_paused_and_the_rest_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "test-key")
    with FakeOpenAIServer(script=SCRIPT, failures=lambda n: Failure.server_error(500)) as dead:
        spec = write_spec(
            tmp_path / "spec.toml", name="dead", backend="process", out=tmp_path / "sweep", tasks=["swish", "row_sum"],
            models=[_model("dead", dead, max_retries=0), {"id": "scripted:reference"}], total=2,
            extra="[failure]\nmax_attempts = 2\nconsecutive_to_pause = 2\npause_s = 0.3\nmax_pause_s = 1",
        )
        outcome = await run_sweep(prepare_sweep(spec, False, None), live=False)
    assert outcome.paused_providers == ["openai"]
    rows = {r["trial_id"]: r for r in ledger_rows(tmp_path / "sweep")}
    dead_rows = [r for r in rows.values() if r["model"] == "openai:dead"]
    assert [(r["state"], r["attempts"]) for r in dead_rows] == [("failed", 2), ("failed", 2)]
    assert all("500" in (r["error"] or "") or "server" in (r["error"] or "").lower() for r in dead_rows), dead_rows
    assert {r["state"] for r in rows.values() if r["model"] == "scripted:reference"} == {"done"}
    for r in dead_rows:  # the failed trial's last attempt is kept in place for audit
        assert (tmp_path / "sweep" / r["rel_dir"] / "transcript.jsonl").is_file()
    index = json.loads((tmp_path / "sweep" / "index.json").read_text())
    assert index["counts"] == {"pending": 0, "running": 0, "done": 2, "failed": 2}
