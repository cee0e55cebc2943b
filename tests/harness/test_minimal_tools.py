"""The minimal harness's tools and loop endings, driven by crafted replays in a real process sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.harness.helpers import assert_complete_transcript, craft_transcript, trial

FAKE_KEY = "fake-secret-key-value-0123456789"


async def test_secrets_in_env_and_tool_output_are_redacted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KERNELARENA_TEST_API_KEY", FAKE_KEY)
    script = craft_transcript(tmp_path / "script.jsonl", [
        ("", [("bash", {"command": "echo key=$SANDBOX_SECRET; echo sk-live-ABCDEFGHIJKLMNOPQRST; "
                                   "echo auth: Bearer abcdefghij0123456789"})]),
        (f"the key was {FAKE_KEY}", []),
    ])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}",
                          sandbox={"backend": "process", "env": {"SANDBOX_SECRET": "sandbox-secret-value-42"}})
    text = (out / "transcript.jsonl").read_text()
    for secret in (FAKE_KEY, "sandbox-secret-value-42", "sk-live-ABCDEFGHIJKLMNOPQRST", "abcdefghij0123456789"):
        assert secret not in text
    evs = assert_complete_transcript(out)
    output = next(e["payload"]["output"] for e in evs if e["type"] == "tool_result")
    assert "key=[REDACTED]" in output  # the command did print it; the transcript hides it
    assert outcome.verdict == "no_kernel"


async def test_write_file_stays_in_the_workspace_and_bad_calls_are_results(tmp_path: Path) -> None:
    script = craft_transcript(tmp_path / "script.jsonl", [
        ("", [("write_file", {"path": "../escape.py", "content": "x"}),
              ("write_file", {"path": "/etc/evil", "content": "x"}),
              ("write_file", {"path": "sub/dir/notes.txt", "content": "hello"}),
              ("bash", {"command": "cat sub/dir/notes.txt"}),
              ("nope", {}),
              ("bash", {})]),
        ("", [("bash", {"command": "head -c 50000 /dev/zero | tr '\\0' a; exit 3"})]),
        ("", []),
    ])
    out = tmp_path / "trial"
    outcome = await trial(out, f"replay:{script}", harness_options={"max_output_chars": 1000})
    evs = assert_complete_transcript(out)
    outputs = [e["payload"]["output"] for e in evs if e["type"] == "tool_result"]
    assert "outside the working directory" in outputs[0] and "outside the working directory" in outputs[1]
    assert outputs[2] == "wrote 5 bytes to sub/dir/notes.txt"
    assert outputs[3].startswith("hello") and "[exit code 0]" in outputs[3]
    assert "unknown tool 'nope'" in outputs[4]
    assert "needs a non-empty string argument 'command'" in outputs[5]
    assert "characters truncated" in outputs[6] and len(outputs[6]) < 1100 and outputs[6].endswith("[exit code 3]")
    # The replay ran out: an empty answer ends the loop as no_tool_calls.
    assert outcome.exit_reason == "no_tool_calls"
    assert not (tmp_path / "escape.py").exists()
