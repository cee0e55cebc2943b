"""One model under two harnesses in one sweep: `minimal` and `claude-code` (the real CLI in the
agents image, through the model proxy), against one fake Anthropic server; the leaderboard
shows the model twice, a row per harness."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.index import load_index
from orchestrator.launch import run_sweep
from orchestrator.leaderboard import build_leaderboard
from orchestrator.prepare import prepare_sweep
from tests.fakeproviders import FakeAnthropicServer, Reply
from tests.harness.helpers import SOLUTION, agents_image  # noqa: F401  (a fixture)
from tests.orchestrator.sweep_helpers import assert_sweep_complete, write_spec

KEY_ENV = "KA_FAKE_ANTHROPIC_KEY"


def script(request) -> Reply:
    """Writes the kernel with whichever tool the harness offers, then stops."""
    body = request.body
    names = {t.get("name") for t in body.get("tools") or []}
    if any(m.get("role") == "assistant" for m in body.get("messages", [])):
        return Reply.say("kernel.py is written.")
    if "Write" in names:
        return Reply.tool("Write", {"file_path": "/workspace/kernel.py", "content": SOLUTION})
    return Reply.tool("write_file", {"path": "kernel.py", "content": SOLUTION})


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
async def test_one_model_under_two_harnesses_is_two_leaderboard_rows(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "test-key-0123456789")
    with FakeAnthropicServer(script=script, api_key="test-key-0123456789") as server:
        model = {"id": "anthropic:claude-sonnet-4-5", "base_url": server.base_url, "api_key_env": KEY_ENV}
        spec = write_spec(tmp_path / "spec.toml", name="two-harnesses", backend="docker", out=tmp_path / "sweep",
                          tasks=["swish"], models=[model, {**model, "harness": "claude-code"}])
        outcome = await run_sweep(prepare_sweep(spec, False, None), live=False)
    assert outcome.counts["done"] == 2
    rows = assert_sweep_complete(tmp_path / "sweep", expected_trials=2)
    assert {r["verdict"] for r in rows} == {"passed"}
    board = build_leaderboard(load_index(tmp_path / "sweep"), resamples=0)
    assert sorted((s.model, s.harness) for s in board.models) == [
        ("anthropic:claude-sonnet-4-5", "minimal"),
        ("anthropic:claude-sonnet-4-5+claude-code", "claude-code"),
    ]
    assert all(s.solved == 1 for s in board.models)
