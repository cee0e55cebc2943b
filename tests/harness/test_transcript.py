"""Transcript file contract: versioned lines, contiguous seq, flushed as written, secrets redacted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnesses.transcript import REDACTED, TRANSCRIPT_VERSION, Redactor, Transcript, read_events


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_events_are_versioned_numbered_and_flushed_before_close(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    transcript.event("trial_start", trial_id="t1")
    transcript.event("model_request", messages=[{"role": "user", "content": "hi"}])
    # Readable while still open: a crash now would lose nothing already recorded.
    written = lines(path)
    transcript.close()
    assert [e["seq"] for e in written] == [0, 1]
    assert [e["type"] for e in written] == ["trial_start", "model_request"]
    assert all(e["v"] == TRANSCRIPT_VERSION and e["ts"].endswith("+00:00") for e in written)
    assert written[1]["payload"]["messages"][0]["content"] == "hi"


def test_unknown_event_type_is_refused(tmp_path: Path) -> None:
    with Transcript(tmp_path / "t.jsonl") as transcript:
        with pytest.raises(ValueError, match="unknown transcript event type"):
            transcript.event("made_up")


def test_dataclasses_and_paths_are_serialised(tmp_path: Path) -> None:
    @dataclass
    class Call:
        id: str
        arguments: dict

    with Transcript(tmp_path / "t.jsonl") as transcript:
        transcript.event("tool_call", call=Call("c1", {"path": Path("kernel.py")}))
    payload = lines(tmp_path / "t.jsonl")[0]["payload"]
    assert payload == {"call": {"id": "c1", "arguments": {"path": "kernel.py"}}}


def test_secrets_from_env_and_key_patterns_never_reach_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "fake-provider-key-1234567890")
    monkeypatch.setenv("GH_TOKEN", "ghp_faketoken0987654321")
    monkeypatch.setenv("SHORT_KEY", "abc")  # too short to be a credential: left alone
    path = tmp_path / "t.jsonl"
    with Transcript(path, extra_secrets=["sandbox-only-secret-value"]) as transcript:
        transcript.event(
            "tool_result",
            output="env: fake-provider-key-1234567890 and ghp_faketoken0987654321 abc",
            headers={"Authorization": "Bearer abcdefghijklmnop123"},
            nested=[{"key": "sk-proj-ABCDEFGHIJKLMNOP"}, "sandbox-only-secret-value"],
        )
    text = path.read_text()
    for secret in ("fake-provider-key-1234567890", "ghp_faketoken0987654321", "abcdefghijklmnop123",
                   "sk-proj-ABCDEFGHIJKLMNOP", "sandbox-only-secret-value"):
        assert secret not in text
    assert text.count(REDACTED) == 5
    assert " abc" in text


def test_longer_secret_containing_a_shorter_one_is_redacted_whole() -> None:
    redactor = Redactor(["secret-value-1", "secret-value-12345"])
    assert redactor.text("x secret-value-12345 y") == f"x {REDACTED} y"


def test_read_events_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Transcript(path) as transcript:
        transcript.event("trial_start")
    with path.open("a") as fh:
        fh.write('{"v": 1, "seq": 1, "ty')
    assert [e["type"] for e in read_events(path)] == ["trial_start"]
